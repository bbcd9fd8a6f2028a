// aclnn ApplyAdamWV2 and ApplyAdamW (CANN's argument lists): AdamW's step over var, m and v,
// updated in place, with device/cpu's kernels (apply_adamw_v2, apply_adamw_v1_f64).
#include <cmath>

#include "ember/device/cpu/nn.h"
#include "ember/device/npu/aclnn_common.h"
#include "ember/device/npu/descriptors.h"
#include "ember/core/error.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {
// ApplyAdamWV2's tensors: the state (varRef, mRef, vRef, maxv when given) floating, contiguous,
// of varRef's shape (m and v of its dtype); grad floating of that shape; step one int64 or float.
aclnnStatus check_adamw_v2_state(const char* op, const aclTensor* varRef, const aclTensor* mRef,
                                 const aclTensor* vRef, const aclTensor* maxv, const aclTensor* grad,
                                 const aclTensor* step) {
  IntArrayRef shape = shape_of(varRef);
  std::vector<std::pair<const char*, const aclTensor*>> state{{"varRef", varRef}, {"mRef", mRef}, {"vRef", vRef}};
  if (maxv) state.emplace_back("maxGradNormOptionalRef", maxv);
  for (auto [name, t] : state) {
    if (t == maxv)
      if (aclnnStatus s = check_tensor(op, name, t)) return s;
    if (aclnnStatus s = check_dtype(op, name, t, kFloats)) return s;
    if (aclnnStatus s = check_shape(op, name, t, shape)) return s;
    if (aclnnStatus s = check_contiguous(op, name, t)) return s;
  }
  if (dtype_of(mRef) != dtype_of(varRef) || dtype_of(vRef) != dtype_of(varRef))
    return invalid(op, "mRef and vRef must have varRef's dtype");
  if (aclnnStatus s = check_dtype(op, "grad", grad, kFloats)) return s;
  if (aclnnStatus s = check_shape(op, "grad", grad, shape)) return s;
  if (aclnnStatus s = check_dtype(op, "step", step, {DType::Int64, DType::Float32})) return s;
  if (numel_of(shape_of(step)) != 1) return invalid(op, "step must hold one element, got shape " + shape_str(shape_of(step)));
  return ACLNN_SUCCESS;
}
}  // namespace

extern "C" aclnnStatus aclnnApplyAdamWV2GetWorkspaceSize(aclTensor* varRef, aclTensor* mRef, aclTensor* vRef,
                                                         aclTensor* maxGradNormOptionalRef, const aclTensor* grad,
                                                         const aclTensor* step, float lr, float beta1, float beta2,
                                                         float weightDecay, float eps, bool amsgrad, bool maximize,
                                                         uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnApplyAdamWV2";
  if (aclnnStatus s = check_not_null(op, {{"varRef", varRef}, {"mRef", mRef}, {"vRef", vRef}, {"grad", grad},
                                          {"step", step}}))
    return s;
  if (amsgrad && !maxGradNormOptionalRef) return null_arg(op, "maxGradNormOptionalRef (amsgrad is true)");
  if (aclnnStatus s = check_all(op, {{"varRef", varRef}, {"mRef", mRef}, {"vRef", vRef}, {"grad", grad}, {"step", step}}))
    return s;
  if (aclnnStatus s = check_adamw_v2_state(op, varRef, mRef, vRef, amsgrad ? maxGradNormOptionalRef : nullptr, grad,
                                           step))
    return s;
  if (!(lr >= 0) || !(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) || !(eps >= 0) || !(weightDecay >= 0))
    return invalid(op, "needs lr >= 0, 0 <= beta1, beta2 < 1, eps >= 0 and weightDecay >= 0");
  uint64_t wsb = 0;
  StagedInput sg = stage_if_strided(grad, &wsb);
  TensorRef rp = ref(varRef), rm = ref(mRef), rv = ref(vRef), rs = ref(step);
  TensorRef rmax = amsgrad ? ref(maxGradNormOptionalRef) : TensorRef();
  const cpu::AdamWConfig cfg{lr, beta1, beta2, weightDecay, eps, amsgrad, maximize};
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided sv = k.view(rs);
    // The kernel takes the bias correction at step + 1 (CANN's op_kernel and its golden,
    // hicann/ops-nn:optim/apply_adam_w_v2/tests/assets/golden.py); step itself is not written.
    const double taken = sv.dtype == DType::Int64 ? static_cast<double>(*static_cast<const int64_t*>(sv.data))
                                                  : static_cast<double>(*static_cast<const float*>(sv.data));
    EMBER_CHECK_VALUE(taken >= 0 && taken < 9.2e18, "aclnnApplyAdamWV2: step must be in [0, 9.2e18) when the kernel runs, got ",
                      taken);
    const int64_t t = static_cast<int64_t>(taken) + 1;
    cpu::Strided mv = amsgrad ? k.view(rmax) : cpu::Strided();
    cpu::adamw_step(k.view(rp), k.view(rm), k.view(rv), mv, sg.view(k), t, cfg);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnApplyAdamWV2)

// CANN's ApplyAdamW (V1): the hyperparameters are [1] tensors read when the kernel runs;
// beta1Power / beta2Power hold beta^(t-1) and the step multiplies them by beta (CANN's formula):
//   g = maximize ? -grad : grad;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   v = amsgrad ? max(maxGradNorm, v) : v   (stored: the formula assigns v_t)
//   var = var - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps) - lr * weightDecay * var
// var, m, v (updated in place) and grad may be strided: they are staged as float64 in the
// workspace and written back.
namespace {
// ApplyAdamW's tensors: varRef float32/16/bf16; mRef, vRef, grad (and maxGradNormOptional with
// amsgrad) of its shape and dtype; the seven hyperparameters one value each.
aclnnStatus check_apply_adamw(const char* op, const aclTensor* varRef, const aclTensor* const* same, size_t n_same,
                              const aclTensor* const* hyper) {
  if (aclnnStatus s = check_dtype(op, "varRef", varRef, {DType::Float32, DType::Float16, DType::BFloat16})) return s;
  static const char* const kSame[] = {"mRef", "vRef", "grad", "maxGradNormOptional"};
  for (size_t i = 0; i < n_same; ++i)
    if (same[i]) {
      if (aclnnStatus s = check_shape(op, kSame[i], same[i], shape_of(varRef))) return s;
      if (dtype_of(same[i]) != dtype_of(varRef)) return invalid(op, std::string(kSame[i]) + " must have varRef's dtype");
    }
  static const char* const kHyper[] = {"beta1Power", "beta2Power", "lr", "weightDecay", "beta1", "beta2", "eps"};
  for (size_t i = 0; i < 7; ++i)
    if (numel_of(shape_of(hyper[i])) != 1) return invalid(op, std::string(kHyper[i]) + " must hold one value (shape [1])");
  return ACLNN_SUCCESS;
}
// A tensor staged as float64 at dst (contiguous); copy_back writes it back.
void stage_in(const cpu::Strided& t, double* dst) { cpu::copy(t.contiguous_at(dst, DType::Float64), t); }
void copy_back(const cpu::Strided& t, double* src) { cpu::copy(t, t.contiguous_at(src, DType::Float64)); }
}  // namespace

extern "C" aclnnStatus aclnnApplyAdamWGetWorkspaceSize(aclTensor* varRef, aclTensor* mRef, aclTensor* vRef,
                                                       const aclTensor* beta1Power, const aclTensor* beta2Power,
                                                       const aclTensor* lr, const aclTensor* weightDecay,
                                                       const aclTensor* beta1, const aclTensor* beta2,
                                                       const aclTensor* eps, const aclTensor* grad,
                                                       const aclTensor* maxGradNormOptional, bool amsgrad,
                                                       bool maximize, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnApplyAdamW";
  const aclTensor* hyper[7] = {beta1Power, beta2Power, lr, weightDecay, beta1, beta2, eps};
  if (aclnnStatus s = check_not_null(op, {{"varRef", varRef}, {"mRef", mRef}, {"vRef", vRef},
                                          {"beta1Power", beta1Power}, {"beta2Power", beta2Power}, {"lr", lr},
                                          {"weightDecay", weightDecay}, {"beta1", beta1}, {"beta2", beta2},
                                          {"eps", eps}, {"grad", grad}}))
    return s;
  if (amsgrad && !maxGradNormOptional) return null_arg(op, "maxGradNormOptional (amsgrad is true)");
  const aclTensor* maxv = amsgrad ? maxGradNormOptional : nullptr;
  if (aclnnStatus s = check_all(op, {{"varRef", varRef}, {"mRef", mRef}, {"vRef", vRef}, {"beta1Power", beta1Power},
                                     {"beta2Power", beta2Power}, {"lr", lr}, {"weightDecay", weightDecay},
                                     {"beta1", beta1}, {"beta2", beta2}, {"eps", eps}, {"grad", grad}}))
    return s;
  if (maxv)
    if (aclnnStatus s = check_tensor(op, "maxGradNormOptional", maxv)) return s;
  const aclTensor* same[4] = {mRef, vRef, grad, maxv};
  if (aclnnStatus s = check_apply_adamw(op, varRef, same, 4, hyper)) return s;
  const int64_t n = numel_of(shape_of(varRef));
  uint64_t wsb = 0;
  if (aclnnStatus s = workspace_bytes(op, n, 5 * 8, &wsb)) return s;
  TensorRef r[5] = {ref(varRef), ref(mRef), ref(vRef), ref(grad), ref(maxv)};
  std::vector<TensorRef> rh;
  for (const aclTensor* t : hyper) rh.push_back(ref(t));
  return make_executor(op, wsb, [=](KernelContext& k) {
    double h[7];  // beta1Power, beta2Power, lr, weightDecay, beta1, beta2, eps
    for (size_t i = 0; i < 7; ++i) {
      cpu::Strided v = k.view(rh[i]);
      cpu::copy(cpu::Strided(&h[i], DType::Float64, v.sizes, DimVector(v.sizes.size(), 0)), v);
    }
    if (n == 0) return;
    double* buf = static_cast<double*>(k.workspace());
    for (int i = 0; i < (amsgrad ? 5 : 4); ++i) stage_in(k.view(r[i]), buf + i * n);
    cpu::AdamWConfig cfg{h[2], h[4], h[5], h[3], h[6], amsgrad, maximize};
    cpu::apply_adamw_v1_f64(buf, buf + n, buf + 2 * n, buf + 3 * n, buf + 4 * n, n, h[0] * h[4], h[1] * h[5], cfg);
    for (int i = 0; i < 3; ++i) copy_back(k.view(r[i]), buf + i * n);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnApplyAdamW)

}  // namespace npu
}  // namespace ember
