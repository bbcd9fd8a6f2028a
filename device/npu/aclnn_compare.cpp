// aclnn comparisons and logical ops (a 0/1 result in out's dtype) with their in-place forms, and SWhere.
#include "ember/device/cpu/elementwise.h"
#include "ember/device/npu/aclnn_common.h"

namespace ember {
namespace npu {

using namespace ops;

#define EMBER_CMP(Name, fn)                                                                                      \
  extern "C" aclnnStatus aclnn##Name##TensorGetWorkspaceSize(const aclTensor* self, const aclTensor* other,      \
                                                             aclTensor* out, uint64_t* ws, aclOpExecutor** ex) { \
    return binary_op("aclnn" #Name "Tensor", self, other, out, true, fn, ws, ex);                                \
  }                                                                                                              \
  EMBER_ACLNN_PHASE2_IMPL(aclnn##Name##Tensor)                                                                   \
  extern "C" aclnnStatus aclnn##Name##ScalarGetWorkspaceSize(const aclTensor* self, const aclScalar* other,      \
                                                             aclTensor* out, uint64_t* ws, aclOpExecutor** ex) { \
    return binary_scalar_op("aclnn" #Name "Scalar", self, other, out, true, fn, ws, ex);                         \
  }                                                                                                              \
  EMBER_ACLNN_PHASE2_IMPL(aclnn##Name##Scalar)
EMBER_CMP(Eq, cpu::eq)
EMBER_CMP(Ne, cpu::ne)
EMBER_CMP(Lt, cpu::lt)
EMBER_CMP(Le, cpu::le)
EMBER_CMP(Gt, cpu::gt)
EMBER_CMP(Ge, cpu::ge)
#undef EMBER_CMP

// CANN's in-place forms: selfRef = (selfRef op other), 0/1 in selfRef's dtype. CANN's headers
// declare some selfRefs const and some not; each follows its header.
#define EMBER_CMP_INPLACE(Name, Kind, SelfT, OtherT, fn, runner)                                        \
  extern "C" aclnnStatus aclnnInplace##Name##Kind##GetWorkspaceSize(SelfT selfRef, OtherT other,        \
                                                                    uint64_t* ws, aclOpExecutor** ex) { \
    return runner("aclnnInplace" #Name #Kind, selfRef, other, selfRef, true, fn, ws, ex);               \
  }                                                                                                     \
  EMBER_ACLNN_PHASE2_IMPL(aclnnInplace##Name##Kind)
#define EMBER_CMP_INPLACE_T(Name, SelfT, fn) EMBER_CMP_INPLACE(Name, Tensor, SelfT, const aclTensor*, fn, binary_op)
#define EMBER_CMP_INPLACE_S(Name, SelfT, fn) \
  EMBER_CMP_INPLACE(Name, Scalar, SelfT, const aclScalar*, fn, binary_scalar_op)
EMBER_CMP_INPLACE_T(Eq, const aclTensor*, cpu::eq)
EMBER_CMP_INPLACE_S(Eq, const aclTensor*, cpu::eq)
EMBER_CMP_INPLACE_T(Ne, aclTensor*, cpu::ne)
EMBER_CMP_INPLACE_S(Ne, aclTensor*, cpu::ne)
EMBER_CMP_INPLACE_T(Lt, const aclTensor*, cpu::lt)
EMBER_CMP_INPLACE_S(Lt, const aclTensor*, cpu::lt)
EMBER_CMP_INPLACE_T(Le, aclTensor*, cpu::le)
EMBER_CMP_INPLACE_S(Le, aclTensor*, cpu::le)
EMBER_CMP_INPLACE_T(Gt, const aclTensor*, cpu::gt)
EMBER_CMP_INPLACE_S(Gt, aclTensor*, cpu::gt)
EMBER_CMP_INPLACE_T(Ge, aclTensor*, cpu::ge)
EMBER_CMP_INPLACE_S(Ge, aclTensor*, cpu::ge)
#undef EMBER_CMP_INPLACE_S
#undef EMBER_CMP_INPLACE_T
#undef EMBER_CMP_INPLACE

extern "C" aclnnStatus aclnnLogicalAndGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                                       uint64_t* ws, aclOpExecutor** ex) {
  return binary_op("aclnnLogicalAnd", self, other, out, true, cpu::logical_and, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnLogicalAnd)
extern "C" aclnnStatus aclnnLogicalOrGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                                      uint64_t* ws, aclOpExecutor** ex) {
  return binary_op("aclnnLogicalOr", self, other, out, true, cpu::logical_or, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnLogicalOr)
extern "C" aclnnStatus aclnnInplaceLogicalAndGetWorkspaceSize(aclTensor* selfRef, const aclTensor* other, uint64_t* ws,
                                                              aclOpExecutor** ex) {
  return binary_op("aclnnInplaceLogicalAnd", selfRef, other, selfRef, true, cpu::logical_and, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceLogicalAnd)
extern "C" aclnnStatus aclnnInplaceLogicalOrGetWorkspaceSize(aclTensor* selfRef, const aclTensor* other, uint64_t* ws,
                                                             aclOpExecutor** ex) {
  return binary_op("aclnnInplaceLogicalOr", selfRef, other, selfRef, true, cpu::logical_or, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceLogicalOr)

namespace {
aclnnStatus logical_not(const char* op, const aclTensor* self, const aclTensor* out, uint64_t* ws,
                        aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (aclnnStatus s = check_tensor(op, "self", self)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (aclnnStatus s = check_shape(op, "out", out, shape_of(self))) return s;
  DType c = cpu::compute_dtype(dtype_of(self));
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, 0, [a, o, c](KernelContext& k) {
    ScalarView zero;
    zero.floating = false;
    cpu::Strided ov = k.view(o);
    cpu::eq(ov, k.view(a), zero.view(ov.sizes.size()), c);
  }, ws, ex);
}
}  // namespace

extern "C" aclnnStatus aclnnLogicalNotGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                                       aclOpExecutor** ex) {
  return logical_not("aclnnLogicalNot", self, out, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnLogicalNot)
extern "C" aclnnStatus aclnnInplaceLogicalNotGetWorkspaceSize(aclTensor* selfRef, uint64_t* ws, aclOpExecutor** ex) {
  return logical_not("aclnnInplaceLogicalNot", selfRef, selfRef, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceLogicalNot)

extern "C" aclnnStatus aclnnSWhereGetWorkspaceSize(const aclTensor* condition, const aclTensor* self,
                                                   const aclTensor* other, aclTensor* out, uint64_t* ws,
                                                   aclOpExecutor** ex) {
  const char* op = "aclnnSWhere";
  if (aclnnStatus s = check_not_null(op, {{"condition", condition}, {"self", self}, {"other", other}, {"out", out}}))
    return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"condition", condition}, {"self", self},
                         {"other", other}, {"out", out}})
    if (aclnnStatus s = check_tensor(op, name, t)) return s;
  if (dtype_of(condition) != DType::Bool) return invalid(op, "condition must be bool");
  std::vector<int64_t> s1, shape;
  if (!broadcast(shape_of(condition), shape_of(self), &s1) || !broadcast(IntArrayRef(s1), shape_of(other), &shape))
    return invalid(op, "condition, self and other cannot be broadcast together");
  if (IntArrayRef(shape) != shape_of(out))
    return invalid(op, "out has shape " + shape_str(shape_of(out)) + ", expected " + shape_str(IntArrayRef(shape)));
  DType promoted = promote_types(dtype_of(self), dtype_of(other));
  if (aclnnStatus s = check_castable(op, promoted, out)) return s;
  DType c = cpu::compute_dtype(promoted);
  TensorRef rc = ref(condition), ra = ref(self), rb = ref(other), ro = ref(out);
  return make_executor(op, 0, [=](KernelContext& k) {
    cpu::Strided ov = k.view(ro);
    cpu::where(ov, expand_to(k.view(rc), ov.sizes), expand_to(k.view(ra), ov.sizes), expand_to(k.view(rb), ov.sizes), c);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnSWhere)

}  // namespace npu
}  // namespace ember
