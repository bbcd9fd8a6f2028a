// aclnn comparisons (bool out), logical ops and SWhere.
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

extern "C" aclnnStatus aclnnLogicalNotGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                                       aclOpExecutor** ex) {
  const char* op = "aclnnLogicalNot";
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
EMBER_ACLNN_PHASE2_IMPL(aclnnLogicalNot)

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
