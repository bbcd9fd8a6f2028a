// ember (internal to ops/): helpers shared by the op files: type promotion,
// device checks, output allocation, Tensor -> strided view descriptors.
#pragma once

#include <initializer_list>
#include <optional>

#include "ember/device/cpu/strided.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/ops.h"

namespace ember {
namespace ops {

// One participant of type promotion: a tensor with dims, a 0-d tensor, or a Scalar.
struct TypeOperand {
  DType dtype;
  int priority;  // 2: tensor with dims, 1: 0-d tensor, 0: scalar
  TypeOperand(const Tensor& t) : dtype(t.dtype()), priority(t.dim() > 0 ? 2 : 1) {}  // NOLINT
  TypeOperand(const Scalar& s) : dtype(s.dtype()), priority(0) {}                   // NOLINT
};
// PyTorch's result_type: promote within each priority, then a lower priority only raises the
// category (bool < int < float), never the width within a category.
DType result_type(std::initializer_list<TypeOperand> ops);
// In-place/out checks: can `from` be written into a tensor of dtype `to` (no float -> int etc.)?
void check_can_cast(const char* op, DType from, DType to);

// All defined tensors must share one device; returns it. Message as PyTorch's.
Device common_device(const char* op, std::initializer_list<const Tensor*> ts);

// The raw strided view of a tensor (data = address of element 0).
cpu::Strided strided(const Tensor& t);
// The view broadcast to shape (stride 0 on expanded dims); shape must be broadcast-compatible.
cpu::Strided strided_as(const Tensor& t, IntArrayRef shape);

// New tensors.
Tensor empty_on(IntArrayRef shape, DType dtype, Device device);
// A view of base's storage (is_view: a view op's result; detach passes false).
Tensor view_of(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset, bool is_view = true);

// Reduction dims: wraps and dedups; empty = all dims. Returns a bitmask over dims.
uint64_t reduce_mask(const char* op, IntArrayRef dims, int64_t ndim);
// Output shape for a reduction with the given mask (keepdim keeps size 1).
DimVector reduced_shape(IntArrayRef in, uint64_t mask, bool keepdim);

// The reduction output `out` viewed in the kernels' keepdim layout (size 1 at reduced dims).
Tensor keepdim_view(const Tensor& out, IntArrayRef in_shape, uint64_t mask);
// A reduction's output (or its gradient) g restored to the keepdim layout (size 1 at the reduced
// dims), ready to broadcast over the input of shape in_shape.
Tensor unsqueeze_reduced(const Tensor& g, IntArrayRef in_shape, IntArrayRef dims, bool keepdim);

// Bumps the version counter of a tensor written in place (Note [Version counter sharing]).
inline void bump_version(const Tensor& t) { t.impl()->bump_version(); }

// An optional tensor argument as a Tensor (undefined when absent), and a Tensor as one.
inline const Tensor& opt(const std::optional<Tensor>& t) {
  static const Tensor undefined;
  return t ? *t : undefined;
}
inline std::optional<Tensor> some(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }
// The normalizations' statistics dtype: float64 for float64 input, else float32.
inline DType stat_dtype(const Tensor& x) { return x.dtype() == kFloat64 ? kFloat64 : kFloat32; }
// [1, C, 1, ...]: a per-channel tensor's shape against x [N, C, ...].
inline Shape channel_shape(const Tensor& x) {
  Shape s(static_cast<size_t>(x.dim()), 1);
  s[1] = x.size(1);
  return s;
}

}  // namespace ops

// libtorch's memory_format arguments (Tensor::to, clone, the *_like factories): Contiguous or
// Preserve; channels-last is refused (NotImplementedError) naming op. Defined in ops/copy.cpp.
void check_memory_format(const char* op, std::optional<MemoryFormat> f);
}  // namespace ember
