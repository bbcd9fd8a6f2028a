// GEMM engines. See reference/onednn-here.md for the measurements behind the choices:
// oneDNN beats Eigen for f32 above tiny sizes and is the only AMX/AVX512-BF16 path for bf16;
// it has no f16 and no f64; a cached primitive costs ~0.5 us a call against Eigen's ~0.17 us.
#include "ember/device/cpu/eigen_util.h"  // first: see the note there

#include "ember/device/cpu/gemm.h"

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "ember/device/allocator.h"
#include "ember/device/cpu/strided.h"
#include "ember/device/parallel.h"
#include "ember/tensor/error.h"

#ifdef EMBER_HAVE_ONEDNN
#include <dnnl.hpp>
#endif

namespace ember {
namespace cpu {
namespace {

// Problems up to this many multiply-adds run on Eigen, single threaded (lower fixed cost).
constexpr int64_t kTinyMacs = 48 * 48 * 48;

template <class T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using DynStride = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using CMap = Eigen::Map<const RowMat<T>, 0, DynStride>;
template <class T>
using MMap = Eigen::Map<RowMat<T>, 0, DynStride>;

template <class T>
void eigen_gemm(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, int threads) {
  Eigen::setNbThreads(threads);
  for (int64_t i = 0; i < batch; ++i) {
    CMap<T> A(static_cast<const T*>(a.data) + i * a.batch_stride, a.rows, a.cols, DynStride(a.row_stride, a.col_stride));
    CMap<T> B(static_cast<const T*>(b.data) + i * b.batch_stride, b.rows, b.cols, DynStride(b.row_stride, b.col_stride));
    MMap<T> C(static_cast<T*>(c.data) + i * c.batch_stride, c.rows, c.cols, DynStride(c.row_stride, c.col_stride));
    C.noalias() = A * B;
  }
}

// Elements of x's float32 staging copy (batch dims kept, a broadcast batch staged once).
int64_t staged_elems(int64_t batch, const Matrix& x) { return (x.batch_stride == 0 ? 1 : batch) * x.rows * x.cols; }

// Converts x to a dense float32 copy in buf. A transposed operand (unit row stride) keeps its
// column-major layout, so the conversion reads memory in order instead of gathering columns.
Matrix stage(int64_t batch, const Matrix& x, float* buf) {
  int64_t nb = x.batch_stride == 0 ? 1 : batch;
  const bool col_major = x.row_stride == 1 && x.col_stride != 1;
  Strided src;
  src.data = x.data;
  src.dtype = x.dtype;
  src.sizes = col_major ? DimVector{nb, x.cols, x.rows} : DimVector{nb, x.rows, x.cols};
  src.strides = col_major ? DimVector{x.batch_stride, x.col_stride, 1} : DimVector{x.batch_stride, x.row_stride, x.col_stride};
  Strided dst;
  dst.data = buf;
  dst.dtype = DType::Float32;
  dst.sizes = src.sizes;
  dst.strides = contiguous_strides(dst.sizes);
  copy(dst, src);
  Matrix m = x;
  m.data = buf;
  m.dtype = DType::Float32;
  m.row_stride = col_major ? 1 : x.cols;
  m.col_stride = col_major ? x.rows : 1;
  m.batch_stride = x.batch_stride == 0 ? 0 : x.rows * x.cols;
  return m;
}

void unstage(int64_t batch, const Matrix& staged, const Matrix& c) {
  Strided src;
  src.data = staged.data;
  src.dtype = staged.dtype;
  src.sizes = DimVector{batch, c.rows, c.cols};
  src.strides = DimVector{staged.batch_stride, staged.row_stride, staged.col_stride};
  Strided dst;
  dst.data = c.data;
  dst.dtype = c.dtype;
  dst.sizes = src.sizes;
  dst.strides = DimVector{c.batch_stride, c.row_stride, c.col_stride};
  copy(dst, src);
}

#ifdef EMBER_HAVE_ONEDNN
struct DnnlKey {
  int64_t v[15];
  bool operator==(const DnnlKey& o) const { return std::memcmp(v, o.v, sizeof(v)) == 0; }
};
struct DnnlKeyHash {
  size_t operator()(const DnnlKey& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t x : k.v) h = (h ^ static_cast<size_t>(x)) * 1099511628211ull;
    return h;
  }
};
struct DnnlEntry {
  dnnl::matmul prim;
  dnnl::memory a, b, c;
};

dnnl::engine& dnnl_engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

dnnl::memory::data_type dnnl_type(DType t) {
  return t == DType::BFloat16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

dnnl::memory::desc desc_of(int64_t batch, const Matrix& x) {
  bool bcast = x.batch_stride == 0 && batch > 1;
  dnnl::memory::dims dims{bcast ? 1 : batch, x.rows, x.cols};
  dnnl::memory::dims strides{bcast ? x.rows * x.cols : (x.batch_stride ? x.batch_stride : x.rows * x.cols),
                             x.row_stride, x.col_stride};
  return dnnl::memory::desc(dims, dnnl_type(x.dtype), strides);
}

// Primitives and memory objects are cached per thread (memory objects carry the data handle).
DnnlEntry& dnnl_entry(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c) {
  thread_local std::unordered_map<DnnlKey, DnnlEntry, DnnlKeyHash> cache;
  DnnlKey key{{static_cast<int64_t>(a.dtype), batch, a.rows, a.cols, b.cols, a.row_stride, a.col_stride,
               a.batch_stride, b.row_stride, b.col_stride, b.batch_stride, c.row_stride, c.col_stride,
               c.batch_stride, 0}};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() > 512) cache.clear();
  dnnl::engine& eng = dnnl_engine();
  auto ad = desc_of(batch, a), bd = desc_of(batch, b), cd = desc_of(batch, c);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(ad, bd, cd), eng);
  DnnlEntry e{dnnl::matmul(pd), dnnl::memory(ad, eng, DNNL_MEMORY_NONE), dnnl::memory(bd, eng, DNNL_MEMORY_NONE),
              dnnl::memory(cd, eng, DNNL_MEMORY_NONE)};
  return cache.emplace(key, std::move(e)).first->second;
}

void onednn_gemm(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c) {
  DnnlEntry& e = dnnl_entry(batch, a, b, c);
  e.a.set_data_handle(a.data);
  e.b.set_data_handle(b.data);
  e.c.set_data_handle(c.data);
  thread_local dnnl::stream stream(dnnl_engine());
  e.prim.execute(stream, {{DNNL_ARG_SRC, e.a}, {DNNL_ARG_WEIGHTS, e.b}, {DNNL_ARG_DST, e.c}});
  stream.wait();
}
#endif

bool unit_stride(const Matrix& m) { return m.col_stride == 1 || m.row_stride == 1; }

}  // namespace

const char* gemm_engine(int64_t m, int64_t n, int64_t k, DType dtype) {
#ifdef EMBER_HAVE_ONEDNN
  if ((dtype == DType::Float32 || dtype == DType::BFloat16 || dtype == DType::Float16) && m * n * k > kTinyMacs)
    return "onednn";
#else
  (void)m, (void)n, (void)k, (void)dtype;
#endif
  return "eigen";
}

void gemm(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, void* scratch) {
  EMBER_ASSERT(a.dtype == b.dtype && b.dtype == c.dtype, "gemm: operand dtypes differ");
  EMBER_ASSERT(a.cols == b.rows && c.rows == a.rows && c.cols == b.cols, "gemm: shapes do not agree");
  if (batch == 0 || c.rows == 0 || c.cols == 0) return;
  if (a.cols == 0) {  // empty inner dimension: zeros
    Strided z;
    z.data = c.data;
    z.dtype = c.dtype;
    z.sizes = DimVector{batch, c.rows, c.cols};
    z.strides = DimVector{c.batch_stride, c.row_stride, c.col_stride};
    fill(z, 0.0);
    return;
  }
  const int64_t macs = a.rows * b.cols * a.cols;
  const DType dt = a.dtype;
  const bool big = macs > kTinyMacs;
  PoolReservation pool;
  const int threads = big ? pool.threads() : 1;
  if (dt == DType::Float64) {
    eigen_gemm<double>(batch, a, b, c, threads);
    return;
  }
  if (dt == DType::Int64) {
    eigen_gemm<int64_t>(batch, a, b, c, threads);
    return;
  }
  if (dt == DType::Int32) {
    eigen_gemm<int32_t>(batch, a, b, c, threads);
    return;
  }
  EMBER_CHECK_DTYPE(dt != DType::Bool, "matmul: not implemented for bool");
#ifdef EMBER_HAVE_ONEDNN
  if (big && dt != DType::Float16 && unit_stride(a) && unit_stride(b) && unit_stride(c)) {
    onednn_gemm(batch, a, b, c);
    return;
  }
#endif
  if (dt == DType::Float32 && unit_stride(a) && unit_stride(b)) {
    eigen_gemm<float>(batch, a, b, c, threads);
    return;
  }
  // f16 (and bf16 without oneDNN or on tiny sizes), or operands without a unit stride: stage in
  // f32, accumulate in f32, round once.
  size_t need = gemm_scratch_bytes(batch, a, b, c);
  // Without caller scratch, borrow from the CPU caching allocator: no zero-fill, no page faults
  // on every call.
  struct Borrowed {
    Allocator* alloc = nullptr;
    void* p = nullptr;
    size_t n = 0;
    ~Borrowed() {
      if (p) alloc->deallocate(p, n);
    }
  } heap;
  float* buf = static_cast<float*>(scratch);
  if (!buf) {
    heap.alloc = get_allocator(Device(DeviceType::CPU));
    heap.n = need;
    heap.p = heap.alloc->allocate(need);
    buf = static_cast<float*>(heap.p);
  }
  Matrix sa = stage(batch, a, buf);
  Matrix sb = stage(batch, b, buf + staged_elems(batch, a));
  Matrix cm = c;
  cm.data = buf + staged_elems(batch, a) + staged_elems(batch, b);
  cm.dtype = DType::Float32;
  cm.row_stride = c.cols;
  cm.col_stride = 1;
  cm.batch_stride = c.rows * c.cols;
#ifdef EMBER_HAVE_ONEDNN
  if (big) {
    onednn_gemm(batch, sa, sb, cm);
  } else {
    eigen_gemm<float>(batch, sa, sb, cm, threads);
  }
#else
  eigen_gemm<float>(batch, sa, sb, cm, threads);
#endif
  unstage(batch, cm, c);
}

size_t gemm_scratch_bytes(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c) {
  if (batch == 0 || c.rows == 0 || c.cols == 0 || a.cols == 0) return 0;
  DType dt = a.dtype;
  if (dt == DType::Float64 || dt == DType::Int64 || dt == DType::Int32) return 0;
  const bool big = a.rows * b.cols * a.cols > kTinyMacs;
#ifdef EMBER_HAVE_ONEDNN
  if (big && dt != DType::Float16 && unit_stride(a) && unit_stride(b) && unit_stride(c)) return 0;
#else
  (void)big;
#endif
  if (dt == DType::Float32 && unit_stride(a) && unit_stride(b)) return 0;
  return static_cast<size_t>(staged_elems(batch, a) + staged_elems(batch, b) + batch * c.rows * c.cols) * sizeof(float);
}

}  // namespace cpu
}  // namespace ember
