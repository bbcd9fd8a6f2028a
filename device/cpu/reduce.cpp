// Reductions: dims are coalesced and split into kept and reduced groups; contiguous inner
// reductions and contiguous outer (column) reductions run vectorised, anything else is first
// copied into [kept..., reduced...] order.
#include "ember/device/cpu/eigen_util.h"  // first: see the note there

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "ember/device/cpu/reduce.h"
#include "ember/device/parallel.h"
#include "ember/core/error.h"

namespace ember {
namespace cpu {
namespace {

constexpr int64_t kChunk = 1024;
constexpr int64_t kMaxBlocks = 64;  // partials of a long reduction (fixed: thread-count independent)

template <class A>
using Wide = std::conditional_t<std::is_same<A, float>::value, double, A>;

struct SumR {
  template <class W>
  static W init() {
    return W(0);
  }
  template <class A, class W>
  static W block(const A* x, int64_t n) {
    if constexpr (std::is_integral<A>::value && std::is_integral<W>::value && !std::is_same<W, bool>::value) {  // wraps
      std::make_unsigned_t<W> s = 0;
      for (int64_t i = 0; i < n; ++i) s += static_cast<std::make_unsigned_t<W>>(static_cast<W>(x[i]));
      return static_cast<W>(s);
    } else {
      return static_cast<W>(in_arr<A>(x, n).sum());
    }
  }
  template <class W>
  static W combine(W a, W b) {
    if constexpr (std::is_integral<W>::value && !std::is_same<W, bool>::value) {
      return static_cast<W>(static_cast<std::make_unsigned_t<W>>(a) + static_cast<std::make_unsigned_t<W>>(b));
    } else {
      return a + b;
    }
  }
};

// sum with NaN counted as 0
struct NansumR : SumR {
  template <class A, class W>
  static W block(const A* x, int64_t n) {
    if constexpr (std::is_floating_point<A>::value) {
      auto a = in_arr<A>(x, n);
      return static_cast<W>((a == a).select(a, A(0)).sum());
    } else {
      return SumR::block<A, W>(x, n);
    }
  }
};

struct MaxR {
  template <class W>
  static W init() {
    return std::numeric_limits<W>::has_infinity ? -std::numeric_limits<W>::infinity()
                                                : std::numeric_limits<W>::lowest();
  }
  template <class A, class W>
  static W block(const A* x, int64_t n) {
    auto a = in_arr<A>(x, n);
    if constexpr (std::is_floating_point<A>::value) {
      if (a.isNaN().any()) return std::numeric_limits<W>::quiet_NaN();
    }
    return static_cast<W>(a.maxCoeff());
  }
  template <class W>
  static W combine(W a, W b) {
    return (a > b || a != a) ? a : b;
  }
};

struct MinR {
  template <class W>
  static W init() {
    return std::numeric_limits<W>::has_infinity ? std::numeric_limits<W>::infinity()
                                                : std::numeric_limits<W>::max();
  }
  template <class A, class W>
  static W block(const A* x, int64_t n) {
    auto a = in_arr<A>(x, n);
    if constexpr (std::is_floating_point<A>::value) {
      if (a.isNaN().any()) return std::numeric_limits<W>::quiet_NaN();
    }
    return static_cast<W>(a.minCoeff());
  }
  template <class W>
  static W combine(W a, W b) {
    return (a < b || a != a) ? a : b;
  }
};

int64_t offset_of(int64_t linear, IntArrayRef sizes, IntArrayRef strides) {
  int64_t off = 0;
  for (size_t d = sizes.size(); d-- > 0;) {
    off += (linear % sizes[d]) * strides[d];
    linear /= sizes[d];
  }
  return off;
}

struct Plan {
  DimVector kept_sizes, kept_in, kept_out;  // kept dims (coalesced), strides in `in` and `out`
  DimVector red_sizes, red_in;              // reduced dims
  int64_t K = 1, R = 1;
};

Plan make_plan(const Strided& out, const Strided& in) {
  EMBER_ASSERT(out.sizes.size() == in.sizes.size(), "reduce: out must have in's rank (keepdim layout)");
  DimVector sizes = in.sizes, is = in.strides, os = out.strides;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (out.sizes[d] == 1 && sizes[d] != 1) os[d] = 0;  // reduced
  DimVector* st[2] = {&is, &os};
  coalesce(sizes, st, 2);
  Plan p;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (os[d] == 0) {
      p.red_sizes.push_back(sizes[d]);
      p.red_in.push_back(is[d]);
      p.R *= sizes[d];
    } else {
      p.kept_sizes.push_back(sizes[d]);
      p.kept_in.push_back(is[d]);
      p.kept_out.push_back(os[d]);
      p.K *= sizes[d];
    }
  }
  return p;
}

// Reduces `in` over the plan into `out`, with A the accumulation/compute type (W: A widened).
// Strategies, chosen by run(): rows (the reduced dims end in a contiguous one), split across
// outputs or, for few long rows, into fixed blocks; columns (a contiguous kept dim last);
// anything else is first copied into a contiguous [kept..., reduced...] buffer, then rows.
template <class Red, class A>
class Reducer {
 public:
  using W = Wide<A>;
  Reducer(const Strided& out, const Strided& in, const Plan& p)
      : out_(out), in_(in), p_(p), isz_(static_cast<int64_t>(element_size(in.dtype))),
        osz_(static_cast<int64_t>(element_size(out.dtype))) {}

  void run() {
    if (p_.R == 0 || p_.K == 0) {
      for (int64_t k = 0; k < p_.K; ++k) store(k, Red::template init<W>());
    } else if (p_.red_sizes.empty() || p_.red_in.back() == 1) {
      rows();
    } else if (!p_.kept_sizes.empty() && p_.kept_in.back() == 1 && p_.kept_out.back() == 1) {
      columns();
    } else {
      general();
    }
  }

 private:
  static constexpr DType kAcc = dtype_of<A>;

  // n elements of `in`'s dtype at src, as A: in place when the dtypes agree, else converted into buf.
  const A* load(const char* src, int64_t n, A* buf) const {
    if (in_.dtype == kAcc) return reinterpret_cast<const A*>(src);
    convert(src, in_.dtype, 1, buf, kAcc, 1, n);
    return buf;
  }
  void store(int64_t k, W v) const {
    A a = static_cast<A>(v);
    convert(&a, kAcc, 1, out_.bytes() + offset_of(k, p_.kept_sizes, p_.kept_out) * osz_, out_.dtype, 1, 1);
  }
  // acc folded with chunks [c0, c1) of a contiguous row of len elements (buf: kChunk of A).
  W reduce_chunks(W acc, const char* row, int64_t len, int64_t c0, int64_t c1, A* buf) const {
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t s = c * kChunk, n = std::min(kChunk, len - s);
      acc = Red::combine(acc, Red::template block<A, W>(load(row + s * isz_, n, buf), n));
    }
    return acc;
  }

  // ---- rows: the last reduced dim is contiguous
  int64_t row_len() const { return p_.red_sizes.empty() ? 1 : p_.red_sizes.back(); }
  IntArrayRef row_sizes() const {
    return IntArrayRef(p_.red_sizes.data(), p_.red_sizes.empty() ? 0 : p_.red_sizes.size() - 1);
  }
  const char* output_base(int64_t k) const { return in_.bytes() + offset_of(k, p_.kept_sizes, p_.kept_in) * isz_; }
  const char* row(const char* base, int64_t r) const {
    IntArrayRef rs = row_sizes();
    return base + offset_of(r, rs, IntArrayRef(p_.red_in.data(), rs.size())) * isz_;
  }
  // Rows [r0, r1) of output k.
  __attribute__((always_inline)) W reduce_rows(int64_t k, int64_t r0, int64_t r1) const {
    const int64_t len = row_len(), chunks = (len + kChunk - 1) / kChunk;
    const char* base = output_base(k);
    alignas(64) A buf[kChunk];
    W acc = Red::template init<W>();
    for (int64_t r = r0; r < r1; ++r) acc = reduce_chunks(acc, row(base, r), len, 0, chunks, buf);
    return acc;
  }
  void rows() const {
    const int64_t nrows = p_.R / row_len();
    if (p_.K >= get_num_threads() || p_.R * p_.K < 65536) {
      parallel_for(p_.K, std::max<int64_t>(1, 32768 / std::max<int64_t>(p_.R, 1)), [&](int64_t k0, int64_t k1) {
        for (int64_t k = k0; k < k1; ++k) store(k, reduce_rows(k, 0, nrows));
      });
      return;
    }
    // Few outputs, long rows: split the rows (or each row's chunks) into a fixed number of
    // blocks, one partial per block, combined in block order: race-free, and the result does not
    // depend on the thread count.
    for (int64_t k = 0; k < p_.K; ++k) {
      if (nrows >= get_num_threads()) {
        const int64_t nb = std::min<int64_t>(nrows, kMaxBlocks);
        store(k, blocks(Red::template init<W>(), nb, 1,
                        [&](int64_t b) { return reduce_rows(k, nrows * b / nb, nrows * (b + 1) / nb); }));
      } else {
        W acc = Red::template init<W>();
        for (int64_t r = 0; r < nrows; ++r) acc = split_row(acc, row(output_base(k), r));
        store(k, acc);
      }
    }
  }
  // acc folded with one long contiguous row, its chunks split into blocks.
  W split_row(W acc, const char* r) const {
    const int64_t len = row_len(), chunks = (len + kChunk - 1) / kChunk, nb = std::min<int64_t>(chunks, kMaxBlocks);
    return blocks(acc, nb, std::max<int64_t>(1, 16 * nb / chunks),
                  [&](int64_t b) {
                    alignas(64) A buf[kChunk];
                    return reduce_chunks(Red::template init<W>(), r, len, chunks * b / nb, chunks * (b + 1) / nb, buf);
                  });
  }
  // acc folded with the partials part(b) of nb blocks, computed in parallel, in block order.
  template <class Part>
  W blocks(W acc, int64_t nb, int64_t grain, const Part& part) const {
    std::vector<W> parts(static_cast<size_t>(nb), Red::template init<W>());
    parallel_for(nb, grain, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) parts[static_cast<size_t>(b)] = part(b);
    });
    for (W v : parts) acc = Red::combine(acc, v);
    return acc;
  }

  // ---- columns: out[k_outer, j] = reduce_r in[k_outer, r, j] over a contiguous last kept dim
  void columns() const {
    const int64_t cols = p_.kept_sizes.back(), outer_n = p_.K / cols;
    IntArrayRef ko_sizes(p_.kept_sizes.data(), p_.kept_sizes.size() - 1);
    IntArrayRef ko_in(p_.kept_in.data(), ko_sizes.size()), ko_out(p_.kept_out.data(), ko_sizes.size());
    const int64_t col_chunks = (cols + kChunk - 1) / kChunk;
    parallel_for(outer_n * col_chunks, std::max<int64_t>(1, 65536 / std::max<int64_t>(p_.R * kChunk, 1)),
                 [&](int64_t w0, int64_t w1) {
                   alignas(64) A buf[kChunk];
                   std::vector<W> acc(kChunk);
                   std::vector<A> res(kChunk);
                   for (int64_t w = w0; w < w1; ++w) {
                     const int64_t ko = w / col_chunks, c0 = (w % col_chunks) * kChunk, n = std::min(kChunk, cols - c0);
                     const char* base = in_.bytes() + (offset_of(ko, ko_sizes, ko_in) + c0) * isz_;
                     std::fill(acc.begin(), acc.begin() + n, Red::template init<W>());
                     for (int64_t r = 0; r < p_.R; ++r) {
                       const A* x = load(base + offset_of(r, p_.red_sizes, p_.red_in) * isz_, n, buf);
                       for (int64_t j = 0; j < n; ++j) acc[static_cast<size_t>(j)] = Red::combine(acc[static_cast<size_t>(j)], static_cast<W>(x[j]));
                     }
                     for (int64_t j = 0; j < n; ++j) res[static_cast<size_t>(j)] = static_cast<A>(acc[static_cast<size_t>(j)]);
                     convert(res.data(), kAcc, 1, out_.bytes() + (offset_of(ko, ko_sizes, ko_out) + c0) * osz_,
                             out_.dtype, 1, n);
                   }
                 });
  }

  // ---- anything else: copy into a contiguous [kept..., reduced...] buffer of A, then rows
  void general() const {
    std::vector<A> tmp = scratch_vector<A>(checked_mul(p_.K, p_.R, "reduction"), "reduction");
    Strided src;
    src.data = in_.data;
    src.dtype = in_.dtype;
    src.sizes = p_.kept_sizes;
    src.strides = p_.kept_in;
    for (size_t d = 0; d < p_.red_sizes.size(); ++d) {
      src.sizes.push_back(p_.red_sizes[d]);
      src.strides.push_back(p_.red_in[d]);
    }
    Strided dst = src.contiguous_at(tmp.data(), kAcc);
    copy(dst, src);
    Plan q;
    q.kept_sizes = p_.kept_sizes;
    q.kept_in = contiguous_strides(p_.kept_sizes);
    for (auto& st : q.kept_in) st *= p_.R;
    q.kept_out = p_.kept_out;
    q.red_sizes = DimVector{p_.R};
    q.red_in = DimVector{1};
    q.K = p_.K;
    q.R = p_.R;
    Reducer(out_, dst, q).run();
  }

  const Strided& out_;
  const Strided& in_;
  const Plan& p_;
  const int64_t isz_, osz_;
};

template <class Red>
void reduce(const char* name, const Strided& out, const Strided& in) {
  Plan p = make_plan(out, in);
  switch (compute_dtype(out.dtype)) {
    case DType::Float32: Reducer<Red, float>(out, in, p).run(); return;
    case DType::Float64: Reducer<Red, double>(out, in, p).run(); return;
    case DType::Int64: Reducer<Red, int64_t>(out, in, p).run(); return;
    default: EMBER_THROW(DTypeError, name, ": unsupported dtype ", out.dtype);
  }
}

// Moves `dim` last and makes the data contiguous as A: returns rows x len.
template <class A>
std::vector<A> rows_last(const Strided& in, int64_t dim, int64_t* rows, int64_t* len) {
  Strided src;
  src.data = in.data;
  src.dtype = in.dtype;
  for (int64_t d = 0; d < in.dim(); ++d) {
    if (d == dim) continue;
    src.sizes.push_back(in.sizes[d]);
    src.strides.push_back(in.strides[d]);
  }
  src.sizes.push_back(in.dim() ? in.sizes[dim] : 1);
  src.strides.push_back(in.dim() ? in.strides[dim] : 0);
  *len = src.sizes.back();
  *rows = *len ? numel_of(src.sizes) / *len : 0;
  std::vector<A> tmp = scratch_vector<A>(numel_of(src.sizes), "rows_last");
  copy(src.contiguous_at(tmp.data(), dtype_of<A>), src);
  return tmp;
}

template <bool kMax, class A>
void arg_impl(const Strided& out, const Strided& in, int64_t dim, const char* op) {
  int64_t rows, len;
  std::vector<A> x = rows_last<A>(in, dim, &rows, &len);
  EMBER_CHECK_SHAPE(len > 0, op, ": cannot reduce over a zero-size dimension");
  // out keepdim layout: rows enumerate the kept dims in order.
  DimVector osizes, ostrides;
  for (int64_t d = 0; d < out.dim(); ++d) {
    if (d == dim) continue;
    osizes.push_back(out.sizes[d]);
    ostrides.push_back(out.strides[d]);
  }
  int64_t* o = static_cast<int64_t*>(out.data);
  parallel_for(rows, std::max<int64_t>(1, 32768 / len), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const A* row = x.data() + r * len;
      int64_t best = 0;
      A bv = row[0];
      for (int64_t j = 1; j < len && bv == bv; ++j) {
        A v = row[j];
        if (v != v || (kMax ? v > bv : v < bv)) {
          best = j;
          bv = v;
        }
      }
      o[offset_of(r, osizes, ostrides)] = best;
    }
  });
}

template <bool kMax>
void arg(const Strided& out, const Strided& in, int64_t dim, const char* op) {
  EMBER_ASSERT(out.dtype == DType::Int64, op, ": the output must be int64");
  switch (compute_dtype(in.dtype)) {
    case DType::Float32: arg_impl<kMax, float>(out, in, dim, op); return;
    case DType::Float64: arg_impl<kMax, double>(out, in, dim, op); return;
    default: arg_impl<kMax, int64_t>(out, in, dim, op); return;
  }
}

}  // namespace

#define EMBER_TABLE_REDUCE(name, Acl, form, Acc, ...) \
  void name(const Strided& out, const Strided& in) { reduce<Acc>(#name, out, in); }
EMBER_REDUCE_OPS(EMBER_TABLE_REDUCE)
#undef EMBER_TABLE_REDUCE
void argmax(const Strided& out, const Strided& in, int64_t dim) { arg<true>(out, in, dim, __func__); }
void argmin(const Strided& out, const Strided& in, int64_t dim) { arg<false>(out, in, dim, __func__); }

}  // namespace cpu
}  // namespace ember
