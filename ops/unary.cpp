// Unary math: neg and the unary table (core/tables/unary_ops.def: abs, sign, exp, log, sqrt, rsqrt,
// sin, cos, square, reciprocal, ...), whose rows give each op's schema, kernels, functions and
// backward here. Floating functions (kind F) promote integer inputs to the default float; kind
// P ops keep ints.
#include <cmath>

#include "ember/device/cpu/elementwise.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/elementwise_util.h"
#include "ember/ops/npu_exec.h"
#include "ember/dispatch/library.h"

namespace ember::op {
#define EMBER_DECL(name, Acl, kind, cpu, saves, grad, ref, lo, hi, policy) \
  EMBER_DECLARE_OP(name, policy, "ember::" #name "(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_UNARY_OPS(EMBER_DECL)
#undef EMBER_DECL
EMBER_DECLARE_OP(neg, Keep, "ember::neg(Tensor self) -> Tensor", Tensor(const Tensor&));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;
constexpr ResultKind P = ResultKind::Promote;
constexpr ResultKind F = ResultKind::PromoteFloat;

// neg refuses bool (both backends); the result keeps integer dtypes.
ElementwiseMeta neg_meta(const Tensor& x) {
  EMBER_CHECK_DTYPE(x.dtype() != kBool, op::neg::op_name(),
                    ": negation, the `-` operator, on a bool tensor is not supported; use "
                    "logical_not instead");
  return unary_meta(x, P);
}
Tensor neg_cpu(const Tensor& x) {
  return unary_out(neg_meta(x), [&](const Tensor& out) { cpu::neg(strided(out), strided(x)); });
}
Tensor neg_npu(const Tensor& x) {
  return unary_out(neg_meta(x), [&](const Tensor& out) { EXEC_NPU_CMD(npu::aclnnNeg, x, out); });
}

#define EMBER_UNARY_NPU(name, Acl, kind, ...)                                                    \
  Tensor name##_npu(const Tensor& x) {                                                           \
    return unary_out<kind>(x, [&](const Tensor& out) { EXEC_NPU_CMD(npu::aclnn##Acl, x, out); }); \
  }
EMBER_UNARY_OPS(EMBER_UNARY_NPU)
#undef EMBER_UNARY_NPU

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::neg());
#define EMBER_DEF(name, ...) m.def(op::name());
  EMBER_UNARY_OPS(EMBER_DEF)
#undef EMBER_DEF
}

EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::neg(), &neg_cpu);
#define EMBER_IMPL(name, Acl, kind, ...) m.impl(op::name(), &ops::unary_cpu<cpu::name, kind>);
  EMBER_UNARY_OPS(EMBER_IMPL)
#undef EMBER_IMPL
}

EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::neg(), &neg_npu);
#define EMBER_IMPL(name, ...) m.impl(op::name(), &name##_npu);
  EMBER_UNARY_OPS(EMBER_IMPL)
#undef EMBER_IMPL
}

Tensor neg(const Tensor& x) { return op::neg::call(x); }
Tensor Tensor::neg() const { return ember::neg(*this); }
#define EMBER_FN(name, ...)                                                                         \
  Tensor name(const Tensor& x) { return op::name::call(x); } \
  Tensor Tensor::name() const { return ember::name(*this); }
EMBER_UNARY_OPS(EMBER_FN)
#undef EMBER_FN

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
using U = Tensor(const Tensor&);
using Ctx = BackwardCtx<U>;
std::vector<Tensor> neg_bw(const Ctx& c) { return {-c.grad()}; }
const auto kNeg = spec_of<op::neg>("NegBackward", &neg_bw);

// A table row's formula sees g and what the row saves: x (X, XU) or y (Y, YU).
#define EMBER_BW_VARS_X const Tensor x = c.arg<0>();
#define EMBER_BW_VARS_XU EMBER_BW_VARS_X
#define EMBER_BW_VARS_Y const Tensor y = c.output();
#define EMBER_BW_VARS_YU EMBER_BW_VARS_Y
#define EMBER_BW_SPEC_X(spec) spec.saving(saves(0))
#define EMBER_BW_SPEC_XU(spec) spec.saving(saves(0)).upcasting()
#define EMBER_BW_SPEC_Y(spec) spec.saving_output()
#define EMBER_BW_SPEC_YU(spec) spec.saving_output().upcasting()
#define EMBER_BW_DEFINE(name, Acl, grad_expr, mode)                                                  \
  std::vector<Tensor> name##_bw(const Ctx& c) {                                                      \
    const Tensor g = c.grad();                                                                       \
    EMBER_BW_VARS_##mode return {grad_expr};                                                         \
  }                                                                                                  \
  const auto k_##name = EMBER_BW_SPEC_##mode((spec_of<op::name>(#Acl "Backward", &name##_bw)));
#define EMBER_BW_DEFINE_ND(name, Acl, grad_expr, mode)
#define EMBER_BW_DEFINE_X EMBER_BW_DEFINE
#define EMBER_BW_DEFINE_XU EMBER_BW_DEFINE
#define EMBER_BW_DEFINE_Y EMBER_BW_DEFINE
#define EMBER_BW_DEFINE_YU EMBER_BW_DEFINE
#define EMBER_BW(name, Acl, kind, cpu, saves, grad_expr, ...) EMBER_BW_DEFINE_##saves(name, Acl, grad_expr, saves)
EMBER_UNARY_OPS(EMBER_BW)
#undef EMBER_BW
}  // namespace

#define EMBER_BW_IMPL_X(name) m.impl(op::name(), autograd_kernel<&k_##name>());
#define EMBER_BW_IMPL_XU EMBER_BW_IMPL_X
#define EMBER_BW_IMPL_Y EMBER_BW_IMPL_X
#define EMBER_BW_IMPL_YU EMBER_BW_IMPL_X
#define EMBER_BW_IMPL_ND(name) m.impl_not_differentiable(op::name());
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::neg(), autograd_kernel<&kNeg>());
#define EMBER_BW(name, Acl, kind, cpu, saves, ...) EMBER_BW_IMPL_##saves(name)
  EMBER_UNARY_OPS(EMBER_BW)
#undef EMBER_BW
}

}  // namespace ember
