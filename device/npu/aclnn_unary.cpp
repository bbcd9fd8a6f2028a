// aclnn unary ops and their in-place forms, Gelu / GeluV2 / GeluBackwardV2, SiluBackward, the Clamp
// family, Softplus, Elu and Threshold.
#include <functional>

#include "ember/device/cpu/elementwise.h"
#include "ember/gen/cpu_kernels.h"
#include "ember/device/npu/aclnn_common.h"

namespace ember {
namespace npu {

using namespace ops;

// Integer-preserving ops may write integer outputs; the floating functions need a float out.
// (CANN declares Relu's out const, the others' not.)
#define EMBER_UNARY_OUT(Name, fn, float_only, Out)                                                   \
  extern "C" aclnnStatus aclnn##Name##GetWorkspaceSize(const aclTensor* self, Out out, uint64_t* ws, \
                                                       aclOpExecutor** ex) {                         \
    return unary_op("aclnn" #Name, self, out, float_only, fn, ws, ex);                               \
  }                                                                                                  \
  EMBER_ACLNN_PHASE2_IMPL(aclnn##Name)
#define EMBER_UNARY(Name, fn, float_only) EMBER_UNARY_OUT(Name, fn, float_only, aclTensor*)
EMBER_UNARY(Neg, cpu::neg, false)
EMBER_UNARY_OUT(Relu, cpu::relu, false, const aclTensor*)
// The unary table (core/tables/unary_ops.def): F (float-only) ops need a floating out.
#define EMBER_TABLE_UNARY(name, Acl, kind, ...) EMBER_UNARY(Acl, cpu::name, !cpu::kKeepsInts_##kind)
EMBER_UNARY_OPS(EMBER_TABLE_UNARY)
#undef EMBER_TABLE_UNARY
#undef EMBER_UNARY
#undef EMBER_UNARY_OUT

// The in-place forms CANN has (selfRef = f(selfRef)).
#define EMBER_INPLACE_UNARY(Name, fn, float_only)                                               \
  extern "C" aclnnStatus aclnnInplace##Name##GetWorkspaceSize(aclTensor* selfRef, uint64_t* ws, \
                                                              aclOpExecutor** ex) {             \
    return unary_op("aclnnInplace" #Name, selfRef, selfRef, float_only, fn, ws, ex);            \
  }                                                                                             \
  EMBER_ACLNN_PHASE2_IMPL(aclnnInplace##Name)
EMBER_INPLACE_UNARY(Relu, cpu::relu, false)
EMBER_INPLACE_UNARY(Neg, cpu::neg, false)
// The unary table's floating functions (kind F) have one (their generated headers declare it).
#define EMBER_TABLE_INPLACE_P(name, Acl)
#define EMBER_TABLE_INPLACE_F(name, Acl) EMBER_INPLACE_UNARY(Acl, cpu::name, true)
#define EMBER_TABLE_INPLACE(name, Acl, kind, ...) EMBER_TABLE_INPLACE_##kind(name, Acl)
EMBER_UNARY_OPS(EMBER_TABLE_INPLACE)
#undef EMBER_TABLE_INPLACE
#undef EMBER_TABLE_INPLACE_F
#undef EMBER_TABLE_INPLACE_P
#undef EMBER_INPLACE_UNARY

extern "C" aclnnStatus aclnnGeluV2GetWorkspaceSize(const aclTensor* self, int64_t approximate, aclTensor* out,
                                                   uint64_t* ws, aclOpExecutor** ex) {
  if (approximate != 0 && approximate != 1)
    return invalid("aclnnGeluV2", "approximate must be 0 (none) or 1 (tanh), got " + std::to_string(approximate));
  return unary_op("aclnnGeluV2", self, out, true, approximate == 0 ? cpu::gelu : cpu::gelu_tanh, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnGeluV2)

extern "C" aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                           char* approximate, aclTensor* gradInput, uint64_t* ws,
                                                           aclOpExecutor** ex) {
  const char* op = "aclnnGeluBackwardV2";
  if (!approximate) return null_arg(op, "approximate");
  const std::string mode = approximate;
  if (mode != "none" && mode != "tanh")
    return invalid(op, "approximate must be \"none\" or \"tanh\", got \"" + mode + "\"");
  if (gradInput && !is_floating_point(dtype_of(gradInput))) return invalid(op, "gradInput must be a floating dtype");
  return binary_op(op, gradOutput, self, gradInput, false,
                   mode == "none" ? ops::BinaryFn(cpu::gelu_backward) : ops::BinaryFn(cpu::gelu_tanh_backward), ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnGeluBackwardV2)

// Gelu: GeluV2's tanh form. CANN's doc gives the tanh formula and its kernel computes it as
// x / (1 + exp(-sqrt(8/pi) (x + 0.044715 x^3))), the same function
// (hicann/ops-nn:activation/gelu/docs/aclnnGelu.md, op_kernel/arch35/gelu_dag.h).
extern "C" aclnnStatus aclnnGeluGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                                 aclOpExecutor** ex) {
  return unary_op("aclnnGelu", self, out, true, cpu::gelu_tanh, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnGelu)

// gradInput = gradOutput * silu'(self)
extern "C" aclnnStatus aclnnSiluBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                         aclTensor* gradInput, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnSiluBackward";
  if (gradInput && !is_floating_point(dtype_of(gradInput))) return invalid(op, "gradInput must be a floating dtype");
  return binary_op(op, gradOutput, self, gradInput, false, cpu::silu_backward, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnSiluBackward)

namespace {
// out = min(max(self, lo), hi), either bound (not both) absent; out may be self (in place).
aclnnStatus clamp_op(const char* op, const aclTensor* self, const aclScalar* clipValueMin, const aclScalar* clipValueMax,
                     const aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (!clipValueMin && !clipValueMax) return null_arg(op, "clipValueMin and clipValueMax (at least one is required)");
  if (aclnnStatus s = check_tensor(op, "self", self)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (aclnnStatus s = check_shape(op, "out", out, shape_of(self))) return s;
  if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}})) return s;
  bool has_lo = clipValueMin != nullptr, has_hi = clipValueMax != nullptr;
  double lo = has_lo ? scalar_value(clipValueMin) : 0, hi = has_hi ? scalar_value(clipValueMax) : 0;
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, 0, [=](KernelContext& k) { cpu::clamp(k.view(o), k.view(a), has_lo, lo, has_hi, hi); },
                       ws, ex);
}
}  // namespace

extern "C" aclnnStatus aclnnClampGetWorkspaceSize(const aclTensor* self, const aclScalar* clipValueMin,
                                                  const aclScalar* clipValueMax, aclTensor* out, uint64_t* ws,
                                                  aclOpExecutor** ex) {
  return clamp_op("aclnnClamp", self, clipValueMin, clipValueMax, out, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnClamp)

extern "C" aclnnStatus aclnnClampMinGetWorkspaceSize(const aclTensor* self, const aclScalar* clipValueMin, aclTensor* out,
                                                     uint64_t* ws, aclOpExecutor** ex) {
  if (!clipValueMin) return null_arg("aclnnClampMin", "clipValueMin");
  return clamp_op("aclnnClampMin", self, clipValueMin, nullptr, out, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnClampMin)

extern "C" aclnnStatus aclnnClampMaxGetWorkspaceSize(const aclTensor* self, const aclScalar* clipValueMax, aclTensor* out,
                                                     uint64_t* ws, aclOpExecutor** ex) {
  if (!clipValueMax) return null_arg("aclnnClampMax", "clipValueMax");
  return clamp_op("aclnnClampMax", self, nullptr, clipValueMax, out, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnClampMax)

// The in-place forms (CANN declares selfRef const).
extern "C" aclnnStatus aclnnInplaceClampGetWorkspaceSize(const aclTensor* selfRef, const aclScalar* clipValueMin,
                                                         const aclScalar* clipValueMax, uint64_t* ws, aclOpExecutor** ex) {
  return clamp_op("aclnnInplaceClamp", selfRef, clipValueMin, clipValueMax, selfRef, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceClamp)

extern "C" aclnnStatus aclnnInplaceClampMinGetWorkspaceSize(const aclTensor* selfRef, const aclScalar* clipValueMin,
                                                            uint64_t* ws, aclOpExecutor** ex) {
  if (!clipValueMin) return null_arg("aclnnInplaceClampMin", "clipValueMin");
  return clamp_op("aclnnInplaceClampMin", selfRef, clipValueMin, nullptr, selfRef, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceClampMin)

extern "C" aclnnStatus aclnnInplaceClampMaxGetWorkspaceSize(const aclTensor* selfRef, const aclScalar* clipValueMax,
                                                            uint64_t* ws, aclOpExecutor** ex) {
  if (!clipValueMax) return null_arg("aclnnInplaceClampMax", "clipValueMax");
  return clamp_op("aclnnInplaceClampMax", selfRef, nullptr, clipValueMax, selfRef, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceClampMax)

namespace {
// out = fn(self) with scalar parameters, floating unless ints are allowed; out may be self.
aclnnStatus param_unary(const char* op, const aclTensor* self, const aclTensor* out, bool float_only,
                        std::initializer_list<std::pair<const char*, const aclScalar*>> scalars,
                        std::function<void(const cpu::Strided&, const cpu::Strided&)> fn, uint64_t* ws,
                        aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  for (auto [name, v] : scalars)
    if (!v) return null_arg(op, name);
  if (aclnnStatus s = check_all(op, {{"self", self}, {"out", out}})) return s;
  if (aclnnStatus s = check_shape(op, "out", out, shape_of(self))) return s;
  if (float_only && !is_floating_point(dtype_of(out))) return invalid(op, "out must be a floating dtype");
  if (aclnnStatus s = check_castable(op, dtype_of(self), out)) return s;
  if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}})) return s;
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, 0, [=](KernelContext& k) { fn(k.view(o), k.view(a)); }, ws, ex);
}
}  // namespace

// CANN header aclnnop/aclnn_softplus.h: out = log1p(exp(beta self)) / beta, or self where beta self > threshold
extern "C" aclnnStatus aclnnSoftplusGetWorkspaceSize(const aclTensor* self, const aclScalar* beta,
                                                     const aclScalar* threshold, aclTensor* out,
                                                     uint64_t* workspaceSize, aclOpExecutor** executor) {
  const double b = beta ? scalar_value(beta) : 0, t = threshold ? scalar_value(threshold) : 0;
  return param_unary("aclnnSoftplus", self, out, true, {{"beta", beta}, {"threshold", threshold}},
                     [b, t](const cpu::Strided& o, const cpu::Strided& x) { cpu::softplus(o, x, b, t); }, workspaceSize,
                     executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnSoftplus)

// CANN header aclnnop/aclnn_elu.h: out = scale self where self > 0, else alpha scale (exp(inputScale self) - 1)
extern "C" aclnnStatus aclnnEluGetWorkspaceSize(const aclTensor* self, const aclScalar* alpha, const aclScalar* scale,
                                                const aclScalar* inputScale, aclTensor* out, uint64_t* workspaceSize,
                                                aclOpExecutor** executor) {
  const double a = alpha ? scalar_value(alpha) : 0, s = scale ? scalar_value(scale) : 0,
               is = inputScale ? scalar_value(inputScale) : 0;
  return param_unary("aclnnElu", self, out, true, {{"alpha", alpha}, {"scale", scale}, {"inputScale", inputScale}},
                     [a, s, is](const cpu::Strided& o, const cpu::Strided& x) { cpu::elu(o, x, a, s, is); },
                     workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnElu)

// CANN header aclnnop/aclnn_threshold.h: out = value where self <= threshold, else self
extern "C" aclnnStatus aclnnThresholdGetWorkspaceSize(const aclTensor* self, const aclScalar* threshold,
                                                      const aclScalar* value, aclTensor* out, uint64_t* workspaceSize,
                                                      aclOpExecutor** executor) {
  const double t = threshold ? scalar_value(threshold) : 0, v = value ? scalar_value(value) : 0;
  return param_unary("aclnnThreshold", self, out, false, {{"threshold", threshold}, {"value", value}},
                     [t, v](const cpu::Strided& o, const cpu::Strided& x) { cpu::threshold(o, x, t, v); },
                     workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnThreshold)

// CANN header aclnnop/aclnn_threshold.h: selfRef = value where selfRef <= threshold
extern "C" aclnnStatus aclnnInplaceThresholdGetWorkspaceSize(aclTensor* selfRef, const aclScalar* threshold,
                                                             const aclScalar* value, uint64_t* workspaceSize,
                                                             aclOpExecutor** executor) {
  const double t = threshold ? scalar_value(threshold) : 0, v = value ? scalar_value(value) : 0;
  return param_unary("aclnnInplaceThreshold", selfRef, selfRef, false, {{"threshold", threshold}, {"value", value}},
                     [t, v](const cpu::Strided& o, const cpu::Strided& x) { cpu::threshold(o, x, t, v); },
                     workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceThreshold)

}  // namespace npu
}  // namespace ember
