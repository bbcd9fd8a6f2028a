// Samples and float64 references for the ops of ops/norm.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <cmath>
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
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
