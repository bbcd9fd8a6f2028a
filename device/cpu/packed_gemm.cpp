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
#include "ember/device/cpu/internal/packed_gemm_lanes.h"  // last: see the note there

namespace ember {
namespace cpu {
namespace {

using packed::MR;
using packed::NR;

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
using namespace packed;

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

template <class R>
void round_floats_t(const float* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {  // two vectors per step: the loads of the second overlap the first's work
    const __m256 v0 = _mm256_loadu_ps(src + i), v1 = _mm256_loadu_ps(src + i + 8);
    _mm256_storeu_ps(dst + i, round8<R>(v0));
    _mm256_storeu_ps(dst + i + 8, round8<R>(v1));
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, round8<R>(_mm256_loadu_ps(src + i)));
  for (; i < n; ++i) dst[i] = round1<R>(src[i]);
}

}  // namespace

void round_floats(const float* src, float* dst, int64_t n, DType compute) {
  EMBER_ASSERT(compute == DType::BFloat16 || compute == DType::Float16, "round_floats: compute dtype ",
               dtype_name(compute));
  if (compute == DType::BFloat16) {
    round_floats_t<BFloat16>(src, dst, n);
  } else {
    round_floats_t<Half>(src, dst, n);
  }
}

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
