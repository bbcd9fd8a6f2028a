// Indexing views: slice (Python slicing with step), narrow, select, operator[], chunk, split,
// as_strided. All share storage.
#include <limits>

#include "ember/autograd/op_spec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(slice, Keep,
                 "ember::slice(Tensor self, int dim=0, int start=0, int end=9223372036854775807, "
                 "int step=1) -> Tensor",
                 Tensor(const Tensor&, int64_t, int64_t, int64_t, int64_t));
EMBER_DECLARE_OP(select, Keep, "ember::select(Tensor self, int dim, int index) -> Tensor",
                 Tensor(const Tensor&, int64_t, int64_t));
EMBER_DECLARE_OP(as_strided, Keep,
                 "ember::as_strided(Tensor self, int[] size, int[] stride, "
                 "int storage_offset=0) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, IntArrayRef, int64_t));
EMBER_DECLARE_OP(narrow, Keep, "ember::narrow(Tensor self, int dim, int start, int length) -> Tensor",
                 Tensor(const Tensor&, int64_t, int64_t, int64_t));
EMBER_DECLARE_OP(split, Keep, "ember::split(Tensor self, int split_size, int dim=0) -> Tensor[]",
                 std::vector<Tensor>(const Tensor&, int64_t, int64_t));
EMBER_DECLARE_OP(chunk, Keep, "ember::chunk(Tensor self, int chunks, int dim=0) -> Tensor[]",
                 std::vector<Tensor>(const Tensor&, int64_t, int64_t));
EMBER_DECLARE_OP(slice_backward, Keep,
                 "ember::slice_backward(Tensor grad, int[] input_sizes, int dim, int start, "
                 "int end, int step) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, int64_t, int64_t, int64_t, int64_t));
EMBER_DECLARE_OP(select_backward, Keep,
                 "ember::select_backward(Tensor grad, int[] input_sizes, int dim, "
                 "int index) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, int64_t, int64_t));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

Tensor slice_any(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  EMBER_CHECK_INDEX(x.dim() > 0, op::slice::op_name(), ": cannot be applied to a 0-dim tensor");
  int64_t d = wrap_dim(dim, x.dim(), op::slice::op_name());
  EMBER_CHECK_VALUE(step > 0, op::slice::op_name(), ": step must be positive, got ", step);
  int64_t n = x.sizes_ref()[static_cast<size_t>(d)];
  // Python semantics: negative indices count from the end, then clamp to [0, n].
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::min(std::max<int64_t>(start, 0), n);
  end = std::min(std::max<int64_t>(end, start), n);
  DimVector sizes(x.sizes_ref()), strides(x.strides_ref());
  const int64_t len = end > start ? (end - start - 1) / step + 1 : 0;  // no overflow for any step
  sizes[static_cast<size_t>(d)] = len;
  if (len > 1) strides[static_cast<size_t>(d)] = checked_mul(strides[static_cast<size_t>(d)], step, op::slice::op_name());
  int64_t offset;
  if (__builtin_mul_overflow(start, x.strides_ref()[static_cast<size_t>(d)], &offset) ||
      __builtin_add_overflow(offset, x.storage_offset(), &offset)) {
    // Only an empty tensor has strides this large; where an empty view starts does not matter.
    EMBER_CHECK_SHAPE(numel_of(IntArrayRef(sizes)) == 0, op::slice::op_name(), ": the storage offset of dim ", d,
                      " start ", start, " overflows 64 bits (shape ", x.sizes_ref(), ", strides ", x.strides_ref(),
                      ")");
    offset = x.storage_offset();
  }
  return view_of(x, sizes, strides, offset);
}

Tensor narrow_any(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  EMBER_CHECK_INDEX(x.dim() > 0, op::narrow::op_name(), ": cannot be applied to a 0-dim tensor");
  int64_t d = wrap_dim(dim, x.dim(), op::narrow::op_name());
  int64_t n = x.size(d);
  if (start < 0) start += n;
  EMBER_CHECK_INDEX(start >= 0 && start <= n && length >= 0 && length <= n - start, op::narrow::op_name(), ": start (",
                    start, ") + length (", length, ") exceeds dimension size (", n, ") of dim ", d, " of shape ",
                    x.sizes_ref());
  return ember::slice(x, d, start, start + length, 1);
}

Tensor select_any(const Tensor& x, int64_t dim, int64_t index) {
  EMBER_CHECK_INDEX(x.dim() > 0, op::select::op_name(), ": cannot be applied to a 0-dim tensor");
  int64_t d = wrap_dim(dim, x.dim(), op::select::op_name());
  int64_t n = x.sizes_ref()[static_cast<size_t>(d)];
  EMBER_CHECK_INDEX(index >= -n && index < n, op::select::op_name(), ": index ", index,
                    " out of range for tensor of size ", x.sizes_ref(), " at dimension ", d);
  if (index < 0) index += n;
  DimVector sizes(x.sizes_ref()), strides(x.strides_ref());
  int64_t offset = x.storage_offset() + index * strides[static_cast<size_t>(d)];
  sizes.erase(static_cast<size_t>(d));
  strides.erase(static_cast<size_t>(d));
  return view_of(x, sizes, strides, offset);
}

std::vector<Tensor> split_any(const Tensor& x, int64_t split_size, int64_t dim) {
  EMBER_CHECK_INDEX(x.dim() > 0, op::split::op_name(), ": cannot be applied to a 0-dim tensor");
  int64_t d = wrap_dim(dim, x.dim(), op::split::op_name());
  EMBER_CHECK_VALUE(split_size > 0 || x.size(d) == 0, op::split::op_name(), ": split_size must be positive, got ",
                    split_size);
  int64_t n = x.size(d);
  std::vector<Tensor> out;
  if (n == 0) {
    out.push_back(x);
    return out;
  }
  for (int64_t s = 0; s < n; s += split_size) out.push_back(ember::narrow(x, d, s, std::min(split_size, n - s)));
  return out;
}

std::vector<Tensor> chunk_any(const Tensor& x, int64_t chunks, int64_t dim) {
  EMBER_CHECK_VALUE(chunks > 0, op::chunk::op_name(), ": expects chunks > 0, got ", chunks);
  EMBER_CHECK_INDEX(x.dim() > 0, op::chunk::op_name(), ": cannot be applied to a 0-dim tensor");
  int64_t n = x.size(dim);
  int64_t size = n == 0 ? 0 : (n - 1) / chunks + 1;  // ceil(n / chunks) without overflow
  return ember::split(x, std::max<int64_t>(size, 1), dim);
}

Tensor as_strided_any(const Tensor& x, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  EMBER_CHECK_SHAPE(sizes.size() == strides.size(), op::as_strided::op_name(), ": sizes ", sizes, " and strides ",
                    strides, " differ in rank");
  int64_t max_off = offset;
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    EMBER_CHECK_SHAPE(sizes[i] >= 0 && strides[i] >= 0, op::as_strided::op_name(), ": negative size or stride in ",
                      sizes, " / ", strides);
    if (sizes[i] == 0) empty = true;
  }
  for (size_t i = 0; i < sizes.size() && !empty; ++i)
    max_off = checked_add(max_off, checked_mul(sizes[i] - 1, strides[i], op::as_strided::op_name()),
                          op::as_strided::op_name());
  int64_t storage_elems = static_cast<int64_t>(x.impl()->storage()->nbytes() / x.element_size());
  EMBER_CHECK_INDEX(offset >= 0 && (empty || max_off < storage_elems), op::as_strided::op_name(), ": view with sizes ",
                    sizes, ", strides ", strides, " and offset ", offset, " reaches element ", max_off,
                    " but the storage holds ", storage_elems, " elements");
  return view_of(x, sizes, strides, offset);
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::slice());
  m.impl(op::slice(), DispatchKey::CompositeExplicit, &slice_any);
  m.def(op::select());
  m.impl(op::select(), DispatchKey::CompositeExplicit, &select_any);
  m.def(op::as_strided());
  m.impl(op::as_strided(), DispatchKey::CompositeExplicit, &as_strided_any);
  m.def(op::narrow(), &narrow_any);
  m.def(op::split(), &split_any);
  m.def(op::chunk(), &chunk_any);
}

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return op::slice::call(x, dim, start, end, step);
}
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  return op::narrow::call(x, dim, start, length);
}
Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  return op::select::call(x, dim, index);
}
std::vector<Tensor> split(const Tensor& x, int64_t size, int64_t dim) {
  return op::split::call(x, size, dim);
}
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  return op::chunk::call(x, chunks, dim);
}
Tensor as_strided(const Tensor& x, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  return op::as_strided::call(x, sizes, strides, offset);
}

Tensor Tensor::slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  return ember::slice(*this, dim, start, end, step);
}
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const { return ember::narrow(*this, dim, start, length); }
Tensor Tensor::select(int64_t dim, int64_t index) const { return ember::select(*this, dim, index); }
Tensor Tensor::operator[](int64_t index) const { return ember::select(*this, 0, index); }
std::vector<Tensor> Tensor::chunk(int64_t n, int64_t dim) const { return ember::chunk(*this, n, dim); }
std::vector<Tensor> Tensor::split(int64_t size, int64_t dim) const { return ember::split(*this, size, dim); }
Tensor Tensor::as_strided(IntArrayRef sizes, IntArrayRef strides, int64_t offset) const {
  return ember::as_strided(*this, sizes, strides, offset);
}

// ---------------------------------------------------------------- backward
// slice/select: the gradient is zeros of the input's shape with g written where the view was:
// slice_backward / select_backward, ops of their own so that their derivative (g sliced or
// selected again) is recorded under create_graph. as_strided: a stated gap (its backward in
// general needs scatter-adds over overlapping windows); it throws if an input requires grad.
namespace {
using namespace autograd;
using SliceSig = Tensor(const Tensor&, int64_t, int64_t, int64_t, int64_t);
using SelectSig = Tensor(const Tensor&, int64_t, int64_t);
using SliceBwSig = Tensor(const Tensor&, IntArrayRef, int64_t, int64_t, int64_t, int64_t);
using SelectBwSig = Tensor(const Tensor&, IntArrayRef, int64_t, int64_t);

Tensor slice_backward_any(const Tensor& g, IntArrayRef sizes, int64_t dim, int64_t start, int64_t end, int64_t step) {
  Tensor gx = zeros(sizes, g.options());
  Tensor v = gx.slice(dim, start, end, step);
  EMBER_CHECK_SHAPE(v.sizes() == g.sizes(), op::slice_backward::op_name(), ": grad of shape ", g.sizes(),
                    " does not fit the slice of ", sizes, " (shape ", v.sizes(), ")");
  v.copy_(g);
  return gx;
}
Tensor select_backward_any(const Tensor& g, IntArrayRef sizes, int64_t dim, int64_t index) {
  Tensor gx = zeros(sizes, g.options());
  Tensor v = gx.select(dim, index);
  EMBER_CHECK_SHAPE(v.sizes() == g.sizes(), op::select_backward::op_name(), ": grad of shape ", g.sizes(),
                    " does not fit the selection of ", sizes, " (shape ", v.sizes(), ")");
  v.copy_(g);
  return gx;
}

std::vector<Tensor> slice_bw(const BackwardCtx<SliceSig>& c) {
  return {op::slice_backward::call(c.grad(), c.meta<0>().sizes, c.arg<1>(), c.arg<2>(), c.arg<3>(), c.arg<4>())};
}
std::vector<Tensor> select_bw(const BackwardCtx<SelectSig>& c) {
  return {op::select_backward::call(c.grad(), c.meta<0>().sizes, c.arg<1>(), c.arg<2>())};
}
std::vector<Tensor> slice_backward_bw(const BackwardCtx<SliceBwSig>& c) {
  return {c.grad().slice(c.arg<2>(), c.arg<3>(), c.arg<4>(), c.arg<5>())};
}
std::vector<Tensor> select_backward_bw(const BackwardCtx<SelectBwSig>& c) {
  return {c.grad().select(c.arg<2>(), c.arg<3>())};
}
const auto kSlice = spec_of<op::slice>("SliceBackward", &slice_bw);
const auto kSelect = spec_of<op::select>("SelectBackward", &select_bw);
const auto kSliceBw = spec_of<op::slice_backward>("SliceBackwardBackward", &slice_backward_bw);
const auto kSelectBw = spec_of<op::select_backward>("SelectBackwardBackward", &select_backward_bw);
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::slice_backward());
  m.impl(op::slice_backward(), DispatchKey::CompositeExplicit, &slice_backward_any);
  m.def(op::select_backward());
  m.impl(op::select_backward(), DispatchKey::CompositeExplicit, &select_backward_any);
}

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::slice(), autograd_kernel<&kSlice>());
  m.impl(op::select(), autograd_kernel<&kSelect>());
  m.impl(op::slice_backward(), autograd_kernel<&kSliceBw>());
  m.impl(op::select_backward(), autograd_kernel<&kSelectBw>());
  m.impl_autograd_unsupported(op::as_strided(), "no backward for arbitrary strided views; use view/slice/select/expand");
}

}  // namespace ember
