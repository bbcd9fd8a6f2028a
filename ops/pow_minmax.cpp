// pow(x, exponent) for a tensor or scalar exponent; maximum/minimum (elementwise, NaN
// propagates). pow computes in floating point (integer inputs promote to the default float).
#include <cmath>

#include "ember/device/cpu/elementwise.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/elementwise_util.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/dispatch/library.h"

namespace ember {
namespace {
using namespace ops;

using Kernel = void (*)(const cpu::Strided&, const cpu::Strided&, const cpu::Strided&, DType);

template <Kernel K, ResultKind kKind>
Tensor binary2_cpu(const Tensor& a, const Tensor& b) {
  ElementwiseMeta m = binary_meta("binary", a, b, kKind);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  K(strided(out), strided_as(a, m.shape), strided_as(b, m.shape), m.compute);
  return out;
}

Tensor pow_scalar_cpu(const Tensor& x, const Scalar& e) {
  ElementwiseMeta m = scalar_meta("pow", x, e, ResultKind::PromoteFloat);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  cpu::pow_scalar(strided(out), strided(x), e.to_double());
  return out;
}

template <ResultKind kKind, class Run>
Tensor binary2_out(const char* op, const Tensor& a, const Tensor& b, Run run) {
  ElementwiseMeta m = binary_meta(op, a, b, kKind);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  run(out);
  return out;
}
Tensor pow_npu(const Tensor& a, const Tensor& b) {
  return binary2_out<ResultKind::PromoteFloat>("pow", a, b, [&](const Tensor& o) { EXEC_NPU_CMD(npu::aclnnPowTensorTensor, a, b, o); });
}
Tensor maximum_npu(const Tensor& a, const Tensor& b) {
  return binary2_out<ResultKind::Promote>("maximum", a, b, [&](const Tensor& o) { EXEC_NPU_CMD(npu::aclnnMaximum, a, b, o); });
}
Tensor minimum_npu(const Tensor& a, const Tensor& b) {
  return binary2_out<ResultKind::Promote>("minimum", a, b, [&](const Tensor& o) { EXEC_NPU_CMD(npu::aclnnMinimum, a, b, o); });
}
Tensor pow_scalar_npu(const Tensor& x, const Scalar& e) {
  ElementwiseMeta m = scalar_meta("pow", x, e, ResultKind::PromoteFloat);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  EXEC_NPU_CMD(npu::aclnnPowTensorScalar, x, e, out);
  return out;
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("pow(Tensor self, Tensor exponent) -> Tensor");
  m.def("pow.Scalar(Tensor self, Scalar exponent) -> Tensor");
  m.def("maximum(Tensor self, Tensor other) -> Tensor");
  m.def("minimum(Tensor self, Tensor other) -> Tensor");
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl("pow", &binary2_cpu<cpu::pow, ResultKind::PromoteFloat>);
  m.impl("pow.Scalar", &pow_scalar_cpu);
  m.impl("maximum", &binary2_cpu<cpu::maximum, ResultKind::Promote>);
  m.impl("minimum", &binary2_cpu<cpu::minimum, ResultKind::Promote>);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl("pow", &pow_npu);
  m.impl("pow.Scalar", &pow_scalar_npu);
  m.impl("maximum", &maximum_npu);
  m.impl("minimum", &minimum_npu);
}

using T2 = Tensor(const Tensor&, const Tensor&);
Tensor pow(const Tensor& a, const Tensor& e) { return EMBER_OP("ember::pow", T2).call(a, e); }
Tensor pow(const Tensor& a, const Scalar& e) {
  return EMBER_OP("ember::pow.Scalar", Tensor(const Tensor&, const Scalar&)).call(a, e);
}
Tensor maximum(const Tensor& a, const Tensor& b) { return EMBER_OP("ember::maximum", T2).call(a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return EMBER_OP("ember::minimum", T2).call(a, b); }
Tensor Tensor::pow(const Tensor& e) const { return ember::pow(*this, e); }
Tensor Tensor::pow(const Scalar& e) const { return ember::pow(*this, e); }
Tensor Tensor::maximum(const Tensor& o) const { return ember::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return ember::minimum(*this, o); }

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
using T2Sig = Tensor(const Tensor&, const Tensor&);
using PSSig = Tensor(const Tensor&, const Scalar&);
// d a^e = g e a^(e-1) ;  d/de a^e = g a^e log(a), taken as 0 where a == 0 and e >= 0 (PyTorch's choice)
std::vector<Tensor> pow_bw(const BackwardCtx<T2Sig>& c) {
  Tensor a = c.arg<0>(), e = c.arg<1>(), g = c.grad();
  Tensor ga, ge;
  if (c.needs(0)) ga = where(e == 0, zeros_like(a), g * e * pow(a, e - 1));
  if (c.needs(1)) {
    Tensor y = c.output();
    Tensor mask = logical_and(a == 0, e >= 0);
    ge = where(mask, zeros_like(y), g * y * log(a));
  }
  return {ga, ge};
}
std::vector<Tensor> pow_scalar_bw(const BackwardCtx<PSSig>& c) {
  double e = c.arg<1>().to_double();
  if (e == 0) return {zeros_like(c.grad())};
  return {c.grad() * pow(c.arg<0>(), e - 1) * e};
}
// maximum: g goes to the larger input; ties split it evenly (as PyTorch does). minimum alike.
std::vector<Tensor> max_min_bw(const BackwardCtx<T2Sig>& c, bool is_max) {
  Tensor a = c.arg<0>(), b = c.arg<1>(), g = c.grad();
  Tensor half = g * 0.5;
  Tensor a_wins = is_max ? a > b : a < b;
  Tensor tie = a == b;
  Tensor z = zeros_like(g);
  return {c.needs(0) ? where(tie, half, where(a_wins, g, z)) : Tensor(),
          c.needs(1) ? where(tie, half, where(a_wins, z, g)) : Tensor()};
}
std::vector<Tensor> maximum_bw(const BackwardCtx<T2Sig>& c) { return max_min_bw(c, true); }
std::vector<Tensor> minimum_bw(const BackwardCtx<T2Sig>& c) { return max_min_bw(c, false); }
const auto kPow = OpSpec<T2Sig>{"PowBackward", "ember::pow", &pow_bw}.saving(saves(0, 1)).saving_output().upcasting();
const auto kPowS = OpSpec<PSSig>{"PowBackward", "ember::pow.Scalar", &pow_scalar_bw}.saving(saves(0)).upcasting();
const auto kMaximum = OpSpec<T2Sig>{"MaximumBackward", "ember::maximum", &maximum_bw}.saving(saves(0, 1));
const auto kMinimum = OpSpec<T2Sig>{"MinimumBackward", "ember::minimum", &minimum_bw}.saving(saves(0, 1));
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl("pow", autograd_kernel<&kPow>());
  m.impl("pow.Scalar", autograd_kernel<&kPowS>());
  m.impl("maximum", autograd_kernel<&kMaximum>());
  m.impl("minimum", autograd_kernel<&kMinimum>());
}

}  // namespace ember
