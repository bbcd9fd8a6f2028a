// aclnn ops that address elements by index or mask: IndexCopy, IndexFillTensor, the
// RepeatInterleave family, Scatter (and ScatterValue), InplaceMaskedFillScalar; each also in its
// in-place form where CANN has one. Slices move with cpu::copy/fill (every dtype and layout);
// single elements through cpu::convert. Indices are checked when the kernel reads them: one out of
// range faults the stream with an IndexError, as on the CPU (CANN's kernels read out of bounds).
#include <algorithm>
#include <cstring>

#include "ember/device/npu/aclnn_common.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {

// An index v of a dim of size n, as Python's (negative from the end), or an IndexError.
int64_t wrap_index(const char* op, int64_t v, int64_t n, size_t dim, int64_t at) {
  EMBER_CHECK_INDEX(v >= -n && v < n, op, ": index ", v, " at position ", at, " is out of range for dim ", dim,
                    " of size ", n);
  return v < 0 ? v + n : v;
}

// Calls fn(idx) for every index of sizes (row-major).
template <class F>
void for_each_index(IntArrayRef sizes, F fn) {
  const int64_t n = numel_of(sizes);
  if (n == 0) return;
  std::vector<int64_t> idx(sizes.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    fn(idx);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
}
char* element(const cpu::Strided& v, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * v.strides[d];
  return v.bytes() + off * static_cast<int64_t>(element_size(v.dtype));
}

// dim in [-n, n) (a 0-d tensor counts as 1-D), made non-negative; or an error.
aclnnStatus norm_dim(const char* op, int64_t dim, size_t rank, size_t* out) {
  const int64_t n = static_cast<int64_t>(std::max<size_t>(rank, 1));
  if (dim < -n || dim >= n)
    return invalid(op, "dim " + std::to_string(dim) + " is out of range for " + std::to_string(rank) + " dims");
  *out = static_cast<size_t>(dim < 0 ? dim + n : dim);
  return ACLNN_SUCCESS;
}

aclnnStatus index_copy_op(const char* op, const aclTensor* self, int64_t dim, const aclTensor* index,
                          const aclTensor* source, const aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"index", index}, {"source", source}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"self", self}, {"index", index}, {"source", source}, {"out", out}})) return s;
  if (aclnnStatus s = check_dtype(op, "index", index, {DType::Int32, DType::Int64})) return s;
  if (shape_of(index).size() > 1) return invalid(op, "index must be 0-D or 1-D, got " + shape_str(shape_of(index)));
  if (dtype_of(source) != dtype_of(self) || dtype_of(out) != dtype_of(self))
    return invalid(op, "source and out must have self's dtype");
  IntArrayRef in = shape_of(self);
  size_t d = 0;
  if (aclnnStatus s = norm_dim(op, dim, in.size(), &d)) return s;
  std::vector<int64_t> want(in.begin(), in.end());
  if (!want.empty()) want[d] = numel_of(shape_of(index));
  if (IntArrayRef(want) != shape_of(source) && !(in.empty() && numel_of(shape_of(source)) == 1))
    return invalid(op, "source has shape " + shape_str(shape_of(source)) + ", expected " + shape_str(IntArrayRef(want)) +
                           " (self's with dim " + std::to_string(d) + " the index's length)");
  if (aclnnStatus s = check_shape(op, "out", out, in)) return s;
  if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}, {"index", index}, {"source", source}})) return s;
  TensorRef a = ref(self), ri = ref(index), rs = ref(source), o = ref(out);
  const bool in_place = self == out;
  return make_executor(op, 0, [=](KernelContext& k) {
    cpu::Strided dst = k.view(o), src = k.view(rs), idx = k.view(ri);
    if (!in_place) cpu::copy(dst, k.view(a));
    if (dst.sizes.empty()) {  // 0-d: each index must be 0
      for (int64_t i = 0; i < idx.numel(); ++i) {
        wrap_index(op, index_value(idx, i), 1, 0, i);
        cpu::copy(dst, cpu::Strided(src.data, src.dtype, DimVector{}, DimVector{}));
      }
      return;
    }
    const int64_t n = dst.sizes[d];
    for (int64_t i = 0; i < idx.numel(); ++i)
      cpu::copy(narrowed(dst, d, wrap_index(op, index_value(idx, i), n, d, i), 1), narrowed(src, d, i, 1));
  }, ws, ex);
}

aclnnStatus index_fill_op(const char* op, const aclTensor* self, int64_t dim, const aclIntArray* index,
                          const aclScalar* value, const aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"index", index}, {"value", value}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"self", self}, {"out", out}})) return s;
  if (dtype_of(out) != dtype_of(self)) return invalid(op, "out must have self's dtype");
  if (aclnnStatus s = check_shape(op, "out", out, shape_of(self))) return s;
  if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}})) return s;
  IntArrayRef in = shape_of(self);
  size_t d = 0;
  if (aclnnStatus s = norm_dim(op, dim, in.size(), &d)) return s;
  std::vector<int64_t> ix = int_array(index);
  const int64_t n = in.empty() ? 1 : in[d];
  for (size_t i = 0; i < ix.size(); ++i) {
    if (ix[i] < -n || ix[i] >= n)
      return invalid(op, "index " + std::to_string(ix[i]) + " at position " + std::to_string(i) +
                             " is out of range for dim " + std::to_string(d) + " of size " + std::to_string(n));
    if (ix[i] < 0) ix[i] += n;
  }
  const bool floating = scalar_is_floating(value);
  const double dv = scalar_value(value);
  const int64_t iv = scalar_int_value(value);
  TensorRef a = ref(self), o = ref(out);
  const bool in_place = self == out;
  return make_executor(op, 0, [=](KernelContext& k) {
    cpu::Strided dst = k.view(o);
    if (!in_place) cpu::copy(dst, k.view(a));
    for (int64_t i : ix) {
      cpu::Strided slice = dst.sizes.empty() ? dst : narrowed(dst, d, i, 1);
      if (floating) cpu::fill(slice, dv); else cpu::fill_int(slice, iv);
    }
  }, ws, ex);
}

// out = self with each slice along dim (every element when flat) repeated: repeats holds one
// count, or one per slice. The counts are read from the device at run time when given as a tensor.
aclnnStatus repeat_interleave_op(const char* op, const aclTensor* self, const aclTensor* repeats_t, int64_t repeats,
                                 bool flat, int64_t dim, int64_t output_size, const aclTensor* out, uint64_t* ws,
                                 aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"self", self}, {"out", out}})) return s;
  if (repeats_t) {
    if (aclnnStatus s = check_tensor(op, "repeats", repeats_t)) return s;
    if (aclnnStatus s = check_dtype(op, "repeats", repeats_t, {DType::Int32, DType::Int64})) return s;
    if (shape_of(repeats_t).size() > 1) return invalid(op, "repeats must be 0-D or 1-D");
  } else if (repeats < 0) {
    return invalid(op, "repeats must be >= 0, got " + std::to_string(repeats));
  }
  if (dtype_of(out) != dtype_of(self)) return invalid(op, "out must have self's dtype");
  std::vector<int64_t> in(shape_of(self).begin(), shape_of(self).end());
  if (flat) in = {numel_of(shape_of(self))};
  size_t d = 0;
  if (aclnnStatus s = norm_dim(op, flat ? 0 : dim, in.size(), &d)) return s;
  if (in.empty()) in = {1};  // a 0-d self repeats as 1-D
  const int64_t slices = in[d];
  if (repeats_t && numel_of(shape_of(repeats_t)) != 1 && numel_of(shape_of(repeats_t)) != slices)
    return invalid(op, "repeats has " + std::to_string(numel_of(shape_of(repeats_t))) + " values; it needs 1 or " +
                           std::to_string(slices) + " (the size of dim " + std::to_string(d) + ")");
  std::vector<int64_t> shape = in;
  if (!repeats_t) {
    if (__builtin_mul_overflow(slices, repeats, &shape[d])) return invalid(op, "the output's size overflows");
    if (output_size >= 0 && output_size != shape[d] && output_size != 0)
      return invalid(op, "outputSize " + std::to_string(output_size) + " is not the repeated size " + std::to_string(shape[d]));
  } else {
    shape[d] = shape_of(out).size() == shape.size() ? shape_of(out)[d] : -1;  // known at run time
    if (output_size > 0 && output_size != shape[d])
      return invalid(op, "outputSize " + std::to_string(output_size) + " is not out's size " + std::to_string(shape[d]) +
                             " along dim " + std::to_string(d));
  }
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef(shape))) return s;
  if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}}, false)) return s;
  uint64_t bytes = 0;
  StagedInput a = stage_if_strided(self, &bytes);  // flattening needs contiguous elements
  TensorRef o = ref(out);
  TensorRef rr;
  if (repeats_t) rr = ref(repeats_t);
  const bool has_t = repeats_t != nullptr;
  const bool reshaped = flat || shape_of(self).empty();
  return make_executor(op, bytes, [=](KernelContext& k) {
    cpu::Strided src = a.view(k), dst = k.view(o);
    if (reshaped) {  // contiguous: one dim of all the elements
      src.sizes = DimVector(IntArrayRef(in));
      src.strides = DimVector{1};
    }
    cpu::Strided counts;
    if (has_t) counts = k.view(rr), counts.sizes = DimVector{numel_of(counts.sizes)}, counts.strides = DimVector{1};
    int64_t at = 0;
    for (int64_t i = 0; i < slices; ++i) {
      const int64_t r = has_t ? index_value(counts, counts.sizes[0] == 1 ? 0 : i) : repeats;
      EMBER_CHECK_INDEX(r >= 0, op, ": repeats[", i, "] = ", r, " is negative");
      EMBER_CHECK_INDEX(at + r <= shape[d], op, ": the repeats add up to more than out's ", shape[d], " along dim ", d);
      for (int64_t j = 0; j < r; ++j) cpu::copy(narrowed(dst, d, at + j, 1), narrowed(src, d, i, 1));
      at += r;
    }
    EMBER_CHECK_INDEX(at == shape[d], op, ": the repeats add up to ", at, ", not out's ", shape[d], " along dim ", d);
  }, ws, ex);
}

// out = self with src's elements (or value) written, added or multiplied at the positions index
// names along dim (torch.scatter: out[... index[p] ...] (op)= src[p] for every position p of index).
aclnnStatus scatter_op(const char* op, const aclTensor* self, int64_t dim, const aclTensor* index, const aclTensor* src,
                       const aclScalar* value, int64_t reduce, const aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"index", index}, {"out", out}})) return s;
  if (!src && !value) return null_arg(op, "src");
  if (aclnnStatus s = check_all(op, {{"self", self}, {"index", index}, {"out", out}})) return s;
  if (src)
    if (aclnnStatus s = check_tensor(op, "src", src)) return s;
  if (aclnnStatus s = check_dtype(op, "index", index, {DType::Int32, DType::Int64})) return s;
  if (dtype_of(out) != dtype_of(self) || (src && dtype_of(src) != dtype_of(self)))
    return invalid(op, "src and out must have self's dtype");
  if (reduce < 0 || reduce > 2) return invalid(op, "reduce must be 0 (none), 1 (add) or 2 (multiply), got " + std::to_string(reduce));
  if (reduce && !is_floating_point(dtype_of(self)) && dtype_of(self) == DType::Int64)
    return invalid(op, "an add or multiply reduction takes a float or 32-bit integer self, got int64");
  IntArrayRef in = shape_of(self), ix = shape_of(index);
  size_t d = 0;
  if (aclnnStatus s = norm_dim(op, dim, in.size(), &d)) return s;
  if (ix.size() != in.size() || (src && shape_of(src).size() != in.size()))
    return invalid(op, "index " + shape_str(ix) + (src ? " and src " + shape_str(shape_of(src)) : std::string()) +
                           " must have self's rank (" + std::to_string(in.size()) + ")");
  for (size_t q = 0; q < ix.size(); ++q)
    if ((q != d && ix[q] > in[q]) || (src && ix[q] > shape_of(src)[q]))
      return invalid(op, "index " + shape_str(ix) + " is larger than self " + shape_str(in) +
                             (src ? " or src " + shape_str(shape_of(src)) : std::string()) + " in dim " + std::to_string(q));
  if (aclnnStatus s = check_shape(op, "out", out, in)) return s;
  if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}, {"index", index}})) return s;
  if (src)
    if (aclnnStatus s = check_overlap(op, "out", out, {{"src", src}}, false)) return s;
  TensorRef a = ref(self), ri = ref(index), o = ref(out), rs;
  if (src) rs = ref(src);
  const bool has_src = src != nullptr, in_place = self == out;
  const double v = value ? scalar_value(value) : 0;
  return make_executor(op, 0, [=](KernelContext& k) {
    cpu::Strided dst = k.view(o), idx = k.view(ri), from = has_src ? k.view(rs) : cpu::Strided();
    if (!in_place) cpu::copy(dst, k.view(a));
    const int64_t n = dst.sizes.empty() ? 1 : dst.sizes[d];
    for_each_index(idx.sizes, [&](const std::vector<int64_t>& p) {
      int64_t t = 0;
      cpu::convert(element(idx, p), idx.dtype, 1, &t, DType::Int64, 1, 1);
      std::vector<int64_t> q = p;
      if (!q.empty()) q[d] = wrap_index(op, t, n, d, p.empty() ? 0 : p[d]);
      char* at = element(dst, q);
      if (reduce == 0) {
        if (has_src) cpu::convert(element(from, p), from.dtype, 1, at, dst.dtype, 1, 1);
        else cpu::convert(&v, DType::Float64, 1, at, dst.dtype, 1, 1);
        return;
      }
      double x = 0, y = v;
      cpu::convert(at, dst.dtype, 1, &x, DType::Float64, 1, 1);
      if (has_src) cpu::convert(element(from, p), from.dtype, 1, &y, DType::Float64, 1, 1);
      x = reduce == 1 ? x + y : x * y;
      cpu::convert(&x, DType::Float64, 1, at, dst.dtype, 1, 1);
    });
  }, ws, ex);
}

}  // namespace

// CANN header aclnnop/aclnn_index_copy.h: out = self with source's slices copied to the positions index names along dim (torch.index_copy)
extern "C" aclnnStatus aclnnIndexCopyGetWorkspaceSize(aclTensor* selfRef, int64_t dim, const aclTensor* index,
                                                      const aclTensor* source, aclTensor* outRef,
                                                      uint64_t* workspaceSize, aclOpExecutor** executor) {
  return index_copy_op("aclnnIndexCopy", selfRef, dim, index, source, outRef, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnIndexCopy)

// CANN header aclnnop/aclnn_index_copy.h: selfRef.index_copy_(dim, index, source)
extern "C" aclnnStatus aclnnInplaceIndexCopyGetWorkspaceSize(aclTensor* selfRef, int64_t dim, const aclTensor* index,
                                                             const aclTensor* source, uint64_t* workspaceSize,
                                                             aclOpExecutor** executor) {
  return index_copy_op("aclnnInplaceIndexCopy", selfRef, dim, index, source, selfRef, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceIndexCopy)

// CANN header aclnnop/aclnn_index_fill_tensor.h: out = self with the slices along dim at the positions index lists set to value (torch.index_fill)
extern "C" aclnnStatus aclnnIndexFillTensorGetWorkspaceSize(const aclTensor* self, int64_t dim, const aclIntArray* index,
                                                            const aclScalar* value, aclTensor* out,
                                                            uint64_t* workspaceSize, aclOpExecutor** executor) {
  return index_fill_op("aclnnIndexFillTensor", self, dim, index, value, out, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnIndexFillTensor)

// CANN header aclnnop/aclnn_index_fill_tensor.h: selfRef.index_fill_(dim, index, value)
extern "C" aclnnStatus aclnnInplaceIndexFillTensorGetWorkspaceSize(aclTensor* selfRef, int64_t dim,
                                                                   const aclIntArray* index, const aclScalar* value,
                                                                   uint64_t* workspaceSize, aclOpExecutor** executor) {
  return index_fill_op("aclnnInplaceIndexFillTensor", selfRef, dim, index, value, selfRef, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceIndexFillTensor)

// CANN header aclnnop/aclnn_repeat_interleave.h: out = self flattened, each element repeated repeats[i] times (a 1-value repeats: every element that often)
extern "C" aclnnStatus aclnnRepeatInterleaveGetWorkspaceSize(const aclTensor* self, const aclTensor* repeats,
                                                             int64_t outputSize, aclTensor* out,
                                                             uint64_t* workspaceSize, aclOpExecutor** executor) {
  if (!repeats) return null_arg("aclnnRepeatInterleave", "repeats");
  return repeat_interleave_op("aclnnRepeatInterleave", self, repeats, 0, true, 0, outputSize, out, workspaceSize,
                              executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnRepeatInterleave)

// CANN header aclnnop/aclnn_repeat_interleave.h: out = self with slice i along dim repeated repeats[i] times
extern "C" aclnnStatus aclnnRepeatInterleaveWithDimGetWorkspaceSize(const aclTensor* self, const aclTensor* repeats,
                                                                    int64_t dim, int64_t outputSize, aclTensor* out,
                                                                    uint64_t* workspaceSize, aclOpExecutor** executor) {
  if (!repeats) return null_arg("aclnnRepeatInterleaveWithDim", "repeats");
  return repeat_interleave_op("aclnnRepeatInterleaveWithDim", self, repeats, 0, false, dim, outputSize, out,
                              workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnRepeatInterleaveWithDim)

// CANN header aclnnop/aclnn_repeat_interleave.h: out = self flattened, each element repeated repeats times
extern "C" aclnnStatus aclnnRepeatInterleaveIntGetWorkspaceSize(const aclTensor* self, int64_t repeats,
                                                                int64_t outputSize, aclTensor* out,
                                                                uint64_t* workspaceSize, aclOpExecutor** executor) {
  return repeat_interleave_op("aclnnRepeatInterleaveInt", self, nullptr, repeats, true, 0, outputSize, out,
                              workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnRepeatInterleaveInt)

// CANN header aclnnop/aclnn_repeat_interleave.h: out = self with each slice along dim repeated repeats times
extern "C" aclnnStatus aclnnRepeatInterleaveIntWithDimGetWorkspaceSize(const aclTensor* self, int64_t repeats,
                                                                       int64_t dim, int64_t outputSize, aclTensor* out,
                                                                       uint64_t* workspaceSize,
                                                                       aclOpExecutor** executor) {
  return repeat_interleave_op("aclnnRepeatInterleaveIntWithDim", self, nullptr, repeats, false, dim, outputSize, out,
                              workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnRepeatInterleaveIntWithDim)

// CANN header aclnnop/aclnn_scatter.h: out = self with src[p] written at index[p] along dim, for every position p of index (reduce 0: write, 1: add, 2: multiply)
extern "C" aclnnStatus aclnnScatterGetWorkspaceSize(const aclTensor* self, int64_t dim, const aclTensor* index,
                                                    const aclTensor* src, int64_t reduce, aclTensor* out,
                                                    uint64_t* workspaceSize, aclOpExecutor** executor) {
  if (!src) return null_arg("aclnnScatter", "src");
  return scatter_op("aclnnScatter", self, dim, index, src, nullptr, reduce, out, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnScatter)

// CANN header aclnnop/aclnn_scatter.h: out = self with value written (added, multiplied) at index[p] along dim
extern "C" aclnnStatus aclnnScatterValueGetWorkspaceSize(const aclTensor* self, int64_t dim, const aclTensor* index,
                                                         const aclScalar* value, int64_t reduce, aclTensor* out,
                                                         uint64_t* workspaceSize, aclOpExecutor** executor) {
  if (!value) return null_arg("aclnnScatterValue", "value");
  return scatter_op("aclnnScatterValue", self, dim, index, nullptr, value, reduce, out, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnScatterValue)

// CANN header aclnnop/aclnn_scatter.h: selfRef.scatter_(dim, index, src) with the reduction
extern "C" aclnnStatus aclnnInplaceScatterGetWorkspaceSize(aclTensor* selfRef, int64_t dim, const aclTensor* index,
                                                           const aclTensor* src, int64_t reduce,
                                                           uint64_t* workspaceSize, aclOpExecutor** executor) {
  if (!src) return null_arg("aclnnInplaceScatter", "src");
  return scatter_op("aclnnInplaceScatter", selfRef, dim, index, src, nullptr, reduce, selfRef, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceScatter)

// CANN header aclnnop/aclnn_scatter.h: selfRef.scatter_(dim, index, value) with the reduction
extern "C" aclnnStatus aclnnInplaceScatterValueGetWorkspaceSize(aclTensor* selfRef, int64_t dim, const aclTensor* index,
                                                                const aclScalar* value, int64_t reduce,
                                                                uint64_t* workspaceSize, aclOpExecutor** executor) {
  if (!value) return null_arg("aclnnInplaceScatterValue", "value");
  return scatter_op("aclnnInplaceScatterValue", selfRef, dim, index, nullptr, value, reduce, selfRef, workspaceSize,
                    executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceScatterValue)

// CANN header aclnnop/aclnn_masked_fill_scalar.h: selfRef = value where mask (bool, broadcast to selfRef) is true
extern "C" aclnnStatus aclnnInplaceMaskedFillScalarGetWorkspaceSize(aclTensor* selfRef, const aclTensor* mask,
                                                                    const aclScalar* value, uint64_t* workspaceSize,
                                                                    aclOpExecutor** executor) {
  const char* op = "aclnnInplaceMaskedFillScalar";
  if (aclnnStatus s = check_not_null(op, {{"selfRef", selfRef}, {"mask", mask}, {"value", value}})) return s;
  if (aclnnStatus s = check_all(op, {{"selfRef", selfRef}, {"mask", mask}})) return s;
  if (aclnnStatus s = check_dtype(op, "mask", mask, {DType::Bool, DType::UInt8, DType::Int8})) return s;
  std::vector<int64_t> b;
  if (!broadcast(shape_of(mask), shape_of(selfRef), &b) || IntArrayRef(b) != shape_of(selfRef))
    return invalid(op, "mask " + shape_str(shape_of(mask)) + " must broadcast to selfRef " + shape_str(shape_of(selfRef)));
  if (aclnnStatus s = check_overlap(op, "selfRef", selfRef, {{"mask", mask}}, false)) return s;
  const double v = scalar_value(value);
  const int64_t iv = scalar_int_value(value);
  const bool floating = scalar_is_floating(value);
  TensorRef a = ref(selfRef), m = ref(mask);
  return make_executor(op, 0, [=](KernelContext& k) {
    cpu::Strided dst = k.view(a), mk = expand_to(k.view(m), k.view(a).sizes);
    for_each_index(dst.sizes, [&](const std::vector<int64_t>& p) {
      if (*element(mk, p) == 0) return;
      if (floating) cpu::convert(&v, DType::Float64, 1, element(dst, p), dst.dtype, 1, 1);
      else cpu::convert(&iv, DType::Int64, 1, element(dst, p), dst.dtype, 1, 1);
    });
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceMaskedFillScalar)

}  // namespace npu
}  // namespace ember
