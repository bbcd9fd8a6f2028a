// aclnn GroupNorm / GroupNormBackward (CANN's argument lists): self [N, C, ...] as N x C x HxW,
// normalized over each (sample, group of C / group channels), computed in double by
// cpu::group_norm_f64 / cpu::group_norm_backward_f64. Inputs are
// staged as float64 in the workspace; outputs must be contiguous.
#include <cmath>

#include "ember/device/cpu/norm.h"
#include "ember/device/npu/aclnn_common.h"
#include "ember/device/npu/descriptors.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {

struct GnPlan {
  int64_t N, C, HxW, group;
  int64_t D() const { return C / group * HxW; }  // elements of one (sample, group)
};
aclnnStatus check_plan(const char* op, const aclTensor* self, int64_t N, int64_t C, int64_t HxW, int64_t group,
                       GnPlan* p) {
  if (N < 0 || C <= 0 || HxW < 0 || group <= 0 || C % group != 0)
    return invalid(op, "N, C, HxW must be non-negative (C positive) and C divisible by group, got N " +
                           std::to_string(N) + ", C " + std::to_string(C) + ", HxW " + std::to_string(HxW) +
                           ", group " + std::to_string(group));
  IntArrayRef x = shape_of(self);
  // (divided one at a time: N C may overflow for an empty input with huge dims)
  if (x.size() < 2 || x[0] != N || x[1] != C || (N > 0 && numel_of(x) / N / C != HxW))
    return invalid(op, "self of shape " + shape_str(x) + " is not [N, C, ...] with N " + std::to_string(N) + ", C " +
                           std::to_string(C) + " and HxW " + std::to_string(HxW) + " trailing elements");
  *p = GnPlan{N, C, HxW, group};
  return ACLNN_SUCCESS;
}
aclnnStatus check_in(const char* op, const char* name, const aclTensor* t, IntArrayRef shape) {
  if (aclnnStatus s = check_tensor(op, name, t)) return s;
  if (aclnnStatus s = check_dtype(op, name, t, kFloats)) return s;
  return check_shape(op, name, t, shape);
}
// GroupNorm's inputs: self floating [N, C, ...] (named self_name), gamma and beta [C] when given,
// eps >= 0.
aclnnStatus check_gn_inputs(const char* op, const char* self_name, const aclTensor* self, const aclTensor* gamma,
                            const aclTensor* beta, int64_t N, int64_t C, int64_t HxW, int64_t group, double eps,
                            GnPlan* p) {
  if (aclnnStatus s = check_tensor(op, self_name, self)) return s;
  if (aclnnStatus s = check_dtype(op, self_name, self, kFloats)) return s;
  if (aclnnStatus s = check_plan(op, self, N, C, HxW, group, p)) return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"gamma", gamma}, {"beta", beta}})
    if (t)
      if (aclnnStatus s = check_in(op, name, t, {C})) return s;
  return eps >= 0 ? ACLNN_SUCCESS : invalid(op, "eps must be non-negative");
}
}  // namespace

// meanOut / rstdOut [N, group]: each group's mean and 1 / sqrt(biased variance + eps);
// out = (x - mean) rstd gamma[c] + beta[c] (gamma, beta [C] may be null).
extern "C" aclnnStatus aclnnGroupNormGetWorkspaceSize(const aclTensor* self, const aclTensor* gamma,
                                                      const aclTensor* beta, int64_t N, int64_t C, int64_t HxW,
                                                      int64_t group, double eps, aclTensor* out, aclTensor* meanOut,
                                                      aclTensor* rstdOut, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnGroupNorm";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}, {"meanOut", meanOut}, {"rstdOut", rstdOut}}))
    return s;
  GnPlan p;
  if (aclnnStatus s = check_gn_inputs(op, "self", self, gamma, beta, N, C, HxW, group, eps, &p)) return s;
  if (aclnnStatus s = check_float_out(op, "out", out, shape_of(self))) return s;
  if (aclnnStatus s = check_float_out(op, "meanOut", meanOut, {N, group})) return s;
  if (aclnnStatus s = check_float_out(op, "rstdOut", rstdOut, {N, group})) return s;
  uint64_t wsb = 0, y = 0, stats = 0;
  F64Input sx, sg, sb;
  for (auto [t, f] : {std::pair<const aclTensor*, F64Input*>{self, &sx}, {gamma, &sg}, {beta, &sb}})
    if (aclnnStatus s = stage_f64(op, t, &wsb, f)) return s;
  if (aclnnStatus s = reserve_f64(op, numel_of(shape_of(self)), &wsb, &y)) return s;
  int64_t stat_elems = 0;  // mean and rstd, [N, group] each
  if (__builtin_mul_overflow(N, group, &stat_elems) || __builtin_mul_overflow(stat_elems, int64_t(2), &stat_elems))
    return invalid(op, "N x group overflows");
  if (aclnnStatus s = reserve_f64(op, stat_elems, &wsb, &stats)) return s;
  TensorRef ro = ref(out), rm = ref(meanOut), rr = ref(rstdOut);
  return make_executor(op, wsb, [=](KernelContext& k) {
    double *o = f64_at(k, y), *mean = f64_at(k, stats), *rstd = mean + p.N * p.group;
    cpu::group_norm_f64(o, mean, rstd, sx.load(k), sg.load(k), sb.load(k), p.N, p.C, p.HxW, p.group, eps);
    store_f64(k, ro, o);
    store_f64(k, rm, mean);
    store_f64(k, rr, rstd);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnGroupNorm)

// With xhat = (x - mean) rstd and gg = gradOut gamma[c], per (sample, group) of D elements:
// gradInput = rstd (gg - mean(gg) - xhat mean(gg xhat)); per channel gradGamma = sum gradOut xhat,
// gradBeta = sum gradOut.
extern "C" aclnnStatus aclnnGroupNormBackwardGetWorkspaceSize(const aclTensor* gradOut, const aclTensor* input,
                                                              const aclTensor* mean, const aclTensor* rstd,
                                                              const aclTensor* gamma, int64_t N, int64_t C,
                                                              int64_t HxW, int64_t group,
                                                              const aclBoolArray* outputMask, aclTensor* gradInput,
                                                              aclTensor* gradGammaOut, aclTensor* gradBetaOut,
                                                              uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnGroupNormBackward";
  if (aclnnStatus s = check_not_null(op, {{"gradOut", gradOut}, {"input", input}, {"mean", mean}, {"rstd", rstd},
                                          {"outputMask", outputMask}}))
    return s;
  std::array<bool, 3> want{};
  if (aclnnStatus s = output_mask3(op, outputMask, {{"gradInput", gradInput}, {"gradGammaOut", gradGammaOut},
                                                    {"gradBetaOut", gradBetaOut}}, &want))
    return s;
  GnPlan p;
  if (aclnnStatus s = check_gn_inputs(op, "input", input, gamma, nullptr, N, C, HxW, group, 0.0, &p)) return s;
  if (aclnnStatus s = check_in(op, "gradOut", gradOut, shape_of(input))) return s;
  if (aclnnStatus s = check_in(op, "mean", mean, {N, group})) return s;
  if (aclnnStatus s = check_in(op, "rstd", rstd, {N, group})) return s;
  const std::pair<const char*, const aclTensor*> outs[] = {{"gradInput", gradInput}, {"gradGammaOut", gradGammaOut},
                                                           {"gradBetaOut", gradBetaOut}};
  for (int i = 0; i < 3; ++i)
    if (want[i])
      if (aclnnStatus s = check_float_out(op, outs[i].first, outs[i].second, i ? IntArrayRef({C}) : shape_of(input)))
        return s;
  uint64_t wsb = 0, gx = 0, sums = 0;
  F64Input sgo, sx, sm, sr, sgm;
  for (auto [t, f] : {std::pair<const aclTensor*, F64Input*>{gradOut, &sgo}, {input, &sx}, {mean, &sm}, {rstd, &sr},
                      {gamma, &sgm}})
    if (aclnnStatus s = stage_f64(op, t, &wsb, f)) return s;
  if (aclnnStatus s = reserve_f64(op, numel_of(shape_of(input)), &wsb, &gx)) return s;
  if (aclnnStatus s = reserve_f64(op, 2 * C, &wsb, &sums)) return s;
  TensorRef r[3];
  for (int i = 0; i < 3; ++i)
    if (want[i]) r[i] = ref(outs[i].second);
  return make_executor(op, wsb, [=](KernelContext& k) {
    double *dx = f64_at(k, gx), *dg = f64_at(k, sums), *db = dg + p.C;
    cpu::group_norm_backward_f64(dx, dg, db, sgo.load(k), sx.load(k), sm.load(k), sr.load(k), sgm.load(k), p.N, p.C,
                                 p.HxW, p.group);
    const double* vals[3] = {dx, dg, db};
    for (int i = 0; i < 3; ++i)
      if (want[i]) store_f64(k, r[i], vals[i]);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnGroupNormBackward)

}  // namespace npu
}  // namespace ember
