// SwiGLU gates. silu_mul(a, b) = silu(a) * b, fused in one pass (broadcasting, promotion).
// swiglu(x, dim) is CANN's SwiGlu: x split in halves a, b along dim (size must be even),
// out = silu(a) * b with x's dtype and dim halved. swiglu(a, b) is the two-input form.
#include <cmath>

#include "ember/device/cpu/elementwise.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/elementwise_util.h"
#include "ember/ops/npu_exec.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(silu_mul, Keep, "ember::silu_mul(Tensor self, Tensor other) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(swiglu, Keep, "ember::swiglu(Tensor self, int dim=-1) -> Tensor", Tensor(const Tensor&, int64_t));
EMBER_DECLARE_OP(silu_mul_backward, Keep,
                 "ember::silu_mul_backward(Tensor grad, Tensor self, "
                 "Tensor other) -> (Tensor, Tensor)",
                 std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&));
EMBER_DECLARE_OP(swiglu_backward, Keep, "ember::swiglu_backward(Tensor grad, Tensor self, int dim=-1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, int64_t));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

Tensor silu_mul_cpu(const Tensor& a, const Tensor& b) {
  ElementwiseMeta m = binary_meta(op::silu_mul::op_name(), a, b, ResultKind::PromoteFloat);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  cpu::silu_mul(strided(out), strided_as(a, m.shape), strided_as(b, m.shape), m.compute);
  return out;
}

// The halves of x along dim (views); checks the CANN constraints.
std::pair<Tensor, Tensor> swiglu_halves(const Tensor& x, int64_t dim) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), op::swiglu::op_name(), ": expects a floating tensor, got ", x.dtype());
  EMBER_CHECK_SHAPE(x.dim() > 0, op::swiglu::op_name(), ": expects at least 1 dimension, got a 0-d tensor");
  int64_t d = wrap_dim(dim, x.dim(), op::swiglu::op_name());
  int64_t n = x.size(d);
  EMBER_CHECK_SHAPE(n % 2 == 0, op::swiglu::op_name(), ": the size of dim ", d,
                    " must be even to split in halves, got shape ", x.sizes_ref());
  return {x.narrow(d, 0, n / 2), x.narrow(d, n / 2, n / 2)};
}

Tensor swiglu_cpu(const Tensor& x, int64_t dim) {
  auto [a, b] = swiglu_halves(x, dim);
  Tensor out = empty_on(a.sizes_ref(), x.dtype(), x.device());
  cpu::silu_mul(strided(out), strided(a), strided(b), cpu::compute_dtype(x.dtype()));
  return out;
}

Tensor silu_mul_npu(const Tensor& a, const Tensor& b) {
  ElementwiseMeta m = binary_meta(op::silu_mul::op_name(), a, b, ResultKind::PromoteFloat);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  EXEC_NPU_CMD(npu::aclnnEmberSiluMul, a, b, out);
  return out;
}

// CANN's SwiGlu takes a contiguous x.
Tensor swiglu_npu(const Tensor& x, int64_t dim) {
  auto halves = swiglu_halves(x, dim);
  Tensor out = empty_on(halves.first.sizes(), x.dtype(), x.device());
  EXEC_NPU_CMD(npu::aclnnSwiGlu, x.contiguous(), dim, out);
  return out;
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::silu_mul());
  m.def(op::swiglu());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::silu_mul(), &silu_mul_cpu);
  m.impl(op::swiglu(), &swiglu_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::silu_mul(), &silu_mul_npu);
  m.impl(op::swiglu(), &swiglu_npu);
}

Tensor silu_mul(const Tensor& a, const Tensor& b) {
  return op::silu_mul::call(a, b);
}
Tensor swiglu(const Tensor& a, const Tensor& b) { return silu_mul(a, b); }
Tensor swiglu(const Tensor& x, int64_t dim) { return op::swiglu::call(x, dim); }

// ---------------------------------------------------------------- backward
// silu_mul(a, b) = silu(a) b:  ga = g b s (1 + a (1 - s)),  gb = g silu(a),  s = sigmoid(a)
// swiglu(x, dim) = silu_mul of x's halves: the same two gradients, written into x's halves.
// Both are fused ops (one pass each, fp32 inside) with their own kernels, as CANN's SwiGluGrad.
namespace {
using namespace autograd;

// meta (shared by both backends): the two gradients at the broadcast shape and promoted dtype.
struct SiluMulGrads {
  DimVector shape;
  Tensor ga, gb;
};
SiluMulGrads silu_mul_backward_meta(const Tensor& g, const Tensor& a, const Tensor& b) {
  Device dev = common_device(op::silu_mul_backward::op_name(), {&g, &a, &b});
  DimVector shape = broadcast_shapes(broadcast_shapes(g.sizes(), a.sizes(), op::silu_mul_backward::op_name()),
                                     b.sizes(), op::silu_mul_backward::op_name());
  DType dt = result_type({g, a, b});
  Tensor ga = empty_on(shape, dt, dev), gb = empty_on(shape, dt, dev);
  return {shape, ga, gb};
}
// meta: g has the shape of one half of x; the gradient of x, allocated.
Tensor swiglu_backward_meta(const Tensor& g, const Tensor& x, int64_t dim) {
  Tensor half = swiglu_halves(x, dim).first;
  common_device(op::swiglu_backward::op_name(), {&g, &x});
  EMBER_CHECK_SHAPE(g.sizes() == half.sizes(), op::swiglu_backward::op_name(), ": grad of shape ", g.sizes(),
                    " for an input of shape ", x.sizes(), " (expected ", half.sizes(), ")");
  return empty_on(x.sizes(), x.dtype(), x.device());
}

std::tuple<Tensor, Tensor> silu_mul_backward_cpu(const Tensor& g, const Tensor& a, const Tensor& b) {
  SiluMulGrads m = silu_mul_backward_meta(g, a, b);
  const DimVector& shape = m.shape;
  DType c = cpu::compute_dtype(m.ga.dtype());
  cpu::silu_mul_grad_a(strided(m.ga), strided_as(g, shape), strided_as(a, shape), strided_as(b, shape), c);
  cpu::silu_mul(strided(m.gb), strided_as(a, shape), strided_as(g, shape), c);
  return {m.ga, m.gb};
}

Tensor swiglu_backward_cpu(const Tensor& g, const Tensor& x, int64_t dim) {
  Tensor gx = swiglu_backward_meta(g, x, dim);
  auto [a, b] = swiglu_halves(x, dim);
  auto [ga, gb] = swiglu_halves(gx, dim);
  DType c = cpu::compute_dtype(x.dtype());
  cpu::silu_mul_grad_a(strided(ga), strided(g), strided(a), strided(b), c);
  cpu::silu_mul(strided(gb), strided(a), strided(g), c);
  return gx;
}

std::tuple<Tensor, Tensor> silu_mul_backward_npu(const Tensor& g, const Tensor& a, const Tensor& b) {
  SiluMulGrads m = silu_mul_backward_meta(g, a, b);
  EXEC_NPU_CMD(npu::aclnnEmberSiluMulGrad, g, a, b, m.ga, m.gb);
  return {m.ga, m.gb};
}

Tensor swiglu_backward_npu(const Tensor& g, const Tensor& x, int64_t dim) {
  Tensor gx = swiglu_backward_meta(g, x, dim);
  EXEC_NPU_CMD(npu::aclnnSwiGluGrad, g, x.contiguous(), dim, gx);
  return gx;
}

using SMSig = Tensor(const Tensor&, const Tensor&);
std::vector<Tensor> silu_mul_bw(const BackwardCtx<SMSig>& c) {
  auto [ga, gb] = op::silu_mul_backward::call(c.grad(), c.arg<0>(), c.arg<1>());
  return {c.needs(0) ? ga : Tensor(), c.needs(1) ? gb : Tensor()};
}
using SWSig = Tensor(const Tensor&, int64_t);
std::vector<Tensor> swiglu_bw(const BackwardCtx<SWSig>& c) {
  return {op::swiglu_backward::call(c.grad(), c.arg<0>(), c.arg<1>())};
}
const auto kSiluMul = spec_of<op::silu_mul>("SiluMulBackward", &silu_mul_bw).saving(saves(0, 1));
const auto kSwiglu = spec_of<op::swiglu>("SwiGluBackward", &swiglu_bw).saving(saves(0));
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::silu_mul_backward());
  m.def(op::swiglu_backward());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::silu_mul_backward(), &silu_mul_backward_cpu);
  m.impl(op::swiglu_backward(), &swiglu_backward_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::silu_mul_backward(), &silu_mul_backward_npu);
  m.impl(op::swiglu_backward(), &swiglu_backward_npu);
}
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::silu_mul(), autograd_kernel<&kSiluMul>());
  m.impl(op::swiglu(), autograd_kernel<&kSwiglu>());
  autograd::impl_no_double_backward(m, op::silu_mul_backward());
  autograd::impl_no_double_backward(m, op::swiglu_backward());
}

}  // namespace ember
