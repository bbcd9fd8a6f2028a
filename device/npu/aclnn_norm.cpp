// aclnn RmsNorm / RmsNormGrad / LayerNorm. gamma covers x's trailing dims; rstd is float32 (float64 allowed
// for float64 x) with x's leading dims and 1 for each normalised dim. Non-contiguous inputs are staged in the workspace.
#include <cstring>

#include "ember/device/cpu/norm.h"
#include "ember/device/npu/aclnn_common.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {
constexpr aclnnStatus kTilingError = 561002;  // CANN reports gamma/shape violations at tiling


// rows x D of x for a gamma of g_dims trailing dims; the expected rstd shape.
aclnnStatus norm_geometry(const char* op, const aclTensor* x, const aclTensor* gamma, int64_t* rows, int64_t* D,
                          std::vector<int64_t>* rstd_shape) {
  IntArrayRef xs = shape_of(x), gs = shape_of(gamma);
  if (gs.empty() || gs.size() > xs.size())
    return error(kTilingError, std::string(op) + ": gamma of shape " + shape_str(gs) + " must cover trailing dims of x " +
                                  shape_str(xs));
  size_t lead = xs.size() - gs.size();
  for (size_t i = 0; i < gs.size(); ++i)
    if (xs[lead + i] != gs[i])
      return error(kTilingError, std::string(op) + ": gamma shape " + shape_str(gs) + " does not match the trailing dims of x " +
                                    shape_str(xs));
  *D = numel_of(gs);
  *rows = *D ? numel_of(xs) / *D : 0;
  rstd_shape->assign(xs.begin(), xs.end());
  for (size_t i = lead; i < xs.size(); ++i) (*rstd_shape)[i] = 1;
  return ACLNN_SUCCESS;
}


}  // namespace

extern "C" aclnnStatus aclnnRmsNormGetWorkspaceSize(const aclTensor* x, const aclTensor* gamma, double epsilon,
                                                    const aclTensor* yOut, const aclTensor* rstdOut, uint64_t* ws,
                                                    aclOpExecutor** ex) {
  const char* op = "aclnnRmsNorm";
  if (aclnnStatus s = check_not_null(op, {{"x", x}, {"gamma", gamma}, {"yOut", yOut}, {"rstdOut", rstdOut}})) return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"x", x}, {"gamma", gamma}, {"yOut", yOut},
                         {"rstdOut", rstdOut}})
    if (aclnnStatus s = check_tensor(op, name, t)) return s;
  if (aclnnStatus s = check_dtype(op, "x", x, kFloats)) return s;
  if (aclnnStatus s = check_dtype(op, "gamma", gamma, kFloats)) return s;
  // float32 as on CANN; float64 too for float64 x (ember's float64 extension keeps gradcheck exact).
  if (aclnnStatus s = check_dtype(op, "rstdOut", rstdOut, {DType::Float32, dtype_of(x) == DType::Float64 ? DType::Float64 : DType::Float32})) return s;
  if (epsilon < 0) return invalid(op, "epsilon must be non-negative");
  int64_t rows, D;
  std::vector<int64_t> rshape;
  if (aclnnStatus s = norm_geometry(op, x, gamma, &rows, &D, &rshape)) return s;
  if (aclnnStatus s = check_shape(op, "yOut", yOut, shape_of(x))) return s;
  // One rstd per row. CANN documents rstdOut as x's shape with the normalised dims 1; real
  // clients (ggml's CANN backend) pass x's leading dims only and its kernel takes them: any
  // shape of one value per row is accepted, as RmsNormGrad's rstd is.
  if (numel_of(shape_of(rstdOut)) != rows)
    return invalid(op, "rstdOut " + shape_str(shape_of(rstdOut)) + " must hold one value per row of x (" +
                           std::to_string(rows) + "), e.g. shape " + shape_str(IntArrayRef(rshape)));
  if (dtype_of(yOut) != dtype_of(x)) return invalid(op, "yOut must have x's dtype");
  // CANN's dtype table: gamma of x's dtype, or float32 for a float16/bfloat16 x.
  if (dtype_of(gamma) != dtype_of(x) &&
      !(dtype_of(gamma) == DType::Float32 && (dtype_of(x) == DType::Float16 || dtype_of(x) == DType::BFloat16))) {
    std::ostringstream os;
    os << "gamma (" << dtype_of(gamma) << ") must have x's dtype (" << dtype_of(x)
       << "), or be float32 for a float16 or bfloat16 x";
    return invalid(op, os.str());
  }
  if (!is_contiguous(yOut) || !is_contiguous(rstdOut)) return invalid(op, "yOut and rstdOut must be contiguous");
  uint64_t wsb = 0;
  StagedInput sx = stage_if_strided(x, &wsb), sg = stage_if_strided(gamma, &wsb);
  TensorRef ry = ref(yOut), rr = ref(rstdOut);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::rms_norm(k.view(ry), k.view(rr), sx.view(k), sg.view(k), epsilon, rows, D);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnRmsNorm)

// CANN header aclnnop/aclnn_add_rms_norm.h: xOut = x1 + x2 (rounded to x1's dtype), then yOut = rms_norm(xOut) * gamma over gamma's trailing dims, rstdOut = 1 / sqrt(mean(xOut^2) + epsilon) per row (float32)
extern "C" aclnnStatus aclnnAddRmsNormGetWorkspaceSize(const aclTensor* x1, const aclTensor* x2, const aclTensor* gamma,
                                                       double epsilon, aclTensor* yOut, aclTensor* rstdOut,
                                                       aclTensor* xOut, uint64_t* workspaceSize,
                                                       aclOpExecutor** executor) {
  const char* op = "aclnnAddRmsNorm";
  if (aclnnStatus s = check_not_null(op, {{"x1", x1}, {"x2", x2}, {"gamma", gamma}, {"yOut", yOut},
                                          {"rstdOut", rstdOut}, {"xOut", xOut}}))
    return s;
  if (aclnnStatus s = check_all(op, {{"x1", x1}, {"x2", x2}, {"gamma", gamma}, {"yOut", yOut}, {"rstdOut", rstdOut},
                                     {"xOut", xOut}}))
    return s;
  if (aclnnStatus s = check_dtype(op, "x1", x1, {DType::Float32, DType::Float16, DType::BFloat16})) return s;
  if (dtype_of(x2) != dtype_of(x1) || dtype_of(gamma) != dtype_of(x1) || dtype_of(yOut) != dtype_of(x1) ||
      dtype_of(xOut) != dtype_of(x1))
    return invalid(op, "x2, gamma, yOut and xOut must have x1's dtype");
  if (aclnnStatus s = check_dtype(op, "rstdOut", rstdOut, {DType::Float32})) return s;
  if (epsilon < 0) return invalid(op, "epsilon must be non-negative");
  int64_t rows, D;
  std::vector<int64_t> rshape;
  if (aclnnStatus s = norm_geometry(op, x1, gamma, &rows, &D, &rshape)) return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"x2", x2}, {"yOut", yOut}, {"xOut", xOut}})
    if (aclnnStatus s = check_shape(op, name, t, shape_of(x1))) return s;
  if (numel_of(shape_of(rstdOut)) != rows)
    return invalid(op, "rstdOut " + shape_str(shape_of(rstdOut)) + " must hold one value per row of x1 (" +
                           std::to_string(rows) + "), e.g. shape " + shape_str(IntArrayRef(rshape)));
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"yOut", yOut}, {"rstdOut", rstdOut}, {"xOut", xOut}})
    if (aclnnStatus s = check_contiguous(op, name, t)) return s;
  // x1 or x2 may be xOut itself (an in-place residual), never part of it.
  if (aclnnStatus s = check_overlap(op, "xOut", xOut, {{"x1", x1}, {"x2", x2}, {"gamma", gamma}})) return s;
  if (aclnnStatus s = check_overlap(op, "yOut", yOut, {{"x1", x1}, {"x2", x2}, {"gamma", gamma}, {"xOut", xOut}}, false))
    return s;
  uint64_t wsb = 0;
  F64Input a, b;
  if (aclnnStatus s = stage_f64(op, x1, &wsb, &a)) return s;
  if (aclnnStatus s = stage_f64(op, x2, &wsb, &b)) return s;
  StagedInput sg = stage_if_strided(gamma, &wsb);
  TensorRef ry = ref(yOut), rr = ref(rstdOut), rx = ref(xOut);
  const int64_t n = rows * D;
  return make_executor(op, wsb, [=](KernelContext& k) {
    double* sum = const_cast<double*>(a.load(k));
    const double* y = b.load(k);
    for (int64_t i = 0; i < n; ++i) sum[i] += y[i];
    store_f64(k, rx, sum);
    cpu::rms_norm(k.view(ry), k.view(rr), k.view(rx), sg.view(k), epsilon, rows, D);
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnAddRmsNorm)

// LayerNorm over the trailing dims normalizedShape names: out = (input - mean) * rstd * weight +
// bias; meanOut / rstdOut (optional) per row, shaped as input with those dims kept as 1.
namespace {
// LayerNorm's affine parameters (floating, the normalised dims' shape) and outputs: out as input,
// meanOut / rstdOut (float32 or input's dtype) with the normalised dims as 1; all contiguous.
aclnnStatus check_ln_outputs(const char* op, const aclTensor* input, size_t lead, const aclTensor* weight,
                             const aclTensor* bias, const aclTensor* out, const aclTensor* mean_out,
                             const aclTensor* rstd_out) {
  IntArrayRef xs = shape_of(input), ns(xs.begin() + lead, xs.size() - lead);
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"weightOptional", weight}, {"biasOptional", bias}})
    if (t) {
      if (aclnnStatus s = check_dtype(op, name, t, kFloats)) return s;
      if (aclnnStatus s = check_shape(op, name, t, ns)) return s;
    }
  std::vector<int64_t> stat_shape(xs.begin(), xs.end());
  for (size_t i = lead; i < xs.size(); ++i) stat_shape[i] = 1;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"meanOutOptional", mean_out},
                         {"rstdOutOptional", rstd_out}})
    if (t) {
      if (aclnnStatus s = check_shape(op, name, t, IntArrayRef(stat_shape))) return s;
      if (aclnnStatus s = check_dtype(op, name, t, {DType::Float32, dtype_of(input)})) return s;
      if (!is_contiguous(t)) return invalid(op, std::string(name) + " must be contiguous");
    }
  if (aclnnStatus s = check_shape(op, "out", out, xs)) return s;
  return is_contiguous(out) ? ACLNN_SUCCESS : invalid(op, "out must be contiguous");
}

aclnnStatus layer_norm_op(const char* op, const aclTensor* input, const aclIntArray* normalizedShape,
                          const aclTensor* weightOptional, const aclTensor* biasOptional, double eps, aclTensor* out,
                          aclTensor* meanOutOptional, aclTensor* rstdOutOptional, uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"input", input}, {"normalizedShape", normalizedShape}, {"out", out}}))
    return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"input", input}, {"out", out},
                         {"weightOptional", weightOptional}, {"biasOptional", biasOptional},
                         {"meanOutOptional", meanOutOptional}, {"rstdOutOptional", rstdOutOptional}})
    if (t)
      if (aclnnStatus s = check_tensor(op, name, t)) return s;
  if (aclnnStatus s = check_dtype(op, "input", input, kFloats)) return s;
  if (dtype_of(out) != dtype_of(input)) return invalid(op, "out must have input's dtype");
  if (eps < 0) return invalid(op, "eps must be non-negative");
  const std::vector<int64_t> ns = int_array(normalizedShape);
  IntArrayRef xs = shape_of(input);
  if (ns.empty() || ns.size() > xs.size())
    return invalid(op, "normalizedShape " + shape_str(IntArrayRef(ns)) + " must name 1 to " +
                           std::to_string(xs.size()) + " trailing dims of input " + shape_str(xs));
  const size_t lead = xs.size() - ns.size();
  if (IntArrayRef(ns) != IntArrayRef(xs.begin() + lead, ns.size()))
    return invalid(op, "normalizedShape " + shape_str(IntArrayRef(ns)) + " does not match the trailing dims of input " +
                           shape_str(xs));
  if (aclnnStatus s = check_ln_outputs(op, input, lead, weightOptional, biasOptional, out, meanOutOptional,
                                       rstdOutOptional))
    return s;
  const int64_t D = numel_of(IntArrayRef(ns));
  const int64_t rows = D ? numel_of(xs) / D : 0;
  uint64_t wsb = 0;
  StagedInput sx = stage_if_strided(input, &wsb);
  StagedInput sw = weightOptional ? stage_if_strided(weightOptional, &wsb) : StagedInput();
  StagedInput sb = biasOptional ? stage_if_strided(biasOptional, &wsb) : StagedInput();
  TensorRef ro = ref(out), rm = ref(meanOutOptional), rr = ref(rstdOutOptional);
  const bool has_w = weightOptional, has_b = biasOptional, has_m = meanOutOptional, has_r = rstdOutOptional;
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided none;
    cpu::layer_norm(k.view(ro), has_m ? k.view(rm) : none, has_r ? k.view(rr) : none, sx.view(k),
                    has_w ? sw.view(k) : none, has_b ? sb.view(k) : none, eps, rows, D);
  }, ws, ex);
}
}  // namespace

extern "C" aclnnStatus aclnnLayerNormGetWorkspaceSize(const aclTensor* input, const aclIntArray* normalizedShape,
                                                      const aclTensor* weightOptional, const aclTensor* biasOptional,
                                                      double eps, aclTensor* out, aclTensor* meanOutOptional,
                                                      aclTensor* rstdOutOptional, uint64_t* ws, aclOpExecutor** ex) {
  return layer_norm_op("aclnnLayerNorm", input, normalizedShape, weightOptional, biasOptional, eps, out,
                       meanOutOptional, rstdOutOptional, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnLayerNorm)

// implMode (0 high precision, 1 high performance, 2 keep fp16) picks a hardware kernel; the
// emulator computes every mode the high-precision way.
extern "C" aclnnStatus aclnnLayerNormWithImplModeGetWorkspaceSize(
    const aclTensor* input, const aclIntArray* normalizedShape, const aclTensor* weightOptional,
    const aclTensor* biasOptional, double eps, aclTensor* out, aclTensor* meanOutOptional, aclTensor* rstdOutOptional,
    int32_t implMode, uint64_t* ws, aclOpExecutor** ex) {
  if (implMode < 0 || implMode > 2)
    return invalid("aclnnLayerNormWithImplMode", "implMode must be 0, 1 or 2, got " + std::to_string(implMode));
  return layer_norm_op("aclnnLayerNormWithImplMode", input, normalizedShape, weightOptional, biasOptional, eps, out,
                       meanOutOptional, rstdOutOptional, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnLayerNormWithImplMode)

// LayerNormBackward: per row of D elements (the trailing dims normalizedShape names), with
// xhat = (x - mean) rstd and g = gradOut weight: gradInput = rstd (g - mean(g) - xhat mean(g xhat));
// over rows gradWeight = sum gradOut xhat, gradBias = sum gradOut: cpu::layer_norm_backward's math,
// the CPU op's too. Non-contiguous inputs are staged in the workspace.
namespace {
struct LnBackwardArgs {
  const aclTensor *gradOut, *input, *mean, *rstd, *weight;
  std::vector<int64_t> ns;
};
// The inputs: floating tensors, normalizedShape the trailing dims of input, gradOut input's
// shape, mean and rstd one value per row (input's shape with the normalised dims 1), weight ns.
aclnnStatus check_ln_backward_inputs(const char* op, const LnBackwardArgs& a) {
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"gradOut", a.gradOut}, {"input", a.input},
                         {"mean", a.mean}, {"rstd", a.rstd}, {"weightOptional", a.weight}})
    if (t) {
      if (aclnnStatus s = check_tensor(op, name, t)) return s;
      if (aclnnStatus s = check_dtype(op, name, t, kFloats)) return s;
    }
  IntArrayRef xs = shape_of(a.input), ns(a.ns);
  if (ns.empty() || ns.size() > xs.size() || ns != IntArrayRef(xs.begin() + (xs.size() - ns.size()), ns.size()))
    return invalid(op, "normalizedShape " + shape_str(ns) + " does not match the trailing dims of input " + shape_str(xs));
  std::vector<int64_t> stat_shape(xs.begin(), xs.end());
  for (size_t i = xs.size() - ns.size(); i < xs.size(); ++i) stat_shape[i] = 1;
  if (aclnnStatus s = check_shape(op, "gradOut", a.gradOut, xs)) return s;
  if (aclnnStatus s = check_shape(op, "mean", a.mean, IntArrayRef(stat_shape))) return s;
  if (aclnnStatus s = check_shape(op, "rstd", a.rstd, IntArrayRef(stat_shape))) return s;
  if (a.weight)
    if (aclnnStatus s = check_shape(op, "weightOptional", a.weight, ns)) return s;
  return ACLNN_SUCCESS;
}
// A wanted output: a contiguous floating tensor of the given shape.
aclnnStatus check_grad_out(const char* op, const char* name, const aclTensor* t, IntArrayRef shape) {
  if (aclnnStatus s = check_tensor(op, name, t)) return s;
  if (aclnnStatus s = check_dtype(op, name, t, kFloats)) return s;
  if (aclnnStatus s = check_shape(op, name, t, shape)) return s;
  return is_contiguous(t) ? ACLNN_SUCCESS : invalid(op, std::string(name) + " must be contiguous");
}
}  // namespace

extern "C" aclnnStatus aclnnLayerNormBackwardGetWorkspaceSize(
    const aclTensor* gradOut, const aclTensor* input, const aclIntArray* normalizedShape, const aclTensor* mean,
    const aclTensor* rstd, const aclTensor* weightOptional, const aclTensor* biasOptional,
    const aclBoolArray* outputMask, aclTensor* gradInputOut, aclTensor* gradWeightOut, aclTensor* gradBiasOut,
    uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnLayerNormBackward";
  (void)biasOptional;
  if (aclnnStatus s = check_not_null(op, {{"gradOut", gradOut}, {"input", input}, {"normalizedShape", normalizedShape},
                                          {"mean", mean}, {"rstd", rstd}, {"outputMask", outputMask}}))
    return s;
  std::array<bool, 3> want{};
  if (aclnnStatus s = output_mask3(op, outputMask, {{"gradInputOut", gradInputOut}, {"gradWeightOut", gradWeightOut},
                                                    {"gradBiasOut", gradBiasOut}}, &want))
    return s;
  const LnBackwardArgs a{gradOut, input, mean, rstd, weightOptional, int_array(normalizedShape)};
  if (aclnnStatus s = check_ln_backward_inputs(op, a)) return s;
  const std::pair<const char*, aclTensor*> outs[] = {{"gradInputOut", gradInputOut}, {"gradWeightOut", gradWeightOut},
                                                     {"gradBiasOut", gradBiasOut}};
  for (int i = 0; i < 3; ++i)
    if (want[i])
      if (aclnnStatus s = check_grad_out(op, outs[i].first, outs[i].second, i ? IntArrayRef(a.ns) : shape_of(input)))
        return s;
  const int64_t D = numel_of(IntArrayRef(a.ns)), rows = D ? numel_of(shape_of(input)) / D : 0;
  uint64_t wsb = 0;
  StagedInput sg = stage_if_strided(gradOut, &wsb), sx = stage_if_strided(input, &wsb),
              sm = stage_if_strided(mean, &wsb), sr = stage_if_strided(rstd, &wsb);
  StagedInput sw = weightOptional ? stage_if_strided(weightOptional, &wsb) : StagedInput();
  TensorRef r[3];
  for (int i = 0; i < 3; ++i)
    if (want[i]) r[i] = ref(outs[i].second);
  const bool has_w = weightOptional != nullptr;
  return make_executor(op, wsb, [=](KernelContext& k) {
    auto out = [&](int i) { return want[i] ? k.view(r[i]) : cpu::Strided(); };
    cpu::layer_norm_backward(out(0), out(1), out(2), sg.view(k), sx.view(k), sm.view(k), sr.view(k),
                             has_w ? sw.view(k) : cpu::Strided(), rows, D);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnLayerNormBackward)

extern "C" aclnnStatus aclnnRmsNormGradGetWorkspaceSize(const aclTensor* dy, const aclTensor* x, const aclTensor* rstd,
                                                        const aclTensor* gamma, const aclTensor* dxOut,
                                                        const aclTensor* dgammaOut, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnRmsNormGrad";
  if (aclnnStatus s = check_not_null(op, {{"dy", dy}, {"x", x}, {"rstd", rstd}, {"gamma", gamma}, {"dxOut", dxOut},
                                          {"dgammaOut", dgammaOut}}))
    return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"dy", dy}, {"x", x}, {"rstd", rstd}, {"gamma", gamma},
                         {"dxOut", dxOut}, {"dgammaOut", dgammaOut}})
    if (aclnnStatus s = check_tensor(op, name, t)) return s;
  int64_t rows, D;
  std::vector<int64_t> rshape;
  if (aclnnStatus s = norm_geometry(op, x, gamma, &rows, &D, &rshape)) return s;
  if (aclnnStatus s = check_shape(op, "dy", dy, shape_of(x))) return s;
  // One rstd per row. CANN documents its shape as x's leading dims (x_shape[0:n]), RmsNorm's own
  // rstdOut keeps the normalised dims as 1, and CANN's sample passes the rows flattened; all are
  // accepted: what matters is one value per row.
  if (numel_of(shape_of(rstd)) != rows)
    return invalid(op, "rstd " + shape_str(shape_of(rstd)) + " must hold one value per row of x (" +
                           std::to_string(rows) + "), e.g. shape " + shape_str(IntArrayRef(rshape)));
  if (aclnnStatus s = check_dtype(op, "rstd", rstd, {DType::Float32, dtype_of(x) == DType::Float64 ? DType::Float64 : DType::Float32})) return s;
  if (aclnnStatus s = check_shape(op, "dxOut", dxOut, shape_of(x))) return s;
  if (aclnnStatus s = check_shape(op, "dgammaOut", dgammaOut, shape_of(gamma))) return s;
  if (!is_contiguous(dxOut) || !is_contiguous(dgammaOut)) return invalid(op, "dxOut and dgammaOut must be contiguous");
  uint64_t wsb = 0;
  StagedInput sdy = stage_if_strided(dy, &wsb), sx = stage_if_strided(x, &wsb), sr = stage_if_strided(rstd, &wsb), sg = stage_if_strided(gamma, &wsb);
  TensorRef rdx = ref(dxOut), rdg = ref(dgammaOut);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::rms_norm_backward(k.view(rdx), k.view(rdg), sdy.view(k), sx.view(k), sr.view(k), sg.view(k), rows, D);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnRmsNormGrad)

}  // namespace npu
}  // namespace ember
