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
#include "ember/tensor/error.h"

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

// Reduces in over the plan into out, with A the accumulation/compute type.
template <class Red, class A>
void reduce_impl(const Strided& out, const Strided& in, const Plan& p) {
  using W = Wide<A>;
  const int64_t isz = static_cast<int64_t>(element_size(in.dtype));
  const int64_t osz = static_cast<int64_t>(element_size(out.dtype));
  const DType adt = dtype_of<A>;
  auto store = [&](int64_t k, W v) {
    A a = static_cast<A>(v);
    convert(&a, adt, 1, out.bytes() + offset_of(k, p.kept_sizes, p.kept_out) * osz, out.dtype, 1, 1);
  };
  if (p.R == 0 || p.K == 0) {
    for (int64_t k = 0; k < p.K; ++k) store(k, Red::template init<W>());
    return;
  }
  const int nt = get_num_threads();
  bool inner = !p.red_sizes.empty() && p.red_in.back() == 1;
  bool outer = !inner && !p.kept_sizes.empty() && p.kept_in.back() == 1 && p.kept_out.back() == 1;

  if (inner || p.red_sizes.empty()) {
    const int64_t len = p.red_sizes.empty() ? 1 : p.red_sizes.back();
    const int64_t rows = p.R / len;
    IntArrayRef row_sizes(p.red_sizes.data(), p.red_sizes.empty() ? 0 : p.red_sizes.size() - 1);
    IntArrayRef row_strides(p.red_in.data(), row_sizes.size());
    // Reduce rows [r0, r1) of output k.
    auto reduce_rows = [&](int64_t k, int64_t r0, int64_t r1) {
      alignas(64) A buf[kChunk];
      W acc = Red::template init<W>();
      const char* base = in.bytes() + offset_of(k, p.kept_sizes, p.kept_in) * isz;
      for (int64_t r = r0; r < r1; ++r) {
        const char* row = base + offset_of(r, row_sizes, row_strides) * isz;
        for (int64_t c = 0; c < len; c += kChunk) {
          int64_t n = len - c < kChunk ? len - c : kChunk;
          const A* x;
          if (in.dtype == adt) {
            x = reinterpret_cast<const A*>(row) + c;
          } else {
            convert(row + c * isz, in.dtype, 1, buf, adt, 1, n);
            x = buf;
          }
          acc = Red::combine(acc, Red::template block<A, W>(x, n));
        }
      }
      return acc;
    };
    if (p.K >= nt || p.R * p.K < 65536) {
      parallel_for(p.K, std::max<int64_t>(1, 32768 / std::max<int64_t>(p.R, 1)), [&](int64_t k0, int64_t k1) {
        for (int64_t k = k0; k < k1; ++k) store(k, reduce_rows(k, 0, rows));
      });
    } else {
      // Few outputs, long rows: split the rows (or each row's chunks) into a fixed number of
      // blocks, one partial per block, combined in block order: race-free, and the result does
      // not depend on the thread count.
      for (int64_t k = 0; k < p.K; ++k) {
        if (rows >= nt) {
          const int64_t nb = std::min<int64_t>(rows, kMaxBlocks);
          std::vector<W> part(static_cast<size_t>(nb), Red::template init<W>());
          parallel_for(nb, 1, [&](int64_t b0, int64_t b1) {
            for (int64_t b = b0; b < b1; ++b) part[static_cast<size_t>(b)] = reduce_rows(k, rows * b / nb, rows * (b + 1) / nb);
          });
          W acc = Red::template init<W>();
          for (W v : part) acc = Red::combine(acc, v);
          store(k, acc);
        } else {
          // One (or a few) long contiguous rows: split each row.
          W acc = Red::template init<W>();
          const char* base = in.bytes() + offset_of(k, p.kept_sizes, p.kept_in) * isz;
          for (int64_t r = 0; r < rows; ++r) {
            const char* row = base + offset_of(r, row_sizes, row_strides) * isz;
            const int64_t chunks = (len + kChunk - 1) / kChunk, nb = std::min<int64_t>(chunks, kMaxBlocks);
            std::vector<W> part(static_cast<size_t>(nb), Red::template init<W>());
            parallel_for(nb, std::max<int64_t>(1, 16 * nb / chunks), [&](int64_t b0, int64_t b1) {
              alignas(64) A buf[kChunk];
              for (int64_t b = b0; b < b1; ++b) {
                W v = Red::template init<W>();
                for (int64_t c = chunks * b / nb; c < chunks * (b + 1) / nb; ++c) {
                  int64_t s = c * kChunk, n = len - s < kChunk ? len - s : kChunk;
                  const A* x;
                  if (in.dtype == adt) {
                    x = reinterpret_cast<const A*>(row) + s;
                  } else {
                    convert(row + s * isz, in.dtype, 1, buf, adt, 1, n);
                    x = buf;
                  }
                  v = Red::combine(v, Red::template block<A, W>(x, n));
                }
                part[static_cast<size_t>(b)] = v;
              }
            });
            for (W v : part) acc = Red::combine(acc, v);
          }
          store(k, acc);
        }
      }
    }
    return;
  }

  if (outer) {
    // Columns: out[k_outer, j] = reduce_r in[k_outer, r, j] over a contiguous last kept dim.
    const int64_t cols = p.kept_sizes.back();
    const int64_t outer_n = p.K / cols;
    IntArrayRef ko_sizes(p.kept_sizes.data(), p.kept_sizes.size() - 1);
    IntArrayRef ko_in(p.kept_in.data(), ko_sizes.size());
    IntArrayRef ko_out(p.kept_out.data(), ko_sizes.size());
    const int64_t col_chunks = (cols + kChunk - 1) / kChunk;
    parallel_for(outer_n * col_chunks, std::max<int64_t>(1, 65536 / std::max<int64_t>(p.R * kChunk, 1)),
                 [&](int64_t w0, int64_t w1) {
                   alignas(64) A buf[kChunk];
                   std::vector<W> acc(kChunk);
                   std::vector<A> res(kChunk);
                   for (int64_t w = w0; w < w1; ++w) {
                     int64_t ko = w / col_chunks, c0 = (w % col_chunks) * kChunk;
                     int64_t n = cols - c0 < kChunk ? cols - c0 : kChunk;
                     const char* base = in.bytes() + (offset_of(ko, ko_sizes, ko_in) + c0) * isz;
                     std::fill(acc.begin(), acc.begin() + n, Red::template init<W>());
                     for (int64_t r = 0; r < p.R; ++r) {
                       const char* row = base + offset_of(r, p.red_sizes, p.red_in) * isz;
                       const A* x;
                       if (in.dtype == adt) {
                         x = reinterpret_cast<const A*>(row);
                       } else {
                         convert(row, in.dtype, 1, buf, adt, 1, n);
                         x = buf;
                       }
                       for (int64_t j = 0; j < n; ++j) acc[static_cast<size_t>(j)] = Red::combine(acc[static_cast<size_t>(j)], static_cast<W>(x[j]));
                     }
                     for (int64_t j = 0; j < n; ++j) res[static_cast<size_t>(j)] = static_cast<A>(acc[static_cast<size_t>(j)]);
                     convert(res.data(), adt, 1, out.bytes() + (offset_of(ko, ko_sizes, ko_out) + c0) * osz,
                             out.dtype, 1, n);
                   }
                 });
    return;
  }

  // General: copy into a contiguous [kept..., reduced...] buffer of A, then reduce rows.
  std::vector<A> tmp = scratch_vector<A>(checked_mul(p.K, p.R, "reduction"), "reduction");
  Strided src;
  src.data = in.data;
  src.dtype = in.dtype;
  Strided dst;
  dst.data = tmp.data();
  dst.dtype = adt;
  for (size_t d = 0; d < p.kept_sizes.size(); ++d) {
    src.sizes.push_back(p.kept_sizes[d]);
    src.strides.push_back(p.kept_in[d]);
  }
  for (size_t d = 0; d < p.red_sizes.size(); ++d) {
    src.sizes.push_back(p.red_sizes[d]);
    src.strides.push_back(p.red_in[d]);
  }
  dst.sizes = src.sizes;
  dst.strides = contiguous_strides(src.sizes);
  copy(dst, src);
  Plan q;
  q.kept_sizes = p.kept_sizes;
  q.kept_in = contiguous_strides(p.kept_sizes);
  for (auto& s : q.kept_in) s *= p.R;
  q.kept_out = p.kept_out;
  q.red_sizes = DimVector{p.R};
  q.red_in = DimVector{1};
  q.K = p.K;
  q.R = p.R;
  reduce_impl<Red, A>(out, dst, q);
}

template <class Red>
void reduce(const char* name, const Strided& out, const Strided& in) {
  Plan p = make_plan(out, in);
  switch (compute_dtype(out.dtype)) {
    case DType::Float32: reduce_impl<Red, float>(out, in, p); return;
    case DType::Float64: reduce_impl<Red, double>(out, in, p); return;
    case DType::Int64: reduce_impl<Red, int64_t>(out, in, p); return;
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
  Strided dst;
  dst.data = tmp.data();
  dst.dtype = dtype_of<A>;
  dst.sizes = src.sizes;
  dst.strides = contiguous_strides(src.sizes);
  copy(dst, src);
  return tmp;
}

template <bool kMax, class A>
void arg_impl(const Strided& out, const Strided& in, int64_t dim) {
  int64_t rows, len;
  std::vector<A> x = rows_last<A>(in, dim, &rows, &len);
  EMBER_CHECK_SHAPE(len > 0, kMax ? "argmax" : "argmin", ": cannot reduce over a zero-size dimension");
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
void arg(const Strided& out, const Strided& in, int64_t dim) {
  EMBER_ASSERT(out.dtype == DType::Int64, "argmax output must be int64");
  switch (compute_dtype(in.dtype)) {
    case DType::Float32: arg_impl<kMax, float>(out, in, dim); return;
    case DType::Float64: arg_impl<kMax, double>(out, in, dim); return;
    default: arg_impl<kMax, int64_t>(out, in, dim); return;
  }
}

}  // namespace

void sum(const Strided& out, const Strided& in) { reduce<SumR>("sum", out, in); }
void amax(const Strided& out, const Strided& in) { reduce<MaxR>("amax", out, in); }
void amin(const Strided& out, const Strided& in) { reduce<MinR>("amin", out, in); }
void argmax(const Strided& out, const Strided& in, int64_t dim) { arg<true>(out, in, dim); }
void argmin(const Strided& out, const Strided& in, int64_t dim) { arg<false>(out, in, dim); }

}  // namespace cpu
}  // namespace ember
