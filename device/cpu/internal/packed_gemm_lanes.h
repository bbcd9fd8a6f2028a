// Internal to device/cpu/packed_gemm.cpp (not installed): the packed GEMM's data movement on AVX2:
// 8-lane loads and stores with rounding to bf16/fp16 and back, and the packing of A and B blocks
// into the kernel's strips. Include it after every other header: the code below is compiled for
// AVX2, FMA and F16C (a build for an older baseline switches them on here, for this code only), so
// no inline function shared with the rest of the library may be first seen below.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "ember/core/half.h"

namespace ember {
namespace cpu {
namespace packed {
// The kernel's tile: MR rows of A by NR columns of B.
constexpr int MR = 6, NR = 16;
}  // namespace packed
}  // namespace cpu
}  // namespace ember

#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#define EMBER_PACKED_LANES_PUSHED
#endif

namespace ember {
namespace cpu {
namespace packed {

// ---------------------------------------------------------------- loads and stores, 8 lanes

template <class T>
inline __m256 load8(const T* p);
template <>
inline __m256 load8<float>(const float* p) {
  return _mm256_loadu_ps(p);
}
template <>
inline __m256 load8<BFloat16>(const BFloat16* p) {
  __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
template <>
inline __m256 load8<Half>(const Half* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// The bf16 bit patterns of v in the low halves of 32-bit lanes: nearest even, as BFloat16(float)
// rounds; NaN stays NaN (quiet).
inline __m256i bf16_bits(__m256 v) {
  const __m256i x = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
  const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb), 16);
  const __m256i qnan = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
  const __m256i is_nan =
      _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
  return _mm256_blendv_epi8(r, qnan, is_nan);
}
inline __m128i f16_bits(__m256 v) { return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }

// v rounded to R's precision (R = float: unchanged), still as fp32.
template <class R>
inline __m256 round8(__m256 v) {
  if constexpr (std::is_same<R, BFloat16>::value) return _mm256_castsi256_ps(_mm256_slli_epi32(bf16_bits(v), 16));
  if constexpr (std::is_same<R, Half>::value) return _mm256_cvtph_ps(f16_bits(v));
  return v;
}
template <class R>
inline float round1(float v) {
  if constexpr (std::is_same<R, float>::value) {
    return v;
  } else {
    return static_cast<float>(R(v));
  }
}

// Eight elements of T, as fp32 rounded to R (only fp32 sources are ever rounded: T is R or float).
template <class T, class R>
inline __m256 in8(const T* p) {
  return std::is_same<T, float>::value ? round8<R>(load8(p)) : load8(p);
}
template <class T, class R>
inline float in1(const T* p) {
  return round1<R>(static_cast<float>(*p));
}

// Eight fp32 values rounded to R and stored as T (T is R or float).
template <class T, class R>
inline void out8(T* p, __m256 v) {
  if constexpr (std::is_same<T, BFloat16>::value) {
    const __m256i r = bf16_bits(v);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1)));
  } else if constexpr (std::is_same<T, Half>::value) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), f16_bits(v));
  } else {
    _mm256_storeu_ps(p, round8<R>(v));
  }
}
template <class T, class R>
inline void out1(T* p, float v) {
  *p = T(round1<R>(v));
}

// ---------------------------------------------------------------- packing

inline void transpose8(__m256 r[8]) {
  __m256 t[8], s[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    s[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    s[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    s[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    s[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x31);
  }
}

// A strip of W lanes (rows of A, or columns of B) over kc steps of K, as fp32 rounded to R:
// out[k * W + l] = src[l * ls + k * ks] for l < lanes, 0 for the padding lanes. over_read: the
// 8 lanes from the strip's first are inside the operand (6-lane strips may load 8).
template <int W, class T, class R>
void pack_strip(const T* src, int64_t ls, int64_t ks, int64_t lanes, int64_t kc, float* out, bool over_read = false) {
  if (lanes == W && ls == 1) {  // each step's lanes are contiguous
    for (int64_t k = 0; k < kc; ++k, out += W) {
      const T* s = src + k * ks;
      if (W == NR) {
        _mm256_store_ps(out, in8<T, R>(s));
        _mm256_store_ps(out + 8, in8<T, R>(s + 8));
      } else if (over_read) {  // 8 lanes readable: one load, a store 2 floats long (as above)
        _mm256_storeu_ps(out, in8<T, R>(s));
      } else {
        for (int l = 0; l < W; ++l) out[l] = in1<T, R>(s + l);
      }
    }
    return;
  }
  if (lanes == W && ks == 1) {  // each lane's steps are contiguous: 8 x 8 transposes
    int64_t k = 0;
    for (; k + 8 <= kc; k += 8) {
      for (int l0 = 0; l0 < W; l0 += 8) {
        const int nl = std::min(8, W - l0);
        __m256 r[8];
        for (int l = 0; l < 8; ++l) r[l] = l < nl ? in8<T, R>(src + (l0 + l) * ls + k) : _mm256_setzero_ps();
        transpose8(r);
        // With W = 6 each 8-float store runs 2 floats into the next step, which the next store
        // (or the tail below, or the next strip) overwrites; the buffer has 2 floats of slack.
        for (int j = 0; j < 8; ++j) _mm256_storeu_ps(out + (k + j) * W + l0, r[j]);
      }
    }
    for (; k < kc; ++k)
      for (int l = 0; l < W; ++l) out[k * W + l] = in1<T, R>(src + l * ls + k);
    return;
  }
  for (int64_t k = 0; k < kc; ++k)
    for (int l = 0; l < W; ++l) out[k * W + l] = l < lanes ? in1<T, R>(src + l * ls + k * ks) : 0.0f;
}

// Rows [0, mc) of a block of A (element (i, k) at a[i * rs + k * cs]) into strips of 6 rows.
template <class T, class R>
void pack_a(const void* a, int64_t rs, int64_t cs, int64_t mc, int64_t kc, float* out) {
  const T* p = static_cast<const T*>(a);
  for (int64_t i = 0; i < mc; i += MR)
    pack_strip<MR, T, R>(p + i * rs, rs, cs, std::min<int64_t>(MR, mc - i), kc, out + i * kc, i + 8 <= mc);
}

// Columns [0, nc) of a block of B (element (k, j) at b[k * rs + j * cs]) into strips of 16.
template <class T, class R>
void pack_b(const void* bv, int64_t rs, int64_t cs, int64_t kc, int64_t nc, float* out) {
  const T* b = static_cast<const T*>(bv);
  const int64_t full = cs == 1 ? nc / NR * NR : 0;
  if (full > 0) {  // rows of B are contiguous: read each row once, across the strips
    for (int64_t k = 0; k < kc; ++k) {
      const T* row = b + k * rs;
      float* o = out + k * NR;
      for (int64_t j = 0; j < full; j += NR, o += NR * kc) {
        _mm256_store_ps(o, in8<T, R>(row + j));
        _mm256_store_ps(o + 8, in8<T, R>(row + j + 8));
      }
    }
  }
  for (int64_t j = full; j < nc; j += NR)
    pack_strip<NR, T, R>(b + j * cs, cs, rs, std::min<int64_t>(NR, nc - j), kc, out + j * kc);
}

// A tile t (fp32, row stride NR), plus partial sums p (row stride p_ld) when given, rounded to R
// into C (element (i, j) at c[i * rs + j * cs]) for i < mr, j < nr.
template <class T, class R>
void store_tile(const float* t, const float* p, int64_t p_ld, void* cv, int64_t rs, int64_t cs, int64_t mr,
                int64_t nr) {
  T* c = static_cast<T*>(cv);
  for (int64_t r = 0; r < mr; ++r) {
    const float* tr = t + r * NR;
    const float* pr = p ? p + r * p_ld : nullptr;
    T* cr = c + r * rs;
    if (nr == NR && cs == 1) {
      __m256 v0 = _mm256_load_ps(tr), v1 = _mm256_load_ps(tr + 8);
      if (pr) {
        v0 = _mm256_add_ps(v0, _mm256_loadu_ps(pr));
        v1 = _mm256_add_ps(v1, _mm256_loadu_ps(pr + 8));
      }
      out8<T, R>(cr, v0);
      out8<T, R>(cr + 8, v1);
    } else {
      for (int64_t j = 0; j < nr; ++j) out1<T, R>(cr + j * cs, tr[j] + (pr ? pr[j] : 0.0f));
    }
  }
}

}  // namespace packed
}  // namespace cpu
}  // namespace ember

#ifdef EMBER_PACKED_LANES_PUSHED
#pragma GCC pop_options
#undef EMBER_PACKED_LANES_PUSHED
#endif
