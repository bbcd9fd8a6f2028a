// Samples and float64 references for the ops of ops/norm.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <algorithm>
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

// ---------------------------------------------------------------- batch normalization
namespace {
// x [N, C, ...] as float64 [N, C, S] values, per channel.
struct BnRef {
  int64_t N, C, S;
  std::vector<double> x;
  explicit BnRef(const Tensor& t) : N(t.size(0)), C(t.size(1)), S(t.numel() / std::max<int64_t>(t.size(0) * t.size(1), 1)) {
    x = testing::ref_contiguous(t, kFloat64).to_vector<double>();
  }
  double at(int64_t n, int64_t c, int64_t s) const { return x[static_cast<size_t>((n * C + c) * S + s)]; }
};
std::vector<double> vec_or(const Stack& a, size_t i, int64_t C, double dflt) {
  if (a.size() <= i || a[i].is_none() || !a[i].to_tensor().defined()) return std::vector<double>(static_cast<size_t>(C), dflt);
  return testing::ref_contiguous(a[i].to_tensor(), kFloat64).to_vector<double>();
}
DType bn_stat(DType dt) { return dt == kFloat64 ? kFloat64 : kFloat32; }
// (output, save_mean, save_invstd) of _batch_norm's arguments.
Stack ref_batch_norm(const Stack& a) {
  Tensor xt = a[0].to_tensor();
  BnRef b(xt);
  bool training = a.size() > 5 && a[5].to_bool();
  double eps = a.size() > 6 ? a[6].to_double() : 1e-5;
  std::vector<double> w = vec_or(a, 1, b.C, 1), bias = vec_or(a, 2, b.C, 0), rm = vec_or(a, 3, b.C, 0),
                      rv = vec_or(a, 4, b.C, 1);
  Tensor y = empty(xt.sizes(), kFloat64), mean = empty({b.C}, kFloat64), inv = empty({b.C}, kFloat64);
  double* yp = y.data_ptr<double>();
  const double n = static_cast<double>(b.N * b.S);
  for (int64_t c = 0; c < b.C; ++c) {
    double m = 0, v = 0;
    if (training) {
      for (int64_t i = 0; i < b.N; ++i)
        for (int64_t s = 0; s < b.S; ++s) m += b.at(i, c, s);
      m /= n;
      for (int64_t i = 0; i < b.N; ++i)
        for (int64_t s = 0; s < b.S; ++s) v += (b.at(i, c, s) - m) * (b.at(i, c, s) - m);
      v /= n;
    } else {
      m = rm[static_cast<size_t>(c)];
      v = rv[static_cast<size_t>(c)];
    }
    double r = 1 / std::sqrt(v + eps);
    mean.data_ptr<double>()[c] = m;
    inv.data_ptr<double>()[c] = r;
    for (int64_t i = 0; i < b.N; ++i)
      for (int64_t s = 0; s < b.S; ++s)
        yp[(i * b.C + c) * b.S + s] = (b.at(i, c, s) - m) * r * w[static_cast<size_t>(c)] + bias[static_cast<size_t>(c)];
  }
  return {y, mean, inv};
}
std::vector<testing::Sample> batch_norm_samples(DType dt) {
  using testing::make_tensor;
  auto pc = [dt](uint64_t seed, double lo, double hi) { return make_tensor({3}, dt, lo, hi, seed); };
  return {{{make_tensor({4, 3, 5}, dt, -2, 2, 1), pc(2, 0.5, 1.5), pc(3, -1, 1), IValue(), IValue(), IValue(true)},
           "training, weight and bias"},
          {{make_tensor({2, 3, 2, 2}, dt, -2, 2, 4), pc(5, 0.5, 1.5), pc(6, -1, 1), pc(7, -0.5, 0.5), pc(8, 0.5, 2),
            IValue(false), IValue(1e-3)},
           "evaluation with running statistics"},
          {{make_tensor({6, 3}, dt, -2, 2, 9), IValue(), IValue(), IValue(), IValue(), IValue(true)},
           "training, 2-D, no affine"},
          {{testing::make_noncontig({5, 3, 4}, dt, -2, 2, 10), pc(11, 0.5, 1.5), IValue(), IValue(), IValue(),
            IValue(true), IValue(0.1)},
           "training, non-contiguous, large eps"}};
}
}  // namespace

EMBER_OP_INFO("ember::_batch_norm", info) {
  info.samples = batch_norm_samples;
  info.reference = ref_batch_norm;
  info.tol_scale = 4;
}
// (grad, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps): the
// statistics from the forward's reference.
EMBER_OP_INFO("ember::native_batch_norm_backward", info) {
  info.samples = [](DType dt) {
    std::vector<testing::Sample> out;
    uint64_t seed = 20;
    for (const testing::Sample& s : batch_norm_samples(dt)) {
      const Stack& a = s.args;
      Stack f = ref_batch_norm(a);
      bool training = a.size() > 5 && a[5].to_bool();
      double eps = a.size() > 6 ? a[6].to_double() : 1e-5;
      Tensor x = a[0].to_tensor();
      out.push_back({{testing::make_tensor(x.sizes(), dt, -1, 1, seed++), x, a[1], a[3], a[4],
                      IValue(f[1].to_tensor().to(bn_stat(dt))), IValue(f[2].to_tensor().to(bn_stat(dt))),
                      IValue(training), IValue(eps)},
                     s.desc});
    }
    return out;
  };
  info.reference = [](const Stack& a) -> Stack {
    BnRef b(a[1].to_tensor());
    BnRef g(a[0].to_tensor());
    bool training = a[7].to_bool();
    double eps = a[8].to_double();
    std::vector<double> w = vec_or(a, 2, b.C, 1), rm = vec_or(a, 3, b.C, 0), rv = vec_or(a, 4, b.C, 1),
                        sm = vec_or(a, 5, b.C, 0), si = vec_or(a, 6, b.C, 1);
    Tensor gx = empty(a[1].to_tensor().sizes(), kFloat64), gw = empty({b.C}, kFloat64), gb = empty({b.C}, kFloat64);
    const double n = static_cast<double>(b.N * b.S);
    for (int64_t c = 0; c < b.C; ++c) {
      size_t k = static_cast<size_t>(c);
      double m = training ? sm[k] : rm[k], r = training ? si[k] : 1 / std::sqrt(rv[k] + eps), sg = 0, sgx = 0;
      for (int64_t i = 0; i < b.N; ++i)
        for (int64_t s = 0; s < b.S; ++s) {
          sg += g.at(i, c, s);
          sgx += g.at(i, c, s) * (b.at(i, c, s) - m) * r;
        }
      gb.data_ptr<double>()[c] = sg;
      gw.data_ptr<double>()[c] = sgx;
      for (int64_t i = 0; i < b.N; ++i)
        for (int64_t s = 0; s < b.S; ++s) {
          double xh = (b.at(i, c, s) - m) * r;
          gx.data_ptr<double>()[(i * b.C + c) * b.S + s] =
              training ? w[k] * r * (g.at(i, c, s) - sg / n - xh * sgx / n) : g.at(i, c, s) * w[k] * r;
        }
    }
    return {gx, gw, gb};
  };
  info.tol_scale = 4;
}

// ---------------------------------------------------------------- group normalization
namespace {
// (output, mean, rstd) of native_group_norm's arguments.
Stack ref_group_norm(const Stack& a) {
  Tensor xt = a[0].to_tensor();
  const int64_t N = a[3].to_int(), C = a[4].to_int(), HxW = a[5].to_int(), G = a[6].to_int();
  const double eps = a[7].to_double();
  std::vector<double> x = testing::ref_contiguous(xt, kFloat64).to_vector<double>(), w = vec_or(a, 1, C, 1),
                      b = vec_or(a, 2, C, 0);
  Tensor y = empty(xt.sizes(), kFloat64), mean = empty({N, G}, kFloat64), rstd = empty({N, G}, kFloat64);
  const int64_t D = C / G * HxW;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      double m = 0, v = 0;
      for (int64_t e = 0; e < D; ++e) m += x[static_cast<size_t>((n * G + g) * D + e)];
      m /= static_cast<double>(D);
      for (int64_t e = 0; e < D; ++e) {
        double d = x[static_cast<size_t>((n * G + g) * D + e)] - m;
        v += d * d;
      }
      double r = 1 / std::sqrt(v / static_cast<double>(D) + eps);
      mean.data_ptr<double>()[n * G + g] = m;
      rstd.data_ptr<double>()[n * G + g] = r;
      for (int64_t e = 0; e < D; ++e) {
        size_t i = static_cast<size_t>((n * G + g) * D + e), c = static_cast<size_t>(g * (C / G) + e / HxW);
        y.data_ptr<double>()[i] = (x[i] - m) * r * w[c] + b[c];
      }
    }
  return {y, mean, rstd};
}
std::vector<testing::Sample> group_norm_samples(DType dt) {
  using testing::make_tensor;
  auto args = [](Tensor x, IValue w, IValue b, int64_t G, double eps) {
    int64_t N = x.size(0), C = x.size(1);
    return Stack{x, w, b, IValue(N), IValue(C), IValue(x.numel() / (N * C)), IValue(G), IValue(eps)};
  };
  return {{args(make_tensor({2, 4, 3}, dt, -2, 2, 1), make_tensor({4}, dt, 0.5, 1.5, 2), make_tensor({4}, dt, -1, 1, 3),
                2, 1e-5),
           "2 groups of 2 channels"},
          {args(make_tensor({3, 6, 2, 2}, dt, -2, 2, 4), IValue(), IValue(), 3, 1e-5), "4-D, no affine"},
          {args(testing::make_noncontig({2, 4, 5}, dt, -2, 2, 5), make_tensor({4}, dt, 0.5, 1.5, 6), IValue(), 1, 0.1),
           "one group (layer norm over C and HxW), non-contiguous, large eps"},
          {args(make_tensor({2, 3, 4}, dt, -2, 2, 7), make_tensor({3}, dt, 0.5, 1.5, 8), make_tensor({3}, dt, -1, 1, 9), 3,
                1e-5),
           "a group per channel (instance norm)"}};
}
}  // namespace

EMBER_OP_INFO("ember::native_group_norm", info) {
  info.samples = group_norm_samples;
  info.reference = ref_group_norm;
  info.tol_scale = 4;
}
// (grad, input, mean, rstd, weight, N, C, HxW, group): mean and rstd from the forward's reference.
EMBER_OP_INFO("ember::native_group_norm_backward", info) {
  info.samples = [](DType dt) {
    std::vector<testing::Sample> out;
    uint64_t seed = 30;
    for (const testing::Sample& s : group_norm_samples(dt)) {
      const Stack& a = s.args;
      Stack f = ref_group_norm(a);
      Tensor x = a[0].to_tensor();
      out.push_back({{testing::make_tensor(x.sizes(), dt, -1, 1, seed++), x, IValue(f[1].to_tensor().to(bn_stat(dt))),
                      IValue(f[2].to_tensor().to(bn_stat(dt))), a[1], a[3], a[4], a[5], a[6]},
                     s.desc});
    }
    return out;
  };
  info.reference = [](const Stack& a) -> Stack {
    std::vector<double> g = testing::ref_contiguous(a[0].to_tensor(), kFloat64).to_vector<double>(),
                        x = testing::ref_contiguous(a[1].to_tensor(), kFloat64).to_vector<double>(),
                        m = testing::ref_contiguous(a[2].to_tensor(), kFloat64).to_vector<double>(),
                        r = testing::ref_contiguous(a[3].to_tensor(), kFloat64).to_vector<double>();
    const int64_t N = a[5].to_int(), C = a[6].to_int(), HxW = a[7].to_int(), G = a[8].to_int(), D = C / G * HxW;
    std::vector<double> w = vec_or(a, 4, C, 1);
    Tensor gx = empty(a[1].to_tensor().sizes(), kFloat64), gw = zeros({C}, kFloat64), gb = zeros({C}, kFloat64);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t grp = 0; grp < G; ++grp) {
        size_t k = static_cast<size_t>(n * G + grp);
        double s1 = 0, s2 = 0;
        for (int64_t e = 0; e < D; ++e) {
          size_t i = static_cast<size_t>((n * G + grp) * D + e);
          int64_t c = grp * (C / G) + e / HxW;
          double xh = (x[i] - m[k]) * r[k], gg = g[i] * w[static_cast<size_t>(c)];
          s1 += gg;
          s2 += gg * xh;
          gw.data_ptr<double>()[c] += g[i] * xh;
          gb.data_ptr<double>()[c] += g[i];
        }
        for (int64_t e = 0; e < D; ++e) {
          size_t i = static_cast<size_t>((n * G + grp) * D + e);
          int64_t c = grp * (C / G) + e / HxW;
          double xh = (x[i] - m[k]) * r[k], gg = g[i] * w[static_cast<size_t>(c)];
          gx.data_ptr<double>()[i] = r[k] * (gg - s1 / static_cast<double>(D) - xh * s2 / static_cast<double>(D));
        }
      }
    return {gx, gw, gb};
  };
  info.tol_scale = 4;
}

// ---------------------------------------------------------------- layer normalization
namespace {
// (output, mean, rstd) of native_layer_norm's arguments: rows of D trailing elements.
Stack ref_layer_norm(const Stack& a) {
  Tensor xt = a[0].to_tensor();
  Shape ns = a[1].to_int_list();
  const double eps = a[4].to_double();
  int64_t D = 1;
  for (int64_t v : ns) D *= v;
  const int64_t rows = xt.numel() / D;
  std::vector<double> x = testing::ref_contiguous(xt, kFloat64).to_vector<double>(), w = vec_or(a, 2, D, 1),
                      b = vec_or(a, 3, D, 0);
  Shape ss = xt.sizes();
  for (size_t i = ss.size() - ns.size(); i < ss.size(); ++i) ss[i] = 1;
  Tensor y = empty(xt.sizes(), kFloat64), mean = empty(ss, kFloat64), rstd = empty(ss, kFloat64);
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < D; ++j) m += x[static_cast<size_t>(r * D + j)];
    m /= static_cast<double>(D);
    for (int64_t j = 0; j < D; ++j) v += (x[static_cast<size_t>(r * D + j)] - m) * (x[static_cast<size_t>(r * D + j)] - m);
    double rs = 1 / std::sqrt(v / static_cast<double>(D) + eps);
    mean.data_ptr<double>()[r] = m;
    rstd.data_ptr<double>()[r] = rs;
    for (int64_t j = 0; j < D; ++j) {
      size_t i = static_cast<size_t>(r * D + j);
      y.data_ptr<double>()[i] = (x[i] - m) * rs * w[static_cast<size_t>(j)] + b[static_cast<size_t>(j)];
    }
  }
  return {y, mean, rstd};
}
std::vector<testing::Sample> layer_norm_samples(DType dt) {
  using testing::make_tensor;
  return {{{make_tensor({4, 6}, dt, -2, 2, 1), IValue(Shape{6}), make_tensor({6}, dt, 0.5, 1.5, 2),
            make_tensor({6}, dt, -1, 1, 3), IValue(1e-5)},
           "rows of 6"},
          {{make_tensor({2, 3, 4, 5}, dt, -2, 2, 4), IValue(Shape{4, 5}), make_tensor({4, 5}, dt, 0.5, 1.5, 5), IValue(),
            IValue(1e-5)},
           "2-d normalized shape, no bias"},
          {{testing::make_noncontig({5, 7}, dt, -2, 2, 6), IValue(Shape{7}), IValue(), IValue(), IValue(0.1)},
           "non-contiguous, no affine, large eps"},
          {{make_tensor({8}, dt, -2, 2, 7), IValue(Shape{8}), make_tensor({8}, dt, 0.5, 1.5, 8),
            make_tensor({8}, dt, -1, 1, 9), IValue(1e-5)},
           "one row"}};
}
}  // namespace

EMBER_OP_INFO("ember::native_layer_norm", info) {
  info.samples = layer_norm_samples;
  info.reference = ref_layer_norm;
  info.tol_scale = 4;
}
// (grad, input, normalized_shape, mean, rstd, weight, bias): mean and rstd from the forward's reference.
EMBER_OP_INFO("ember::native_layer_norm_backward", info) {
  info.samples = [](DType dt) {
    std::vector<testing::Sample> out;
    uint64_t seed = 40;
    for (const testing::Sample& s : layer_norm_samples(dt)) {
      const Stack& a = s.args;
      Stack f = ref_layer_norm(a);
      Tensor x = a[0].to_tensor();
      out.push_back({{testing::make_tensor(x.sizes(), dt, -1, 1, seed++), x, a[1],
                      IValue(f[1].to_tensor().to(bn_stat(dt))), IValue(f[2].to_tensor().to(bn_stat(dt))), a[2], a[3]},
                     s.desc});
    }
    return out;
  };
  info.reference = [](const Stack& a) -> Stack {
    std::vector<double> g = testing::ref_contiguous(a[0].to_tensor(), kFloat64).to_vector<double>(),
                        x = testing::ref_contiguous(a[1].to_tensor(), kFloat64).to_vector<double>(),
                        m = testing::ref_contiguous(a[3].to_tensor(), kFloat64).to_vector<double>(),
                        r = testing::ref_contiguous(a[4].to_tensor(), kFloat64).to_vector<double>();
    Shape ns = a[2].to_int_list();
    int64_t D = 1;
    for (int64_t v : ns) D *= v;
    const int64_t rows = static_cast<int64_t>(x.size()) / D;
    std::vector<double> w = vec_or(a, 5, D, 1);
    Tensor gx = empty(a[1].to_tensor().sizes(), kFloat64), gw = zeros(ns, kFloat64), gb = zeros(ns, kFloat64);
    for (int64_t row = 0; row < rows; ++row) {
      size_t k = static_cast<size_t>(row);
      double s1 = 0, s2 = 0;
      for (int64_t j = 0; j < D; ++j) {
        size_t i = static_cast<size_t>(row * D + j);
        double xh = (x[i] - m[k]) * r[k], gg = g[i] * w[static_cast<size_t>(j)];
        s1 += gg;
        s2 += gg * xh;
        gw.data_ptr<double>()[j] += g[i] * xh;
        gb.data_ptr<double>()[j] += g[i];
      }
      for (int64_t j = 0; j < D; ++j) {
        size_t i = static_cast<size_t>(row * D + j);
        double xh = (x[i] - m[k]) * r[k], gg = g[i] * w[static_cast<size_t>(j)];
        gx.data_ptr<double>()[i] = r[k] * (gg - s1 / static_cast<double>(D) - xh * s2 / static_cast<double>(D));
      }
    }
    return {gx, gw, gb};
  };
  info.tol_scale = 4;
}

}  // namespace ember
