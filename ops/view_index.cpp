// Indexing views: slice (Python slicing with step), narrow, select, operator[], chunk, split,
// as_strided. All share storage.
#include <limits>

#include "ember/autograd/op_spec.h"
#include "ember/ops/op_util.h"
#include "ember/ops/testing/reference.h"

namespace ember {
namespace {
using namespace ops;

Tensor slice_any(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  EMBER_CHECK_INDEX(x.dim() > 0, "slice: cannot be applied to a 0-dim tensor");
  int64_t d = wrap_dim(dim, x.dim(), "slice");
  EMBER_CHECK_VALUE(step > 0, "slice: step must be positive, got ", step);
  int64_t n = x.sizes_ref()[static_cast<size_t>(d)];
  // Python semantics: negative indices count from the end, then clamp to [0, n].
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::min(std::max<int64_t>(start, 0), n);
  end = std::min(std::max<int64_t>(end, start), n);
  DimVector sizes(x.sizes_ref()), strides(x.strides_ref());
  const int64_t len = end > start ? (end - start - 1) / step + 1 : 0;  // no overflow for any step
  sizes[static_cast<size_t>(d)] = len;
  if (len > 1) strides[static_cast<size_t>(d)] = checked_mul(strides[static_cast<size_t>(d)], step, "slice: stride");
  int64_t offset;
  if (__builtin_mul_overflow(start, x.strides_ref()[static_cast<size_t>(d)], &offset) ||
      __builtin_add_overflow(offset, x.storage_offset(), &offset)) {
    // Only an empty tensor has strides this large; where an empty view starts does not matter.
    EMBER_CHECK_SHAPE(numel_of(IntArrayRef(sizes)) == 0, "slice: the storage offset of dim ", d, " start ", start,
                      " overflows 64 bits (shape ", x.sizes_ref(), ", strides ", x.strides_ref(), ")");
    offset = x.storage_offset();
  }
  return view_of(x, sizes, strides, offset);
}

Tensor narrow_any(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  EMBER_CHECK_INDEX(x.dim() > 0, "narrow: cannot be applied to a 0-dim tensor");
  int64_t d = wrap_dim(dim, x.dim(), "narrow");
  int64_t n = x.size(d);
  if (start < 0) start += n;
  EMBER_CHECK_INDEX(start >= 0 && start <= n && length >= 0 && length <= n - start, "narrow: start (", start,
                    ") + length (", length, ") exceeds dimension size (", n, ") of dim ", d, " of shape ",
                    x.sizes_ref());
  return ember::slice(x, d, start, start + length, 1);
}

Tensor select_any(const Tensor& x, int64_t dim, int64_t index) {
  EMBER_CHECK_INDEX(x.dim() > 0, "select: cannot be applied to a 0-dim tensor");
  int64_t d = wrap_dim(dim, x.dim(), "select");
  int64_t n = x.sizes_ref()[static_cast<size_t>(d)];
  EMBER_CHECK_INDEX(index >= -n && index < n, "select: index ", index, " out of range for tensor of size ",
                    x.sizes_ref(), " at dimension ", d);
  if (index < 0) index += n;
  DimVector sizes(x.sizes_ref()), strides(x.strides_ref());
  int64_t offset = x.storage_offset() + index * strides[static_cast<size_t>(d)];
  sizes.erase(static_cast<size_t>(d));
  strides.erase(static_cast<size_t>(d));
  return view_of(x, sizes, strides, offset);
}

std::vector<Tensor> split_any(const Tensor& x, int64_t split_size, int64_t dim) {
  EMBER_CHECK_INDEX(x.dim() > 0, "split: cannot be applied to a 0-dim tensor");
  int64_t d = wrap_dim(dim, x.dim(), "split");
  EMBER_CHECK_VALUE(split_size > 0 || x.size(d) == 0, "split: split_size must be positive, got ", split_size);
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
  EMBER_CHECK_VALUE(chunks > 0, "chunk: expects chunks > 0, got ", chunks);
  EMBER_CHECK_INDEX(x.dim() > 0, "chunk: cannot be applied to a 0-dim tensor");
  int64_t n = x.size(dim);
  int64_t size = n == 0 ? 0 : (n - 1) / chunks + 1;  // ceil(n / chunks) without overflow
  return ember::split(x, std::max<int64_t>(size, 1), dim);
}

Tensor as_strided_any(const Tensor& x, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  EMBER_CHECK_SHAPE(sizes.size() == strides.size(), "as_strided: sizes ", sizes, " and strides ", strides,
                    " differ in rank");
  int64_t max_off = offset;
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    EMBER_CHECK_SHAPE(sizes[i] >= 0 && strides[i] >= 0, "as_strided: negative size or stride in ", sizes, " / ",
                      strides);
    if (sizes[i] == 0) empty = true;
  }
  for (size_t i = 0; i < sizes.size() && !empty; ++i)
    max_off = checked_add(max_off, checked_mul(sizes[i] - 1, strides[i], "as_strided"), "as_strided");
  int64_t storage_elems = static_cast<int64_t>(x.impl()->storage()->nbytes() / x.element_size());
  EMBER_CHECK_INDEX(offset >= 0 && (empty || max_off < storage_elems), "as_strided: view with sizes ", sizes,
                    ", strides ", strides, " and offset ", offset, " reaches element ", max_off,
                    " but the storage holds ", storage_elems, " elements");
  return view_of(x, sizes, strides, offset);
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("slice(Tensor self, int dim=0, int start=0, int end=9223372036854775807, int step=1) -> Tensor");
  m.impl("slice", DispatchKey::CompositeExplicit, &slice_any);
  m.def("select(Tensor self, int dim, int index) -> Tensor");
  m.impl("select", DispatchKey::CompositeExplicit, &select_any);
  m.def("as_strided(Tensor self, int[] size, int[] stride, int storage_offset=0) -> Tensor");
  m.impl("as_strided", DispatchKey::CompositeExplicit, &as_strided_any);
  m.def("narrow(Tensor self, int dim, int start, int length) -> Tensor", &narrow_any);
  m.def("split(Tensor self, int split_size, int dim=0) -> Tensor[]", &split_any);
  m.def("chunk(Tensor self, int chunks, int dim=0) -> Tensor[]", &chunk_any);
}

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return EMBER_OP("ember::slice", Tensor(const Tensor&, int64_t, int64_t, int64_t, int64_t)).call(x, dim, start, end, step);
}
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  return EMBER_OP("ember::narrow", Tensor(const Tensor&, int64_t, int64_t, int64_t)).call(x, dim, start, length);
}
Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  return EMBER_OP("ember::select", Tensor(const Tensor&, int64_t, int64_t)).call(x, dim, index);
}
std::vector<Tensor> split(const Tensor& x, int64_t size, int64_t dim) {
  return EMBER_OP("ember::split", std::vector<Tensor>(const Tensor&, int64_t, int64_t)).call(x, size, dim);
}
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  return EMBER_OP("ember::chunk", std::vector<Tensor>(const Tensor&, int64_t, int64_t)).call(x, chunks, dim);
}
Tensor as_strided(const Tensor& x, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  return EMBER_OP("ember::as_strided", Tensor(const Tensor&, IntArrayRef, IntArrayRef, int64_t)).call(x, sizes, strides, offset);
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
// slice/select: the gradient is zeros of the input's shape with g written where the view was.
// as_strided: a stated gap (its backward in general needs scatter-adds over overlapping
// windows); it throws if an input requires grad.
namespace {
using namespace autograd;
using SliceSig = Tensor(const Tensor&, int64_t, int64_t, int64_t, int64_t);
using SelectSig = Tensor(const Tensor&, int64_t, int64_t);
Tensor zeros_for(const TensorMeta& m, const Tensor& like) {
  return zeros(m.sizes, TensorOptions().dtype(like.dtype()).device(m.device));
}
std::vector<Tensor> slice_bw(const BackwardCtx<SliceSig>& c) {
  Tensor g = c.grad();
  Tensor gx = zeros_for(c.meta<0>(), g);
  gx.slice(c.arg<1>(), c.arg<2>(), c.arg<3>(), c.arg<4>()).copy_(g);
  return {gx};
}
std::vector<Tensor> select_bw(const BackwardCtx<SelectSig>& c) {
  Tensor g = c.grad();
  Tensor gx = zeros_for(c.meta<0>(), g);
  gx.select(c.arg<1>(), c.arg<2>()).copy_(g);
  return {gx};
}
const auto kSlice = OpSpec<SliceSig>{"SliceBackward", "ember::slice", &slice_bw};
const auto kSelect = OpSpec<SelectSig>{"SelectBackward", "ember::select", &select_bw};
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl("slice", autograd_kernel<&kSlice>());
  m.impl("select", autograd_kernel<&kSelect>());
  m.impl_autograd_unsupported("as_strided", "no backward for arbitrary strided views; use view/slice/select/expand");
}

// ---------------------------------------------------------------- samples
namespace {
using testing::Sample;
const std::vector<DType> kViewTypes{kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kBool};

// Reference: gather x at index map for each output index.
Stack gather_ref(const Tensor& x, const Shape& shape, const std::function<Shape(const Shape&)>& src) {
  Tensor out = empty(shape, kFloat64);
  double* o = out.data_ptr<double>();
  for (const Shape& idx : testing::all_indices(shape)) *o++ = testing::at(x, src(idx));
  return {out};
}
}  // namespace

EMBER_OP_INFO("ember::slice", info) {
  info.dtypes = kViewTypes;
  info.exact = true;
  info.view = true;
  info.samples = [](DType dt) {
    auto x = testing::make_tensor({5, 8}, dt);
    return std::vector<Sample>{
        {{x, IValue(int64_t(1)), IValue(int64_t(1)), IValue(int64_t(7)), IValue(int64_t(2))}, "dim 1, [1:7:2]"},
        {{x, IValue(int64_t(0)), IValue(int64_t(-3)), IValue(int64_t(100))}, "negative start, end past the size"},
        {{testing::make_noncontig({4, 6}, dt), IValue(int64_t(-1)), IValue(int64_t(2)), IValue(int64_t(3))},
         "non-contiguous"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();
    int64_t d = a[1].to_int() < 0 ? a[1].to_int() + x.dim() : a[1].to_int();
    int64_t n = x.size(d), s = a[2].to_int(), e = a.size() > 3 ? a[3].to_int() : n, st = a.size() > 4 ? a[4].to_int() : 1;
    if (s < 0) s += n;
    if (e < 0) e += n;
    s = std::min(std::max<int64_t>(s, 0), n);
    e = std::min(std::max(e, s), n);
    Shape shape = x.sizes();
    shape[static_cast<size_t>(d)] = (e - s + st - 1) / st;
    return gather_ref(x, shape, [&](const Shape& idx) {
      Shape src = idx;
      src[static_cast<size_t>(d)] = s + idx[static_cast<size_t>(d)] * st;
      return src;
    });
  };
}
EMBER_OP_INFO("ember::select", info) {
  info.dtypes = kViewTypes;
  info.exact = true;
  info.view = true;
  info.samples = [](DType dt) {
    return std::vector<Sample>{{{testing::make_tensor({3, 4, 5}, dt), IValue(int64_t(1)), IValue(int64_t(2))}, "dim 1"},
                               {{testing::make_tensor({3, 4}, dt), IValue(int64_t(0)), IValue(int64_t(-1))}, "index -1"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();
    int64_t d = a[1].to_int(), i = a[2].to_int() < 0 ? a[2].to_int() + x.size(a[1].to_int()) : a[2].to_int();
    Shape shape = x.sizes();
    shape.erase(shape.begin() + d);
    return gather_ref(x, shape, [&](const Shape& idx) {
      Shape src = idx;
      src.insert(src.begin() + d, i);
      return src;
    });
  };
}
EMBER_OP_INFO("ember::narrow", info) {
  info.dtypes = kViewTypes;
  info.exact = true;
  info.view = true;
  info.samples = [](DType dt) {
    return std::vector<Sample>{
        {{testing::make_tensor({4, 6}, dt), IValue(int64_t(1)), IValue(int64_t(2)), IValue(int64_t(3))}, "dim 1"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();
    int64_t d = a[1].to_int(), s = a[2].to_int(), len = a[3].to_int();
    Shape shape = x.sizes();
    shape[static_cast<size_t>(d)] = len;
    return gather_ref(x, shape, [&](const Shape& idx) {
      Shape src = idx;
      src[static_cast<size_t>(d)] += s;
      return src;
    });
  };
}
EMBER_OP_INFO("ember::as_strided", info) {
  info.dtypes = kViewTypes;
  info.exact = true;
  info.view = true;
  info.samples = [](DType dt) {
    return std::vector<Sample>{
        {{testing::make_tensor({4, 4}, dt), IValue(Shape{4}), IValue(Shape{5}), IValue(int64_t(0))}, "diagonal"},
        {{testing::make_tensor({12}, dt), IValue(Shape{3, 3}), IValue(Shape{3, 1}), IValue(int64_t(2))},
         "overlapping windows"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();  // contiguous samples: flat index = offset + sum(i * stride)
    Shape sizes = a[1].to_int_list(), strides = a[2].to_int_list();
    int64_t off = a[3].to_int();
    Tensor flat = testing::ref_contiguous(x, kFloat64);
    Tensor out = empty(sizes, kFloat64);
    double* o = out.data_ptr<double>();
    for (const Shape& idx : testing::all_indices(sizes)) {
      int64_t f = off;
      for (size_t d = 0; d < idx.size(); ++d) f += idx[d] * strides[d];
      *o++ = flat.data_ptr<double>()[f];
    }
    return {out};
  };
}
namespace {
Stack split_ref(const Tensor& x, int64_t size, int64_t d) {
  Stack pieces;
  std::vector<Tensor> out;
  for (int64_t s = 0; s < x.size(d); s += size) {
    int64_t len = std::min(size, x.size(d) - s);
    Shape shape = x.sizes();
    shape[static_cast<size_t>(d)] = len;
    out.push_back(gather_ref(x, shape, [&](const Shape& idx) {
      Shape src = idx;
      src[static_cast<size_t>(d)] += s;
      return src;
    })[0].to_tensor());
  }
  return {IValue(out)};
}
}  // namespace
EMBER_OP_INFO("ember::split", info) {
  info.dtypes = kViewTypes;
  info.exact = true;
  info.samples = [](DType dt) {
    return std::vector<Sample>{{{testing::make_tensor({7, 3}, dt), IValue(int64_t(3)), IValue(int64_t(0))}, "7 by 3"},
                               {{testing::make_tensor({2, 5}, dt), IValue(int64_t(2)), IValue(int64_t(-1))}, "last dim"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();
    return split_ref(x, a[1].to_int(), a[2].to_int() < 0 ? a[2].to_int() + x.dim() : a[2].to_int());
  };
}
EMBER_OP_INFO("ember::chunk", info) {
  info.dtypes = kViewTypes;
  info.exact = true;
  info.samples = [](DType dt) {
    return std::vector<Sample>{{{testing::make_tensor({7, 3}, dt), IValue(int64_t(3)), IValue(int64_t(0))}, "7 in 3"},
                               {{testing::make_tensor({4, 6}, dt), IValue(int64_t(2)), IValue(int64_t(1))}, "even"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();
    int64_t d = a[2].to_int(), n = a[1].to_int();
    return split_ref(x, (x.size(d) + n - 1) / n, d);
  };
}

}  // namespace ember
