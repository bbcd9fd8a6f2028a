// Samples and float64 references for the ops of ops/loss.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <cmath>
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
std::vector<testing::Sample> ce_samples(DType dt) {
  using testing::make_int_valued;
  using testing::make_tensor;
  Tensor t3 = make_int_valued({6}, DType::Int64, 0, 4, 3);
  t3.data_ptr<int64_t>()[2] = -100;  // an ignored row
  return {{{make_tensor({5, 4}, dt, -3, 3, 1), make_int_valued({5}, DType::Int64, 0, 3, 2)}, "5 rows of 4 classes"},
          {{make_tensor({6, 5}, dt, -3, 3, 4), t3}, "an ignored row"},
          {{testing::make_noncontig({4, 7}, dt, -3, 3, 5), make_int_valued({4}, DType::Int64, 0, 6, 6), IValue(int64_t(2))},
           "non-contiguous logits, ignore_index 2"},
          {{make_tensor({9}, dt, -3, 3, 7), make_int_valued({}, DType::Int64, 0, 8, 8)}, "one row, 0-d target"},
          {{make_tensor({256, 27}, dt, -3, 3, 9), make_int_valued({256}, DType::Int64, 0, 26, 10)}, "large (parallel)"}};
}
// Per row: (logsumexp - target logit, softmax row); rows with the ignored target flagged.
double ref_ce(const Tensor& logits, const Tensor& target, int64_t ignore, Tensor* dlogits, double g) {
  Tensor l = logits.dim() == 1 ? logits.unsqueeze(0) : logits;
  Tensor t = target.dim() == 0 ? target.reshape({1}) : target;
  int64_t N = l.size(0), C = l.size(1), n = 0;
  for (int64_t i = 0; i < N; ++i) n += testing::at_int(t, {i}) != ignore;
  double sum = 0;
  if (dlogits) *dlogits = zeros(logits.sizes(), kFloat64);
  for (int64_t i = 0; i < N; ++i) {
    int64_t k = testing::at_int(t, {i});
    if (k == ignore) continue;
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < C; ++j) m = std::max(m, testing::at(l, {i, j}));
    for (int64_t j = 0; j < C; ++j) s += std::exp(testing::at(l, {i, j}) - m);
    sum += m + std::log(s) - testing::at(l, {i, k});
    if (dlogits) {
      double* d = dlogits->data_ptr<double>() + i * C;
      for (int64_t j = 0; j < C; ++j) d[j] = g / static_cast<double>(n) * (std::exp(testing::at(l, {i, j}) - m) / s - (j == k));
    }
  }
  return sum / static_cast<double>(n);
}
}  // namespace

EMBER_OP_INFO("ember::cross_entropy", info) {
  info.samples = ce_samples;
  info.reference = [](const Stack& a) -> Stack {
    int64_t ignore = a.size() > 2 ? a[2].to_int() : -100;
    return {full({}, ref_ce(a[0].to_tensor(), a[1].to_tensor(), ignore, nullptr, 0), kFloat64)};
  };
  info.tol_scale = 4;
}
EMBER_OP_INFO("ember::cross_entropy_backward", info) {
  info.samples = [](DType dt) {
    std::vector<testing::Sample> out;
    for (auto& s : ce_samples(dt)) {
      Stack args{testing::make_tensor({}, dt, 0.5, 2, 11)};
      args.insert(args.end(), s.args.begin(), s.args.end());
      out.push_back({args, s.desc});
    }
    return out;
  };
  info.reference = [](const Stack& a) -> Stack {
    int64_t ignore = a.size() > 3 ? a[3].to_int() : -100;
    Tensor d;
    ref_ce(a[1].to_tensor(), a[2].to_tensor(), ignore, &d, testing::at(a[0].to_tensor(), {}));
    return {d};
  };
  info.tol_scale = 4;
}
EMBER_OP_INFO("ember::mse_loss", info) {
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({4, 5}, dt, -2, 2, 1), make_tensor({4, 5}, dt, -2, 2, 2)}, "same shapes"},
        {{testing::make_noncontig({3, 6}, dt, -2, 2, 3), make_tensor({6}, dt, -2, 2, 4)}, "non-contiguous, broadcast"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor d = testing::ref_map2(a[0].to_tensor(), a[1].to_tensor(), [](double x, double y) { return (x - y) * (x - y); });
    return {testing::ref_reduce(d, {}, false, [](const std::vector<double>& v) {
      double s = 0;
      for (double x : v) s += x;
      return s / static_cast<double>(v.size());
    })};
  };
}

}  // namespace ember
