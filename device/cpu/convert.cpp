// Dtype conversion loops, strided copy and fill: the load/store layer under every CPU kernel.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ember/core/error.h"
#include "ember/device/cpu/isa.h"
#include "ember/device/cpu/packed_gemm.h"
#include "ember/device/cpu/strided.h"
#include "ember/device/parallel.h"

namespace ember {
namespace cpu {
namespace {

template <class D, class S>
inline D cast_one(S s) {
  if constexpr (std::is_same<D, bool>::value) {
    return static_cast<float>(s) != 0.0f || static_cast<double>(s) != 0.0;
  } else if constexpr (std::is_same<D, Half>::value || std::is_same<D, BFloat16>::value) {
    if constexpr (std::is_same<S, double>::value || std::is_integral<S>::value) {
      return D(static_cast<float>(s));
    } else {
      return D(static_cast<float>(s));
    }
  } else if constexpr (sizeof(D) == 1 && std::is_integral<D>::value && !std::is_integral<S>::value) {
    // float -> uint8/int8 truncates to int64 and wraps, as integer stores into them do (and as
    // PyTorch and NumPy do on x86: -3.0 -> 253): one rule for every value that reaches a byte.
    if constexpr (std::is_same<S, Half>::value || std::is_same<S, BFloat16>::value) {
      return static_cast<D>(saturating_int64(static_cast<float>(s)));
    } else {
      return static_cast<D>(saturating_int64(static_cast<double>(s)));
    }
  } else if constexpr (std::is_integral<D>::value && !std::is_integral<S>::value) {
    // float -> integer truncates; NaN (and values out of range) would be undefined behaviour in
    // C++, so NaN maps to 0 (CANN's Cast rule) and the rest saturates.
    double v = static_cast<double>(static_cast<float>(s) == static_cast<float>(s) ? static_cast<double>(s) : 0.0);
    if (v != v) return D(0);
    if (v >= static_cast<double>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    if (v <= static_cast<double>(std::numeric_limits<D>::lowest())) return std::numeric_limits<D>::lowest();
    return static_cast<D>(v);
  } else if constexpr (std::is_same<S, Half>::value || std::is_same<S, BFloat16>::value) {
    return static_cast<D>(static_cast<float>(s));
  } else {
    return static_cast<D>(s);
  }
}

// Contiguous fast paths the compiler does not find on its own.
template <class S, class D>
bool convert_fast(const S* src, D* dst, int64_t n) {
#if defined(__F16C__) && defined(__AVX__)
  if constexpr (std::is_same<S, float>::value && std::is_same<D, Half>::value) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
    }
    for (; i < n; ++i) dst[i] = Half(src[i]);
    return true;
  }
  if constexpr (std::is_same<S, Half>::value && std::is_same<D, float>::value) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
    for (; i < n; ++i) dst[i] = static_cast<float>(src[i]);
    return true;
  }
#endif
  if constexpr (std::is_same<S, float>::value && std::is_same<D, BFloat16>::value) {
    const uint32_t* s = reinterpret_cast<const uint32_t*>(src);
    uint16_t* d = reinterpret_cast<uint16_t*>(dst);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      uint32_t x = s[i];
      uint32_t r = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
      uint32_t nan = (x >> 16) | 0x40u;
      d[i] = static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? nan : r);
    }
    return true;
  }
  if constexpr (std::is_same<S, BFloat16>::value && std::is_same<D, float>::value) {
    const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
    uint32_t* d = reinterpret_cast<uint32_t*>(dst);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) d[i] = static_cast<uint32_t>(s[i]) << 16;
    return true;
  }
  return false;
}

template <class S, class D>
void convert_typed(const S* src, int64_t ss, D* dst, int64_t ds, int64_t n) {
  if (ss == 1 && ds == 1) {
    if constexpr (std::is_same<S, D>::value) {
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(S));
      return;
    } else {
      if (convert_fast(src, dst, n)) return;
      for (int64_t i = 0; i < n; ++i) dst[i] = cast_one<D>(src[i]);
      return;
    }
  }
  if (ss == 0) {
    D v = cast_one<D>(src[0]);
    for (int64_t i = 0; i < n; ++i) dst[i * ds] = v;
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i * ds] = cast_one<D>(src[i * ss]);
}

}  // namespace

void convert(const void* src, DType sdt, int64_t ss, void* dst, DType ddt, int64_t ds, int64_t n) {
  if (n <= 0) return;
  visit_dtype(sdt, [&](auto s_tag) {
    using S = decltype(s_tag);
    visit_dtype(ddt, [&](auto d_tag) {
      using D = decltype(d_tag);
      convert_typed(static_cast<const S*>(src), ss, static_cast<D*>(dst), ds, n);
    });
  });
}

int coalesce(DimVector& sizes, DimVector* strides[], int n) {
  // Drop size-1 dims, then merge dim i into i+1 when every operand is contiguous across them.
  int rank = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    sizes[rank] = sizes[d];
    for (int k = 0; k < n; ++k) (*strides[k])[rank] = (*strides[k])[d];
    ++rank;
  }
  int out = 0;
  for (int d = 0; d < rank; ++d) {
    if (out > 0) {
      // Overflowing products (only empty views, whose other dims may be huge) never merge.
      int64_t merged_size, span;
      bool merge = !__builtin_mul_overflow(sizes[out - 1], sizes[d], &merged_size);
      for (int k = 0; k < n && merge; ++k)
        merge = !__builtin_mul_overflow((*strides[k])[d], sizes[d], &span) && (*strides[k])[out - 1] == span;
      if (merge) {
        sizes[out - 1] = merged_size;
        for (int k = 0; k < n; ++k) (*strides[k])[out - 1] = (*strides[k])[d];
        continue;
      }
    }
    sizes[out] = sizes[d];
    for (int k = 0; k < n; ++k) (*strides[k])[out] = (*strides[k])[d];
    ++out;
  }
  sizes.resize(out);
  for (int k = 0; k < n; ++k) strides[k]->resize(out);
  return out;
}

NdCursor::NdCursor(IntArrayRef sizes, DimVector* const strides[], int n, int64_t start)
    : sizes_(sizes), strides_(strides), n_(n), index_(sizes.size(), 0) {
  for (size_t d = sizes.size(); d-- > 0;) {
    index_[d] = start % sizes[d];
    start /= sizes[d];
  }
  done_ = start > 0;
}

int64_t NdCursor::next(int64_t max_len, int64_t* offsets) {
  if (done_) return 0;
  size_t rank = sizes_.size();
  for (int k = 0; k < n_; ++k) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += index_[d] * (*strides_[k])[d];
    offsets[k] = off;
  }
  if (rank == 0) {
    done_ = true;
    return 1;
  }
  int64_t len = sizes_[rank - 1] - index_[rank - 1];
  if (len > max_len) len = max_len;
  index_[rank - 1] += len;
  for (size_t d = rank; d-- > 0;) {
    if (index_[d] < sizes_[d]) break;
    if (d == 0) {
      done_ = true;
      break;
    }
    index_[d] = 0;
    index_[d - 1] += 1;
  }
  return len;
}

namespace {
// dst = src over an nd shape, run by run: run(src, src_stride, dst, dst_stride, n) per run along
// the coalesced last dim, in parallel.
template <class Run>
void copy_runs(const Strided& dst, const Strided& src, Run&& run) {
  int64_t n = dst.numel();
  if (n == 0) return;
  EMBER_ASSERT(dst.sizes.size() == src.sizes.size(), "copy: rank mismatch");
  DimVector sizes = dst.sizes, ds = dst.strides, ss = src.strides;
  DimVector* st[2] = {&ds, &ss};
  coalesce(sizes, st, 2);
  size_t dsz = element_size(dst.dtype), ssz = element_size(src.dtype);
  int64_t grain = 32768;
  parallel_for(n, grain, [&](int64_t begin, int64_t end) {
    NdCursor cur(sizes, st, 2, begin);
    int64_t off[2];
    int64_t left = end - begin;
    while (left > 0) {
      int64_t len = cur.next(left, off);
      int64_t s_inner = sizes.empty() ? 0 : ss.back(), d_inner = sizes.empty() ? 0 : ds.back();
      run(src.bytes() + off[1] * static_cast<int64_t>(ssz), s_inner, dst.bytes() + off[0] * static_cast<int64_t>(dsz),
          d_inner, len);
      left -= len;
    }
  });
}
}  // namespace

void copy(const Strided& dst, const Strided& src) {
  copy_runs(dst, src, [&](const char* s, int64_t s_inner, char* d, int64_t d_inner, int64_t len) {
    convert(s, src.dtype, s_inner, d, dst.dtype, d_inner, len);
  });
}

void round_run(const void* src, DType src_dtype, int64_t src_stride, void* dst, DType dst_dtype, int64_t dst_stride,
               int64_t n, DType compute) {
  if (src_dtype == DType::Float32 && dst_dtype == DType::Float32 && src_stride == 1 && dst_stride == 1 &&
      cpu_info().detected >= Isa::Avx2) {
    round_floats(static_cast<const float*>(src), static_cast<float*>(dst), n, compute);
    return;
  }
  constexpr int64_t kChunk = 2048;  // through a compute-typed buffer in L1
  alignas(64) uint16_t tmp[kChunk];
  const int64_t ssz = static_cast<int64_t>(element_size(src_dtype)), dsz = static_cast<int64_t>(element_size(dst_dtype));
  for (int64_t j = 0; j < n; j += kChunk) {
    const int64_t len = std::min(kChunk, n - j);
    convert(static_cast<const char*>(src) + j * src_stride * ssz, src_dtype, src_stride, tmp, compute, 1, len);
    convert(tmp, compute, 1, static_cast<char*>(dst) + j * dst_stride * dsz, dst_dtype, dst_stride, len);
  }
}

void copy_rounded(const Strided& dst, const Strided& src, DType compute) {
  EMBER_ASSERT(compute == DType::BFloat16 || compute == DType::Float16, "copy_rounded: compute must be bf16 or f16");
  copy_runs(dst, src, [&](const char* s, int64_t s_inner, char* d, int64_t d_inner, int64_t len) {
    round_run(s, src.dtype, s_inner, d, dst.dtype, d_inner, len, compute);
  });
}

void fill(const Strided& dst, double value) {
  double v = value;
  copy(dst, Strided::broadcast_value(&v, DType::Float64, dst.sizes));
}

void fill_int(const Strided& dst, int64_t value) {
  int64_t v = value;
  copy(dst, Strided::broadcast_value(&v, DType::Int64, dst.sizes));
}

}  // namespace cpu
}  // namespace ember
