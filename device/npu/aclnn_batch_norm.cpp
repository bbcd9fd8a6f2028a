// aclnn BatchNorm / BatchNormBackward (CANN's argument lists) over input [N, C, ...]: per channel,
// statistics over N and the trailing dims, computed in double by cpu::batch_norm_f64 /
// cpu::batch_norm_backward_f64. Inputs are staged as float64 in
// the workspace; outputs must be contiguous.
#include <cmath>

#include "ember/device/cpu/norm.h"
#include "ember/device/npu/aclnn_common.h"
#include "ember/device/npu/descriptors.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {

// input [N, C, ...] as N x C x S (S: the trailing dims' product).
using BnShape = cpu::BatchNormShape;
aclnnStatus bn_shape(const char* op, const aclTensor* input, BnShape* s) {
  IntArrayRef x = shape_of(input);
  if (x.size() < 2) return invalid(op, "input must be [N, C, ...], got shape " + shape_str(x));
  s->N = x[0];
  s->C = x[1];
  for (size_t d = 2; d < x.size(); ++d)
    if (__builtin_mul_overflow(s->S, x[d], &s->S)) return invalid(op, "input's trailing dims overflow: " + shape_str(x));
  return ACLNN_SUCCESS;
}
// An optional per-channel [C] tensor: floating, of C values.
aclnnStatus check_channel(const char* op, const char* name, const aclTensor* t, int64_t C) {
  if (!t) return ACLNN_SUCCESS;
  if (aclnnStatus s = check_tensor(op, name, t)) return s;
  if (aclnnStatus s = check_dtype(op, name, t, kFloats)) return s;
  return check_shape(op, name, t, {C});
}
// BatchNorm's parameters and statistics: [C] each when given; both running statistics or
// neither (evaluation needs them; they are written in place, so contiguous); more than one value
// per channel to train on; eps non-negative.
aclnnStatus check_bn_args(const char* op, const aclTensor* input, const BnShape& b, const aclTensor* weight,
                          const aclTensor* bias, const aclTensor* runningMean, const aclTensor* runningVar,
                          bool training, double eps) {
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"weight", weight}, {"bias", bias},
                         {"runningMean", runningMean}, {"runningVar", runningVar}})
    if (aclnnStatus s = check_channel(op, name, t, b.C)) return s;
  if (!training && (!runningMean || !runningVar)) return invalid(op, "evaluation needs runningMean and runningVar");
  if ((runningMean == nullptr) != (runningVar == nullptr)) return invalid(op, "give both runningMean and runningVar, or neither");
  if (training && b.N * b.S <= 1)
    return invalid(op, "expected more than 1 value per channel when training, got input " + shape_str(shape_of(input)));
  if (!(eps >= 0)) return invalid(op, "eps must be non-negative");
  if (runningMean && (!is_contiguous(runningMean) || !is_contiguous(runningVar)))
    return invalid(op, "runningMean and runningVar are written in place: they must be contiguous");
  return ACLNN_SUCCESS;
}
}  // namespace

// training: per channel the batch mean and 1 / sqrt(biased variance + eps) (saveMean,
// saveInvstd); runningMean / runningVar, when given, become (1 - momentum) r + momentum stat
// (the unbiased variance). Otherwise the running statistics normalize (saveMean = runningMean,
// saveInvstd = 1 / sqrt(runningVar + eps)). output = (x - mean) invstd weight + bias.
extern "C" aclnnStatus aclnnBatchNormGetWorkspaceSize(const aclTensor* input, const aclTensor* weight,
                                                      const aclTensor* bias, aclTensor* runningMean,
                                                      aclTensor* runningVar, bool training, double momentum,
                                                      double eps, aclTensor* output, aclTensor* saveMean,
                                                      aclTensor* saveInvstd, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnBatchNorm";
  if (aclnnStatus s = check_not_null(op, {{"input", input}, {"output", output}, {"saveMean", saveMean},
                                          {"saveInvstd", saveInvstd}}))
    return s;
  if (aclnnStatus s = check_tensor(op, "input", input)) return s;
  if (aclnnStatus s = check_dtype(op, "input", input, kFloats)) return s;
  BnShape b;
  if (aclnnStatus s = bn_shape(op, input, &b)) return s;
  if (aclnnStatus s = check_bn_args(op, input, b, weight, bias, runningMean, runningVar, training, eps)) return s;
  if (aclnnStatus s = check_float_out(op, "output", output, shape_of(input))) return s;
  if (aclnnStatus s = check_float_out(op, "saveMean", saveMean, {b.C})) return s;
  if (aclnnStatus s = check_float_out(op, "saveInvstd", saveInvstd, {b.C})) return s;
  uint64_t wsb = 0, y = 0, stats = 0;
  F64Input sx, sw, sb, srm, srv;
  for (auto [t, f] : {std::pair<const aclTensor*, F64Input*>{input, &sx}, {weight, &sw}, {bias, &sb}, {runningMean, &srm},
                      {runningVar, &srv}})
    if (aclnnStatus s = stage_f64(op, t, &wsb, f)) return s;
  if (aclnnStatus s = reserve_f64(op, numel_of(shape_of(input)), &wsb, &y)) return s;
  if (aclnnStatus s = reserve_f64(op, 2 * b.C, &wsb, &stats)) return s;
  TensorRef ro = ref(output), rm = ref(saveMean), ri = ref(saveInvstd);
  TensorRef rrm = runningMean ? ref(runningMean) : TensorRef(), rrv = runningVar ? ref(runningVar) : TensorRef();
  const bool update = training && runningMean;
  return make_executor(op, wsb, [=](KernelContext& k) {
    // (the staged running statistics are updated where they are, then stored)
    double *out = f64_at(k, y), *mean = f64_at(k, stats), *invstd = mean + b.C;
    double* rmean = const_cast<double*>(srm.load(k));  // null when absent
    double* rvar = const_cast<double*>(srv.load(k));
    cpu::batch_norm_f64(out, mean, invstd, rmean, rvar, sx.load(k), sw.load(k), sb.load(k), b, training, momentum, eps);
    store_f64(k, ro, out);
    store_f64(k, rm, mean);
    store_f64(k, ri, invstd);
    if (update) {
      store_f64(k, rrm, f64_at(k, srm.offset));
      store_f64(k, rrv, f64_at(k, srv.offset));
    }
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnBatchNorm)

namespace {
// BatchNormBackward's inputs: gradOut and input floating, of one shape [N, C, ...]; the [C]
// parameters and statistics when given (training needs the saved ones, evaluation runningVar).
aclnnStatus check_bn_backward_inputs(const char* op, const aclTensor* gradOut, const aclTensor* input,
                                     const aclTensor* weight, const aclTensor* runningMean,
                                     const aclTensor* runningVar, const aclTensor* saveMean,
                                     const aclTensor* saveInvstd, bool training, double eps, BnShape* b) {
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"gradOut", gradOut}, {"input", input}}) {
    if (aclnnStatus s = check_tensor(op, name, t)) return s;
    if (aclnnStatus s = check_dtype(op, name, t, kFloats)) return s;
  }
  if (aclnnStatus s = bn_shape(op, input, b)) return s;
  if (aclnnStatus s = check_shape(op, "gradOut", gradOut, shape_of(input))) return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"weight", weight}, {"runningMean", runningMean},
                         {"runningVar", runningVar}, {"saveMean", saveMean}, {"saveInvstd", saveInvstd}})
    if (aclnnStatus s = check_channel(op, name, t, b->C)) return s;
  if (training && (!saveMean || !saveInvstd)) return invalid(op, "training needs saveMean and saveInvstd");
  if (!training && !runningVar) return invalid(op, "evaluation needs runningVar");
  return eps >= 0 ? ACLNN_SUCCESS : invalid(op, "eps must be non-negative");
}
}  // namespace

// training: with xhat = (x - saveMean) saveInvstd, per channel gradBias = sum g, gradWeight =
// sum g xhat, gradInput = weight saveInvstd / n (n g - gradBias - xhat gradWeight). Otherwise
// the running statistics: gradInput = g weight / sqrt(runningVar + eps).
extern "C" aclnnStatus aclnnBatchNormBackwardGetWorkspaceSize(
    const aclTensor* gradOut, const aclTensor* input, const aclTensor* weight, const aclTensor* runningMean,
    const aclTensor* runningVar, const aclTensor* saveMean, const aclTensor* saveInvstd, bool training, double eps,
    const aclBoolArray* outputMask, aclTensor* gradInput, aclTensor* gradWeight, aclTensor* gradBias, uint64_t* ws,
    aclOpExecutor** ex) {
  const char* op = "aclnnBatchNormBackward";
  if (aclnnStatus s = check_not_null(op, {{"gradOut", gradOut}, {"input", input}, {"outputMask", outputMask}})) return s;
  std::array<bool, 3> want{};
  if (aclnnStatus s = output_mask3(op, outputMask, {{"gradInput", gradInput}, {"gradWeight", gradWeight},
                                                    {"gradBias", gradBias}}, &want))
    return s;
  BnShape b;
  if (aclnnStatus s = check_bn_backward_inputs(op, gradOut, input, weight, runningMean, runningVar, saveMean,
                                               saveInvstd, training, eps, &b))
    return s;
  const std::pair<const char*, const aclTensor*> outs[] = {{"gradInput", gradInput}, {"gradWeight", gradWeight},
                                                           {"gradBias", gradBias}};
  for (int i = 0; i < 3; ++i)
    if (want[i])
      if (aclnnStatus s = check_float_out(op, outs[i].first, outs[i].second, i ? IntArrayRef({b.C}) : shape_of(input)))
        return s;
  uint64_t wsb = 0, gx = 0, sums = 0;
  F64Input sg, sx, sw, srm, srv, ssm, ssi;
  for (auto [t, f] : {std::pair<const aclTensor*, F64Input*>{gradOut, &sg}, {input, &sx}, {weight, &sw},
                      {runningMean, &srm}, {runningVar, &srv}, {saveMean, &ssm}, {saveInvstd, &ssi}})
    if (aclnnStatus s = stage_f64(op, t, &wsb, f)) return s;
  if (aclnnStatus s = reserve_f64(op, numel_of(shape_of(input)), &wsb, &gx)) return s;
  if (aclnnStatus s = reserve_f64(op, 2 * b.C, &wsb, &sums)) return s;
  TensorRef rgx = want[0] ? ref(gradInput) : TensorRef(), rgw = want[1] ? ref(gradWeight) : TensorRef(),
            rgb = want[2] ? ref(gradBias) : TensorRef();
  return make_executor(op, wsb, [=](KernelContext& k) {
    double *dx = f64_at(k, gx), *gb = f64_at(k, sums), *gw = gb + b.C;
    cpu::batch_norm_backward_f64(dx, gw, gb, sg.load(k), sx.load(k), sw.load(k), srm.load(k), srv.load(k), ssm.load(k),
                                 ssi.load(k), b, training, eps);
    if (want[0]) store_f64(k, rgx, dx);
    if (want[1]) store_f64(k, rgw, gw);
    if (want[2]) store_f64(k, rgb, gb);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnBatchNormBackward)

}  // namespace npu
}  // namespace ember
