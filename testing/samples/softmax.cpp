// Samples and float64 references for the ops of ops/softmax.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <algorithm>
#include <cmath>
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
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
