// ember (internal to device/npu): builders shared by the built-in aclnn ops.
#pragma once

#include <array>
#include <sstream>

#include "ember/device/npu/kernel.h"

// Phase 2 of a built-in op: the generic executor run under the op's name.
#define EMBER_ACLNN_PHASE2_IMPL(Name)                                                                                 \
  extern "C" aclnnStatus Name(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) { \
    return ::ember::npu::run_executor(#Name, workspace, workspaceSize, executor, stream);                             \
  }

namespace ember {
namespace npu {
namespace ops {

// Broadcast shape of two aclTensor views, or false (core's rule, try_broadcast_shapes).
inline bool broadcast(IntArrayRef a, IntArrayRef b, std::vector<int64_t>* out) {
  DimVector d;
  if (!try_broadcast_shapes(a, b, &d)) return false;
  out->assign(d.begin(), d.end());
  return true;
}

inline std::string shape_str(IntArrayRef s) { return to_string(s); }

// *bytes = count * elem_size, or 161002 naming op when that overflows (a workspace's size).
inline aclnnStatus workspace_bytes(const char* op, int64_t count, int64_t elem_size, uint64_t* bytes) {
  try {
    *bytes = static_cast<uint64_t>(checked_mul(count, elem_size, op));
  } catch (const Error& e) {
    return invalid(op, e);
  }
  return ACLNN_SUCCESS;
}

// Checks self/other/out of a broadcasting elementwise op: out's shape must be the broadcast
// shape (or self's shape for in-place ops, where out is self).
inline aclnnStatus check_broadcast_out(const char* op, const aclTensor* self, const aclTensor* other,
                                       const aclTensor* out) {
  std::vector<int64_t> shape;
  if (!broadcast(shape_of(self), shape_of(other), &shape))
    return invalid(op, "self " + shape_str(shape_of(self)) + " and other " + shape_str(shape_of(other)) +
                           " cannot be broadcast together");
  if (IntArrayRef(shape) != shape_of(out))
    return invalid(op, "out has shape " + shape_str(shape_of(out)) + ", expected the broadcast shape " +
                           shape_str(IntArrayRef(shape)));
  return ACLNN_SUCCESS;
}

inline aclnnStatus check_castable(const char* op, DType from, const aclTensor* out) {
  if (can_cast(from, dtype_of(out))) return ACLNN_SUCCESS;  // core's rule
  std::ostringstream os;
  os << "the result type " << from << " cannot be cast to out's dtype " << dtype_of(out);
  return invalid(op, os.str());
}

// The dtype of a tensor of dtype t combined with a scalar (PyTorch/CANN rule, core's
// combine_categories: a scalar only raises the category, e.g. int tensor + float scalar -> float32).
inline DType promote_with_scalar(DType t, const aclScalar* s) {
  const DType scalar = scalar_is_floating(s) ? default_float_dtype() : scalar_is_bool(s) ? DType::Bool : DType::Int64;
  return combine_categories(t, scalar);
}

// v narrowed to [start, start + len) along dim (a view; with len 0 it points nowhere new).
inline cpu::Strided narrowed(const cpu::Strided& v, size_t dim, int64_t start, int64_t len) {
  cpu::Strided r = v;
  if (len > 0) r.data = r.bytes() + start * r.strides[dim] * static_cast<int64_t>(element_size(r.dtype));
  r.sizes[dim] = len;
  return r;
}

// The i-th value of a 1-D integer view (an index, a count), as int64.
inline int64_t index_value(const cpu::Strided& idx, int64_t i) {
  int64_t v = 0;
  const int64_t stride = idx.strides.empty() ? 0 : idx.strides[0];
  cpu::convert(idx.bytes() + i * stride * static_cast<int64_t>(element_size(idx.dtype)), idx.dtype, 1, &v,
               DType::Int64, 1, 1);
  return v;
}

// Kernel signatures of the device/cpu families.
using BinaryFn = std::function<void(const cpu::Strided&, const cpu::Strided&, const cpu::Strided&, DType)>;
using UnaryFn = std::function<void(const cpu::Strided&, const cpu::Strided&)>;

// A 0-d view of a scalar value held in `holder` (double or int64), broadcast to rank dims.
struct ScalarView {
  double d = 0;
  int64_t i = 0;
  bool floating = true;
  cpu::Strided view(size_t rank) {
    return cpu::Strided(floating ? static_cast<void*>(&d) : static_cast<void*>(&i),
                        floating ? DType::Float64 : DType::Int64, DimVector(rank, 1), DimVector(rank, 0));
  }
  static ScalarView of(const aclScalar* s) {
    ScalarView v;
    v.floating = scalar_is_floating(s);
    v.d = scalar_value(s);
    v.i = scalar_int_value(s);
    return v;
  }
};

// Phase 1 of `out = fn(self, other)` with broadcasting. compute: the dtype the kernel computes
// in is the compute type of `result` (the promoted dtype, or out's for arithmetic).
inline aclnnStatus binary_op(const char* op, const aclTensor* self, const aclTensor* other, const aclTensor* out,
                             bool bool_result, BinaryFn fn, uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"other", other}, {"out", out}})) return s;
  if (aclnnStatus s = check_tensor(op, "self", self)) return s;
  if (aclnnStatus s = check_tensor(op, "other", other)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (aclnnStatus s = check_broadcast_out(op, self, other, out)) return s;
  if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}, {"other", other}})) return s;
  DType promoted = promote_types(dtype_of(self), dtype_of(other));
  // A comparison's or logical op's result is bool, which converts to every dtype: out may have
  // any (CANN: BOOL, or the dtypes bool casts to).
  if (!bool_result)
    if (aclnnStatus s = check_castable(op, promoted, out)) return s;
  DType compute = cpu::compute_dtype(bool_result ? promoted : promote_types(promoted, dtype_of(out)));
  if (!bool_result && is_floating_point(dtype_of(out)) && !is_floating_point(promoted))
    compute = cpu::compute_dtype(dtype_of(out));
  TensorRef a = ref(self), b = ref(other), o = ref(out);
  return make_executor(op, 0, [a, b, o, fn, compute](KernelContext& k) {
    cpu::Strided ov = k.view(o);
    fn(ov, expand_to(k.view(a), ov.sizes), expand_to(k.view(b), ov.sizes), compute);
  }, ws, ex);
}

// Phase 1 of `out = fn(self, scalar)`.
inline aclnnStatus binary_scalar_op(const char* op, const aclTensor* self, const aclScalar* other, const aclTensor* out,
                                    bool bool_result, BinaryFn fn, uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"other", other}, {"out", out}})) return s;
  if (aclnnStatus s = check_tensor(op, "self", self)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (aclnnStatus s = check_shape(op, "out", out, shape_of(self))) return s;
  if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}})) return s;
  DType promoted = promote_with_scalar(dtype_of(self), other);
  if (!bool_result)  // (a bool result converts to every dtype)
    if (aclnnStatus s = check_castable(op, promoted, out)) return s;
  DType compute = cpu::compute_dtype(bool_result ? promoted : dtype_of(out));
  TensorRef a = ref(self), o = ref(out);
  ScalarView sv = ScalarView::of(other);
  return make_executor(op, 0, [a, o, fn, compute, sv](KernelContext& k) mutable {
    cpu::Strided ov = k.view(o);
    fn(ov, k.view(a), sv.view(ov.sizes.size()), compute);
  }, ws, ex);
}

// Phase 1 of `out = fn(self)`; out's dtype may differ (e.g. int in, float out).
inline aclnnStatus unary_op(const char* op, const aclTensor* self, const aclTensor* out, bool float_only, UnaryFn fn,
                            uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (aclnnStatus s = check_tensor(op, "self", self)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (aclnnStatus s = check_shape(op, "out", out, shape_of(self))) return s;
  if (float_only && !is_floating_point(dtype_of(out))) {
    std::ostringstream os;
    os << "out must be a floating dtype, got " << dtype_of(out);
    return invalid(op, os.str());
  }
  if (aclnnStatus s = check_castable(op, dtype_of(self), out)) return s;
  if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}})) return s;
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, 0, [a, o, fn](KernelContext& k) { fn(k.view(o), k.view(a)); }, ws, ex);
}

// The floating dtypes the emulator's ops take.
inline const std::initializer_list<DType> kFloats = {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64};

// Each named tensor is a live descriptor.
inline aclnnStatus check_all(const char* op, std::initializer_list<std::pair<const char*, const aclTensor*>> ts) {
  for (auto [name, t] : ts)
    if (aclnnStatus s = check_tensor(op, name, t)) return s;
  return ACLNN_SUCCESS;
}
inline aclnnStatus check_contiguous(const char* op, const char* name, const aclTensor* t) {
  return is_contiguous(t) ? ACLNN_SUCCESS : invalid(op, std::string(name) + " must be contiguous");
}

// An output of a floating dtype, of this shape, contiguous.
inline aclnnStatus check_float_out(const char* op, const char* name, const aclTensor* t, IntArrayRef shape) {
  if (aclnnStatus s = check_tensor(op, name, t)) return s;
  if (aclnnStatus s = check_dtype(op, name, t, kFloats)) return s;
  if (aclnnStatus s = check_shape(op, name, t, shape)) return s;
  return check_contiguous(op, name, t);
}

// The emulator's double-precision kernels: inputs read as contiguous float64 from the workspace,
// results written back rounded once.
// Reserves a 64-byte-aligned block of n elements of elem_size bytes in the workspace plan
// (*offset), or an error; reserve_f64: of n doubles.
inline aclnnStatus reserve(const char* op, int64_t n, int64_t elem_size, uint64_t* ws, uint64_t* offset) {
  uint64_t bytes = 0;
  if (aclnnStatus s = workspace_bytes(op, n, elem_size, &bytes)) return s;
  *offset = *ws;
  *ws += (bytes + 63) / 64 * 64;
  return ACLNN_SUCCESS;
}
inline aclnnStatus reserve_f64(const char* op, int64_t n, uint64_t* ws, uint64_t* offset) {
  return reserve(op, n, 8, ws, offset);
}
inline double* f64_at(KernelContext& k, uint64_t offset) {
  return reinterpret_cast<double*>(static_cast<char*>(k.workspace()) + offset);
}
// A tensor's values as float64 (an absent optional: null).
struct F64Input {
  TensorRef ref;
  uint64_t offset = 0;
  bool present = false;
  // In its own shape, or broadcast to `shape` (which then sized the reservation).
  const double* load(KernelContext& k) const {
    if (!present) return nullptr;
    cpu::Strided v = k.view(ref);
    cpu::copy(cpu::Strided(f64_at(k, offset), DType::Float64, v.sizes, contiguous_strides(v.sizes)), v);
    return f64_at(k, offset);
  }
  const double* load(KernelContext& k, IntArrayRef shape) const {
    if (!present) return nullptr;
    DimVector sz(shape);
    cpu::copy(cpu::Strided(f64_at(k, offset), DType::Float64, sz, contiguous_strides(shape)), expand_to(k.view(ref), shape));
    return f64_at(k, offset);
  }
};
// Plans t's float64 copy (n elements; -1: t's own count); a null t stays absent.
inline aclnnStatus stage_f64(const char* op, const aclTensor* t, uint64_t* ws, F64Input* in, int64_t n = -1) {
  if (!t) return ACLNN_SUCCESS;
  in->ref = ref(t);
  in->present = true;
  return reserve_f64(op, n < 0 ? numel_of(shape_of(t)) : n, ws, &in->offset);
}
// Writes float64 values v (contiguous, r's shape) into r, rounded to its dtype.
inline void store_f64(KernelContext& k, const TensorRef& r, const double* v) {
  cpu::Strided o = k.view(r);
  cpu::copy(o, cpu::Strided(const_cast<double*>(v), DType::Float64, o.sizes, contiguous_strides(o.sizes)));
}

// A backward op's outputMask (input, weight, bias): *want, or an error status when the mask is
// not 3 values or a wanted output is null (outs: the three outputs' names and tensors).
inline aclnnStatus output_mask3(const char* op, const aclBoolArray* mask,
                                std::initializer_list<std::pair<const char*, const aclTensor*>> outs,
                                std::array<bool, 3>* want) {
  if (!mask) return null_arg(op, "outputMask");
  std::vector<bool> v = bool_array(mask);
  if (v.size() != 3) return invalid(op, "outputMask needs 3 values (input, weight, bias), got " + std::to_string(v.size()));
  size_t i = 0;
  for (auto [name, t] : outs) {
    (*want)[i] = v[i];
    if (v[i] && !t) return null_arg(op, name);
    ++i;
  }
  return ACLNN_SUCCESS;
}

// A possibly non-contiguous input, made contiguous in the workspace (at `offset`) when the
// kernel needs contiguous data: the staging copy is what makes the op's workspace non-zero, as
// in CANN, where non-contiguous inputs grow the workspace.
struct StagedInput {
  TensorRef ref;
  uint64_t offset = 0;
  bool staged = false;
  cpu::Strided view(KernelContext& k) const {
    cpu::Strided v = k.view(ref);
    if (!staged) return v;
    cpu::Strided dst = v.contiguous_at(static_cast<char*>(k.workspace()) + offset, v.dtype);
    cpu::copy(dst, v);
    return dst;
  }
};
// Plans t's staging; *ws_bytes grows by its 64-byte-rounded size when t is not contiguous.
inline StagedInput stage_if_strided(const aclTensor* t, uint64_t* ws_bytes) {
  StagedInput s;
  s.ref = ref(t);
  if (!is_contiguous(t)) {
    s.staged = true;
    s.offset = *ws_bytes;
    uint64_t bytes = static_cast<uint64_t>(numel_of(shape_of(t))) * element_size(dtype_of(t));
    *ws_bytes += (bytes + 63) / 64 * 64;
  }
  return s;
}

}  // namespace ops
}  // namespace npu
}  // namespace ember
