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
  if (aclnnStatus s = check_shape(op, "rstdOut", rstdOut, IntArrayRef(rshape))) return s;
  if (dtype_of(yOut) != dtype_of(x)) return invalid(op, "yOut must have x's dtype");
  if (!is_contiguous(yOut) || !is_contiguous(rstdOut)) return invalid(op, "yOut and rstdOut must be contiguous");
  uint64_t wsb = 0;
  StagedInput sx = stage_if_strided(x, &wsb), sg = stage_if_strided(gamma, &wsb);
  TensorRef ry = ref(yOut), rr = ref(rstdOut);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::rms_norm(k.view(ry), k.view(rr), sx.view(k), sg.view(k), epsilon, rows, D);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnRmsNorm)

// LayerNorm over the trailing dims normalizedShape names: out = (input - mean) * rstd * weight +
// bias; meanOut / rstdOut (optional) per row, shaped as input with those dims kept as 1.
namespace {
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
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"weightOptional", weightOptional},
                         {"biasOptional", biasOptional}})
    if (t) {
      if (aclnnStatus s = check_dtype(op, name, t, kFloats)) return s;
      if (aclnnStatus s = check_shape(op, name, t, IntArrayRef(ns))) return s;
    }
  std::vector<int64_t> stat_shape(xs.begin(), xs.end());
  for (size_t i = lead; i < xs.size(); ++i) stat_shape[i] = 1;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"meanOutOptional", meanOutOptional},
                         {"rstdOutOptional", rstdOutOptional}})
    if (t) {
      if (aclnnStatus s = check_shape(op, name, t, IntArrayRef(stat_shape))) return s;
      if (aclnnStatus s = check_dtype(op, name, t, {DType::Float32, dtype_of(input)})) return s;
      if (!is_contiguous(t)) return invalid(op, std::string(name) + " must be contiguous");
    }
  if (aclnnStatus s = check_shape(op, "out", out, xs)) return s;
  if (!is_contiguous(out)) return invalid(op, "out must be contiguous");
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
// over rows gradWeight = sum gradOut xhat, gradBias = sum gradOut. Computed in double.
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
  const bool want_x = want[0], want_w = want[1], want_b = want[2];
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"gradOut", gradOut}, {"input", input}, {"mean", mean},
                         {"rstd", rstd}, {"weightOptional", weightOptional}})
    if (t) {
      if (aclnnStatus s = check_tensor(op, name, t)) return s;
      if (aclnnStatus s = check_dtype(op, name, t, kFloats)) return s;
    }
  const std::vector<int64_t> ns = int_array(normalizedShape);
  IntArrayRef xs = shape_of(input);
  if (ns.empty() || ns.size() > xs.size() || IntArrayRef(ns) != IntArrayRef(xs.begin() + (xs.size() - ns.size()), ns.size()))
    return invalid(op, "normalizedShape " + shape_str(IntArrayRef(ns)) + " does not match the trailing dims of input " +
                           shape_str(xs));
  std::vector<int64_t> stat_shape(xs.begin(), xs.end());
  for (size_t i = xs.size() - ns.size(); i < xs.size(); ++i) stat_shape[i] = 1;
  if (aclnnStatus s = check_shape(op, "gradOut", gradOut, xs)) return s;
  if (aclnnStatus s = check_shape(op, "mean", mean, IntArrayRef(stat_shape))) return s;
  if (aclnnStatus s = check_shape(op, "rstd", rstd, IntArrayRef(stat_shape))) return s;
  if (weightOptional)
    if (aclnnStatus s = check_shape(op, "weightOptional", weightOptional, IntArrayRef(ns))) return s;
  auto check_out = [&](const char* name, const aclTensor* t, IntArrayRef shape) -> aclnnStatus {
    if (aclnnStatus s = check_tensor(op, name, t)) return s;
    if (aclnnStatus s = check_dtype(op, name, t, kFloats)) return s;
    if (aclnnStatus s = check_shape(op, name, t, shape)) return s;
    return is_contiguous(t) ? ACLNN_SUCCESS : invalid(op, std::string(name) + " must be contiguous");
  };
  if (want_x)
    if (aclnnStatus s = check_out("gradInputOut", gradInputOut, xs)) return s;
  if (want_w)
    if (aclnnStatus s = check_out("gradWeightOut", gradWeightOut, IntArrayRef(ns))) return s;
  if (want_b)
    if (aclnnStatus s = check_out("gradBiasOut", gradBiasOut, IntArrayRef(ns))) return s;
  const int64_t D = numel_of(IntArrayRef(ns)), rows = D ? numel_of(xs) / D : 0;
  // float64 copies of gradOut, input, mean, rstd, weight; then gradInput and the two sums
  std::vector<uint64_t> off;
  uint64_t wsb = 0;
  for (int64_t n : {rows * D, rows * D, rows, rows, D, rows * D, 2 * D}) {
    uint64_t bytes = 0;
    if (aclnnStatus s = workspace_bytes(op, n, 8, &bytes)) return s;
    off.push_back(wsb);
    wsb += (bytes + 63) / 64 * 64;
  }
  TensorRef rg = ref(gradOut), rx = ref(input), rm = ref(mean), rr = ref(rstd);
  TensorRef rw = weightOptional ? ref(weightOptional) : TensorRef();
  TensorRef rgx = want_x ? ref(gradInputOut) : TensorRef(), rgw = want_w ? ref(gradWeightOut) : TensorRef(),
            rgb = want_b ? ref(gradBiasOut) : TensorRef();
  const bool has_w = weightOptional != nullptr;
  return make_executor(op, wsb, [=](KernelContext& k) {
    auto buf = [&](size_t i) { return reinterpret_cast<double*>(static_cast<char*>(k.workspace()) + off[i]); };
    auto load = [&](const TensorRef& r, size_t i) {
      cpu::Strided v = k.view(r);
      cpu::copy(cpu::Strided(buf(i), DType::Float64, v.sizes, contiguous_strides(v.sizes)), v);
      return buf(i);
    };
    const double *go = load(rg, 0), *x = load(rx, 1), *m = load(rm, 2), *r = load(rr, 3);
    const double* w = has_w ? load(rw, 4) : nullptr;
    double *dx = buf(5), *dw = buf(6), *db = dw + D;
    std::fill(dw, dw + 2 * D, 0.0);
    for (int64_t row = 0; row < rows; ++row) {
      double s1 = 0, s2 = 0;
      for (int64_t j = 0; j < D; ++j) {
        const int64_t e = row * D + j;
        const double xh = (x[e] - m[row]) * r[row], g = go[e] * (w ? w[j] : 1.0);
        s1 += g;
        s2 += g * xh;
        dw[j] += go[e] * xh;
        db[j] += go[e];
      }
      for (int64_t j = 0; j < D; ++j) {
        const int64_t e = row * D + j;
        const double xh = (x[e] - m[row]) * r[row], g = go[e] * (w ? w[j] : 1.0);
        dx[e] = r[row] * (g - s1 / static_cast<double>(D) - xh * s2 / static_cast<double>(D));
      }
    }
    auto store = [&](const TensorRef& t, const double* v) {
      cpu::Strided o = k.view(t);
      cpu::copy(o, cpu::Strided(const_cast<double*>(v), DType::Float64, o.sizes, contiguous_strides(o.sizes)));
    };
    if (want_x) store(rgx, dx);
    if (want_w) store(rgw, dw);
    if (want_b) store(rgb, db);
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
