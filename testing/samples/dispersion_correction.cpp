// Samples and float64 references for the ops of nn/dispersion_correction.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <cmath>
#include <vector>
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
namespace nn {
// ---------------------------------------------------------------- samples and reference
namespace {
// float64 reference, row by row, written independently of the kernels above.
Stack reference(const Tensor& x64, const Tensor& w64, double alpha, int64_t mode, double eps, const Tensor* g64) {
  Tensor x = x64.contiguous(), w = w64.contiguous();
  int64_t D = x.size(-1), rows = x.numel() / D;
  Tensor y = empty_like(x), dx = empty_like(x), dw = zeros_like(w);
  const double *xp = x.data_ptr<double>(), *wp = w.data_ptr<double>();
  double *yp = y.data_ptr<double>(), *dxp = dx.data_ptr<double>(), *dwp = dw.data_ptr<double>();
  Tensor g = g64 ? g64->contiguous() : Tensor();
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = xp + r * D;
    double mu = 0;
    for (int64_t j = 0; j < D; ++j) mu += xr[j] / static_cast<double>(D);
    std::vector<double> c(static_cast<size_t>(D));
    double var = 0;
    for (int64_t j = 0; j < D; ++j) {
      c[j] = xr[j] - alpha * mu;
      var += c[j] * c[j] / static_cast<double>(D);
    }
    double rs = mode == 1 ? 1.0 / std::sqrt(var + eps) : 1.0;
    for (int64_t j = 0; j < D; ++j) yp[r * D + j] = wp[j] * c[j] * rs;
    if (!g64) continue;
    // The Jacobian of row r, applied explicitly: dx_k = sum_j g_j w_j d(c_j rs)/dx_k.
    const double* gr = g.data_ptr<double>() + r * D;
    for (int64_t k = 0; k < D; ++k) {
      double s = 0;
      for (int64_t j = 0; j < D; ++j) {
        double dc_jk = (j == k ? 1.0 : 0.0) - alpha / static_cast<double>(D);
        double drs_k = 0;
        if (mode == 1) {
          // d rs / d x_k = -rs^3 / D * sum_i c_i dc_ik
          double t = 0;
          for (int64_t i = 0; i < D; ++i) t += c[i] * ((i == k ? 1.0 : 0.0) - alpha / static_cast<double>(D));
          drs_k = -rs * rs * rs / static_cast<double>(D) * t;
        }
        s += gr[j] * wp[j] * (dc_jk * rs + c[j] * drs_k);
      }
      dxp[r * D + k] = s;
    }
    for (int64_t j = 0; j < D; ++j) dwp[j] += gr[j] * c[j] * rs;
  }
  if (g64) return {dx.view(x64.sizes()), dw};
  return {y.view(x64.sizes())};
}

std::vector<testing::Sample> dc_samples(DType dt, bool with_grad) {
  std::vector<testing::Sample> out;
  struct Case {
    Shape shape;
    double alpha;
    int64_t mode;
    double eps;
    const char* desc;
  };
  const Case cases[] = {{{4, 8}, 0.8, 1, 1e-6, "alpha 0.8, normalize"},
                        {{3, 5}, 0.0, 1, 1e-6, "alpha 0 (RMSNorm)"},
                        {{2, 3, 6}, 1.0, 1, 1e-5, "alpha 1 (LayerNorm without bias)"},
                        {{5, 7}, 0.5, 0, 1e-6, "alpha 0.5, center"},
                        {{64, 96}, 0.3, 1, 1e-6, "large (all cores)"}};
  uint64_t seed = 1;
  for (const Case& c : cases) {
    using testing::make_tensor;
    // Rows with a non-zero mean (so alpha matters): offsets per column added in float64.
    Tensor x = (make_tensor(c.shape, kFloat64, -2, 2, seed) + make_tensor({c.shape.back()}, kFloat64, 0, 2, seed + 1)).to(dt);
    Tensor w = make_tensor({c.shape.back()}, dt, 0.5, 1.5, seed + 2);
    Stack args{x, w, IValue(c.alpha), IValue(c.mode), IValue(c.eps)};
    if (with_grad) args.insert(args.begin(), make_tensor(c.shape, dt, -1, 1, seed + 3));
    out.push_back({args, c.desc});
    seed += 4;
  }
  return out;
}
}  // namespace

EMBER_OP_INFO("nn::dispersion_correction", info) {
  info.samples = [](DType dt) { return dc_samples(dt, false); };
  info.reference = [](const Stack& a) {
    return reference(a[0].to_tensor(), a[1].to_tensor(), a[2].to_double(), a[3].to_int(), a[4].to_double(), nullptr);
  };
  info.tol_scale = 2;
}
EMBER_OP_INFO("nn::dispersion_correction_backward", info) {
  info.samples = [](DType dt) { return dc_samples(dt, true); };
  info.reference = [](const Stack& a) {
    Tensor g = a[0].to_tensor();
    return reference(a[1].to_tensor(), a[2].to_tensor(), a[3].to_double(), a[4].to_int(), a[5].to_double(), &g);
  };
  info.tol_scale = 4;
}

}  // namespace nn
}  // namespace ember
