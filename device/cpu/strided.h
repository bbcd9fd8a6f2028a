// ember: raw strided views for the compute kernels (device layer: never sees a Tensor).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ember/core/dtype.h"
#include "ember/core/error.h"
#include "ember/core/shape.h"

namespace ember {
namespace cpu {

// data points at element [0, ..., 0]; strides are in elements and may be 0 (broadcast).
struct Strided {
  Strided() = default;
  Strided(void* data_, DType dtype_, DimVector sizes_, DimVector strides_)
      : data(data_), dtype(dtype_), sizes(std::move(sizes_)), strides(std::move(strides_)) {}
  // The same, copying the dims straight into place (no temporaries: the per-op fast path).
  Strided(void* data_, DType dtype_, IntArrayRef sizes_, IntArrayRef strides_)
      : data(data_), dtype(dtype_), sizes(sizes_), strides(strides_) {}
  // A view of the same dtype and sizes, laid out contiguously at data_ (a staging buffer).
  Strided contiguous_at(void* data_, DType dtype_) const { return {data_, dtype_, sizes, contiguous_strides(sizes)}; }
  // A single value broadcast (stride 0) to sizes_.
  static Strided broadcast_value(const void* value, DType dtype_, IntArrayRef sizes_) {
    return {const_cast<void*>(value), dtype_, DimVector(sizes_), DimVector(sizes_.size(), 0)};
  }

  void* data = nullptr;
  DType dtype = DType::Float32;
  DimVector sizes;
  DimVector strides;

  int64_t dim() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numel() const { return numel_of(sizes); }
  bool contiguous() const { return is_contiguous_layout(sizes, strides); }
  char* bytes() const { return static_cast<char*>(data); }
};

// The type kernels compute in: float for f32/f16/bf16, double for f64, int64 for integers and bool.
inline DType compute_dtype(DType t) {
  if (t == DType::Float64) return DType::Float64;
  if (is_floating_point(t)) return DType::Float32;
  return DType::Int64;
}

// Converts n elements: dst[i * dst_stride] = (dst_dtype) src[i * src_stride] (strides in elements).
// Float -> float16/bfloat16 rounds to nearest even; float -> bool is x != 0; float -> int truncates.
void convert(const void* src, DType src_dtype, int64_t src_stride, void* dst, DType dst_dtype,
             int64_t dst_stride, int64_t n);

// dst = src elementwise over an nd shape (src may broadcast via stride 0), any dtypes; parallel.
void copy(const Strided& dst, const Strided& src);

// convert's loop with every element rounded to `compute` (bf16 or f16) on the way, as a convert
// to compute and one from it would give: f32 to f32 with unit strides in one AVX2 pass
// (round_floats), others a chunk at a time through a compute-typed buffer. dst may be src.
void round_run(const void* src, DType src_dtype, int64_t src_stride, void* dst, DType dst_dtype, int64_t dst_stride,
               int64_t n, DType compute);
// dst = src with every element rounded to `compute` (bf16 or f16) on the way, as
// src.to(compute).to(dst.dtype) would give, in one pass: any dtypes and strides (src may
// broadcast); parallel. dst may be src.
void copy_rounded(const Strided& dst, const Strided& src, DType compute);

// Fills every element of dst with value (converted to dst's dtype).
void fill(const Strided& dst, double value);
void fill_int(const Strided& dst, int64_t value);

// Merges adjacent dims that are contiguous with each other in every operand (dims of size 1
// dropped). ops[0..n) share sizes; their strides are rewritten in place; returns the new rank.
int coalesce(DimVector& sizes, DimVector* strides[], int n);

// Walks an nd shape in row-major order, yielding runs along the last dim.
// For each run: fn(offsets[] (element offsets per operand), run_length).
class NdCursor {
 public:
  NdCursor(IntArrayRef sizes, DimVector* const strides[], int n, int64_t start);
  // Next run of at most max_len elements; returns its length (0 at the end).
  int64_t next(int64_t max_len, int64_t* offsets);

 private:
  IntArrayRef sizes_;
  DimVector* const* strides_;
  int n_;
  DimVector index_;
  bool done_ = false;
};

// A host scratch vector of n elements for `op`: OutOfMemoryError naming the op and the size when
// it cannot be had (instead of std::length_error or std::bad_alloc).
template <class T>
std::vector<T> scratch_vector(int64_t n, const char* op, T init = T()) {
  try {
    return std::vector<T>(static_cast<size_t>(n), init);
  } catch (const std::exception&) {  // std::length_error, std::bad_alloc
    EMBER_THROW(OutOfMemoryError, op, ": cannot allocate ", n, " elements of ", sizeof(T), " bytes of host scratch");
  }
}

}  // namespace cpu
}  // namespace ember
