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
#include "ember/ops/testing/reference.h"

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
  NormGeometry g = norm_geometry("rms_norm", x, w);
  EMBER_CHECK_VALUE(eps >= 0, "rms_norm: eps must be non-negative, got ", eps);
  Tensor y = empty_on(x.sizes(), g.dtype, x.device()), rstd = empty_on(g.rstd_shape, g.rstd_dtype, x.device());
  if (g.rows) cpu::rms_norm(strided(y), strided(rstd), strided(x.contiguous()), strided(w.contiguous()), eps, g.rows, g.D);
  return {y, rstd};
}

std::tuple<Tensor, Tensor> rms_norm_npu(const Tensor& x, const Tensor& w, double eps) {
  NormGeometry g = norm_geometry("rms_norm", x, w);
  EMBER_CHECK_VALUE(eps >= 0, "rms_norm: eps must be non-negative, got ", eps);
  Tensor y = empty_on(x.sizes(), g.dtype, x.device()), rstd = empty_on(g.rstd_shape, g.rstd_dtype, x.device());
  if (g.rows) EXEC_NPU_CMD(npu::aclnnRmsNorm, x.to(g.dtype), w, eps, y, rstd);
  return {y, rstd};
}

Tensor rms_norm_composite(const Tensor& x, const Tensor& w, double eps) { return std::get<0>(ember::_rms_norm(x, w, eps)); }

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("_rms_norm(Tensor x, Tensor weight, float eps=1e-6) -> (Tensor, Tensor)");
  m.def("rms_norm(Tensor x, Tensor weight, float eps=1e-6) -> Tensor", &rms_norm_composite);
}
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl("_rms_norm", &rms_norm_cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl("_rms_norm", &rms_norm_npu); }

std::tuple<Tensor, Tensor> _rms_norm(const Tensor& x, const Tensor& weight, double eps) {
  return EMBER_OP("ember::_rms_norm", std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, double)).call(x, weight, eps);
}
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps) {
  return EMBER_OP("ember::rms_norm", Tensor(const Tensor&, const Tensor&, double)).call(x, weight, eps);
}

// ---------------------------------------------------------------- backward
// With xh = x rstd and g = dy weight (per row of D elements):
//   dx = rstd (g - xh mean(g xh)),   dweight = sum over rows of dy xh       (CANN's RmsNormGrad)
// and through the rstd output (d rstd / dx = -rstd^3 x / D):  dx += -(grad_rstd rstd^3 / D) x.
namespace {
using namespace autograd;

NormGeometry check_rms_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& rstd, const Tensor& w) {
  NormGeometry g = norm_geometry("rms_norm_backward", x, w);
  common_device("rms_norm_backward", {&dy, &x, &rstd, &w});
  EMBER_CHECK_SHAPE(dy.sizes() == x.sizes() && rstd.sizes() == IntArrayRef(g.rstd_shape), "rms_norm_backward: grad ",
                    dy.sizes(), " and rstd ", rstd.sizes(), " for x of shape ", x.sizes(), " (expected ", x.sizes(),
                    " and ", IntArrayRef(g.rstd_shape), ")");
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
  auto [dx, dw] = EMBER_OP("ember::rms_norm_backward",
                           std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, const Tensor&))
                      .call(c.grad(0), x, rstd, w);
  if (c.has_grad(1)) dx = dx + x * (c.grad(1) * rstd.pow(3.0) * (-1.0 / static_cast<double>(w.numel())));
  return {dx, dw};
}
const auto kRmsNorm = OpSpec<RNSig>{"RmsNormBackward", "ember::_rms_norm", &rms_norm_bw}.saving(saves(0, 1)).saving_output(1);
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("rms_norm_backward(Tensor grad, Tensor x, Tensor rstd, Tensor weight) -> (Tensor, Tensor)");
}
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl("rms_norm_backward", &rms_norm_backward_cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl("rms_norm_backward", &rms_norm_backward_npu); }
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl("_rms_norm", autograd_kernel<&kRmsNorm>());
  m.impl_not_differentiable("rms_norm_backward");  // no double backward
}

// ---------------------------------------------------------------- samples
namespace {
// Rows of D trailing elements: (rstd per row, y).
Stack ref_rms_norm(const Tensor& x, const Tensor& w, double eps) {
  int64_t D = w.numel(), rows = D ? x.numel() / D : 0;
  Tensor xc = testing::ref_contiguous(x, kFloat64), wc = testing::ref_contiguous(w, kFloat64);
  Tensor y = empty(x.sizes(), kFloat64);
  Shape rshape = x.sizes();
  for (int64_t i = x.dim() - w.dim(); i < x.dim(); ++i) rshape[static_cast<size_t>(i)] = 1;
  Tensor r = empty(rshape, kFloat64);
  const double *xp = xc.data_ptr<double>(), *wp = wc.data_ptr<double>();
  double *yp = y.data_ptr<double>(), *rp = r.data_ptr<double>();
  for (int64_t i = 0; i < rows; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < D; ++j) ss += xp[i * D + j] * xp[i * D + j];
    rp[i] = 1.0 / std::sqrt(ss / static_cast<double>(D) + eps);
    for (int64_t j = 0; j < D; ++j) yp[i * D + j] = xp[i * D + j] * rp[i] * wp[j];
  }
  return {y, r};
}
std::vector<testing::Sample> rms_norm_samples(DType dt) {
  using testing::make_tensor;
  return {{{make_tensor({4, 8}, dt, -2, 2, 1), make_tensor({8}, dt, 0.5, 1.5, 2), IValue(1e-6)}, "rows of 8"},
          {{make_tensor({2, 3, 4, 5}, dt, -2, 2, 3), make_tensor({4, 5}, dt, 0.5, 1.5, 4), IValue(1e-5)}, "2-d weight"},
          {{testing::make_noncontig({6, 5}, dt, -2, 2, 5), make_tensor({5}, dt, 0.5, 1.5, 6), IValue(1e-6)},
           "non-contiguous x"},
          {{make_tensor({3, 7}, dt, -1, 1, 7), make_tensor({7}, DType::Float32, 0.5, 1.5, 8), IValue(0.1)},
           "float32 weight, large eps"},
          {{make_tensor({64, 256}, dt, -2, 2, 9), make_tensor({256}, dt, 0.5, 1.5, 10), IValue(1e-6)}, "large (parallel)"}};
}
}  // namespace

EMBER_OP_INFO("ember::_rms_norm", info) {
  info.samples = rms_norm_samples;
  info.reference = [](const Stack& a) { return ref_rms_norm(a[0].to_tensor(), a[1].to_tensor(), a[2].to_double()); };
  info.tol_scale = 2;
}
EMBER_OP_INFO("ember::rms_norm", info) {
  info.samples = rms_norm_samples;
  info.reference = [](const Stack& a) -> Stack {
    return {ref_rms_norm(a[0].to_tensor(), a[1].to_tensor(), a[2].to_double())[0]};
  };
  info.tol_scale = 2;
}
EMBER_OP_INFO("ember::rms_norm_backward", info) {
  info.samples = [](DType dt) {
    using testing::make_tensor;
    std::vector<testing::Sample> out;
    for (auto& s : rms_norm_samples(dt)) {
      const Tensor &x = s.args[0].to_tensor(), &w = s.args[1].to_tensor();
      Tensor rstd = std::get<1>(_rms_norm(x, w, s.args[2].to_double()));
      out.push_back({{make_tensor(x.sizes(), x.dtype(), -1, 1, 11), x, rstd, w}, s.desc});
    }
    return out;
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor dy = testing::ref_contiguous(a[0].to_tensor(), kFloat64), x = testing::ref_contiguous(a[1].to_tensor(), kFloat64);
    Tensor r = testing::ref_contiguous(a[2].to_tensor(), kFloat64), w = testing::ref_contiguous(a[3].to_tensor(), kFloat64);
    int64_t D = w.numel(), rows = D ? x.numel() / D : 0;
    Tensor dx = empty(x.sizes(), kFloat64), dw = zeros(w.sizes(), kFloat64);
    const double *dyp = dy.data_ptr<double>(), *xp = x.data_ptr<double>(), *rp = r.data_ptr<double>(),
                 *wp = w.data_ptr<double>();
    double *dxp = dx.data_ptr<double>(), *dwp = dw.data_ptr<double>();
    for (int64_t i = 0; i < rows; ++i) {
      double m = 0;
      for (int64_t j = 0; j < D; ++j) m += dyp[i * D + j] * wp[j] * xp[i * D + j] * rp[i];
      m /= static_cast<double>(D);
      for (int64_t j = 0; j < D; ++j) {
        double xh = xp[i * D + j] * rp[i];
        dxp[i * D + j] = rp[i] * (dyp[i * D + j] * wp[j] - xh * m);
        dwp[j] += dyp[i * D + j] * xh;
      }
    }
    return {dx, dw};
  };
  info.tol_scale = 4;
}

}  // namespace ember
