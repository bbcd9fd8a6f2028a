// aclnn arithmetic: Add/Sub (alpha), Mul, Div (tensor and scalar, out-of-place and in place),
// PowTensorTensor/PowTensorScalar and the binary table (core/tables/binary_ops.def).
#include "ember/device/cpu/elementwise.h"
#include "ember/device/npu/aclnn_common.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {
// The alpha of Add/Sub: required (161001 when null), integral for integral results.
aclnnStatus check_alpha(const char* op, const aclScalar* alpha, const aclTensor* out) {
  if (!alpha) return null_arg(op, "alpha");
  if (scalar_is_floating(alpha) && !is_floating_point(dtype_of(out)) && scalar_value(alpha) != 1.0)
    return invalid(op, "alpha must be integral when the result is integral");
  return ACLNN_SUCCESS;
}
// The floating functions (true division, the table's F ops) write a floating out.
aclnnStatus check_floating_out(const char* op, const aclTensor* out, const char* name = "out") {
  if (aclnnStatus s = check_not_null(op, {{name, out}})) return s;
  if (aclnnStatus s = check_tensor(op, name, out)) return s;
  if (!is_floating_point(dtype_of(out))) return invalid(op, std::string(name) + " must be a floating dtype");
  return ACLNN_SUCCESS;
}
BinaryFn add_fn(double alpha, bool sub) {
  return [alpha, sub](const cpu::Strided& o, const cpu::Strided& a, const cpu::Strided& b, DType c) {
    sub ? cpu::sub(o, a, b, alpha, c) : cpu::add(o, a, b, alpha, c);
  };
}
}  // namespace

// ---- Add / Sub: out = self +- alpha * other ----
#define EMBER_ADD_SUB(Name, is_sub)                                                                                    \
  extern "C" aclnnStatus Name##GetWorkspaceSize(const aclTensor* self, const aclTensor* other, const aclScalar* alpha, \
                                     aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {                               \
    if (aclnnStatus s = check_not_null(#Name, {{"self", self}, {"out", out}})) return s;                               \
    if (aclnnStatus s = check_alpha(#Name, alpha, out)) return s;                                                      \
    return binary_op(#Name, self, other, out, false, add_fn(scalar_value(alpha), is_sub), ws, ex);                     \
  }                                                                                                                    \
  EMBER_ACLNN_PHASE2_IMPL(Name)                                                                                        \
  extern "C" aclnnStatus Name##sGetWorkspaceSize(const aclTensor* self, const aclScalar* other, const aclScalar* alpha, \
                                      aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {                              \
    if (aclnnStatus s = check_not_null(#Name "s", {{"self", self}, {"out", out}})) return s;                           \
    if (aclnnStatus s = check_alpha(#Name "s", alpha, out)) return s;                                                  \
    return binary_scalar_op(#Name "s", self, other, out, false, add_fn(scalar_value(alpha), is_sub), ws, ex);          \
  }                                                                                                                    \
  EMBER_ACLNN_PHASE2_IMPL(Name##s)
EMBER_ADD_SUB(aclnnAdd, false)
EMBER_ADD_SUB(aclnnSub, true)
#undef EMBER_ADD_SUB

#define EMBER_INPLACE_ADD_SUB(Name, is_sub)                                                                            \
  extern "C" aclnnStatus Name##GetWorkspaceSize(const aclTensor* selfRef, const aclTensor* other, const aclScalar* alpha, \
                                     uint64_t* ws, aclOpExecutor** ex) {                                               \
    if (aclnnStatus s = check_not_null(#Name, {{"selfRef", selfRef}})) return s;                                       \
    if (aclnnStatus s = check_alpha(#Name, alpha, selfRef)) return s;                                                  \
    return binary_op(#Name, selfRef, other, selfRef, false, add_fn(scalar_value(alpha), is_sub), ws, ex);              \
  }                                                                                                                    \
  EMBER_ACLNN_PHASE2_IMPL(Name)                                                                                        \
  extern "C" aclnnStatus Name##sGetWorkspaceSize(const aclTensor* selfRef, const aclScalar* other, const aclScalar* alpha, \
                                      uint64_t* ws, aclOpExecutor** ex) {                                              \
    if (aclnnStatus s = check_not_null(#Name "s", {{"selfRef", selfRef}})) return s;                                   \
    if (aclnnStatus s = check_alpha(#Name "s", alpha, selfRef)) return s;                                              \
    return binary_scalar_op(#Name "s", selfRef, other, selfRef, false, add_fn(scalar_value(alpha), is_sub), ws, ex);   \
  }                                                                                                                    \
  EMBER_ACLNN_PHASE2_IMPL(Name##s)
EMBER_INPLACE_ADD_SUB(aclnnInplaceAdd, false)
EMBER_INPLACE_ADD_SUB(aclnnInplaceSub, true)
#undef EMBER_INPLACE_ADD_SUB

// ---- Mul / Div (div computes in floating point: out must be floating) ----
#define EMBER_MUL_DIV(Op, fn, float_only)                                                                              \
  extern "C" aclnnStatus aclnn##Op##GetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,    \
                                                     uint64_t* ws, aclOpExecutor** ex) {                               \
    if (float_only)                                                                                                    \
      if (aclnnStatus s = check_floating_out("aclnn" #Op, out)) return s;                                              \
    return binary_op("aclnn" #Op, self, other, out, false, fn, ws, ex);                                                \
  }                                                                                                                    \
  EMBER_ACLNN_PHASE2_IMPL(aclnn##Op)                                                                                   \
  extern "C" aclnnStatus aclnn##Op##sGetWorkspaceSize(const aclTensor* self, const aclScalar* other, aclTensor* out,   \
                                                      uint64_t* ws, aclOpExecutor** ex) {                              \
    if (float_only)                                                                                                    \
      if (aclnnStatus s = check_floating_out("aclnn" #Op "s", out)) return s;                                          \
    return binary_scalar_op("aclnn" #Op "s", self, other, out, false, fn, ws, ex);                                     \
  }                                                                                                                    \
  EMBER_ACLNN_PHASE2_IMPL(aclnn##Op##s)                                                                                \
  extern "C" aclnnStatus aclnnInplace##Op##GetWorkspaceSize(aclTensor* selfRef, const aclTensor* other, uint64_t* ws,  \
                                                            aclOpExecutor** ex) {                                      \
    if (float_only)                                                                                                    \
      if (aclnnStatus s = check_floating_out("aclnnInplace" #Op, selfRef, "selfRef")) return s;                        \
    return binary_op("aclnnInplace" #Op, selfRef, other, selfRef, false, fn, ws, ex);                                  \
  }                                                                                                                    \
  EMBER_ACLNN_PHASE2_IMPL(aclnnInplace##Op)                                                                            \
  extern "C" aclnnStatus aclnnInplace##Op##sGetWorkspaceSize(aclTensor* selfRef, const aclScalar* other, uint64_t* ws, \
                                                             aclOpExecutor** ex) {                                     \
    if (float_only)                                                                                                    \
      if (aclnnStatus s = check_floating_out("aclnnInplace" #Op "s", selfRef, "selfRef")) return s;                    \
    return binary_scalar_op("aclnnInplace" #Op "s", selfRef, other, selfRef, false, fn, ws, ex);                       \
  }                                                                                                                    \
  EMBER_ACLNN_PHASE2_IMPL(aclnnInplace##Op##s)
EMBER_MUL_DIV(Mul, cpu::mul, false)
EMBER_MUL_DIV(Div, cpu::div, true)
#undef EMBER_MUL_DIV

// ---- Pow ----
extern "C" aclnnStatus aclnnPowTensorTensorGetWorkspaceSize(const aclTensor* self, const aclTensor* exponent,
                                                            aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_floating_out("aclnnPowTensorTensor", out)) return s;
  return binary_op("aclnnPowTensorTensor", self, exponent, out, false, cpu::pow, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnPowTensorTensor)

// selfRef = selfRef ** exponent, exponent broadcast to selfRef's shape (CANN declares selfRef const).
extern "C" aclnnStatus aclnnInplacePowTensorTensorGetWorkspaceSize(const aclTensor* selfRef, const aclTensor* exponent,
                                                                   uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_floating_out("aclnnInplacePowTensorTensor", selfRef, "selfRef")) return s;
  return binary_op("aclnnInplacePowTensorTensor", selfRef, exponent, selfRef, false, cpu::pow, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplacePowTensorTensor)

// out = self ** exponent with a scalar base (ggml's ALiBi slopes call it).
extern "C" aclnnStatus aclnnPowScalarTensorGetWorkspaceSize(const aclScalar* self, const aclTensor* exponent,
                                                            aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnPowScalarTensor";
  if (aclnnStatus s = check_not_null(op, {{"exponent", exponent}, {"out", out}})) return s;
  if (!self) return null_arg(op, "self");
  if (aclnnStatus s = check_tensor(op, "exponent", exponent)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (aclnnStatus s = check_shape(op, "out", out, shape_of(exponent))) return s;
  if (aclnnStatus s = check_overlap(op, "out", out, {{"exponent", exponent}})) return s;
  if (aclnnStatus s = check_floating_out(op, out)) return s;
  const DType compute = cpu::compute_dtype(dtype_of(out));
  TensorRef e = ref(exponent), o = ref(out);
  ScalarView base = ScalarView::of(self);
  return make_executor(op, 0, [e, o, base, compute](KernelContext& k) mutable {
    cpu::Strided ov = k.view(o);
    cpu::pow(ov, expand_to(base.view(ov.sizes.size()), ov.sizes), k.view(e), compute);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnPowScalarTensor)

namespace {
aclnnStatus pow_tensor_scalar(const char* op, const aclTensor* self, const aclScalar* exponent, const aclTensor* out,
                              uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"exponent", exponent}, {"out", out}})) return s;
  if (aclnnStatus s = check_tensor(op, "self", self)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (aclnnStatus s = check_shape(op, "out", out, shape_of(self))) return s;
  if (!is_floating_point(dtype_of(out))) return invalid(op, "out must be a floating dtype");
  double e = scalar_value(exponent);
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, 0, [a, o, e](KernelContext& k) { cpu::pow_scalar(k.view(o), k.view(a), e); }, ws, ex);
}
}  // namespace

extern "C" aclnnStatus aclnnPowTensorScalarGetWorkspaceSize(const aclTensor* self, const aclScalar* exponent,
                                                            const aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return pow_tensor_scalar("aclnnPowTensorScalar", self, exponent, out, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnPowTensorScalar)

// (CANN declares the in-place form's selfRef const.)
extern "C" aclnnStatus aclnnInplacePowTensorScalarGetWorkspaceSize(const aclTensor* selfRef, const aclScalar* exponent,
                                                                   uint64_t* ws, aclOpExecutor** ex) {
  return pow_tensor_scalar("aclnnInplacePowTensorScalar", selfRef, exponent, selfRef, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplacePowTensorScalar)

// The binary table (core/tables/binary_ops.def): F (float-only) ops need a floating out.
#define EMBER_TABLE_BINARY(name, Acl, kind, ...)                                                                     \
  extern "C" aclnnStatus aclnn##Acl##GetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out, \
                                                      uint64_t* ws, aclOpExecutor** ex) {                            \
    if (!cpu::kKeepsInts_##kind)                                                                                     \
      if (aclnnStatus s = check_floating_out("aclnn" #Acl, out)) return s;                                           \
    return binary_op("aclnn" #Acl, self, other, out, false, cpu::name, ws, ex);                                      \
  }                                                                                                                  \
  EMBER_ACLNN_PHASE2_IMPL(aclnn##Acl)
EMBER_BINARY_OPS(EMBER_TABLE_BINARY)
#undef EMBER_TABLE_BINARY
// ... and the in-place forms of the rows marked I: selfRef = f(selfRef, other).
#define EMBER_TABLE_BINARY_INPLACE_N(name, Acl, kind)
#define EMBER_TABLE_BINARY_INPLACE_I(name, Acl, kind)                                                                 \
  extern "C" aclnnStatus aclnnInplace##Acl##GetWorkspaceSize(aclTensor* selfRef, const aclTensor* other, uint64_t* ws, \
                                                             aclOpExecutor** ex) {                                    \
    if (!cpu::kKeepsInts_##kind)                                                                                      \
      if (aclnnStatus s = check_floating_out("aclnnInplace" #Acl, selfRef, "selfRef")) return s;                      \
    return binary_op("aclnnInplace" #Acl, selfRef, other, selfRef, false, cpu::name, ws, ex);                         \
  }                                                                                                                   \
  EMBER_ACLNN_PHASE2_IMPL(aclnnInplace##Acl)
#define EMBER_TABLE_BINARY_INPLACE(name, Acl, kind, expr, saves, ga, gb, ref, lo, hi, exact, policy, inplace) \
  EMBER_TABLE_BINARY_INPLACE_##inplace(name, Acl, kind)
EMBER_BINARY_OPS(EMBER_TABLE_BINARY_INPLACE)
#undef EMBER_TABLE_BINARY_INPLACE

}  // namespace npu
}  // namespace ember
