// The staged GEMM path (internal/staged_gemm.h): fp32 copies of the operands no GEMM takes as they
// are, B once and A and C a row panel at a time, rounded on the way for gemm_rounded.
#include "ember/device/cpu/internal/staged_gemm.h"

#include <omp.h>

#include <algorithm>
#include <atomic>

#include "ember/core/error.h"
#include "ember/device/cpu/strided.h"

namespace ember {
namespace cpu {
namespace {

// Staged path: A's and C's fp32 row panels together take about this many bytes, at least
// kMinPanelRows rows. Smaller panels save scratch but cost GEMM efficiency: oneDNN's fp32 GEMM on
// AVX2 ran at 156 GFLOP/s on 128-row panels of a 2048^3 problem against 192 on 512-row ones (and
// 203 unstaged), bench/ BM_matmul/cpu/bf16/2048 under EMBER_MAX_CPU_ISA=avx2; with 8 MiB panels
// the bf16 LLaMA MLP step at 2048 tokens (AVX-512, staged) took 560 ms against 414 in fp32, with
// 64 MiB 413-425 against 385-390 (BM_llama_mlp_step/cpu/bf16/2048, one process each).
constexpr int64_t kPanelBytes = int64_t(64) << 20;
std::atomic<int64_t> g_panel_bytes{kPanelBytes};  // set_staged_panel_bytes (tests)
constexpr int64_t kMinPanelRows = 256;
// Conversions below this many elements run on one thread.
constexpr int64_t kParallelConvert = 1 << 16;

// An operand the staged path reads in place: fp32 with a unit stride, and already rounded when
// the path rounds (Matrix::rounded).
bool read_in_place(const Matrix& x, DType round_to) {
  return x.dtype == DType::Float32 && unit_stride(x) && (round_to == DType::Float32 || x.rounded);
}

// The staged path's buffers, in fp32 elements: all of B (one batch entry), one panel of A, one
// panel of C (none when C is fp32 with a unit column stride: the GEMM writes it in place; none
// for an A or B read in place). Every count is at most an existing operand's element count, so
// none overflows.
struct Panels {
  int64_t rows = 0;  // rows of A and C per panel
  int64_t b_elems = 0, a_elems = 0, c_elems = 0;
  bool c_direct = false;
  int64_t total() const {  // each count fits (an operand's), their sum is checked
    return checked_add(checked_add(b_elems, a_elems, "matmul staging buffer"), c_elems, "matmul staging buffer");
  }
};

Panels panels_of(const Matrix& a, const Matrix& b, const Matrix& c, DType round_to) {
  Panels p;
  const int64_t M = a.rows, K = a.cols, N = b.cols;
  int64_t rows = g_panel_bytes.load() / (static_cast<int64_t>(sizeof(float)) * (K + N));
  rows = std::max(kMinPanelRows, rows / 16 * 16);
  p.rows = rows + rows / 2 >= M ? M : rows;  // one panel unless that leaves a large remainder
  p.c_direct = c.dtype == DType::Float32 && c.col_stride == 1;
  p.b_elems = read_in_place(b, round_to) ? 0 : K * N;
  p.a_elems = read_in_place(a, round_to) ? 0 : p.rows * K;
  p.c_elems = p.c_direct ? 0 : p.rows * N;
  return p;
}

}  // namespace

size_t staged_bytes(const Matrix& a, const Matrix& b, const Matrix& c, DType round_to) {
  return checked_bytes(panels_of(a, b, c, round_to).total(), sizeof(float), "matmul staging buffer");
}

namespace {

Strided view2d(void* data, DType dt, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  return Strided(data, dt, DimVector{rows, cols}, DimVector{rs, cs});
}

// dst = src for 2-D views, split over rows on `threads` threads of the pool this thread has
// reserved (copy() alone would run on one thread here: the pool is taken).
void copy_rows(const Strided& dst, const Strided& src, int threads) {
  const int64_t rows = dst.sizes[0], cols = dst.sizes[1];
  int nt = rows * cols < kParallelConvert ? 1 : static_cast<int>(std::min<int64_t>(threads, rows));
  if (nt <= 1) {
    copy(dst, src);
    return;
  }
  const int64_t dsz = static_cast<int64_t>(element_size(dst.dtype)),
                ssz = static_cast<int64_t>(element_size(src.dtype));
#pragma omp parallel num_threads(nt)
  {
    const int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
    const int64_t r0 = rows * t / team, r1 = rows * (t + 1) / team;
    if (r0 < r1) {
      copy(view2d(dst.bytes() + r0 * dst.strides[0] * dsz, dst.dtype, r1 - r0, cols, dst.strides[0], dst.strides[1]),
           view2d(src.bytes() + r0 * src.strides[0] * ssz, src.dtype, r1 - r0, cols, src.strides[0], src.strides[1]));
    }
  }
}

// dst (fp32, src's shape, rows ld apart, unit columns) = src's 2-D strided view rounded to
// `compute` (bf16 or f16), in one pass per row (round_run); dst may be src itself (rounding in
// place). Split over rows on `threads`.
void round_copy(float* dst, int64_t ld, const Strided& src, DType compute, int threads) {
  const int64_t rows = src.sizes[0], cols = src.sizes[1];
  const int64_t ssz = static_cast<int64_t>(element_size(src.dtype));
  const int nt = rows * cols < kParallelConvert ? 1 : static_cast<int>(std::min<int64_t>(threads, rows));
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    const int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
    for (int64_t r = rows * t / team, r1 = rows * (t + 1) / team; r < r1; ++r)
      round_run(src.bytes() + r * src.strides[0] * ssz, src.dtype, src.strides[1], dst + r * ld, DType::Float32, 1, cols,
                compute);
  }
}

// An fp32 matrix (rows x cols, rows ld apart) rounded in place to `compute`.
void round_in_place(float* m, int64_t rows, int64_t cols, int64_t ld, DType compute, int threads) {
  round_copy(m, ld, view2d(m, DType::Float32, rows, cols, ld, 1), compute, threads);
}

// x's dense fp32 copy in buf (every element rounded to `round_to` when that is bf16 or f16), or x
// itself where it is read in place. A transposed operand (unit row stride) keeps its column-major
// layout, so the conversion reads memory in order instead of gathering columns.
Matrix stage(const Matrix& x, float* buf, int threads, DType round_to) {
  if (read_in_place(x, round_to)) return x;
  const bool col_major = x.row_stride == 1 && x.col_stride != 1;
  const int64_t outer = col_major ? x.cols : x.rows, inner = col_major ? x.rows : x.cols;
  const Strided src =
      view2d(x.data, x.dtype, outer, inner, col_major ? x.col_stride : x.row_stride, col_major ? 1 : x.col_stride);
  // An operand already in round_to needs no rounding: widening it is exact.
  if (round_to == DType::Float32 || x.dtype == round_to) {
    copy_rows(view2d(buf, DType::Float32, outer, inner, inner, 1), src, threads);
  } else {
    round_copy(buf, inner, src, round_to, threads);
  }
  Matrix m = x;
  m.data = buf;
  m.dtype = DType::Float32;
  m.row_stride = col_major ? 1 : x.cols;
  m.col_stride = col_major ? x.rows : 1;
  m.batch_stride = 0;
  return m;
}

// Batch entry i, rows [r0, r0 + n) of x.
Matrix sub(const Matrix& x, int64_t i, int64_t r0, int64_t n) {
  Matrix m = x;
  m.data = static_cast<char*>(x.data) +
           (i * x.batch_stride + r0 * x.row_stride) * static_cast<int64_t>(element_size(x.dtype));
  m.rows = n;
  m.batch_stride = 0;
  return m;
}

// The staged path: B converted once per batch entry (once in all when broadcast), then A and C
// a row panel at a time around an fp32 GEMM. With round_to bf16 or f16, every input element is
// rounded to it as it is staged and every output before it is stored (gemm_rounded).
}  // namespace

void staged_gemm(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, float* buf, bool onednn, int threads,
                 DType round_to) {
  const Panels p = panels_of(a, b, c, round_to);
  float* bbuf = buf;
  float* abuf = buf + p.b_elems;
  float* cbuf = abuf + p.a_elems;
  const int64_t M = a.rows, N = b.cols;
  Matrix sb;
  for (int64_t i = 0; i < batch; ++i) {
    if (i == 0 || b.batch_stride != 0) sb = stage(sub(b, i, 0, b.rows), bbuf, threads, round_to);
    for (int64_t r0 = 0; r0 < M; r0 += p.rows) {
      const int64_t n = std::min(p.rows, M - r0);
      Matrix sa = stage(sub(a, i, r0, n), abuf, threads, round_to);
      Matrix cp = sub(c, i, r0, n);
      Matrix cm = cp;
      if (!p.c_direct) {
        cm.data = cbuf;
        cm.dtype = DType::Float32;
        cm.row_stride = N;
        cm.col_stride = 1;
      }
      fp32_gemm(sa, sb, cm, onednn, threads);
      // fp32 results are rounded here; a 16-bit C is rounded by its conversion below.
      if (round_to != DType::Float32 && (p.c_direct || c.dtype == DType::Float32)) {
        round_in_place(static_cast<float*>(cm.data), n, N, cm.row_stride, round_to, threads);
      }
      if (!p.c_direct)
        copy_rows(view2d(cp.data, cp.dtype, n, N, cp.row_stride, cp.col_stride),
                  view2d(cbuf, DType::Float32, n, N, N, 1), threads);
    }
  }
}

int64_t set_staged_panel_bytes(int64_t bytes) {
  EMBER_CHECK_VALUE(bytes > 0, "set_staged_panel_bytes: expected a positive size, got ", bytes);
  return g_panel_bytes.exchange(bytes);
}

}  // namespace cpu
}  // namespace ember
