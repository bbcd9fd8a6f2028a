// softmax(x, dim) = exp(x - max) / sum(exp(x - max)); log_softmax(x, dim) = x - max - log(sum(exp(x - max)))
// along dim, computed in fp32 for fp16/bf16. Optional dtype: the input is cast to it first.
#include <algorithm>
#include <cmath>

#include "ember/device/cpu/reduce.h"
#include "ember/ops/op_util.h"
#include "ember/ops/testing/reference.h"

namespace ember {
namespace {
using namespace ops;

using SoftmaxKernel = void (*)(const cpu::Strided&, const cpu::Strided&, int64_t);

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

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor");
  m.def("log_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor");
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl("softmax", &softmax_cpu);
  m.impl("log_softmax", &log_softmax_cpu);
}

using Sig = Tensor(const Tensor&, int64_t, std::optional<DType>);
Tensor softmax(const Tensor& x, int64_t dim) { return EMBER_OP("ember::softmax", Sig).call(x, dim, std::nullopt); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return EMBER_OP("ember::log_softmax", Sig).call(x, dim, std::nullopt); }
Tensor Tensor::softmax(int64_t dim) const { return ember::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return ember::log_softmax(*this, dim); }

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
