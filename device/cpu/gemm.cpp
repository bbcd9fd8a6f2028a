// GEMM engines. The choices rest on measurements on the Xeon (AMX), Zen 5 and Zen 3 machines
// (README, "Benchmarks"): oneDNN beats Eigen for f32 above tiny sizes and is the only AMX /
// AVX512-BF16 path for bf16; it has no f16 and no f64, and no bf16 matmul at all below AVX-512
// ("could not create a primitive descriptor iterator"); a cached primitive costs ~0.5 us a call
// against Eigen's ~0.17 us.
#include "ember/device/cpu/eigen_util.h"  // first: see the note there

#include "ember/device/cpu/gemm.h"
#include "ember/device/cpu/internal/onednn_gemm.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "ember/device/allocator.h"
#include "ember/device/cpu/isa.h"
#include "ember/device/cpu/packed_gemm.h"
#include "ember/device/cpu/strided.h"
#include "ember/device/parallel.h"
#include "ember/core/error.h"


namespace ember {
namespace cpu {
namespace {

// Problems up to this many multiply-adds run on Eigen, single threaded (lower fixed cost).
constexpr int64_t kTinyMacs = 48 * 48 * 48;
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

enum class Route { Eigen, OneDnn, Packed, StagedOneDnn, StagedEigen };

template <class T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using DynStride = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using CMap = Eigen::Map<const RowMat<T>, 0, DynStride>;
template <class T>
using MMap = Eigen::Map<RowMat<T>, 0, DynStride>;

// Eigen's thread count is one global: GEMMs on several threads at once (NPU stream workers, host
// threads) take turns setting it and running.
std::mutex& eigen_mutex() {
  static std::mutex m;
  return m;
}

template <class T>
void eigen_gemm(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, int threads) {
  std::lock_guard<std::mutex> lock(eigen_mutex());
  Eigen::setNbThreads(threads);
  for (int64_t i = 0; i < batch; ++i) {
    CMap<T> A(static_cast<const T*>(a.data) + i * a.batch_stride, a.rows, a.cols, DynStride(a.row_stride, a.col_stride));
    CMap<T> B(static_cast<const T*>(b.data) + i * b.batch_stride, b.rows, b.cols, DynStride(b.row_stride, b.col_stride));
    MMap<T> C(static_cast<T*>(c.data) + i * c.batch_stride, c.rows, c.cols, DynStride(c.row_stride, c.col_stride));
    C.noalias() = A * B;
  }
}

bool unit_stride(const Matrix& m) { return m.col_stride == 1 || m.row_stride == 1; }
bool is_big(const Matrix& a, const Matrix& b) { return a.rows * b.cols * a.cols > kTinyMacs; }

// Staging a bf16 problem through fp32 converts every element of A, B and C (about 6 bytes each
// way), which costs more than slower dot products lose when the problem is memory-bound:
// 1 / (1/M + 1/N + 1/K) below about 3x the FMA FLOP rate over the bandwidth (~24 on the Xeon
// guests without AMX). There the bf16 units run it even where they do not pay for compute: the
// NPU's bf16 convolution step (im2col GEMMs with K = 27, N = 64) took 74-79 ms staged, 44-61 on them.
constexpr double kStageIntensity = 32;
bool bf16_units_here(const Matrix& a, const Matrix& b) {
  if (!bf16_units_allowed() || !onednn_bf16_probe()) return false;
  if (bf16_units_pay()) return true;
  const double m = static_cast<double>(a.rows), k = static_cast<double>(a.cols), n = static_cast<double>(b.cols);
  return 1.0 / (1.0 / m + 1.0 / n + 1.0 / k) < kStageIntensity;
}

// The one place the engine is chosen (gemm, gemm_scratch_bytes and gemm_path all ask here).
Route route_of(const Matrix& a, const Matrix& b, const Matrix& c) {
  const DType dt = a.dtype;
  if (dt == DType::Float64 || dt == DType::Int64 || dt == DType::Int32) return Route::Eigen;
  const bool big = is_big(a, b);
  const bool units = unit_stride(a) && unit_stride(b) && unit_stride(c);
  if (onednn_available() && big && units && (dt == DType::Float32 || (dt == DType::BFloat16 && bf16_units_here(a, b))))
    return Route::OneDnn;
  if ((dt == DType::BFloat16 || dt == DType::Float16) && packed_gemm_enabled()) return Route::Packed;
  if (dt == DType::Float32 && unit_stride(a) && unit_stride(b)) return Route::Eigen;
  return onednn_available() && big ? Route::StagedOneDnn : Route::StagedEigen;
}

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

size_t staged_bytes(const Matrix& a, const Matrix& b, const Matrix& c, DType round_to) {
  return checked_bytes(panels_of(a, b, c, round_to).total(), sizeof(float), "matmul staging buffer");
}

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
  const int64_t dsz = static_cast<int64_t>(element_size(dst.dtype)), ssz = static_cast<int64_t>(element_size(src.dtype));
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
// `compute` (bf16 or f16), in one pass: rows of contiguous fp32 through round_floats' vector loop,
// other rows a chunk at a time through a compute-typed buffer in L1; either way dst may be src
// itself (rounding in place). Split over rows on `threads`.
void round_copy(float* dst, int64_t ld, const Strided& src, DType compute, int threads) {
  const int64_t rows = src.sizes[0], cols = src.sizes[1];
  const int64_t ssz = static_cast<int64_t>(element_size(src.dtype));
  const int nt = rows * cols < kParallelConvert ? 1 : static_cast<int>(std::min<int64_t>(threads, rows));
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    constexpr int64_t kChunk = 2048;
    alignas(64) uint16_t tmp[kChunk];
    const int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
    for (int64_t r = rows * t / team, r1 = rows * (t + 1) / team; r < r1; ++r) {
      const char* row = src.bytes() + r * src.strides[0] * ssz;
      if (src.dtype == DType::Float32 && src.strides[1] == 1) {  // the common case: one vector pass
        round_floats(reinterpret_cast<const float*>(row), dst + r * ld, cols, compute);
        continue;
      }
      for (int64_t j = 0; j < cols; j += kChunk) {
        const int64_t n = std::min(kChunk, cols - j);
        convert(row + j * src.strides[1] * ssz, src.dtype, src.strides[1], tmp, compute, 1, n);
        convert(tmp, compute, 1, dst + r * ld + j, DType::Float32, 1, n);
      }
    }
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

void fp32_gemm(const Matrix& a, const Matrix& b, const Matrix& c, bool onednn, int threads) {
  if (onednn && onednn_gemm(1, a, b, c)) return;
  eigen_gemm<float>(1, a, b, c, threads);
}

// The staged path: B converted once per batch entry (once in all when broadcast), then A and C
// a row panel at a time around an fp32 GEMM. With round_to bf16 or f16, every input element is
// rounded to it as it is staged and every output before it is stored (gemm_rounded).
void staged_gemm(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, float* buf, bool onednn, int threads,
                 DType round_to = DType::Float32) {
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
        copy_rows(view2d(cp.data, cp.dtype, n, N, cp.row_stride, cp.col_stride), view2d(cbuf, DType::Float32, n, N, N, 1),
                  threads);
    }
  }
}

// The scratch a route needs with `parts` parallel parts (the packed kernel's per-part panels, or
// the staged path's fp32 panels).
size_t scratch_of(Route r, const Matrix& a, const Matrix& b, const Matrix& c, int parts) {
  switch (r) {
    case Route::Eigen:
    case Route::OneDnn: return 0;
    case Route::Packed: return packed_scratch_bytes(a, b, c, parts, a.dtype);
    case Route::StagedOneDnn:
    case Route::StagedEigen: break;
  }
  return staged_bytes(a, b, c, DType::Float32);
}

void fill_zeros(int64_t batch, const Matrix& c) {
  fill(Strided(c.data, c.dtype, DimVector{batch, c.rows, c.cols}, DimVector{c.batch_stride, c.row_stride, c.col_stride}),
       0.0);
}

// A block of the CPU caching allocator: no zero-fill, no page faults on every call.
struct Borrowed {
  Allocator* alloc = nullptr;
  void* p = nullptr;
  size_t n = 0;
  ~Borrowed() {
    if (p) alloc->deallocate(p, n);
  }
};

}  // namespace

int64_t set_staged_panel_bytes(int64_t bytes) {
  EMBER_CHECK_VALUE(bytes > 0, "set_staged_panel_bytes: expected a positive size, got ", bytes);
  return g_panel_bytes.exchange(bytes);
}

bool gemm_native_bf16() { return bf16_units_pay() && onednn_bf16_probe(); }

const char* gemm_path(int64_t, const Matrix& a, const Matrix& b, const Matrix& c) {
  switch (route_of(a, b, c)) {
    case Route::Eigen: return "eigen";
    case Route::OneDnn: return "onednn";
    case Route::Packed:
      return "packed";
    case Route::StagedOneDnn: return "staged_onednn";
    case Route::StagedEigen: return "staged_eigen";
  }
  return "?";
}

void gemm(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, void* scratch, size_t scratch_bytes) {
  EMBER_ASSERT(a.dtype == b.dtype && b.dtype == c.dtype, "gemm: operand dtypes differ");
  EMBER_ASSERT(a.cols == b.rows && c.rows == a.rows && c.cols == b.cols, "gemm: shapes do not agree");
  EMBER_CHECK_DTYPE(a.dtype != DType::Bool, "matmul: not implemented for bool");
  if (batch == 0 || c.rows == 0 || c.cols == 0) return;
  if (a.cols == 0) {  // empty inner dimension: zeros
    fill_zeros(batch, c);
    return;
  }
  Route route = route_of(a, b, c);
  PoolReservation pool;
  const int threads = is_big(a, b) ? pool.threads() : 1;
  switch (route) {
    case Route::Eigen:
      if (a.dtype == DType::Float64) eigen_gemm<double>(batch, a, b, c, threads);
      // Integers in unsigned arithmetic: the same bits as two's complement, wrapping where a
      // signed product or sum would overflow (undefined), as PyTorch's integer matmul wraps.
      if (a.dtype == DType::Int64) eigen_gemm<uint64_t>(batch, a, b, c, threads);
      if (a.dtype == DType::Int32) eigen_gemm<uint32_t>(batch, a, b, c, threads);
      if (a.dtype == DType::Float32) eigen_gemm<float>(batch, a, b, c, threads);
      return;
    case Route::OneDnn:
      if (onednn_gemm(batch, a, b, c)) return;
      scratch = nullptr;  // oneDNN refused this shape: stage, in memory of our own (none was sized)
      route = Route::StagedOneDnn;
      break;
    case Route::Packed:
    case Route::StagedOneDnn:
    case Route::StagedEigen:
      break;
  }
  // As many parts as there are threads and the given scratch has room for.
  int parts = threads;
  auto need = [&] { return scratch_of(route, a, b, c, parts); };
  if (scratch) {
    while (parts > 1 && need() > scratch_bytes) --parts;
    EMBER_ASSERT(need() <= scratch_bytes, "gemm: scratch of ", scratch_bytes, " bytes, ", need(), " needed");
  }
  Borrowed heap;
  if (!scratch) {
    heap.alloc = get_allocator(Device(DeviceType::CPU));
    heap.n = need();
    heap.p = heap.alloc->allocate(heap.n);
    scratch = heap.p;
  }
  if (route == Route::Packed) {
    packed_gemm(batch, a, b, c, scratch, parts, a.dtype);
    return;
  }
  staged_gemm(batch, a, b, c, static_cast<float*>(scratch), route != Route::StagedEigen,
              threads);  // the other routes are big
}

bool gemm_rounded_available() { return cpu_info().detected >= Isa::Avx2; }

namespace {
// gemm_rounded's engine: ember's packed kernel where it is the 16-bit path (AVX2, or no oneDNN);
// with AVX-512, oneDNN's fp32 GEMM on operands rounded as they are staged (an AVX2 kernel would
// run at half the FMA rate there).
bool rounded_packed() { return packed_gemm_enabled() || !onednn_available(); }
size_t rounded_scratch(const Matrix& a, const Matrix& b, const Matrix& c, DType compute, int parts) {
  if (rounded_packed()) return packed_scratch_bytes(a, b, c, parts, compute);
  return staged_bytes(a, b, c, compute);
}
}  // namespace

bool gemm_rounded_stages() { return gemm_rounded_available() && !rounded_packed(); }

void gemm_rounded(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, DType compute, void* scratch,
                  size_t scratch_bytes) {
  EMBER_ASSERT(gemm_rounded_available(), "gemm_rounded: needs AVX2");
  EMBER_ASSERT(a.cols == b.rows && c.rows == a.rows && c.cols == b.cols, "gemm_rounded: shapes do not agree");
  if (batch == 0 || c.rows == 0 || c.cols == 0) return;
  if (a.cols == 0) {
    fill_zeros(batch, c);
    return;
  }
  PoolReservation pool;
  int parts = is_big(a, b) ? pool.threads() : 1;
  if (scratch) {  // as many parts as the given scratch has room for
    while (parts > 1 && rounded_scratch(a, b, c, compute, parts) > scratch_bytes) --parts;
    EMBER_ASSERT(rounded_scratch(a, b, c, compute, parts) <= scratch_bytes, "gemm_rounded: scratch of ", scratch_bytes,
                 " bytes, ", rounded_scratch(a, b, c, compute, parts), " needed");
  }
  Borrowed heap;
  if (!scratch) {
    heap.alloc = get_allocator(Device(DeviceType::CPU));
    heap.n = rounded_scratch(a, b, c, compute, parts);
    heap.p = heap.alloc->allocate(heap.n);
    scratch = heap.p;
  }
  if (rounded_packed()) {
    packed_gemm(batch, a, b, c, scratch, parts, compute);
  } else {
    staged_gemm(batch, a, b, c, static_cast<float*>(scratch), is_big(a, b), parts, compute);
  }
}

size_t gemm_rounded_scratch_bytes(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, DType compute,
                                  int threads) {
  if (batch == 0 || c.rows == 0 || c.cols == 0 || a.cols == 0) return 0;
  if (threads <= 0) threads = get_num_threads();
  return rounded_scratch(a, b, c, compute, is_big(a, b) ? threads : 1);
}

size_t gemm_scratch_bytes(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, int threads) {
  if (batch == 0 || c.rows == 0 || c.cols == 0 || a.cols == 0) return 0;
  if (threads <= 0) threads = get_num_threads();
  return scratch_of(route_of(a, b, c), a, b, c, is_big(a, b) ? threads : 1);
}

}  // namespace cpu
}  // namespace ember
