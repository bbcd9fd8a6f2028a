#include "ember/device/cpu/eigen_util.h"  // first: see the note there

#include "ember/device/cpu/nn.h"

#include <algorithm>
#include <cmath>
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
  std::vector<C> acc = scratch_vector<C>(checked_mul(num, D, "embedding_backward"), "embedding_backward", C(0));
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
      auto pa = out_arr<C>(pb, len), ma = out_arr<C>(mb, len), va = out_arr<C>(vb, len);
      auto ga = in_arr<C>(gb, len);
      const C sign = c.maximize ? C(-1) : C(1);
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

}  // namespace cpu
}  // namespace ember
