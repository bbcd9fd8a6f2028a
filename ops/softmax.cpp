// softmax(x, dim) = exp(x - max) / sum(exp(x - max)); log_softmax(x, dim) = x - max - log(sum(exp(x - max)))
// along dim, computed in fp32 for fp16/bf16. Optional dtype: the input is cast to it first.
#include <algorithm>
#include <cmath>

#include "ember/device/cpu/reduce.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/ops/testing/reference.h"

namespace ember {
namespace {
using namespace ops;

using SoftmaxKernel = void (*)(const cpu::Strided&, const cpu::Strided&, int64_t);
using SoftmaxBackwardKernel = void (*)(const cpu::Strided&, const cpu::Strided&, const cpu::Strided&, int64_t);

template <SoftmaxKernel K>
Tensor softmax_cpu_impl(const char* op, const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  Tensor in = dtype ? x.to(*dtype) : x;
  EMBER_CHECK_DTYPE(in.is_floating_point(), op, ": expects a floating tensor, got ", in.dtype());
  int64_t d = x.dim() ? wrap_dim(dim, x.dim(), op) : 0;
  in = in.contiguous();
  Tensor out = empty_on(in.sizes_ref(), in.dtype(), in.device());
  if (out.numel()) K(strided(out), strided(in), d);
  return out;
}
Tensor softmax_cpu(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  return softmax_cpu_impl<cpu::softmax>("softmax", x, dim, dtype);
}
Tensor log_softmax_cpu(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  return softmax_cpu_impl<cpu::log_softmax>("log_softmax", x, dim, dtype);
}

// NPU: aclnnSoftmax / aclnnLogSoftmax (a non-contiguous input is staged by the op).
template <bool kLog>
Tensor softmax_npu_impl(const char* op, const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  Tensor in = dtype ? x.to(*dtype) : x;
  EMBER_CHECK_DTYPE(in.is_floating_point(), op, ": expects a floating tensor, got ", in.dtype());
  int64_t d = x.dim() ? wrap_dim(dim, x.dim(), op) : 0;
  Tensor out = empty_on(in.sizes(), in.dtype(), in.device());
  if (kLog) {
    EXEC_NPU_CMD(npu::aclnnLogSoftmax, in, d, out);
  } else {
    EXEC_NPU_CMD(npu::aclnnSoftmax, in, d, out);
  }
  return out;
}
Tensor softmax_npu(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  return softmax_npu_impl<false>("softmax", x, dim, dtype);
}
Tensor log_softmax_npu(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  return softmax_npu_impl<true>("log_softmax", x, dim, dtype);
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor");
  m.def("log_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor");
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl("softmax", &softmax_cpu);
  m.impl("log_softmax", &log_softmax_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl("softmax", &softmax_npu);
  m.impl("log_softmax", &log_softmax_npu);
}

using Sig = Tensor(const Tensor&, int64_t, std::optional<DType>);

Tensor softmax(const Tensor& x, int64_t dim) { return EMBER_OP("ember::softmax", Sig).call(x, dim, std::nullopt); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return EMBER_OP("ember::log_softmax", Sig).call(x, dim, std::nullopt); }
Tensor Tensor::softmax(int64_t dim) const { return ember::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return ember::log_softmax(*this, dim); }

// ---------------------------------------------------------------- backward
// d softmax: y (g - sum(g y));  d log_softmax: g - exp(y) sum(g). Fused backward ops, fp32 inside.
namespace {
using namespace autograd;
using BwSig = Tensor(const Tensor&, const Tensor&, int64_t);

// The checks both backends share; returns the wrapped dim.
int64_t check_softmax_backward(const char* op, const Tensor& g, const Tensor& y, int64_t dim) {
  common_device(op, {&g, &y});
  EMBER_CHECK_SHAPE(g.sizes() == y.sizes(), op, ": grad of shape ", g.sizes(), " vs output of shape ", y.sizes());
  EMBER_CHECK_DTYPE(g.is_floating_point() && y.is_floating_point(), op, ": expected a floating dtype, got grad ",
                    g.dtype(), " and output ", y.dtype());
  return y.dim() ? wrap_dim(dim, y.dim(), op) : 0;
}

template <SoftmaxBackwardKernel K>
Tensor softmax_backward_cpu_impl(const char* op, const Tensor& g, const Tensor& y, int64_t dim) {
  int64_t d = check_softmax_backward(op, g, y, dim);
  Tensor gc = g.contiguous(), yc = y.contiguous();
  Tensor out = empty_on(y.sizes(), y.dtype(), y.device());
  if (out.numel()) K(strided(out), strided(gc), strided(yc), d);
  return out;
}
Tensor softmax_backward_cpu(const Tensor& g, const Tensor& y, int64_t dim) {
  return softmax_backward_cpu_impl<cpu::softmax_backward>("softmax_backward", g, y, dim);
}
Tensor log_softmax_backward_cpu(const Tensor& g, const Tensor& y, int64_t dim) {
  return softmax_backward_cpu_impl<cpu::log_softmax_backward>("log_softmax_backward", g, y, dim);
}

template <bool kLog>
Tensor softmax_backward_npu_impl(const char* op, const Tensor& g, const Tensor& y, int64_t dim) {
  int64_t d = check_softmax_backward(op, g, y, dim);
  Tensor out = empty_on(y.sizes(), y.dtype(), y.device());
  if (kLog) {
    EXEC_NPU_CMD(npu::aclnnLogSoftmaxBackward, g, y, d, out);
  } else {
    EXEC_NPU_CMD(npu::aclnnSoftmaxBackward, g, y, d, out);
  }
  return out;
}
Tensor softmax_backward_npu(const Tensor& g, const Tensor& y, int64_t dim) {
  return softmax_backward_npu_impl<false>("softmax_backward", g, y, dim);
}
Tensor log_softmax_backward_npu(const Tensor& g, const Tensor& y, int64_t dim) {
  return softmax_backward_npu_impl<true>("log_softmax_backward", g, y, dim);
}

std::vector<Tensor> softmax_bw(const BackwardCtx<Sig>& c) {
  Tensor y = c.output();
  return {EMBER_OP("ember::softmax_backward", BwSig).call(c.grad().to(y.dtype()), y, c.arg<1>())};
}
std::vector<Tensor> log_softmax_bw(const BackwardCtx<Sig>& c) {
  Tensor y = c.output();
  return {EMBER_OP("ember::log_softmax_backward", BwSig).call(c.grad().to(y.dtype()), y, c.arg<1>())};
}
const auto kSoftmax = OpSpec<Sig>{"SoftmaxBackward", "ember::softmax", &softmax_bw}.saving_output();
const auto kLogSoftmax = OpSpec<Sig>{"LogSoftmaxBackward", "ember::log_softmax", &log_softmax_bw}.saving_output();
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("softmax_backward(Tensor grad, Tensor output, int dim) -> Tensor");
  m.def("log_softmax_backward(Tensor grad, Tensor output, int dim) -> Tensor");
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl("softmax_backward", &softmax_backward_cpu);
  m.impl("log_softmax_backward", &log_softmax_backward_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl("softmax_backward", &softmax_backward_npu);
  m.impl("log_softmax_backward", &log_softmax_backward_npu);
}
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl("softmax", autograd_kernel<&kSoftmax>());
  m.impl("log_softmax", autograd_kernel<&kLogSoftmax>());
  m.impl_not_differentiable("softmax_backward");  // no double backward
  m.impl_not_differentiable("log_softmax_backward");
}

// ---------------------------------------------------------------- samples
namespace {
std::vector<testing::Sample> softmax_samples(DType dt) {
  using testing::make_tensor;
  return {{{make_tensor({4, 7}, dt, -5, 5), IValue(int64_t(-1))}, "last dim"},
          {{make_tensor({3, 5, 4}, dt, -5, 5), IValue(int64_t(1))}, "middle dim (strided rows)"},
          {{testing::make_noncontig({6, 5}, dt, -5, 5), IValue(int64_t(0))}, "non-contiguous, dim 0"},
          {{make_tensor({}, dt, -5, 5), IValue(int64_t(0))}, "0-d"},
          {{make_tensor({64, 1000}, dt, -20, 20), IValue(int64_t(1))}, "large, wide range"},
          {{make_tensor({3, 4}, dt, -5, 5), IValue(int64_t(1)), IValue(kFloat64)}, "dtype=float64"}};
}
std::vector<double> ref_softmax_row(const std::vector<double>& v, bool log) {
  double m = *std::max_element(v.begin(), v.end()), s = 0;
  for (double x : v) s += std::exp(x - m);
  std::vector<double> out;
  for (double x : v) out.push_back(log ? x - m - std::log(s) : std::exp(x - m) / s);
  return out;
}
}  // namespace

namespace {
std::vector<testing::Sample> softmax_bw_samples(DType dt, bool log) {
  using testing::make_tensor;
  std::vector<testing::Sample> s;
  // y is a real softmax/log_softmax output so the identities hold.
  auto y_of = [&](const Tensor& x, int64_t d) { return log ? x.log_softmax(d) : x.softmax(d); };
  s.push_back({{make_tensor({4, 7}, dt, -1, 1, 1), y_of(make_tensor({4, 7}, dt, -3, 3, 2), 1), IValue(int64_t(1))},
               "last dim"});
  s.push_back({{make_tensor({3, 5, 4}, dt, -1, 1, 3), y_of(make_tensor({3, 5, 4}, dt, -3, 3, 4), 1), IValue(int64_t(1))},
               "middle dim"});
  s.push_back({{make_tensor({64, 300}, dt, -1, 1, 5), y_of(make_tensor({64, 300}, dt, -3, 3, 6), -1), IValue(int64_t(-1))},
               "large"});
  return s;
}
Stack softmax_bw_ref(const Stack& a, bool log) {
  Tensor g = a[0].to_tensor(), y = a[1].to_tensor();
  int64_t d = a[2].to_int() < 0 ? a[2].to_int() + y.dim() : a[2].to_int();
  // Pair g and y along the dim by stacking them into one slice of twice the length.
  Tensor both = cat({testing::ref_contiguous(g, kFloat64), testing::ref_contiguous(y, kFloat64)}, d);
  int64_t n = y.size(d);
  Tensor r = testing::ref_along(both, d, [n, log](const std::vector<double>& v) {
    double dot = 0, gs = 0;
    for (int64_t i = 0; i < n; ++i) {
      dot += v[static_cast<size_t>(i)] * v[static_cast<size_t>(n + i)];
      gs += v[static_cast<size_t>(i)];
    }
    std::vector<double> out(v.size());
    for (int64_t i = 0; i < n; ++i) {
      double gi = v[static_cast<size_t>(i)], yi = v[static_cast<size_t>(n + i)];
      out[static_cast<size_t>(i)] = log ? gi - std::exp(yi) * gs : yi * (gi - dot);
    }
    return out;
  });
  return {r.narrow(d, 0, n)};
}
}  // namespace
EMBER_OP_INFO("ember::softmax_backward", info) {
  info.samples = [](DType dt) { return softmax_bw_samples(dt, false); };
  info.reference = [](const Stack& a) { return softmax_bw_ref(a, false); };
  info.tol_scale = 4;
}
EMBER_OP_INFO("ember::log_softmax_backward", info) {
  info.samples = [](DType dt) { return softmax_bw_samples(dt, true); };
  info.reference = [](const Stack& a) { return softmax_bw_ref(a, true); };
  info.tol_scale = 4;
}
EMBER_OP_INFO("ember::softmax", info) {
  info.samples = softmax_samples;
  info.reference = [](const Stack& a) -> Stack {
    return {testing::ref_along(a[0].to_tensor(), a[1].to_int(), [](const std::vector<double>& v) { return ref_softmax_row(v, false); })};
  };
}
EMBER_OP_INFO("ember::log_softmax", info) {
  info.samples = softmax_samples;
  info.reference = [](const Stack& a) -> Stack {
    return {testing::ref_along(a[0].to_tensor(), a[1].to_int(), [](const std::vector<double>& v) { return ref_softmax_row(v, true); })};
  };
  info.tol_scale = 4;
}

}  // namespace ember
