// CPU 2-D pooling: direct loops over each plane's windows, planes in parallel. Operands of
// another dtype or layout are converted to contiguous float (double for float64) first.
#include "ember/device/cpu/pool.h"

#include <cmath>
#include <limits>
#include <vector>

#include "ember/core/error.h"
#include "ember/device/cpu/nn.h"
#include "ember/device/parallel.h"

namespace ember {
namespace cpu {
namespace {
template <class T>
constexpr DType dtype_of() {
  return std::is_same<T, double>::value    ? DType::Float64
         : std::is_same<T, float>::value   ? DType::Float32
                                           : DType::Int64;
}
// s as contiguous T: its own data when it already is, else a converted copy in buf.
template <class T>
const T* read_as(const Strided& s, std::vector<T>& buf) {
  if (s.dtype == dtype_of<T>() && s.contiguous()) return static_cast<const T*>(s.data);
  buf.resize(static_cast<size_t>(s.numel()));
  copy(Strided(buf.data(), dtype_of<T>(), s.sizes, contiguous_strides(s.sizes)), s);
  return buf.data();
}
// Where to write d as contiguous T: d's own data when it already is, else buf (then store()).
template <class T>
T* write_as(const Strided& d, std::vector<T>& buf) {
  if (d.dtype == dtype_of<T>() && d.contiguous()) return static_cast<T*>(d.data);
  buf.resize(static_cast<size_t>(d.numel()));
  return buf.data();
}
template <class T>
void store(const Strided& d, T* p) {
  if (p != d.data) copy(d, Strided(p, dtype_of<T>(), d.sizes, contiguous_strides(d.sizes)));
}
int64_t grain(int64_t per_plane) { return std::max<int64_t>(1, 32768 / std::max<int64_t>(per_plane, 1)); }

// The clipped window of output position o along one dim: [*b, *e) inside [0, n), and the
// extent of the window clipped to the padded input (PyTorch's count_include_pad divisor).
void avg_window(int64_t o, int64_t s, int64_t p, int64_t k, int64_t n, int64_t* b, int64_t* e, int64_t* padded) {
  int64_t start = o * s - p, end = std::min(start + k, n + p);
  *padded = end - start;
  *b = std::max<int64_t>(start, 0);
  *e = std::min(end, n);
}
int64_t divisor(const Pool2d& g, int64_t y, int64_t x, bool include_pad, int64_t override_, int64_t* y0, int64_t* y1,
                int64_t* x0, int64_t* x1) {
  int64_t ph, pw;
  avg_window(y, g.sh, g.ph, g.kh, g.h, y0, y1, &ph);
  avg_window(x, g.sw, g.pw, g.kw, g.w, x0, x1, &pw);
  if (override_ > 0) return override_;
  return include_pad ? ph * pw : (*y1 - *y0) * (*x1 - *x0);
}

// The taps of output position o along one dim that fall inside [0, n): [*t0, *t1), starting at
// input position *start (+ t * dilation).
struct Taps {
  int64_t start, t0, t1;
};
std::vector<Taps> taps_along(int64_t outs, int64_t n, int64_t k, int64_t s, int64_t p, int64_t d) {
  std::vector<Taps> v(static_cast<size_t>(outs));
  for (int64_t o = 0; o < outs; ++o) {
    int64_t st = o * s - p, t0 = st < 0 ? (-st + d - 1) / d : 0, t1 = st >= n ? 0 : std::min(k, (n - st + d - 1) / d);
    v[static_cast<size_t>(o)] = Taps{st, t0, std::max(t0, t1)};
  }
  return v;
}

template <class T>
void max_pool_t(const Strided& out, const Strided& indices, const Strided& in, const Pool2d& g) {
  const int64_t planes = in.sizes[0], HW = g.h * g.w, L = g.oh * g.ow;
  std::vector<T> ib, ob;
  std::vector<int64_t> xb;
  const T* x = read_as<T>(in, ib);
  T* y = write_as<T>(out, ob);
  int64_t* ix = write_as<int64_t>(indices, xb);
  const std::vector<Taps> rows = taps_along(g.oh, g.h, g.kh, g.sh, g.ph, g.dh);
  const std::vector<Taps> cols = taps_along(g.ow, g.w, g.kw, g.sw, g.pw, g.dw);
  parallel_for(planes, grain(HW), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const T* xp = x + c * HW;
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        const Taps& r = rows[static_cast<size_t>(oy)];
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const Taps& q = cols[static_cast<size_t>(ox)];
          // The max (a NaN wins, PyTorch's rule), then the first tap holding it: two passes of
          // selects, no data-dependent branch.
          T best = -std::numeric_limits<T>::infinity();
          int nan = 0;
          for (int64_t i = r.t0; i < r.t1; ++i) {
            const T* row = xp + (r.start + i * g.dh) * g.w + q.start;
            for (int64_t j = q.t0; j < q.t1; ++j) {
              const T v = row[j * g.dw];
              best = v > best ? v : best;
              nan |= v != v;
            }
          }
          int64_t where = -1;
          for (int64_t i = r.t0; i < r.t1; ++i) {
            const int64_t row = (r.start + i * g.dh) * g.w + q.start;
            for (int64_t j = q.t0; j < q.t1; ++j) {
              const T v = xp[row + j * g.dw];
              const int64_t hit = -static_cast<int64_t>((nan ? v != v : v == best) & (where < 0));
              where = ((row + j * g.dw) & hit) | (where & ~hit);
            }
          }
          if (nan) best = std::numeric_limits<T>::quiet_NaN();
          where = std::max<int64_t>(where, 0);  // (a window with no tap inside: -inf at position 0)
          y[c * L + oy * g.ow + ox] = best;
          ix[c * L + oy * g.ow + ox] = where;
        }
      }
    }
  });
  store(out, y);
  store(indices, ix);
}

template <class T>
void max_pool_backward_t(const Strided& gx, const Strided& gy, const Strided& indices, const Pool2d& g) {
  const int64_t planes = gx.sizes[0], HW = g.h * g.w, L = g.oh * g.ow;
  std::vector<T> gyb, gxb;
  std::vector<int64_t> xb;
  const T* dy = read_as<T>(gy, gyb);
  const int64_t* ix = read_as<int64_t>(indices, xb);
  T* dx = write_as<T>(gx, gxb);
  parallel_for(planes, grain(HW), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      T* dp = dx + c * HW;
      std::fill(dp, dp + HW, T(0));
      for (int64_t l = 0; l < L; ++l) {
        int64_t k = ix[c * L + l];
        EMBER_CHECK_INDEX(k >= 0 && k < HW, "max_pool2d_backward: index ", k, " is outside the plane of ", HW,
                          " elements");
        dp[k] += dy[c * L + l];
      }
    }
  });
  store(gx, dx);
}

template <class T>
void avg_pool_t(const Strided& out, const Strided& in, const Pool2d& g, bool include_pad, int64_t override_) {
  const int64_t planes = in.sizes[0], HW = g.h * g.w, L = g.oh * g.ow;
  std::vector<T> ib, ob;
  const T* x = read_as<T>(in, ib);
  T* y = write_as<T>(out, ob);
  parallel_for(planes, grain(HW), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const T* xp = x + c * HW;
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          int64_t y0, y1, x0, x1;
          int64_t div = divisor(g, oy, ox, include_pad, override_, &y0, &y1, &x0, &x1);
          T acc = 0;
          for (int64_t sy = y0; sy < y1; ++sy)
            for (int64_t sx = x0; sx < x1; ++sx) acc += xp[sy * g.w + sx];
          y[c * L + oy * g.ow + ox] = acc / static_cast<T>(div);
        }
    }
  });
  store(out, y);
}

template <class T>
void avg_pool_backward_t(const Strided& gx, const Strided& gy, const Pool2d& g, bool include_pad, int64_t override_) {
  const int64_t planes = gx.sizes[0], HW = g.h * g.w, L = g.oh * g.ow;
  std::vector<T> gyb, gxb;
  const T* dy = read_as<T>(gy, gyb);
  T* dx = write_as<T>(gx, gxb);
  parallel_for(planes, grain(HW), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      T* dp = dx + c * HW;
      std::fill(dp, dp + HW, T(0));
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          int64_t y0, y1, x0, x1;
          int64_t div = divisor(g, oy, ox, include_pad, override_, &y0, &y1, &x0, &x1);
          T v = dy[c * L + oy * g.ow + ox] / static_cast<T>(div);
          for (int64_t sy = y0; sy < y1; ++sy)
            for (int64_t sx = x0; sx < x1; ++sx) dp[sy * g.w + sx] += v;
        }
    }
  });
  store(gx, dx);
}

// Adaptive windows: [floor(i n / o), ceil((i + 1) n / o)).
int64_t adaptive_begin(int64_t i, int64_t n, int64_t o) { return i * n / o; }
int64_t adaptive_end(int64_t i, int64_t n, int64_t o) { return ((i + 1) * n + o - 1) / o; }

template <class T>
void adaptive_t(const Strided& out, const Strided& in, const Strided& gx, const Strided& gy, bool backward) {
  const Strided& big = backward ? gx : in;
  const Strided& small = backward ? gy : out;
  const int64_t planes = big.sizes[0], H = big.sizes[1], W = big.sizes[2], OH = small.sizes[1], OW = small.sizes[2];
  const int64_t HW = H * W, L = OH * OW;
  std::vector<T> rb, wb;
  const T* src = read_as<T>(backward ? gy : in, rb);
  T* dst = write_as<T>(backward ? gx : out, wb);
  parallel_for(planes, grain(HW), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      if (backward) std::fill(dst + c * HW, dst + (c + 1) * HW, T(0));
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          int64_t y0 = adaptive_begin(i, H, OH), y1 = adaptive_end(i, H, OH);
          int64_t x0 = adaptive_begin(j, W, OW), x1 = adaptive_end(j, W, OW);
          const T n = static_cast<T>((y1 - y0) * (x1 - x0));
          if (backward) {
            T v = src[c * L + i * OW + j] / n;
            for (int64_t y = y0; y < y1; ++y)
              for (int64_t x = x0; x < x1; ++x) dst[c * HW + y * W + x] += v;
          } else {
            T acc = 0;
            for (int64_t y = y0; y < y1; ++y)
              for (int64_t x = x0; x < x1; ++x) acc += src[c * HW + y * W + x];
            dst[c * L + i * OW + j] = acc / n;
          }
        }
    }
  });
  store(backward ? gx : out, dst);
}
}  // namespace

std::string pool2d(int64_t h, int64_t w, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil_mode,
                   Pool2d* out) {
  auto pair = [](IntArrayRef a, IntArrayRef dflt, const char* what, DimVector* v) -> std::string {
    if (a.empty()) a = dflt;
    if (a.size() != 1 && a.size() != 2) return std::string(what) + " needs 1 or 2 values, got " + to_string(a);
    *v = DimVector{a[0], a.size() == 1 ? a[0] : a[1]};
    return "";
  };
  DimVector kk, ss, pp, dd;
  for (auto [a, dflt, what, v] : {std::tuple<IntArrayRef, IntArrayRef, const char*, DimVector*>{k, k, "kernel_size", &kk},
                                  {s, k, "stride", &ss}, {p, p, "padding", &pp}, {d, d, "dilation", &dd}}) {
    std::string err = pair(a, dflt, what, v);
    if (!err.empty()) return err;
  }
  Window2d win;
  std::string err = window2d(h, w, kk, dd, pp, ss, &win);
  if (!err.empty()) return err;
  if (pp[0] * 2 > kk[0] || pp[1] * 2 > kk[1])
    return "padding " + to_string(pp) + " should be at most half of kernel_size " + to_string(kk);
  Pool2d g{h, w, win.oh, win.ow, kk[0], kk[1], ss[0], ss[1], pp[0], pp[1], dd[0], dd[1]};
  if (ceil_mode) {  // every term below 2^62 (window2d's limits)
    auto up = [](int64_t in, int64_t k_, int64_t d_, int64_t p_, int64_t s_) {
      int64_t o = (in + 2 * p_ - d_ * (k_ - 1) - 1 + s_ - 1) / s_ + 1;
      return (o - 1) * s_ >= in + p_ ? o - 1 : o;
    };
    g.oh = up(h, g.kh, g.dh, g.ph, g.sh);
    g.ow = up(w, g.kw, g.dw, g.pw, g.sw);
  }
  *out = g;
  return "";
}

void max_pool2d(const Strided& out, const Strided& indices, const Strided& in, const Pool2d& g) {
  if (in.dtype == DType::Float64) {
    max_pool_t<double>(out, indices, in, g);
  } else {
    max_pool_t<float>(out, indices, in, g);
  }
}
void max_pool2d_backward(const Strided& gx, const Strided& gy, const Strided& indices, const Pool2d& g) {
  if (gx.dtype == DType::Float64) {
    max_pool_backward_t<double>(gx, gy, indices, g);
  } else {
    max_pool_backward_t<float>(gx, gy, indices, g);
  }
}
void avg_pool2d(const Strided& out, const Strided& in, const Pool2d& g, bool count_include_pad,
                int64_t divisor_override) {
  if (in.dtype == DType::Float64) {
    avg_pool_t<double>(out, in, g, count_include_pad, divisor_override);
  } else {
    avg_pool_t<float>(out, in, g, count_include_pad, divisor_override);
  }
}
void avg_pool2d_backward(const Strided& gx, const Strided& gy, const Pool2d& g, bool count_include_pad,
                         int64_t divisor_override) {
  if (gx.dtype == DType::Float64) {
    avg_pool_backward_t<double>(gx, gy, g, count_include_pad, divisor_override);
  } else {
    avg_pool_backward_t<float>(gx, gy, g, count_include_pad, divisor_override);
  }
}
void adaptive_avg_pool2d(const Strided& out, const Strided& in) {
  if (in.dtype == DType::Float64) {
    adaptive_t<double>(out, in, Strided(), Strided(), false);
  } else {
    adaptive_t<float>(out, in, Strided(), Strided(), false);
  }
}
void adaptive_avg_pool2d_backward(const Strided& gx, const Strided& gy) {
  if (gx.dtype == DType::Float64) {
    adaptive_t<double>(Strided(), Strided(), gx, gy, true);
  } else {
    adaptive_t<float>(Strided(), Strided(), gx, gy, true);
  }
}

}  // namespace cpu
}  // namespace ember
