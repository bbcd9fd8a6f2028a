// pow(x, exponent) for a tensor or scalar exponent. pow computes in floating point (integer
// inputs promote to the default float).
#include <cmath>

#include "ember/device/cpu/elementwise.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/elementwise_util.h"
#include "ember/ops/npu_exec.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(pow, Float32, "ember::pow(Tensor self, Tensor exponent) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(pow_Scalar, Float32, "ember::pow.Scalar(Tensor self, Scalar exponent) -> Tensor",
                 Tensor(const Tensor&, const Scalar&));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

Tensor pow_cpu(const Tensor& a, const Tensor& b) {
  ElementwiseMeta m = binary_meta(op::pow::op_name(), a, b, ResultKind::PromoteFloat);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  cpu::pow(strided(out), strided_as(a, m.shape), strided_as(b, m.shape), m.compute);
  return out;
}

Tensor pow_scalar_cpu(const Tensor& x, const Scalar& e) {
  ElementwiseMeta m = scalar_meta(op::pow::op_name(), x, e, ResultKind::PromoteFloat);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  cpu::pow_scalar(strided(out), strided(x), e.to_double());
  return out;
}

Tensor pow_npu(const Tensor& a, const Tensor& b) {
  ElementwiseMeta m = binary_meta(op::pow::op_name(), a, b, ResultKind::PromoteFloat);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  EXEC_NPU_CMD(npu::aclnnPowTensorTensor, a, b, out);
  return out;
}
Tensor pow_scalar_npu(const Tensor& x, const Scalar& e) {
  ElementwiseMeta m = scalar_meta(op::pow::op_name(), x, e, ResultKind::PromoteFloat);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  EXEC_NPU_CMD(npu::aclnnPowTensorScalar, x, e, out);
  return out;
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::pow());
  m.def(op::pow_Scalar());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::pow(), &pow_cpu);
  m.impl(op::pow_Scalar(), &pow_scalar_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::pow(), &pow_npu);
  m.impl(op::pow_Scalar(), &pow_scalar_npu);
}

using T2 = Tensor(const Tensor&, const Tensor&);
Tensor pow(const Tensor& a, const Tensor& e) { return op::pow::call(a, e); }
Tensor pow(const Tensor& a, const Scalar& e) {
  return op::pow_Scalar::call(a, e);
}
Tensor Tensor::pow(const Tensor& e) const { return ember::pow(*this, e); }
Tensor Tensor::pow(const Scalar& e) const { return ember::pow(*this, e); }

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
const auto kPow = spec_of<op::pow>("PowBackward", &pow_bw).saving(saves(0, 1)).saving_output().upcasting();
const auto kPowS = spec_of<op::pow_Scalar>("PowBackward", &pow_scalar_bw).saving(saves(0)).upcasting();
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::pow(), autograd_kernel<&kPow>());
  m.impl(op::pow_Scalar(), autograd_kernel<&kPowS>());
}

}  // namespace ember
