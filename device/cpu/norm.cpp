#include "ember/device/cpu/eigen_util.h"  // first: see the note there

#include "ember/device/cpu/norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ember/device/parallel.h"
#include "ember/core/error.h"

namespace ember {
namespace cpu {
namespace {

// Loads row r (D elements) of a contiguous tensor as C.
template <class C>
void load_row(const Strided& t, int64_t r, int64_t D, C* buf) {
  size_t esz = element_size(t.dtype);
  convert(t.bytes() + r * D * static_cast<int64_t>(esz), t.dtype, 1, buf, dtype_of<C>, 1, D);
}
template <class C>
void store_row(const Strided& t, int64_t r, int64_t D, const C* buf) {
  size_t esz = element_size(t.dtype);
  convert(buf, dtype_of<C>, 1, t.bytes() + r * D * static_cast<int64_t>(esz), t.dtype, 1, D);
}

template <class C>
void rms_norm_t(const Strided& y, const Strided& rstd, const Strided& x, const Strided& gamma, double eps, int64_t rows,
                int64_t D) {
  std::vector<C> g(static_cast<size_t>(D));
  convert(gamma.data, gamma.dtype, 1, g.data(), dtype_of<C>, 1, D);
  parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(D, 1)), [&](int64_t r0, int64_t r1) {
    std::vector<C> buf(static_cast<size_t>(D));
    for (int64_t r = r0; r < r1; ++r) {
      load_row(x, r, D, buf.data());
      auto xa = out_arr<C>(buf.data(), D);
      C ms = xa.square().sum() / C(D);
      C inv = C(1) / std::sqrt(ms + C(eps));
      xa = xa * inv * in_arr<C>(g.data(), D);
      store_row(y, r, D, buf.data());
      convert(&inv, dtype_of<C>, 1, rstd.bytes() + r * static_cast<int64_t>(element_size(rstd.dtype)), rstd.dtype, 1, 1);
    }
  });
}

template <class C>
void layer_norm_t(const Strided& y, const Strided& mean, const Strided& rstd, const Strided& x, const Strided& gamma,
                  const Strided& beta, double eps, int64_t rows, int64_t D) {
  std::vector<C> g(static_cast<size_t>(gamma.data ? D : 0)), b(static_cast<size_t>(beta.data ? D : 0));
  if (gamma.data) convert(gamma.data, gamma.dtype, 1, g.data(), dtype_of<C>, 1, D);
  if (beta.data) convert(beta.data, beta.dtype, 1, b.data(), dtype_of<C>, 1, D);
  parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(D, 1)), [&](int64_t r0, int64_t r1) {
    std::vector<C> buf(static_cast<size_t>(D));
    for (int64_t r = r0; r < r1; ++r) {
      load_row(x, r, D, buf.data());
      auto xa = out_arr<C>(buf.data(), D);
      C mu = xa.sum() / C(D);
      xa -= mu;
      C inv = C(1) / std::sqrt(xa.square().sum() / C(D) + C(eps));
      xa *= inv;
      if (gamma.data) xa *= in_arr<C>(g.data(), D);
      if (beta.data) xa += in_arr<C>(b.data(), D);
      store_row(y, r, D, buf.data());
      if (mean.data) convert(&mu, dtype_of<C>, 1, mean.bytes() + r * static_cast<int64_t>(element_size(mean.dtype)), mean.dtype, 1, 1);
      if (rstd.data) convert(&inv, dtype_of<C>, 1, rstd.bytes() + r * static_cast<int64_t>(element_size(rstd.dtype)), rstd.dtype, 1, 1);
    }
  });
}

// Per-row values (mean, rstd, gamma) as C; empty for an undefined t.
template <class C>
std::vector<C> load_all(const Strided& t, int64_t n) {
  std::vector<C> v(static_cast<size_t>(t.data ? n : 0));
  if (t.data) convert(t.data, t.dtype, 1, v.data(), dtype_of<C>, 1, n);
  return v;
}

// The backward kernels' row loop: the rows in at most 64 fixed blocks spread over the pool, each
// row's x and dy loaded as C into buffers fn may overwrite: fn(block, row, x, dy). Sums over rows
// are kept per block (BlockSums) and added in block order, so they do not depend on the thread
// count or on how the pool splits the blocks.
template <class C, class Fn>
void for_row_blocks(const Strided& x, const Strided& dy, int64_t rows, int64_t D, Fn&& fn) {
  const int64_t nblocks = std::min<int64_t>(rows, 64);
  const int64_t rows_per_block = (rows + nblocks - 1) / std::max<int64_t>(nblocks, 1);
  parallel_for(nblocks, std::max<int64_t>(1, 16384 / std::max<int64_t>(D * rows_per_block, 1)), [&](int64_t b0, int64_t b1) {
    std::vector<C> xb(static_cast<size_t>(D)), gb(static_cast<size_t>(D));
    for (int64_t b = b0; b < b1; ++b) {
      for (int64_t i = rows * b / nblocks; i < rows * (b + 1) / nblocks; ++i) {
        load_row(x, i, D, xb.data());
        load_row(dy, i, D, gb.data());
        fn(b, i, out_arr<C>(xb.data(), D), out_arr<C>(gb.data(), D));
      }
    }
  });
}
// A sum over rows (of D values) written to out, kept per block of for_row_blocks; none for an
// undefined out.
template <class C>
struct BlockSums {
  const Strided& out;
  std::vector<std::vector<C>> parts;
  BlockSums(const Strided& o, int64_t rows, int64_t D)
      : out(o), parts(static_cast<size_t>(o.data ? std::min<int64_t>(rows, 64) : 0), std::vector<C>(static_cast<size_t>(D), C(0))) {}
  bool wanted() const { return out.data != nullptr; }
  auto at(int64_t block, int64_t D) { return out_arr<C>(parts[static_cast<size_t>(block)].data(), D); }
  void store(int64_t D) const {
    if (!out.data) return;
    std::vector<C> total(static_cast<size_t>(D), C(0));
    for (const auto& p : parts) out_arr<C>(total.data(), D) += in_arr<C>(p.data(), D);
    convert(total.data(), dtype_of<C>, 1, out.data, out.dtype, 1, D);
  }
};

template <class C>
void rms_norm_backward_t(const Strided& dx, const Strided& dgamma, const Strided& dy, const Strided& x,
                         const Strided& rstd, const Strided& gamma, int64_t rows, int64_t D) {
  const std::vector<C> g = load_all<C>(gamma, D), r = load_all<C>(rstd, rows);
  BlockSums<C> dg(dgamma, rows, D);
  for_row_blocks<C>(x, dy, rows, D, [&](int64_t b, int64_t i, auto xh, auto dyv) {
    const C inv = r[static_cast<size_t>(i)];
    xh *= inv;
    if (dg.wanted()) dg.at(b, D) += dyv * xh;
    dyv *= in_arr<C>(g.data(), D);  // g = dy * gamma
    const C mean_gx = (dyv * xh).sum() / C(D);
    dyv = inv * (dyv - xh * mean_gx);
    store_row(dx, i, D, dyv.data());
  });
  dg.store(D);
}

template <class C>
void layer_norm_backward_t(const Strided& dx, const Strided& dgamma, const Strided& dbeta, const Strided& dy,
                           const Strided& x, const Strided& mean, const Strided& rstd, const Strided& gamma,
                           int64_t rows, int64_t D) {
  const std::vector<C> g = load_all<C>(gamma, D), mu = load_all<C>(mean, rows), r = load_all<C>(rstd, rows);
  BlockSums<C> dg(dgamma, rows, D), db(dbeta, rows, D);
  for_row_blocks<C>(x, dy, rows, D, [&](int64_t b, int64_t i, auto xh, auto dyv) {
    const C inv = r[static_cast<size_t>(i)];
    xh = (xh - mu[static_cast<size_t>(i)]) * inv;
    if (dg.wanted()) dg.at(b, D) += dyv * xh;
    if (db.wanted()) db.at(b, D) += dyv;
    if (!dx.data) return;
    if (gamma.data) dyv *= in_arr<C>(g.data(), D);  // g = dy * gamma
    const C mean_g = dyv.sum() / C(D), mean_gx = (dyv * xh).sum() / C(D);
    dyv = inv * (dyv - mean_g - xh * mean_gx);
    store_row(dx, i, D, dyv.data());
  });
  dg.store(D);
  db.store(D);
}

}  // namespace

void layer_norm_backward(const Strided& dx, const Strided& dgamma, const Strided& dbeta, const Strided& dy,
                         const Strided& x, const Strided& mean, const Strided& rstd, const Strided& gamma,
                         int64_t rows, int64_t D) {
  if (D == 0) return;
  if (compute_dtype(x.dtype) == DType::Float64) {
    layer_norm_backward_t<double>(dx, dgamma, dbeta, dy, x, mean, rstd, gamma, rows, D);
  } else {
    layer_norm_backward_t<float>(dx, dgamma, dbeta, dy, x, mean, rstd, gamma, rows, D);
  }
}

void rms_norm(const Strided& y, const Strided& rstd, const Strided& x, const Strided& gamma, double eps, int64_t rows,
              int64_t D) {
  if (rows == 0 || D == 0) return;
  if (compute_dtype(x.dtype) == DType::Float64) {
    rms_norm_t<double>(y, rstd, x, gamma, eps, rows, D);
  } else {
    rms_norm_t<float>(y, rstd, x, gamma, eps, rows, D);
  }
}

void layer_norm(const Strided& y, const Strided& mean, const Strided& rstd, const Strided& x, const Strided& gamma,
                const Strided& beta, double eps, int64_t rows, int64_t D) {
  if (rows == 0) return;
  if (compute_dtype(x.dtype) == DType::Float64) {
    layer_norm_t<double>(y, mean, rstd, x, gamma, beta, eps, rows, D);
  } else {
    layer_norm_t<float>(y, mean, rstd, x, gamma, beta, eps, rows, D);
  }
}

void rms_norm_backward(const Strided& dx, const Strided& dgamma, const Strided& dy, const Strided& x,
                       const Strided& rstd, const Strided& gamma, int64_t rows, int64_t D) {
  if (rows == 0 || D == 0) return;
  if (compute_dtype(x.dtype) == DType::Float64) {
    rms_norm_backward_t<double>(dx, dgamma, dy, x, rstd, gamma, rows, D);
  } else {
    rms_norm_backward_t<float>(dx, dgamma, dy, x, rstd, gamma, rows, D);
  }
}

void group_norm_f64(double* y, double* mean, double* rstd, const double* x, const double* gamma, const double* beta,
                    int64_t N, int64_t C, int64_t HxW, int64_t group, double eps) {
  const int64_t cg = C / group, D = cg * HxW, S = std::max<int64_t>(HxW, 1);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < group; ++g) {
      const double* xs = x + (n * group + g) * D;
      double m = 0, v = 0;
      for (int64_t e = 0; e < D; ++e) m += xs[e];
      m = D ? m / static_cast<double>(D) : 0;
      for (int64_t e = 0; e < D; ++e) v += (xs[e] - m) * (xs[e] - m);
      v = D ? v / static_cast<double>(D) : 0;
      const double r = 1 / std::sqrt(v + eps);
      mean[n * group + g] = m;
      rstd[n * group + g] = r;
      for (int64_t e = 0; e < D; ++e) {
        const int64_t c = g * cg + e / S;
        y[(n * group + g) * D + e] = (xs[e] - m) * r * (gamma ? gamma[c] : 1.0) + (beta ? beta[c] : 0.0);
      }
    }
}

void group_norm_backward_f64(double* dx, double* dgamma, double* dbeta, const double* dy, const double* x,
                             const double* mean, const double* rstd, const double* gamma, int64_t N, int64_t C,
                             int64_t HxW, int64_t group) {
  std::fill(dgamma, dgamma + C, 0.0);
  std::fill(dbeta, dbeta + C, 0.0);
  const int64_t cg = C / group, D = cg * HxW, S = std::max<int64_t>(HxW, 1);
  const double d = static_cast<double>(std::max<int64_t>(D, 1));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < group; ++g) {
      const int64_t base = (n * group + g) * D;
      const double mu = mean[n * group + g], rs = rstd[n * group + g];
      double s1 = 0, s2 = 0;  // sums of g and g * xh over the group
      for (int64_t e = 0; e < D; ++e) {
        const int64_t c = g * cg + e / S;
        const double xh = (x[base + e] - mu) * rs, gg = dy[base + e] * (gamma ? gamma[c] : 1.0);
        s1 += gg;
        s2 += gg * xh;
        dgamma[c] += dy[base + e] * xh;
        dbeta[c] += dy[base + e];
      }
      for (int64_t e = 0; e < D; ++e) {
        const int64_t c = g * cg + e / S;
        const double xh = (x[base + e] - mu) * rs, gg = dy[base + e] * (gamma ? gamma[c] : 1.0);
        dx[base + e] = rs * (gg - s1 / d - xh * s2 / d);
      }
    }
}

void batch_norm_f64(double* y, double* mean, double* invstd, double* running_mean, double* running_var,
                    const double* x, const double* weight, const double* bias, BatchNormShape b, bool training,
                    double momentum, double eps) {
  const double n = static_cast<double>(b.N * b.S);
  auto at = [&](int64_t i, int64_t c, int64_t s) { return (i * b.C + c) * b.S + s; };
  for (int64_t c = 0; c < b.C; ++c) {
    double m = 0, v = 0;
    if (training) {
      for (int64_t i = 0; i < b.N; ++i)
        for (int64_t s = 0; s < b.S; ++s) m += x[at(i, c, s)];
      m /= n;
      for (int64_t i = 0; i < b.N; ++i)
        for (int64_t s = 0; s < b.S; ++s) v += (x[at(i, c, s)] - m) * (x[at(i, c, s)] - m);
      v /= n;
    } else {
      m = running_mean[c];
      v = running_var[c];
    }
    mean[c] = m;
    invstd[c] = 1 / std::sqrt(v + eps);
    const double scale = invstd[c] * (weight ? weight[c] : 1.0), shift = bias ? bias[c] : 0.0;
    for (int64_t i = 0; i < b.N; ++i)
      for (int64_t s = 0; s < b.S; ++s) y[at(i, c, s)] = (x[at(i, c, s)] - m) * scale + shift;
    if (training && running_mean) {
      running_mean[c] = (1 - momentum) * running_mean[c] + momentum * m;
      running_var[c] = (1 - momentum) * running_var[c] + momentum * v * n / (n - 1);
    }
  }
}

void batch_norm_backward_f64(double* dx, double* dweight, double* dbias, const double* dy, const double* x,
                             const double* weight, const double* running_mean, const double* running_var,
                             const double* save_mean, const double* save_invstd, BatchNormShape b, bool training,
                             double eps) {
  const double n = static_cast<double>(b.N * b.S);
  auto at = [&](int64_t i, int64_t c, int64_t s) { return (i * b.C + c) * b.S + s; };
  for (int64_t c = 0; c < b.C; ++c) {
    const double m = training ? save_mean[c] : (running_mean ? running_mean[c] : 0.0);
    const double inv = training ? save_invstd[c] : 1 / std::sqrt(running_var[c] + eps);
    double sg = 0, sgx = 0;
    for (int64_t i = 0; i < b.N; ++i)
      for (int64_t s = 0; s < b.S; ++s) {
        sg += dy[at(i, c, s)];
        sgx += dy[at(i, c, s)] * (x[at(i, c, s)] - m) * inv;
      }
    dbias[c] = sg;
    dweight[c] = sgx;
    const double wc = weight ? weight[c] : 1.0;
    for (int64_t i = 0; i < b.N; ++i)
      for (int64_t s = 0; s < b.S; ++s) {
        const int64_t e = at(i, c, s);
        dx[e] = training ? wc * inv / n * (n * dy[e] - sg - (x[e] - m) * inv * sgx) : dy[e] * wc * inv;
      }
  }
}

}  // namespace cpu
}  // namespace ember
