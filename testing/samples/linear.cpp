// Samples and float64 references for the ops of ops/linear.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
namespace {
std::vector<testing::Sample> linear_samples(DType dt, bool bias) {
  using testing::make_tensor;
  auto s = [&](Shape xs, int64_t out, uint64_t seed, const char* desc) {
    Stack args{make_tensor(xs, dt, -1, 1, seed), make_tensor({out, xs.back()}, dt, -1, 1, seed + 1)};
    if (bias) args.push_back(make_tensor({out}, dt, -1, 1, seed + 2));
    return testing::Sample{args, desc};
  };
  return {s({4, 5}, 3, 1, "2-d input"), s({2, 3, 6}, 4, 4, "3-d input"), s({7}, 2, 7, "1-d input")};
}
Tensor ref_linear(const Stack& a) {
  const Tensor &x = a[0].to_tensor(), &w = a[1].to_tensor();
  int64_t in = w.size(1), out = w.size(0), rows = x.numel() / in;
  Shape shape = x.sizes();
  shape.back() = out;
  Tensor y = empty(shape, kFloat64);
  Tensor xc = testing::ref_contiguous(x, kFloat64), wc = testing::ref_contiguous(w, kFloat64);
  const double *xp = xc.data_ptr<double>(), *wp = wc.data_ptr<double>();
  double* yp = y.data_ptr<double>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = a.size() > 2 ? testing::at(a[2].to_tensor(), {o}) : 0.0;
      for (int64_t i = 0; i < in; ++i) s += xp[r * in + i] * wp[o * in + i];
      yp[r * out + o] = s;
    }
  return y;
}
}  // namespace
EMBER_OP_INFO("ember::linear", info) {
  info.samples = [](DType dt) { return linear_samples(dt, false); };
  info.reference = [](const Stack& a) -> Stack { return {ref_linear(a)}; };
  info.tol_scale = 2;
}
EMBER_OP_INFO("ember::linear.bias", info) {
  info.samples = [](DType dt) { return linear_samples(dt, true); };
  info.reference = [](const Stack& a) -> Stack { return {ref_linear(a)}; };
  info.tol_scale = 2;
}

}  // namespace ember
