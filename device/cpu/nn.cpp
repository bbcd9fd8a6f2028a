#include "ember/device/cpu/eigen_util.h"  // first: see the note there

#include "ember/device/cpu/nn.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "ember/device/parallel.h"
#include "ember/core/error.h"

namespace ember {
namespace cpu {
namespace {

int64_t index_at(const Strided& idx, int64_t i) {
  return idx.dtype == DType::Int32 ? static_cast<const int32_t*>(idx.data)[i] : static_cast<const int64_t*>(idx.data)[i];
}

template <class C>
void load(const Strided& t, int64_t offset, int64_t n, C* buf) {
  convert(t.bytes() + offset * static_cast<int64_t>(element_size(t.dtype)), t.dtype, 1, buf, dtype_of<C>, 1, n);
}
template <class C>
void store(const Strided& t, int64_t offset, int64_t n, const C* buf) {
  convert(buf, dtype_of<C>, 1, t.bytes() + offset * static_cast<int64_t>(element_size(t.dtype)), t.dtype, 1, n);
}

void check_index(int64_t v, int64_t num, int64_t i, const char* op, const char* what) {
  EMBER_CHECK_INDEX(v >= 0 && v < num, op, ": ", what, " ", v, " at position ", i, " is out of range [0, ", num, ")");
}

template <class C>
void embedding_backward_t(const Strided& gw, const Strided& grad, const Strided& idx, int64_t padding_idx,
                          bool scale_by_freq, const char* op) {
  const int64_t num = gw.sizes[0], D = gw.sizes[1], n = idx.numel();
  std::vector<int64_t> rows(static_cast<size_t>(n));
  std::vector<C> count(static_cast<size_t>(scale_by_freq ? num : 0), C(0));
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = index_at(idx, i);
    check_index(r, num, i, op, "index");
    rows[static_cast<size_t>(i)] = r;
    if (scale_by_freq) count[static_cast<size_t>(r)] += 1;
  }
  std::vector<C> acc = scratch_vector<C>(checked_mul(num, D, op), op, C(0));
  // Columns split across threads; each column sums its rows in index order: deterministic.
  parallel_for(D, std::max<int64_t>(1, 65536 / std::max<int64_t>(n, 1)), [&](int64_t c0, int64_t c1) {
    std::vector<C> g(static_cast<size_t>(c1 - c0));
    for (int64_t i = 0; i < n; ++i) {
      int64_t r = rows[static_cast<size_t>(i)];
      if (r == padding_idx) continue;
      load(grad, i * D + c0, c1 - c0, g.data());
      C s = scale_by_freq ? C(1) / count[static_cast<size_t>(r)] : C(1);
      out_arr<C>(acc.data() + r * D + c0, c1 - c0) += s * in_arr<C>(g.data(), c1 - c0);
    }
  });
  store(gw, 0, num * D, acc.data());
}

template <class C>
void cross_entropy_t(const Strided& loss, const Strided& logits, const Strided& target, int64_t ignore, const char* op) {
  const int64_t N = logits.sizes[0], K = logits.sizes[1];
  std::vector<C> per_row(static_cast<size_t>(N), C(0));
  std::vector<char> valid(static_cast<size_t>(N), 0);
  parallel_for(N, std::max<int64_t>(1, 16384 / std::max<int64_t>(K, 1)), [&](int64_t r0, int64_t r1) {
    std::vector<C> x(static_cast<size_t>(K));
    for (int64_t i = r0; i < r1; ++i) {
      int64_t t = index_at(target, i);
      if (t == ignore) continue;
      check_index(t, K, i, op, "target");
      load(logits, i * K, K, x.data());
      auto xa = in_arr<C>(x.data(), K);
      C m = xa.maxCoeff();
      // In double: the row's normaliser over up to 1e6 classes, and the loss (lse - x_t cancels).
      double lse = std::isfinite(m) ? m + std::log((xa - m).exp().template cast<double>().sum()) : m;
      per_row[static_cast<size_t>(i)] = static_cast<C>(lse - static_cast<double>(x[static_cast<size_t>(t)]));
      valid[static_cast<size_t>(i)] = 1;
    }
  });
  double sum = 0, n = 0;
  for (int64_t i = 0; i < N; ++i) {  // in row order: deterministic
    sum += per_row[static_cast<size_t>(i)];
    n += valid[static_cast<size_t>(i)];
  }
  C out = static_cast<C>(sum / n);  // 0/0 = NaN when every row is ignored
  store(loss, 0, 1, &out);
}

template <class C>
void cross_entropy_backward_t(const Strided& dx, const Strided& grad, const Strided& logits, const Strided& target,
                              int64_t ignore, const char* op) {
  const int64_t N = logits.sizes[0], K = logits.sizes[1];
  C g;
  load(grad, 0, 1, &g);
  int64_t n = 0;
  for (int64_t i = 0; i < N; ++i) n += index_at(target, i) != ignore;
  const C scale = g / C(n);
  parallel_for(N, std::max<int64_t>(1, 16384 / std::max<int64_t>(K, 1)), [&](int64_t r0, int64_t r1) {
    std::vector<C> x(static_cast<size_t>(K));
    for (int64_t i = r0; i < r1; ++i) {
      int64_t t = index_at(target, i);
      auto xa = out_arr<C>(x.data(), K);
      if (t == ignore) {
        xa.setZero();
      } else {
        check_index(t, K, i, op, "target");
        load(logits, i * K, K, x.data());
        C m = xa.maxCoeff();
        xa = (xa - m).exp();
        xa *= static_cast<C>(static_cast<double>(scale) / xa.template cast<double>().sum());
        x[static_cast<size_t>(t)] -= scale;
      }
      store(dx, i * K, K, x.data());
    }
  });
}

// One block of the fp32 update in a single pass: each element's p, m, v (and max v) are read
// and written once, straight from registers. The same arithmetic as the Eigen expressions below
// (separate products and sums, sqrt, two divisions), which took several passes over the block:
// BM_adamw_step (8.65M parameters, 2 threads, Intel Xeon) took 5.8-5.9 ms that way and 3.3-4.9 ms
// this way; the 8-lane loop is memory-bound there, as AVX-512 would be.
void adamw_block_f32(float* p, float* m, float* v, float* mx, const float* g, int64_t len, float decay, float b1,
                     float c1, float b2, float c2, float step_size, float bias2_sqrt, float eps) {
  int64_t i = 0;
#if defined(__AVX2__) && defined(__FMA__)
  const __m256 vdecay = _mm256_set1_ps(decay), vb1 = _mm256_set1_ps(b1), vc1 = _mm256_set1_ps(c1);
  const __m256 vb2 = _mm256_set1_ps(b2), vc2 = _mm256_set1_ps(c2), vstep = _mm256_set1_ps(step_size);
  const __m256 vbias = _mm256_set1_ps(bias2_sqrt), veps = _mm256_set1_ps(eps);
  for (; i + 8 <= len; i += 8) {
    const __m256 gg = _mm256_loadu_ps(g + i);
    const __m256 mm = _mm256_add_ps(_mm256_mul_ps(vb1, _mm256_loadu_ps(m + i)), _mm256_mul_ps(vc1, gg));
    const __m256 vv =
        _mm256_add_ps(_mm256_mul_ps(vb2, _mm256_loadu_ps(v + i)), _mm256_mul_ps(vc2, _mm256_mul_ps(gg, gg)));
    __m256 den = vv;
    if (mx) {
      den = _mm256_max_ps(_mm256_loadu_ps(mx + i), vv);
      _mm256_storeu_ps(mx + i, den);
    }
    den = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(den), vbias), veps);
    const __m256 pp = _mm256_mul_ps(_mm256_loadu_ps(p + i), vdecay);
    _mm256_storeu_ps(p + i, _mm256_sub_ps(pp, _mm256_div_ps(_mm256_mul_ps(vstep, mm), den)));
    _mm256_storeu_ps(m + i, mm);
    _mm256_storeu_ps(v + i, vv);
  }
#endif
  for (; i < len; ++i) {
    const float gg = g[i];
    m[i] = b1 * m[i] + c1 * gg;
    v[i] = b2 * v[i] + c2 * (gg * gg);
    float den = v[i];
    if (mx) den = mx[i] = std::max(mx[i], v[i]);
    p[i] = p[i] * decay - step_size * m[i] / (std::sqrt(den) / bias2_sqrt + eps);
  }
}

template <class C>
void adamw_t(const Strided& p, const Strided& m, const Strided& v, const Strided& mv, const Strided& g, int64_t step,
             const AdamWConfig& c) {
  const int64_t n = p.numel();
  const C lr = C(c.lr), b1 = C(c.beta1), b2 = C(c.beta2), eps = C(c.eps);
  const C decay = C(1) - C(c.lr * c.weight_decay);
  const C bias1 = C(1) - C(std::pow(c.beta1, static_cast<double>(step)));
  const C bias2_sqrt = C(std::sqrt(1.0 - std::pow(c.beta2, static_cast<double>(step))));
  const C step_size = lr / bias1;
  constexpr int64_t kBlock = 2048;
  // Operands already in the compute type are updated in place; others go through block buffers.
  const DType ct = dtype_of<C>;
  const bool direct = p.dtype == ct && m.dtype == ct && v.dtype == ct && g.dtype == ct && (!c.amsgrad || mv.dtype == ct);
  parallel_for((n + kBlock - 1) / kBlock, 16, [&](int64_t b0, int64_t b1_) {
    std::vector<C> buf(direct ? 0 : static_cast<size_t>(5 * kBlock));
    for (int64_t b = b0; b < b1_; ++b) {
      int64_t o = b * kBlock, len = std::min(kBlock, n - o);
      C *pb, *mb, *vb, *gb, *xb;
      if (direct) {
        pb = static_cast<C*>(p.data) + o, mb = static_cast<C*>(m.data) + o, vb = static_cast<C*>(v.data) + o;
        gb = static_cast<C*>(g.data) + o, xb = c.amsgrad ? static_cast<C*>(mv.data) + o : nullptr;
      } else {
        pb = buf.data(), mb = pb + kBlock, vb = mb + kBlock, gb = vb + kBlock, xb = gb + kBlock;
        load(p, o, len, pb);
        load(m, o, len, mb);
        load(v, o, len, vb);
        load(g, o, len, gb);
        if (c.amsgrad) load(mv, o, len, xb);
      }
      const C sign = c.maximize ? C(-1) : C(1);
      if constexpr (std::is_same<C, float>::value) {
        adamw_block_f32(pb, mb, vb, c.amsgrad ? xb : nullptr, gb, len, decay, b1, (C(1) - b1) * sign, b2, C(1) - b2,
                        step_size, bias2_sqrt, eps);
      } else {
        auto pa = out_arr<C>(pb, len), ma = out_arr<C>(mb, len), va = out_arr<C>(vb, len);
        auto ga = in_arr<C>(gb, len);
        pa *= decay;
        ma = b1 * ma + (C(1) - b1) * sign * ga;
        va = b2 * va + (C(1) - b2) * ga.square();
        if (c.amsgrad) {
          auto xa = out_arr<C>(xb, len);
          xa = xa.max(va);
          pa -= step_size * ma / (xa.sqrt() / bias2_sqrt + eps);
        } else {
          pa -= step_size * ma / (va.sqrt() / bias2_sqrt + eps);
        }
      }
      if (!direct) {
        store(p, o, len, pb);
        store(m, o, len, mb);
        store(v, o, len, vb);
        if (c.amsgrad) store(mv, o, len, xb);
      }
    }
  });
}

}  // namespace

void embedding(const Strided& out, const Strided& weight, const Strided& indices, const char* op) {
  const int64_t num = weight.sizes[0], D = weight.sizes[1], n = indices.numel();
  const int64_t esz = static_cast<int64_t>(element_size(weight.dtype));
  parallel_for(n, std::max<int64_t>(1, 16384 / std::max<int64_t>(D, 1)), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      int64_t r = index_at(indices, i);
      check_index(r, num, i, op, "index");
      convert(weight.bytes() + r * D * esz, weight.dtype, 1, out.bytes() + i * D * esz, out.dtype, 1, D);
    }
  });
}

void embedding_backward(const Strided& gw, const Strided& grad, const Strided& idx, int64_t padding_idx,
                        bool scale_by_freq, const char* op) {
  if (gw.dtype == DType::Float64) {
    embedding_backward_t<double>(gw, grad, idx, padding_idx, scale_by_freq, op);
  } else {
    embedding_backward_t<float>(gw, grad, idx, padding_idx, scale_by_freq, op);
  }
}

void cross_entropy(const Strided& loss, const Strided& logits, const Strided& target, int64_t ignore, const char* op) {
  if (logits.dtype == DType::Float64) {
    cross_entropy_t<double>(loss, logits, target, ignore, op);
  } else {
    cross_entropy_t<float>(loss, logits, target, ignore, op);
  }
}

void cross_entropy_backward(const Strided& dx, const Strided& grad, const Strided& logits, const Strided& target,
                            int64_t ignore, const char* op) {
  if (logits.dtype == DType::Float64) {
    cross_entropy_backward_t<double>(dx, grad, logits, target, ignore, op);
  } else {
    cross_entropy_backward_t<float>(dx, grad, logits, target, ignore, op);
  }
}

void adamw_step(const Strided& p, const Strided& m, const Strided& v, const Strided& mv, const Strided& g, int64_t step,
                const AdamWConfig& cfg) {
  if (p.dtype == DType::Float64) {
    adamw_t<double>(p, m, v, mv, g, step, cfg);
  } else {
    adamw_t<float>(p, m, v, mv, g, step, cfg);
  }
}

void index_select(const Strided& out, const Strided& self, const Strided& index, int64_t d, const char* op) {
  const bool ranked = !self.sizes.empty();
  const size_t ud = static_cast<size_t>(d);
  const int64_t count = index.numel(), size = ranked ? self.sizes[ud] : 1;
  if (count == 0 || (self.numel() == 0 && size > 0)) return;  // nothing to copy
  const int64_t istride = index.strides.empty() ? 0 : index.strides[0];
  const int64_t esz = static_cast<int64_t>(element_size(self.dtype));
  Strided src = self, dst = out;
  if (ranked) {
    src.sizes.erase(ud);
    src.strides.erase(ud);
    dst.sizes.erase(ud);
    dst.strides.erase(ud);
  }
  for (int64_t i = 0; i < count; ++i) {
    int64_t idx = index_at(index, i * istride);
    EMBER_CHECK_INDEX(idx >= -size && idx < size, op, ": index ", idx, " at position ", i, " is out of range for dim ",
                      d, " of size ", size);
    if (idx < 0) idx += size;
    src.data = self.bytes() + (ranked ? idx * self.strides[ud] : 0) * esz;
    dst.data = out.bytes() + (ranked ? i * out.strides[ud] : 0) * esz;
    copy(dst, src);
  }
}

void apply_adamw_v1_f64(double* var, double* m, double* v, const double* grad, const double* max_v, int64_t n,
                        double b1t, double b2t, const AdamWConfig& cfg) {
  const double b1 = cfg.beta1, b2 = cfg.beta2;
  for (int64_t i = 0; i < n; ++i) {
    const double gi = cfg.maximize ? -grad[i] : grad[i];
    m[i] = b1 * m[i] + (1 - b1) * gi;
    v[i] = b2 * v[i] + (1 - b2) * gi * gi;
    if (cfg.amsgrad) v[i] = std::max(max_v[i], v[i]);
    const double step = cfg.lr * (m[i] / (1 - b1t)) / (std::sqrt(v[i] / (1 - b2t)) + cfg.eps);
    var[i] = var[i] - step - cfg.lr * cfg.weight_decay * var[i];
  }
}

namespace {
template <class C>
void im2col_t(const Strided& out, const Strided& in, const Window2d& w) {
  const int64_t planes = in.sizes[0] * in.sizes[1], hw = w.h * w.w, L = w.oh * w.ow, kk = w.kh * w.kw;
  parallel_for(planes, 1, [&](int64_t p0, int64_t p1) {
    std::vector<C> plane(static_cast<size_t>(hw)), row(static_cast<size_t>(L));
    for (int64_t p = p0; p < p1; ++p) {
      load(in, p * hw, hw, plane.data());
      for (int64_t i = 0; i < w.kh; ++i)
        for (int64_t j = 0; j < w.kw; ++j) {
          for (int64_t y = 0; y < w.oh; ++y) {
            int64_t sy = y * w.sh - w.ph + i * w.dh;
            for (int64_t x = 0; x < w.ow; ++x) {
              int64_t sx = x * w.sw - w.pw + j * w.dw;
              row[static_cast<size_t>(y * w.ow + x)] =
                  sy >= 0 && sy < w.h && sx >= 0 && sx < w.w ? plane[static_cast<size_t>(sy * w.w + sx)] : C(0);
            }
          }
          store(out, (p * kk + i * w.kw + j) * L, L, row.data());
        }
    }
  });
}
template <class C>
void col2im_t(const Strided& out, const Strided& in, const Window2d& w) {
  const int64_t planes = out.sizes[0] * out.sizes[1], hw = w.h * w.w, L = w.oh * w.ow, kk = w.kh * w.kw;
  parallel_for(planes, 1, [&](int64_t p0, int64_t p1) {
    std::vector<C> plane(static_cast<size_t>(hw)), row(static_cast<size_t>(L));
    for (int64_t p = p0; p < p1; ++p) {
      std::fill(plane.begin(), plane.end(), C(0));
      for (int64_t i = 0; i < w.kh; ++i)
        for (int64_t j = 0; j < w.kw; ++j) {
          load(in, (p * kk + i * w.kw + j) * L, L, row.data());
          for (int64_t y = 0; y < w.oh; ++y) {
            int64_t sy = y * w.sh - w.ph + i * w.dh;
            if (sy < 0 || sy >= w.h) continue;
            for (int64_t x = 0; x < w.ow; ++x) {
              int64_t sx = x * w.sw - w.pw + j * w.dw;
              if (sx >= 0 && sx < w.w) plane[static_cast<size_t>(sy * w.w + sx)] += row[static_cast<size_t>(y * w.ow + x)];
            }
          }
        }
      store(out, p * hw, hw, plane.data());
    }
  });
}
}  // namespace

std::string window2d(int64_t h, int64_t w, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s, Window2d* out) {
  auto two = [](IntArrayRef a) { return a.size() == 2; };
  if (!two(k) || !two(d) || !two(p) || !two(s))
    return "kernel_size, dilation, padding and stride need 2 values each, got " + to_string(k) + ", " + to_string(d) +
           ", " + to_string(p) + ", " + to_string(s);
  if (k[0] <= 0 || k[1] <= 0 || d[0] <= 0 || d[1] <= 0 || s[0] <= 0 || s[1] <= 0)
    return "kernel_size, dilation and stride must be positive, got " + to_string(k) + ", " + to_string(d) + ", " +
           to_string(s);
  if (p[0] < 0 || p[1] < 0) return "padding must be non-negative, got " + to_string(p);
  const int64_t lim = int64_t(1) << 31;
  if (h < 0 || w < 0 || h > lim || w > lim || k[0] > lim || k[1] > lim || d[0] > lim || d[1] > lim || p[0] > lim ||
      p[1] > lim || s[0] > lim || s[1] > lim)
    return "a size or window parameter above 2^31";
  Window2d r{k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1], h, w, 0, 0};
  int64_t ext_h = d[0] * (k[0] - 1) + 1, ext_w = d[1] * (k[1] - 1) + 1;  // < 2^62
  if (h + 2 * p[0] < ext_h || w + 2 * p[1] < ext_w)
    return "the kernel's extent " + std::to_string(ext_h) + "x" + std::to_string(ext_w) + " (dilated) is larger than the "
           "padded input " + std::to_string(h + 2 * p[0]) + "x" + std::to_string(w + 2 * p[1]);
  r.oh = (h + 2 * p[0] - ext_h) / s[0] + 1;  // every term below 2^62
  r.ow = (w + 2 * p[1] - ext_w) / s[1] + 1;
  if (r.oh > INT64_MAX / r.ow || k[0] > INT64_MAX / k[1])
    return "the number of windows (" + std::to_string(r.oh) + " x " + std::to_string(r.ow) + ") or the kernel's size "
           "overflows";
  *out = r;
  return "";
}

void im2col(const Strided& out, const Strided& in, const Window2d& w) {
  if (in.dtype == DType::Float64) {
    im2col_t<double>(out, in, w);
  } else {
    im2col_t<float>(out, in, w);
  }
}
void col2im(const Strided& out, const Strided& in, const Window2d& w) {
  if (out.dtype == DType::Float64) {
    col2im_t<double>(out, in, w);
  } else {
    col2im_t<float>(out, in, w);
  }
}

}  // namespace cpu
}  // namespace ember
