// GEMM engines. The choices rest on measurements on the Xeon (AMX), Zen 5 and Zen 3 machines
// (README, "Benchmarks"): oneDNN beats Eigen for f32 above tiny sizes and is the only AMX /
// AVX512-BF16 path for bf16; it has no f16 and no f64, and no bf16 matmul at all below AVX-512
// ("could not create a primitive descriptor iterator"); a cached primitive costs ~0.5 us a call
// against Eigen's ~0.17 us.
#include "ember/device/cpu/eigen_util.h"  // first: see the note there

#include "ember/device/cpu/gemm.h"
#include "ember/device/cpu/internal/onednn_gemm.h"
#include "ember/device/cpu/internal/staged_gemm.h"

#include <algorithm>
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

}  // namespace

void fp32_gemm(const Matrix& a, const Matrix& b, const Matrix& c, bool onednn, int threads) {
  if (onednn && onednn_gemm(1, a, b, c)) return;
  eigen_gemm<float>(1, a, b, c, threads);
}

namespace {

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
