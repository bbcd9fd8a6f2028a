// aclnn Embedding / EmbeddingDenseBackward / ApplyAdamWV2 (CANN's argument lists), and ember's
// CrossEntropy / CrossEntropyGrad extensions. Non-contiguous inputs are staged in the workspace;
// outputs (and the AdamW state updated in place) must be contiguous.
#include "ember/device/cpu/nn.h"
#include "ember/device/npu/aclnn_common.h"
#include "ember/core/error.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {
const std::initializer_list<DType> kFloats = {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64};
const std::initializer_list<DType> kIndex = {DType::Int64, DType::Int32};

aclnnStatus check_all(const char* op, std::initializer_list<std::pair<const char*, const aclTensor*>> ts) {
  for (auto [name, t] : ts)
    if (aclnnStatus s = check_tensor(op, name, t)) return s;
  return ACLNN_SUCCESS;
}
aclnnStatus check_contiguous(const char* op, const char* name, const aclTensor* t) {
  return is_contiguous(t) ? ACLNN_SUCCESS : invalid(op, std::string(name) + " must be contiguous");
}
}  // namespace

extern "C" aclnnStatus aclnnEmbeddingGetWorkspaceSize(const aclTensor* weight, const aclTensor* indices,
                                                      const aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnEmbedding";
  if (aclnnStatus s = check_not_null(op, {{"weight", weight}, {"indices", indices}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"weight", weight}, {"indices", indices}, {"out", out}})) return s;
  if (aclnnStatus s = check_dtype(op, "indices", indices, kIndex)) return s;
  IntArrayRef w = shape_of(weight), ix = shape_of(indices);
  if (w.size() != 2) return invalid(op, "weight must be 2-D, got shape " + shape_str(w));
  std::vector<int64_t> expect(ix.begin(), ix.end());
  expect.push_back(w[1]);
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef(expect))) return s;
  if (dtype_of(out) != dtype_of(weight)) return invalid(op, "out must have weight's dtype");
  if (aclnnStatus s = check_contiguous(op, "out", out)) return s;
  uint64_t wsb = 0;
  StagedInput sw = stage_if_strided(weight, &wsb), si = stage_if_strided(indices, &wsb);
  TensorRef ro = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided wv = sw.view(k), iv = si.view(k), ov = k.view(ro);
    cpu::embedding(ov, wv, iv, "aclnnEmbedding");
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnEmbedding)

extern "C" aclnnStatus aclnnEmbeddingDenseBackwardGetWorkspaceSize(const aclTensor* grad, const aclTensor* sortIndices,
                                                                   uint64_t numWeights, uint64_t paddingIdx,
                                                                   bool scaleGradByFreq, const aclTensor* out, uint64_t* ws,
                                                                   aclOpExecutor** ex) {
  const char* op = "aclnnEmbeddingDenseBackward";
  if (aclnnStatus s = check_not_null(op, {{"grad", grad}, {"sortIndices", sortIndices}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"grad", grad}, {"sortIndices", sortIndices}, {"out", out}})) return s;
  if (aclnnStatus s = check_dtype(op, "sortIndices", sortIndices, kIndex)) return s;
  if (aclnnStatus s = check_dtype(op, "grad", grad, kFloats)) return s;
  IntArrayRef g = shape_of(grad), ix = shape_of(sortIndices);
  int64_t n = numel_of(ix);
  if (g.empty() || numel_of(g) != n * g.back())
    return invalid(op, "grad of shape " + shape_str(g) + " does not hold one row per index of " + shape_str(ix));
  std::vector<int64_t> expect{static_cast<int64_t>(numWeights), g.back()};
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef(expect))) return s;
  if (aclnnStatus s = check_contiguous(op, "out", out)) return s;
  uint64_t wsb = 0;
  StagedInput sg = stage_if_strided(grad, &wsb), si = stage_if_strided(sortIndices, &wsb);
  TensorRef ro = ref(out);
  int64_t pad = paddingIdx >= numWeights ? -1 : static_cast<int64_t>(paddingIdx);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided gv = sg.view(k), iv = si.view(k), ov = k.view(ro);
    cpu::embedding_backward(ov, gv, iv, pad, scaleGradByFreq, "aclnnEmbeddingDenseBackward");
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnEmbeddingDenseBackward)

namespace {
aclnnStatus check_logits_target(const char* op, const aclTensor* logits, const aclTensor* target) {
  if (aclnnStatus s = check_dtype(op, "logits", logits, kFloats)) return s;
  if (aclnnStatus s = check_dtype(op, "target", target, {DType::Int64})) return s;
  IntArrayRef l = shape_of(logits), t = shape_of(target);
  if (l.size() != 2 || t.size() != 1 || t[0] != l[0])
    return invalid(op, "expects logits [N, C] and target [N], got " + shape_str(l) + " and " + shape_str(t));
  return ACLNN_SUCCESS;
}
}  // namespace

extern "C" aclnnStatus aclnnEmberCrossEntropyGetWorkspaceSize(const aclTensor* logits, const aclTensor* target,
                                                              int64_t ignoreIndex, aclTensor* out, uint64_t* ws,
                                                              aclOpExecutor** ex) {
  const char* op = "aclnnEmberCrossEntropy";
  if (aclnnStatus s = check_not_null(op, {{"logits", logits}, {"target", target}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"logits", logits}, {"target", target}, {"out", out}})) return s;
  if (aclnnStatus s = check_logits_target(op, logits, target)) return s;
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef())) return s;
  if (aclnnStatus s = check_dtype(op, "out", out, kFloats)) return s;
  uint64_t wsb = 0;
  StagedInput sl = stage_if_strided(logits, &wsb), st = stage_if_strided(target, &wsb);
  TensorRef ro = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided lv = sl.view(k), tv = st.view(k), ov = k.view(ro);
    cpu::cross_entropy(ov, lv, tv, ignoreIndex, "aclnnEmberCrossEntropy");
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnEmberCrossEntropy)

extern "C" aclnnStatus aclnnEmberCrossEntropyGradGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* logits,
                                                                  const aclTensor* target, int64_t ignoreIndex,
                                                                  aclTensor* gradInput, uint64_t* ws,
                                                                  aclOpExecutor** ex) {
  const char* op = "aclnnEmberCrossEntropyGrad";
  if (aclnnStatus s = check_not_null(op, {{"gradOutput", gradOutput}, {"logits", logits}, {"target", target},
                                          {"gradInput", gradInput}}))
    return s;
  if (aclnnStatus s = check_all(op, {{"gradOutput", gradOutput}, {"logits", logits}, {"target", target},
                                     {"gradInput", gradInput}}))
    return s;
  if (aclnnStatus s = check_logits_target(op, logits, target)) return s;
  if (aclnnStatus s = check_shape(op, "gradOutput", gradOutput, IntArrayRef())) return s;
  if (aclnnStatus s = check_shape(op, "gradInput", gradInput, shape_of(logits))) return s;
  if (aclnnStatus s = check_contiguous(op, "gradInput", gradInput)) return s;
  uint64_t wsb = 0;
  StagedInput sl = stage_if_strided(logits, &wsb), st = stage_if_strided(target, &wsb);
  TensorRef rg = ref(gradOutput), ro = ref(gradInput);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided lv = sl.view(k), tv = st.view(k), gv = k.view(rg), ov = k.view(ro);
    cpu::cross_entropy_backward(ov, gv, lv, tv, ignoreIndex, "aclnnEmberCrossEntropyGrad");
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnEmberCrossEntropyGrad)

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
  IntArrayRef shape = shape_of(varRef);
  std::vector<std::pair<const char*, const aclTensor*>> state{{"varRef", varRef}, {"mRef", mRef}, {"vRef", vRef}};
  if (amsgrad) state.emplace_back("maxGradNormOptionalRef", maxGradNormOptionalRef);
  for (auto [name, t] : state) {
    if (amsgrad && t == maxGradNormOptionalRef)
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
  if (!(lr >= 0) || !(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) || !(eps >= 0) || !(weightDecay >= 0))
    return invalid(op, "needs lr >= 0, 0 <= beta1, beta2 < 1, eps >= 0 and weightDecay >= 0");
  uint64_t wsb = 0;
  StagedInput sg = stage_if_strided(grad, &wsb);
  TensorRef rp = ref(varRef), rm = ref(mRef), rv = ref(vRef), rs = ref(step);
  TensorRef rmax = amsgrad ? ref(maxGradNormOptionalRef) : TensorRef();
  cpu::AdamWConfig cfg;
  cfg.lr = lr;
  cfg.beta1 = beta1;
  cfg.beta2 = beta2;
  cfg.weight_decay = weightDecay;
  cfg.eps = eps;
  cfg.amsgrad = amsgrad;
  cfg.maximize = maximize;
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided sv = k.view(rs);
    int64_t t = sv.dtype == DType::Int64 ? *static_cast<const int64_t*>(sv.data)
                                         : static_cast<int64_t>(*static_cast<const float*>(sv.data));
    EMBER_CHECK_VALUE(t >= 1, "aclnnApplyAdamWV2: step must be at least 1 when the kernel runs, got ", t);
    cpu::Strided mv = amsgrad ? k.view(rmax) : cpu::Strided();
    cpu::adamw_step(k.view(rp), k.view(rm), k.view(rv), mv, sg.view(k), t, cfg);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnApplyAdamWV2)

}  // namespace npu
}  // namespace ember
