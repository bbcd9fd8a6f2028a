// Activations: relu (and relu_), gelu (exact erf form, or approximate='tanh'), leaky_relu.
// (tanh, sigmoid and silu are rows of the unary table, core/tables/unary_ops.def.)
#include <cmath>

#include "ember/device/cpu/elementwise.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/elementwise_util.h"
#include "ember/ops/npu_exec.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(leaky_relu, Keep, "ember::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
                 Tensor(const Tensor&, const Scalar&));
EMBER_DECLARE_OP(leaky_relu_backward, Keep,
                 "ember::leaky_relu_backward(Tensor grad, Tensor self, "
                 "Scalar negative_slope, bool self_is_result=False) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Scalar&, bool));
EMBER_DECLARE_OP(relu, Keep, "ember::relu(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_DECLARE_OP(relu_, Keep, "ember::relu_(Tensor(a!) self) -> Tensor(a!)", Tensor(const Tensor&));
EMBER_DECLARE_OP(gelu, Keep, "ember::gelu(Tensor self, str approximate='none') -> Tensor",
                 Tensor(const Tensor&, const std::string&));
EMBER_DECLARE_OP(gelu_backward, Keep,
                 "ember::gelu_backward(Tensor grad, Tensor self, "
                 "str approximate='none') -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const std::string&));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;
constexpr ResultKind P = ResultKind::Promote;
constexpr ResultKind F = ResultKind::PromoteFloat;

// ---------------------------------------------------------------- meta (shared by both backends)
// relu and relu_ refuse bool; the result keeps integer dtypes.
ElementwiseMeta relu_meta(const char* op, const Tensor& x) {
  EMBER_CHECK_DTYPE(x.dtype() != kBool, op, ": not implemented for bool");
  return unary_meta(x, P);
}
// gelu's approximate: 0 for "none" (erf), 1 for "tanh" (aclnnGeluV2's encoding)
int64_t gelu_mode(const std::string& approximate) {
  EMBER_CHECK_VALUE(approximate == "none" || approximate == "tanh", op::gelu::op_name(),
                    ": approximate must be 'none' or 'tanh', got '", approximate, "'");
  return approximate == "none" ? 0 : 1;
}

// ---------------------------------------------------------------- CPU
Tensor relu_cpu(const Tensor& x) {
  return unary_out(relu_meta(op::relu::op_name(), x), [&](const Tensor& o) { cpu::relu(strided(o), strided(x)); });
}
Tensor relu__cpu(const Tensor& self) {
  relu_meta(op::relu_::op_name(), self);
  cpu::relu(strided(self), strided(self));
  bump_version(self);
  return self;
}
Tensor gelu_cpu(const Tensor& x, const std::string& approximate) {
  return gelu_mode(approximate) == 0 ? unary_cpu<cpu::gelu, F>(x) : unary_cpu<cpu::gelu_tanh, F>(x);
}

// x where x > 0, else negative_slope x: on the CPU as where of two branches, on the NPU CANN's
// aclnnLeakyRelu. Its node LeakyReluBackward0 runs leaky_relu_backward (aclnnLeakyReluBackward on
// the NPU), or with create_graph the same where of differentiable ops.
Tensor leaky_relu_cpu(const Tensor& x, const Scalar& negative_slope) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), op::leaky_relu::op_name(), ": expects a floating tensor, got ", x.dtype());
  return where(x.gt(0), x, x.mul(negative_slope));
}
// g where x > 0, else negative_slope g (self_is_result: x is the forward's output, the same sign
// when negative_slope > 0).
ElementwiseMeta leaky_relu_backward_meta(const Tensor& g, const Tensor& x, const Scalar& negative_slope,
                                         bool self_is_result) {
  const char* op = ::ember::op::leaky_relu_backward::op_name();
  EMBER_CHECK_DTYPE(g.is_floating_point() && x.is_floating_point(), op, ": grad and self must be floating, got ",
                    g.dtype(), " and ", x.dtype());
  EMBER_CHECK_VALUE(!self_is_result || negative_slope.to_double() > 0, op,
                    ": self_is_result needs a positive negative_slope, got ", negative_slope.to_double());
  return binary_meta(op, g, x, ResultKind::PromoteFloat);
}
// (the formula: differentiable ops)
Tensor leaky_relu_grad(const Tensor& g, const Tensor& x, const Scalar& negative_slope) {
  return where(x.gt(0), g, g.mul(negative_slope));
}
Tensor leaky_relu_backward_cpu(const Tensor& g, const Tensor& x, const Scalar& negative_slope, bool self_is_result) {
  ElementwiseMeta m = leaky_relu_backward_meta(g, x, negative_slope, self_is_result);
  return leaky_relu_grad(g, x, negative_slope).to(m.dtype);
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::leaky_relu());
  m.def(op::leaky_relu_backward());
  m.def(op::relu());
  m.def(op::relu_());
  m.def(op::gelu());
}

// ---------------------------------------------------------------- NPU
namespace {
Tensor relu_npu(const Tensor& x) {
  return unary_out(relu_meta(op::relu::op_name(), x), [&](const Tensor& o) { EXEC_NPU_CMD(npu::aclnnRelu, x, o); });
}
Tensor relu__npu(const Tensor& self) {
  relu_meta(op::relu_::op_name(), self);
  EXEC_NPU_CMD(npu::aclnnInplaceRelu, self);
  bump_version(self);
  return self;
}
Tensor leaky_relu_npu(const Tensor& x, const Scalar& negative_slope) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), op::leaky_relu::op_name(), ": expects a floating tensor, got ", x.dtype());
  return unary_out<F>(x, [&](const Tensor& o) { EXEC_NPU_CMD(npu::aclnnLeakyRelu, x, negative_slope, o); });
}
Tensor leaky_relu_backward_npu(const Tensor& g, const Tensor& x, const Scalar& negative_slope, bool self_is_result) {
  ElementwiseMeta m = leaky_relu_backward_meta(g, x, negative_slope, self_is_result);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  EXEC_NPU_CMD(npu::aclnnLeakyReluBackward, g, x, negative_slope, self_is_result, out);
  return out;
}
Tensor gelu_npu(const Tensor& x, const std::string& approximate) {
  int64_t mode = gelu_mode(approximate);
  return unary_out<F>(x, [&](const Tensor& o) { EXEC_NPU_CMD(npu::aclnnGeluV2, x, mode, o); });
}
}  // namespace

EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::relu(), &relu_npu);
  m.impl(op::relu_(), &relu__npu);
  m.impl(op::gelu(), &gelu_npu);
  m.impl(op::leaky_relu(), &leaky_relu_npu);
  m.impl(op::leaky_relu_backward(), &leaky_relu_backward_npu);
}

EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::relu(), &relu_cpu);
  m.impl(op::relu_(), &relu__cpu);
  m.impl(op::gelu(), &gelu_cpu);
  m.impl(op::leaky_relu(), &leaky_relu_cpu);
  m.impl(op::leaky_relu_backward(), &leaky_relu_backward_cpu);
}

using T1 = Tensor(const Tensor&);
Tensor relu(const Tensor& x) { return op::relu::call(x); }
Tensor gelu(const Tensor& x, const std::string& a) {
  return op::gelu::call(x, a);
}
Tensor leaky_relu(const Tensor& x, const Scalar& negative_slope) {
  return op::leaky_relu::call(x, negative_slope);
}
Tensor Tensor::relu() const { return ember::relu(*this); }
Tensor Tensor::gelu(const std::string& a) const { return ember::gelu(*this, a); }
Tensor& Tensor::relu_() {
  op::relu_::call(*this);
  return *this;
}

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
using U = Tensor(const Tensor&);
using Ctx = BackwardCtx<U>;
// relu: g [y > 0]      gelu: gelu_backward(g, x)
std::vector<Tensor> relu_bw(const Ctx& c) { return {c.grad() * (c.output() > 0)}; }
using GeluSig = Tensor(const Tensor&, const std::string&);
std::vector<Tensor> gelu_bw(const BackwardCtx<GeluSig>& c) {
  return {op::gelu_backward::call(c.grad(), c.arg<0>(), c.arg<1>())};
}
using LeakySig = Tensor(const Tensor&, const Scalar&);
std::vector<Tensor> leaky_relu_bw(const BackwardCtx<LeakySig>& c) {
  Tensor x = c.arg<0>();
  Scalar k = c.arg<1>();
  if (is_grad_enabled()) return {leaky_relu_grad(c.grad(), x, k)};  // differentiable ops
  return {op::leaky_relu_backward::call(c.grad(), x, k, false)};
}
const auto kLeakyRelu = spec_of<op::leaky_relu>("LeakyReluBackward0", &leaky_relu_bw).saving(saves(0));
const auto kRelu = spec_of<op::relu>("ReluBackward", &relu_bw).saving_output();
const auto kRelu_ = spec_of<op::relu_>("ReluBackward", &relu_bw).saving_output().in_place();
const auto kGelu = spec_of<op::gelu>("GeluBackward", &gelu_bw).saving(saves(0));

// gelu_backward(g, x, approximate): g * gelu'(x), fused, fp32 inside.
Tensor gelu_backward_cpu(const Tensor& g, const Tensor& x, const std::string& approximate) {
  EMBER_CHECK_VALUE(approximate == "none" || approximate == "tanh", op::gelu_backward::op_name(),
                    ": approximate must be 'none' or "
                    "'tanh', got '",
                    approximate, "'");
  ElementwiseMeta m = binary_meta(op::gelu_backward::op_name(), g, x, ResultKind::PromoteFloat);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  if (approximate == "none") {
    cpu::gelu_backward(strided(out), strided_as(g, m.shape), strided_as(x, m.shape), m.compute);
  } else {
    cpu::gelu_tanh_backward(strided(out), strided_as(g, m.shape), strided_as(x, m.shape), m.compute);
  }
  return out;
}
}  // namespace

namespace {
Tensor gelu_backward_npu(const Tensor& g, const Tensor& x, const std::string& approximate) {
  EMBER_CHECK_VALUE(approximate == "none" || approximate == "tanh", op::gelu_backward::op_name(),
                    ": approximate must be 'none' or "
                    "'tanh', got '",
                    approximate, "'");
  ElementwiseMeta m = binary_meta(op::gelu_backward::op_name(), g, x, ResultKind::PromoteFloat);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  EXEC_NPU_CMD(npu::aclnnGeluBackwardV2, g, x, approximate, out);
  return out;
}
}  // namespace

EMBER_LIBRARY(ember, m) { m.def(op::gelu_backward()); }
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl(op::gelu_backward(), &gelu_backward_cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl(op::gelu_backward(), &gelu_backward_npu); }

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::relu(), autograd_kernel<&kRelu>());
  m.impl(op::relu_(), autograd_kernel<&kRelu_>());
  m.impl(op::gelu(), autograd_kernel<&kGelu>());
  m.impl(op::leaky_relu(), autograd_kernel<&kLeakyRelu>());
  autograd::impl_no_double_backward(m, op::gelu_backward());
  autograd::impl_no_double_backward(m, op::leaky_relu_backward());
}

}  // namespace ember
