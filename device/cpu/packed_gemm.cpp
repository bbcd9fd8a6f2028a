// ember's packed fp32 GEMM for 16-bit operands on AVX2 (see packed_gemm.h). The loop nest is the
// usual one (Goto, BLIS): N in blocks of nc (B block in L3), K in blocks of kc (one kc x 16 strip
// of B in L1), M in blocks of mc (the mc x kc block of A in L2), then 6 x 16 tiles.
//
// Measured in the LLaMA MLP training step (512 tokens, 1024 x 2816: nine GEMMs) under
// ONEDNN_MAX_CPU_ISA=AVX2 on the Xeon: the nine took 143.6 ms here on bf16 operands (f32 weights
// rounded while packed) against 144.5 ms for oneDNN's fp32 GEMM on fp32 operands; staging fp32
// copies for oneDNN cost ~10 ms more, a separate pass over memory per operand. Prefetching C
// tiles and 8-wide loads and stores for the 6-row strips took the nine from 153 ms to 143.6 ms.
#include "ember/device/cpu/packed_gemm.h"

#include <immintrin.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "ember/device/cpu/isa.h"
#include "ember/core/error.h"
#include "ember/core/half.h"

namespace ember {
namespace cpu {
namespace {

constexpr int MR = 6, NR = 16;

struct Blocking {
  int64_t kc, mc, nc;
};

// kc: a kc x 16 fp32 strip of B takes 2/3 of L1. mc: the mc x kc block of A takes half of L2.
// nc: the kc x nc block of B takes 4 MiB (it is read from L3).
Blocking blocking() {
  static const Blocking b = [] {
    long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l1 <= 0) l1 = 32 << 10;
    if (l2 <= 0) l2 = 512 << 10;
    Blocking r;
    r.kc = std::clamp<int64_t>(l1 * 2 / 3 / (NR * 4) / 16 * 16, 128, 512);
    r.mc = std::clamp<int64_t>(l2 / 2 / (r.kc * 4) / MR * MR, 8 * MR, 40 * MR);
    r.nc = std::max<int64_t>(NR, (int64_t(4) << 20) / (r.kc * 4) / NR * NR);
    return r;
  }();
  return b;
}

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
int64_t align64(int64_t floats) { return round_up(floats, 16); }

// How the work and the scratch are cut for `parts` parts.
struct Plan {
  bool split_n = true;  // parts take ranges of columns (else of rows)
  int64_t range = 0;    // columns (or rows) per part, a multiple of NR (or MR)
  int64_t kc = 0, mc = 0, nc = 0;
  bool direct = false;    // fp32 C, unrounded, unit column stride: tiles accumulate in place
  bool partials = false;  // C takes fp32 partial sums across K blocks in the scratch
  int64_t a_floats = 0, b_floats = 0, c_floats = 0, c_ld = 0;
  int64_t part_floats() const { return a_floats + b_floats + c_floats; }
};

Plan plan_of(const Matrix& a, const Matrix& b, const Matrix& c, int parts, DType compute) {
  const Blocking bl = blocking();
  const int64_t M = a.rows, K = a.cols, N = b.cols;
  Plan p;
  p.split_n = M <= N;  // each part packs all of the other operand: duplicate the smaller one
  p.range = p.split_n ? round_up((N + parts - 1) / parts, NR) : round_up((M + parts - 1) / parts, MR);
  p.kc = std::min(K, bl.kc);
  const int64_t rows = p.split_n ? M : p.range, cols = p.split_n ? p.range : N;
  p.mc = std::min(bl.mc, round_up(rows, MR));
  p.nc = std::min(bl.nc, round_up(cols, NR));
  p.direct = compute == DType::Float32 && c.dtype == DType::Float32 && c.col_stride == 1;
  p.partials = !p.direct && K > p.kc;
  p.a_floats = align64(p.mc * p.kc + 2);  // + 2: the 6-lane strips' 8-float stores
  p.b_floats = align64(p.kc * p.nc);
  p.c_ld = p.nc;
  p.c_floats = p.partials ? align64(round_up(rows, MR) * p.nc) : 0;
  return p;
}

}  // namespace
}  // namespace cpu
}  // namespace ember

// The kernels below need AVX2, FMA and F16C. A build for an older baseline compiles just them
// for AVX2 (only called after cpu_has(Isa::Avx2)); every header is included above, so no inline
// function shared with the rest of the library is compiled for AVX2 here.
#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#define EMBER_PACKED_PUSHED
#endif

namespace ember {
namespace cpu {
namespace {

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

// ---------------------------------------------------------------- the 6 x 16 kernel

// The 6 rows of 16 floats of a tile (each may span two cache lines).
inline void prefetch_tile(const float* c, int64_t ldc) {
  for (int r = 0; r < MR; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + NR - 1), _MM_HINT_T0);
  }
}

// c[6 x 16] (+)= sum over k of a[k][0..6) (x) b[k][0..16), a and b packed, c with row stride ldc.
template <bool Accumulate>
void kernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc) {
  if (Accumulate) prefetch_tile(c, ldc);  // cold by now: in flight while the k loop runs
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps(), c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps(), c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps(), c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; ++k, a += MR, b += NR) {
    const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
    __m256 x = _mm256_broadcast_ss(a);
    c00 = _mm256_fmadd_ps(x, b0, c00), c01 = _mm256_fmadd_ps(x, b1, c01);
    x = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(x, b0, c10), c11 = _mm256_fmadd_ps(x, b1, c11);
    x = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(x, b0, c20), c21 = _mm256_fmadd_ps(x, b1, c21);
    x = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(x, b0, c30), c31 = _mm256_fmadd_ps(x, b1, c31);
    x = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(x, b0, c40), c41 = _mm256_fmadd_ps(x, b1, c41);
    x = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(x, b0, c50), c51 = _mm256_fmadd_ps(x, b1, c51);
  }
  auto put = [&](float* p, __m256 v0, __m256 v1) {
    if (Accumulate) {
      v0 = _mm256_add_ps(v0, _mm256_loadu_ps(p));
      v1 = _mm256_add_ps(v1, _mm256_loadu_ps(p + 8));
    }
    _mm256_storeu_ps(p, v0);
    _mm256_storeu_ps(p + 8, v1);
  };
  put(c, c00, c01);
  put(c + ldc, c10, c11);
  put(c + 2 * ldc, c20, c21);
  put(c + 3 * ldc, c30, c31);
  put(c + 4 * ldc, c40, c41);
  put(c + 5 * ldc, c50, c51);
}

// ---------------------------------------------------------------- packing

void transpose8(__m256 r[8]) {
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

using PackA = void (*)(const void*, int64_t, int64_t, int64_t, int64_t, float*);
using PackB = void (*)(const void*, int64_t, int64_t, int64_t, int64_t, float*);
using Store = void (*)(const float*, const float*, int64_t, void*, int64_t, int64_t, int64_t, int64_t);

template <class R>
PackA pack_a_of(DType dt) {
  return dt == DType::Float32 ? &pack_a<float, R> : dt == DType::BFloat16 ? &pack_a<BFloat16, R> : &pack_a<Half, R>;
}
template <class R>
PackB pack_b_of(DType dt) {
  return dt == DType::Float32 ? &pack_b<float, R> : dt == DType::BFloat16 ? &pack_b<BFloat16, R> : &pack_b<Half, R>;
}
template <class R>
Store store_of(DType dt) {
  return dt == DType::Float32    ? &store_tile<float, R>
         : dt == DType::BFloat16 ? &store_tile<BFloat16, R>
                                 : &store_tile<Half, R>;
}

struct Kernels {
  PackA pack_a;
  PackB pack_b;
  Store store;
};

template <class R>
Kernels kernels_for(DType a, DType b, DType c) {
  return {pack_a_of<R>(a), pack_b_of<R>(b), store_of<R>(c)};
}

// ---------------------------------------------------------------- one part

const char* at(const Matrix& m, int64_t z, int64_t i, int64_t j) {
  return static_cast<const char*>(m.data) +
         (z * m.batch_stride + i * m.row_stride + j * m.col_stride) * static_cast<int64_t>(element_size(m.dtype));
}

void run_part(const Plan& pl, const Kernels& kn, int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c,
              int64_t m0, int64_t m1, int64_t n0, int64_t n1, float* scratch) {
  float* pa = scratch;
  float* pb = pa + pl.a_floats;
  float* pc_buf = pb + pl.b_floats;
  const int64_t K = a.cols;
  alignas(32) float tile[MR * NR];
  for (int64_t z = 0; z < batch; ++z) {
    for (int64_t jc = n0; jc < n1; jc += pl.nc) {
      const int64_t nc = std::min(pl.nc, n1 - jc);
      for (int64_t kb = 0; kb < K; kb += pl.kc) {
        const int64_t kc = std::min(pl.kc, K - kb);
        const bool first = kb == 0, last = kb + kc == K;
        kn.pack_b(at(b, z, kb, jc), b.row_stride, b.col_stride, kc, nc, pb);
        for (int64_t ic = m0; ic < m1; ic += pl.mc) {
          const int64_t mc = std::min(pl.mc, m1 - ic);
          kn.pack_a(at(a, z, ic, kb), a.row_stride, a.col_stride, mc, kc, pa);
          for (int64_t jr = 0; jr < nc; jr += NR) {
            const int64_t nr = std::min<int64_t>(NR, nc - jr);
            for (int64_t ir = 0; ir < mc; ir += MR) {
              const int64_t mr = std::min<int64_t>(MR, mc - ir);
              const float* ap = pa + ir * kc;
              const float* bp = pb + jr * kc;
              const int64_t row = ic + ir, col = jc + jr;
              if (pl.direct) {
                float* cp = reinterpret_cast<float*>(const_cast<char*>(at(c, z, row, col)));
                if (mr == MR && nr == NR) {
                  first ? kernel<false>(kc, ap, bp, cp, c.row_stride) : kernel<true>(kc, ap, bp, cp, c.row_stride);
                } else {
                  kernel<false>(kc, ap, bp, tile, NR);
                  for (int64_t r = 0; r < mr; ++r)
                    for (int64_t j = 0; j < nr; ++j)
                      cp[r * c.row_stride + j] = tile[r * NR + j] + (first ? 0.0f : cp[r * c.row_stride + j]);
                }
                continue;
              }
              // Partial sums live in the scratch (rows from m0, columns from jc); the last K block
              // adds them and rounds once into C.
              float* part = pl.partials ? pc_buf + (row - m0) * pl.c_ld + jr : nullptr;
              if (!last) {
                first ? kernel<false>(kc, ap, bp, part, pl.c_ld) : kernel<true>(kc, ap, bp, part, pl.c_ld);
              } else {
                if (!first) prefetch_tile(part, pl.c_ld);
                kernel<false>(kc, ap, bp, tile, NR);
                kn.store(tile, first ? nullptr : part, pl.c_ld, const_cast<char*>(at(c, z, row, col)), c.row_stride,
                         c.col_stride, mr, nr);
              }
            }
          }
        }
      }
    }
  }
}

void run(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, float* scratch, int parts, DType compute) {
  const Plan pl = plan_of(a, b, c, parts, compute);
  const Kernels kn = compute == DType::BFloat16  ? kernels_for<BFloat16>(a.dtype, b.dtype, c.dtype)
                     : compute == DType::Float16 ? kernels_for<Half>(a.dtype, b.dtype, c.dtype)
                                                 : kernels_for<float>(a.dtype, b.dtype, c.dtype);
  const int64_t extent = pl.split_n ? b.cols : a.rows;
  const int used = static_cast<int>(std::min<int64_t>(parts, (extent + pl.range - 1) / pl.range));
  auto part = [&](int t) {
    const int64_t lo = t * pl.range, hi = std::min(extent, lo + pl.range);
    float* s = scratch + t * pl.part_floats();
    if (pl.split_n)
      run_part(pl, kn, batch, a, b, c, 0, a.rows, lo, hi, s);
    else
      run_part(pl, kn, batch, a, b, c, lo, hi, 0, b.cols, s);
  };
  if (used <= 1) {
    part(0);
    return;
  }
#pragma omp parallel num_threads(used)
  part(omp_get_thread_num());
}

}  // namespace
}  // namespace cpu
}  // namespace ember

#ifdef EMBER_PACKED_PUSHED
#pragma GCC pop_options
#endif

namespace ember {
namespace cpu {

bool packed_gemm_enabled() { return cpu_info().effective() == Isa::Avx2; }

size_t packed_scratch_bytes(const Matrix& a, const Matrix& b, const Matrix& c, int parts, DType compute) {
  // Every count is bounded by an operand's element count (or by the blocking), so none overflows.
  return static_cast<size_t>(parts) * static_cast<size_t>(plan_of(a, b, c, parts, compute).part_floats()) *
         sizeof(float);
}

void packed_gemm(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, void* scratch, int parts,
                 DType compute) {
  EMBER_ASSERT(cpu_info().detected >= Isa::Avx2, "packed_gemm: needs AVX2, FMA and F16C");
  EMBER_ASSERT(reinterpret_cast<uintptr_t>(scratch) % 64 == 0, "packed_gemm: scratch not 64-byte aligned");
  EMBER_ASSERT(compute == DType::Float32 || compute == DType::BFloat16 || compute == DType::Float16,
               "packed_gemm: compute dtype ", dtype_name(compute));
  for (const Matrix* m : {&a, &b, &c})
    EMBER_ASSERT(m->dtype == compute || m->dtype == DType::Float32, "packed_gemm: operand dtype ", dtype_name(m->dtype),
                 " with compute dtype ", dtype_name(compute));
  run(batch, a, b, c, static_cast<float*>(scratch), parts, compute);
}

}  // namespace cpu
}  // namespace ember
