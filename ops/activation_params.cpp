// softplus, elu and threshold: elementwise activations with scalar parameters, as torch defines
// them (cpu::softplus/elu/threshold on the CPU, aclnnSoftplus/Elu/Threshold on the NPU). Their
// gradients are formulas of differentiable ops, so they work on both devices and to any order.
#include "ember/gen/cpu_kernels.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/elementwise_util.h"
#include "ember/ops/npu_exec.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(softplus, Keep, "ember::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
                 Tensor(const Tensor&, const Scalar&, const Scalar&));
EMBER_DECLARE_OP(elu, Keep, "ember::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
                 Tensor(const Tensor&, const Scalar&, const Scalar&, const Scalar&));
EMBER_DECLARE_OP(threshold, Keep, "ember::threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor",
                 Tensor(const Tensor&, const Scalar&, const Scalar&));
// log(1 + exp(beta x)) / beta, or x where beta x > threshold (torch.nn.functional.softplus).
EMBER_EXPORT_OP(softplus, function);
// scale x where x > 0, else alpha scale (exp(input_scale x) - 1) (torch.nn.functional.elu; selu's
// constants give selu).
EMBER_EXPORT_OP(elu, function);
// value where x <= threshold, else x (torch.threshold).
EMBER_EXPORT_OP(threshold, function);
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;
constexpr ResultKind F = ResultKind::PromoteFloat;
constexpr ResultKind P = ResultKind::Promote;

ElementwiseMeta float_meta(const char* op, const Tensor& x) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), op, ": expects a floating tensor, got ", x.dtype());
  return unary_meta(x, F);
}
ElementwiseMeta threshold_meta(const Tensor& x) {
  EMBER_CHECK_DTYPE(x.dtype() != kBool, op::threshold::op_name(), ": not implemented for bool");
  return unary_meta(x, P);
}

Tensor softplus_cpu(const Tensor& x, const Scalar& beta, const Scalar& threshold) {
  return unary_out(float_meta(op::softplus::op_name(), x), [&](const Tensor& o) {
    cpu::softplus(strided(o), strided(x), beta.to_double(), threshold.to_double());
  });
}
Tensor softplus_npu(const Tensor& x, const Scalar& beta, const Scalar& threshold) {
  return unary_out(float_meta(op::softplus::op_name(), x),
                   [&](const Tensor& o) { EXEC_NPU_CMD(npu::aclnnSoftplus, x, beta, threshold, o); });
}
Tensor elu_cpu(const Tensor& x, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return unary_out(float_meta(op::elu::op_name(), x), [&](const Tensor& o) {
    cpu::elu(strided(o), strided(x), alpha.to_double(), scale.to_double(), input_scale.to_double());
  });
}
Tensor elu_npu(const Tensor& x, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return unary_out(float_meta(op::elu::op_name(), x),
                   [&](const Tensor& o) { EXEC_NPU_CMD(npu::aclnnElu, x, alpha, scale, input_scale, o); });
}
Tensor threshold_cpu(const Tensor& x, const Scalar& threshold, const Scalar& value) {
  return unary_out(threshold_meta(x), [&](const Tensor& o) {
    cpu::threshold(strided(o), strided(x), threshold.to_double(), value.to_double());
  });
}
Tensor threshold_npu(const Tensor& x, const Scalar& threshold, const Scalar& value) {
  return unary_out(threshold_meta(x), [&](const Tensor& o) { EXEC_NPU_CMD(npu::aclnnThreshold, x, threshold, value, o); });
}

// ---- gradients (PyTorch's: softplus_backward, elu_backward, threshold_backward)
using namespace autograd;
using SoftplusSig = Tensor(const Tensor&, const Scalar&, const Scalar&);
using EluSig = Tensor(const Tensor&, const Scalar&, const Scalar&, const Scalar&);
std::vector<Tensor> softplus_bw(const BackwardCtx<SoftplusSig>& c) {
  const Tensor g = c.grad(), bx = c.arg<0>().mul(c.arg<1>());
  return {where(bx.gt(c.arg<2>()), g, g * bx.sigmoid())};
}
std::vector<Tensor> elu_bw(const BackwardCtx<EluSig>& c) {
  const Tensor g = c.grad(), x = c.arg<0>();
  const double alpha = c.arg<1>().to_double(), scale = c.arg<2>().to_double(), in_scale = c.arg<3>().to_double();
  return {where(x.gt(0), g.mul(scale), g * x.mul(in_scale).exp().mul(alpha * scale * in_scale))};
}
std::vector<Tensor> threshold_bw(const BackwardCtx<SoftplusSig>& c) {
  const Tensor g = c.grad();
  return {where(c.arg<0>().le(c.arg<1>()), zeros_like(g), g)};
}
const auto kSoftplus = spec_of<op::softplus>("SoftplusBackward", &softplus_bw).saving(saves(0));
const auto kElu = spec_of<op::elu>("EluBackward", &elu_bw).saving(saves(0));
const auto kThreshold = spec_of<op::threshold>("ThresholdBackward", &threshold_bw).saving(saves(0));
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::softplus());
  m.def(op::elu());
  m.def(op::threshold());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::softplus(), &softplus_cpu);
  m.impl(op::elu(), &elu_cpu);
  m.impl(op::threshold(), &threshold_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::softplus(), &softplus_npu);
  m.impl(op::elu(), &elu_npu);
  m.impl(op::threshold(), &threshold_npu);
}
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::softplus(), autograd_kernel<&kSoftplus>());
  m.impl(op::elu(), autograd_kernel<&kElu>());
  m.impl(op::threshold(), autograd_kernel<&kThreshold>());
}

}  // namespace ember
