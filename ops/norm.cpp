// RMSNorm over the trailing dims covered by weight (LLaMA's norm):
//   rstd = 1 / sqrt(mean(x^2) + eps) per row,   y = x * rstd * weight
// _rms_norm returns (y, rstd) as CANN's RmsNorm does (rstd float32, float64 for float64 inputs,
// shaped like x with 1 for each normalised dim); rms_norm is its first output. One fused pass
// in fp32 each way; the output has the promoted dtype of x and weight.
#include <cmath>

#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/norm.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(_rms_norm, Float32, "ember::_rms_norm(Tensor x, Tensor weight, float eps=1e-6) -> (Tensor, Tensor)",
                 std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, double));
EMBER_DECLARE_OP(rms_norm, Keep, "ember::rms_norm(Tensor x, Tensor weight, float eps=1e-6) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, double));
EMBER_DECLARE_OP(rms_norm_backward, Keep,
                 "ember::rms_norm_backward(Tensor grad, Tensor x, Tensor rstd, "
                 "Tensor weight) -> (Tensor, Tensor)",
                 std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, const Tensor&));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

struct NormGeometry {
  int64_t rows = 0, D = 0;
  DimVector rstd_shape;
  DType dtype;       // of y
  DType rstd_dtype;  // float32, or float64 for float64 math
};

NormGeometry norm_geometry(const char* op, const Tensor& x, const Tensor& w) {
  common_device(op, {&x, &w});
  EMBER_CHECK_DTYPE(x.is_floating_point() && w.is_floating_point(), op, ": expects floating x and weight, got ",
                    x.dtype(), " and ", w.dtype());
  EMBER_CHECK_SHAPE(w.dim() >= 1 && w.dim() <= x.dim(), op, ": weight of shape ", w.sizes(),
                    " must cover trailing dims of x of shape ", x.sizes());
  int64_t lead = x.dim() - w.dim();
  for (int64_t i = 0; i < w.dim(); ++i)
    EMBER_CHECK_SHAPE(x.size(lead + i) == w.size(i), op, ": weight of shape ", w.sizes(),
                      " does not match the trailing dims of x of shape ", x.sizes());
  NormGeometry g;
  g.D = w.numel();
  g.rows = g.D ? x.numel() / g.D : 0;
  g.rstd_shape = DimVector(x.sizes());
  for (int64_t i = lead; i < x.dim(); ++i) g.rstd_shape[static_cast<size_t>(i)] = 1;
  g.dtype = result_type({x, w});
  g.rstd_dtype = g.dtype == DType::Float64 ? DType::Float64 : DType::Float32;
  return g;
}

std::tuple<Tensor, Tensor> rms_norm_cpu(const Tensor& x, const Tensor& w, double eps) {
  NormGeometry g = norm_geometry(op::rms_norm::op_name(), x, w);
  EMBER_CHECK_VALUE(eps >= 0, op::rms_norm::op_name(), ": eps must be non-negative, got ", eps);
  Tensor y = empty_on(x.sizes(), g.dtype, x.device()), rstd = empty_on(g.rstd_shape, g.rstd_dtype, x.device());
  if (g.rows) cpu::rms_norm(strided(y), strided(rstd), strided(x.contiguous()), strided(w.contiguous()), eps, g.rows, g.D);
  return {y, rstd};
}

std::tuple<Tensor, Tensor> rms_norm_npu(const Tensor& x, const Tensor& w, double eps) {
  NormGeometry g = norm_geometry(op::rms_norm::op_name(), x, w);
  EMBER_CHECK_VALUE(eps >= 0, op::rms_norm::op_name(), ": eps must be non-negative, got ", eps);
  Tensor y = empty_on(x.sizes(), g.dtype, x.device()), rstd = empty_on(g.rstd_shape, g.rstd_dtype, x.device());
  // Both in the result dtype (a widening cast: CANN takes gamma of x's dtype, or fp32 for fp16/bf16 x).
  if (g.rows) EXEC_NPU_CMD(npu::aclnnRmsNorm, x.to(g.dtype), w.to(g.dtype), eps, y, rstd);
  return {y, rstd};
}

Tensor rms_norm_composite(const Tensor& x, const Tensor& w, double eps) { return std::get<0>(ember::_rms_norm(x, w, eps)); }

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::_rms_norm());
  m.def(op::rms_norm(), &rms_norm_composite);
}
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl(op::_rms_norm(), &rms_norm_cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl(op::_rms_norm(), &rms_norm_npu); }

std::tuple<Tensor, Tensor> _rms_norm(const Tensor& x, const Tensor& weight, double eps) {
  return op::_rms_norm::call(x, weight, eps);
}
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps) {
  return op::rms_norm::call(x, weight, eps);
}

// ---------------------------------------------------------------- backward
// With xh = x rstd and g = dy weight (per row of D elements):
//   dx = rstd (g - xh mean(g xh)),   dweight = sum over rows of dy xh       (CANN's RmsNormGrad)
// and through the rstd output (d rstd / dx = -rstd^3 x / D):  dx += -(grad_rstd rstd^3 / D) x.
namespace {
using namespace autograd;

NormGeometry check_rms_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& rstd, const Tensor& w) {
  NormGeometry g = norm_geometry(op::rms_norm_backward::op_name(), x, w);
  common_device(op::rms_norm_backward::op_name(), {&dy, &x, &rstd, &w});
  EMBER_CHECK_SHAPE(dy.sizes() == x.sizes() && rstd.sizes() == IntArrayRef(g.rstd_shape),
                    op::rms_norm_backward::op_name(), ": grad ", dy.sizes(), " and rstd ", rstd.sizes(),
                    " for x of shape ", x.sizes(), " (expected ", x.sizes(), " and ", IntArrayRef(g.rstd_shape), ")");
  return g;
}

std::tuple<Tensor, Tensor> rms_norm_backward_cpu(const Tensor& dy, const Tensor& x, const Tensor& rstd, const Tensor& w) {
  NormGeometry g = check_rms_norm_backward(dy, x, rstd, w);
  Tensor dx = empty_on(x.sizes(), x.dtype(), x.device()), dw = empty_on(w.sizes(), w.dtype(), w.device());
  if (g.rows) {
    cpu::rms_norm_backward(strided(dx), strided(dw), strided(dy.contiguous()), strided(x.contiguous()),
                           strided(rstd.contiguous()), strided(w.contiguous()), g.rows, g.D);
  } else {
    dw.zero_();
  }
  return {dx, dw};
}

std::tuple<Tensor, Tensor> rms_norm_backward_npu(const Tensor& dy, const Tensor& x, const Tensor& rstd, const Tensor& w) {
  NormGeometry g = check_rms_norm_backward(dy, x, rstd, w);
  if (x.dtype() != w.dtype()) {  // aclnnRmsNormGrad takes one dtype: compute in the promoted one
    auto [dx, dw] = rms_norm_backward_npu(dy.to(g.dtype), x.to(g.dtype), rstd, w.to(g.dtype));
    return {dx.to(x.dtype()), dw.to(w.dtype())};
  }
  Tensor dx = empty_on(x.sizes(), x.dtype(), x.device()), dw = empty_on(w.sizes(), w.dtype(), w.device());
  if (g.rows) {
    EXEC_NPU_CMD(npu::aclnnRmsNormGrad, dy.to(x.dtype()), x, rstd.to(g.rstd_dtype), w, dx, dw);
  } else {
    dw.zero_();
  }
  return {dx, dw};
}

using RNSig = std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, double);
std::vector<Tensor> rms_norm_bw(const BackwardCtx<RNSig>& c) {
  const Tensor &x = c.arg<0>(), &w = c.arg<1>();
  Tensor rstd = c.output();
  auto [dx, dw] = op::rms_norm_backward::call(c.grad(0), x, rstd, w);
  if (c.has_grad(1)) dx = dx + x * (c.grad(1) * rstd.pow(3.0) * (-1.0 / static_cast<double>(w.numel())));
  return {dx, dw};
}
const auto kRmsNorm = spec_of<op::_rms_norm>("RmsNormBackward", &rms_norm_bw).saving(saves(0, 1)).saving_output(1);
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::rms_norm_backward());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl(op::rms_norm_backward(), &rms_norm_backward_cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl(op::rms_norm_backward(), &rms_norm_backward_npu); }
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::_rms_norm(), autograd_kernel<&kRmsNorm>());
  autograd::impl_no_double_backward(m, op::rms_norm_backward());
}

}  // namespace ember
