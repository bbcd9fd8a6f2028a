// Comparisons eq ne lt le gt ge (tensor or scalar; computed in the promoted type, result bool),
// logical_and / logical_or / logical_not, and where(cond, a, b).
#include "ember/device/cpu/elementwise.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/elementwise_util.h"
#include "ember/ops/npu_exec.h"
#include "ember/dispatch/library.h"

namespace ember {
#include "ember/core/tables/compare_ops.def"

namespace op {
#define EMBER_DECL(name)                                                                                \
  EMBER_DECLARE_OP(name, Keep, "ember::" #name "(Tensor self, Tensor other) -> Tensor",                 \
                   Tensor(const Tensor&, const Tensor&));                                               \
  EMBER_DECLARE_OP(name##_Scalar, Keep, "ember::" #name ".Scalar(Tensor self, Scalar other) -> Tensor", \
                   Tensor(const Tensor&, const Scalar&));
EMBER_COMPARE_OPS(EMBER_DECL)
#undef EMBER_DECL
EMBER_DECLARE_OP(logical_and, Keep, "ember::logical_and(Tensor self, Tensor other) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(logical_or, Keep, "ember::logical_or(Tensor self, Tensor other) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(logical_not, Keep, "ember::logical_not(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_DECLARE_OP(where, Promote, "ember::where(Tensor condition, Tensor self, Tensor other) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&));
}  // namespace op

namespace {
using namespace ops;

using Kernel = void (*)(const cpu::Strided&, const cpu::Strided&, const cpu::Strided&, DType);

template <Kernel K>
Tensor compare_cpu(const Tensor& a, const Tensor& b) {
  ElementwiseMeta m = binary_meta("compare", a, b, ResultKind::Bool);
  Tensor out = empty_on(m.shape, kBool, m.device);
  K(strided(out), strided_as(a, m.shape), strided_as(b, m.shape), m.compute);
  return out;
}

template <Kernel K>
Tensor compare_scalar_cpu(const Tensor& a, const Scalar& b) {
  ElementwiseMeta m = scalar_meta("compare", a, b, ResultKind::Bool);
  Tensor out = empty_on(m.shape, kBool, m.device);
  ScalarHolder h;
  K(strided(out), strided(a), h.view(b, a.dim()), m.compute);
  return out;
}

Tensor logical_not_cpu(const Tensor& a) {
  Tensor out = empty_on(a.sizes_ref(), kBool, a.device());
  ScalarHolder h;
  cpu::eq(strided(out), strided(a), h.view(Scalar(int64_t(0)), a.dim()), cpu::compute_dtype(a.dtype()));
  return out;
}

Tensor where_cpu(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Device dev = common_device(op::where::op_name(), {&cond, &a, &b});
  EMBER_CHECK_DTYPE(cond.dtype() == kBool, op::where::op_name(), ": expected condition to be a bool tensor, got ",
                    cond.dtype());
  DimVector shape = broadcast_shapes(broadcast_shapes(cond.sizes_ref(), a.sizes_ref(), op::where::op_name()),
                                     b.sizes_ref(), op::where::op_name());
  DType dt = result_type({a, b});
  Tensor out = empty_on(shape, dt, dev);
  cpu::where(strided(out), strided_as(cond, shape), strided_as(a, shape), strided_as(b, shape), cpu::compute_dtype(dt));
  return out;
}

// NPU: aclnnEqTensor/EqScalar, ...; a bool output in the broadcast shape.
#define EMBER_COMPARE_NPU(name, Op)                                                   \
  Tensor name##_npu(const Tensor& a, const Tensor& b) {                               \
    ElementwiseMeta m = binary_meta(#name, a, b, ResultKind::Bool);                   \
    Tensor out = empty_on(m.shape, kBool, m.device);                                  \
    EXEC_NPU_CMD(npu::aclnn##Op##Tensor, a, b, out);                                       \
    return out;                                                                       \
  }                                                                                   \
  Tensor name##_s_npu(const Tensor& a, const Scalar& b) {                             \
    ElementwiseMeta m = scalar_meta(#name, a, b, ResultKind::Bool);                   \
    Tensor out = empty_on(m.shape, kBool, m.device);                                  \
    EXEC_NPU_CMD(npu::aclnn##Op##Scalar, a, b, out);                                       \
    return out;                                                                       \
  }
EMBER_COMPARE_NPU(eq, Eq)
EMBER_COMPARE_NPU(ne, Ne)
EMBER_COMPARE_NPU(lt, Lt)
EMBER_COMPARE_NPU(le, Le)
EMBER_COMPARE_NPU(gt, Gt)
EMBER_COMPARE_NPU(ge, Ge)
#undef EMBER_COMPARE_NPU

Tensor logical_and_npu(const Tensor& a, const Tensor& b) {
  ElementwiseMeta m = binary_meta(op::logical_and::op_name(), a, b, ResultKind::Bool);
  Tensor out = empty_on(m.shape, kBool, m.device);
  EXEC_NPU_CMD(npu::aclnnLogicalAnd, a, b, out);
  return out;
}
Tensor logical_or_npu(const Tensor& a, const Tensor& b) {
  ElementwiseMeta m = binary_meta(op::logical_or::op_name(), a, b, ResultKind::Bool);
  Tensor out = empty_on(m.shape, kBool, m.device);
  EXEC_NPU_CMD(npu::aclnnLogicalOr, a, b, out);
  return out;
}
Tensor logical_not_npu(const Tensor& a) {
  Tensor out = empty_on(a.sizes(), kBool, a.device());
  EXEC_NPU_CMD(npu::aclnnLogicalNot, a, out);
  return out;
}
Tensor where_npu(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Device dev = common_device(op::where::op_name(), {&cond, &a, &b});
  EMBER_CHECK_DTYPE(cond.dtype() == kBool, op::where::op_name(), ": expected condition to be a bool tensor, got ",
                    cond.dtype());
  DimVector shape = broadcast_shapes(broadcast_shapes(cond.sizes(), a.sizes(), op::where::op_name()), b.sizes(),
                                     op::where::op_name());
  Tensor out = empty_on(shape, result_type({a, b}), dev);
  EXEC_NPU_CMD(npu::aclnnSWhere, cond, a, b, out);
  return out;
}

}  // namespace

EMBER_LIBRARY(ember, m) {
#define EMBER_DEF(name) \
  m.def(op::name());    \
  m.def(op::name##_Scalar());
  EMBER_COMPARE_OPS(EMBER_DEF)
#undef EMBER_DEF
  m.def(op::logical_and());
  m.def(op::logical_or());
  m.def(op::logical_not());
  m.def(op::where());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
#define EMBER_IMPL(name)                          \
  m.impl(op::name(), &compare_cpu<cpu::name>); \
  m.impl(op::name##_Scalar(), &compare_scalar_cpu<cpu::name>);
  EMBER_COMPARE_OPS(EMBER_IMPL)
#undef EMBER_IMPL
  m.impl(op::logical_and(), &compare_cpu<cpu::logical_and>);
  m.impl(op::logical_or(), &compare_cpu<cpu::logical_or>);
  m.impl(op::logical_not(), &logical_not_cpu);
  m.impl(op::where(), &where_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
#define EMBER_IMPL(name)            \
  m.impl(op::name(), &name##_npu); \
  m.impl(op::name##_Scalar(), &name##_s_npu);
  EMBER_COMPARE_OPS(EMBER_IMPL)
#undef EMBER_IMPL
  m.impl(op::logical_and(), &logical_and_npu);
  m.impl(op::logical_or(), &logical_or_npu);
  m.impl(op::logical_not(), &logical_not_npu);
  m.impl(op::where(), &where_npu);
}

#define EMBER_FN(name)                                                                                       \
  Tensor name(const Tensor& a, const Tensor& b) {                                                            \
    return op::name::call(a, b);                                                                             \
  }                                                                                                          \
  Tensor name(const Tensor& a, const Scalar& b) {                                                            \
    return op::name##_Scalar::call(a, b);                                                                    \
  }                                                                                                          \
  Tensor Tensor::name(const Tensor& o) const { return ember::name(*this, o); }                               \
  Tensor Tensor::name(const Scalar& o) const { return ember::name(*this, o); }
EMBER_COMPARE_OPS(EMBER_FN)
#undef EMBER_FN

Tensor logical_and(const Tensor& a, const Tensor& b) {
  return op::logical_and::call(a, b);
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return op::logical_or::call(a, b);
}
Tensor logical_not(const Tensor& a) { return op::logical_not::call(a); }
Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) {
  return op::where::call(c, a, b);
}

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
using WhereSig = Tensor(const Tensor&, const Tensor&, const Tensor&);
// d where(c, a, b) = where(c, g, 0), where(c, 0, g); the bool condition has no gradient.
std::vector<Tensor> where_bw(const BackwardCtx<WhereSig>& c) {
  Tensor cond = c.arg<0>(), g = c.grad(), z = zeros_like(g);
  return {Tensor(), c.needs(1) ? where(cond, g, z) : Tensor(), c.needs(2) ? where(cond, z, g) : Tensor()};
}
const auto kWhere = spec_of<op::where>("WhereBackward", &where_bw).saving(saves(0));
}  // namespace

// Comparisons and logical ops produce bool tensors: not differentiable.
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
#define EMBER_NO_GRAD(name)             \
  m.impl_not_differentiable(op::name()); \
  m.impl_not_differentiable(op::name##_Scalar());
  EMBER_COMPARE_OPS(EMBER_NO_GRAD)
#undef EMBER_NO_GRAD
  m.impl_not_differentiable(op::logical_and());
  m.impl_not_differentiable(op::logical_or());
  m.impl_not_differentiable(op::logical_not());
  m.impl(op::where(), autograd_kernel<&kWhere>());
}

}  // namespace ember
