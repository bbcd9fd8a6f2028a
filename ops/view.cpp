// Shape views (share storage, no copy): view, reshape, flatten, transpose, t, permute,
// unsqueeze, squeeze, expand. Views are CompositeExplicit: one device-agnostic kernel.
#include "ember/autograd/engine.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(view, Keep, "ember::view(Tensor self, int[] size) -> Tensor", Tensor(const Tensor&, IntArrayRef));
EMBER_DECLARE_OP(permute, Keep, "ember::permute(Tensor self, int[] dims) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef));
EMBER_DECLARE_OP(transpose, Keep, "ember::transpose(Tensor self, int dim0, int dim1) -> Tensor",
                 Tensor(const Tensor&, int64_t, int64_t));
EMBER_DECLARE_OP(unsqueeze, Keep, "ember::unsqueeze(Tensor self, int dim) -> Tensor", Tensor(const Tensor&, int64_t));
EMBER_DECLARE_OP(squeeze, Keep, "ember::squeeze(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_DECLARE_OP(squeeze_dim, Keep, "ember::squeeze.dim(Tensor self, int dim) -> Tensor",
                 Tensor(const Tensor&, int64_t));
EMBER_DECLARE_OP(expand, Keep, "ember::expand(Tensor self, int[] size) -> Tensor", Tensor(const Tensor&, IntArrayRef));
EMBER_DECLARE_OP(reshape, Keep, "ember::reshape(Tensor self, int[] shape) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef));
EMBER_DECLARE_OP(flatten, Keep, "ember::flatten(Tensor self, int start_dim=0, int end_dim=-1) -> Tensor",
                 Tensor(const Tensor&, int64_t, int64_t));
EMBER_DECLARE_OP(t, Keep, "ember::t(Tensor self) -> Tensor", Tensor(const Tensor&));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

// Resolves one -1 in shape against numel.
DimVector infer_size(const char* op, IntArrayRef shape, int64_t numel) {
  DimVector out(shape);
  int64_t known = 1, infer = -1;
  bool overflow = false, zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      EMBER_CHECK_SHAPE(infer < 0, op, ": only one dimension can be inferred, got shape ", shape);
      infer = static_cast<int64_t>(i);
    } else {
      EMBER_CHECK_SHAPE(shape[i] >= 0, op, ": invalid shape dimension ", shape[i], " in ", shape);
      zero = zero || shape[i] == 0;
      overflow = overflow || __builtin_mul_overflow(known, shape[i], &known);
    }
  }
  if (zero) known = 0;
  // A product beyond int64 cannot be the element count of any tensor.
  EMBER_CHECK_SHAPE(!overflow || zero, op, ": shape ", shape, " is invalid for input of size ", numel);
  if (infer >= 0) {
    EMBER_CHECK_SHAPE(known != 0 && numel % known == 0, op, ": shape ", shape, " is invalid for input of size ", numel);
    out[static_cast<size_t>(infer)] = numel / known;
  } else {
    EMBER_CHECK_SHAPE(known == numel, op, ": shape ", shape, " is invalid for input of size ", numel);
  }
  return out;
}

// Strides for viewing (sizes, strides) as new_sizes without a copy, or false (PyTorch's
// computeStride: each chunk of old dims that are contiguous with each other maps to new dims).
bool compute_view_strides(IntArrayRef old_sizes, IntArrayRef old_strides, IntArrayRef new_sizes, DimVector* out) {
  out->assign(new_sizes.size(), 0);
  if (old_sizes.empty() || numel_of(old_sizes) == 0) {
    *out = contiguous_strides(new_sizes);
    return true;
  }
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.empty() ? 1 : old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_sizes.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_sizes[static_cast<size_t>(tensor_d)];
    if (tensor_d == 0 || (old_sizes[static_cast<size_t>(tensor_d - 1)] != 1 &&
                          old_strides[static_cast<size_t>(tensor_d - 1)] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[static_cast<size_t>(view_d)] == 1)) {
        (*out)[static_cast<size_t>(view_d)] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[static_cast<size_t>(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[static_cast<size_t>(tensor_d - 1)];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

Tensor view_any(const Tensor& x, IntArrayRef shape) {
  DimVector sizes = infer_size(op::view::op_name(), shape, x.numel());
  DimVector strides;
  EMBER_CHECK_SHAPE(compute_view_strides(x.sizes_ref(), x.strides_ref(), sizes, &strides), op::view::op_name(),
                    ": view size ", IntArrayRef(sizes), " is not compatible with input tensor's size ", x.sizes_ref(),
                    " and stride ", x.strides_ref(),
                    " (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  return view_of(x, sizes, strides, x.storage_offset());
}

Tensor reshape_any(const Tensor& x, IntArrayRef shape) {
  DimVector sizes = infer_size(op::reshape::op_name(), shape, x.numel());
  DimVector strides;
  if (compute_view_strides(x.sizes_ref(), x.strides_ref(), sizes, &strides)) return ember::view(x, sizes);
  return ember::view(ember::clone(x), sizes);
}

Tensor flatten_any(const Tensor& x, int64_t start, int64_t end) {
  int64_t nd = x.dim();
  if (nd == 0) return ember::reshape(x, {1});
  int64_t s = wrap_dim(start, nd, op::flatten::op_name()), e = wrap_dim(end, nd, op::flatten::op_name());
  EMBER_CHECK_INDEX(s <= e, op::flatten::op_name(), ": start_dim ", start, " cannot come after end_dim ", end);
  if (s == e) return x;
  Shape shape;
  for (int64_t d = 0; d < s; ++d) shape.push_back(x.size(d));
  // An empty tensor may have other dims whose product leaves int64: a ShapeError, not a wrap.
  bool zero = false;
  for (int64_t d = s; d <= e; ++d) zero = zero || x.size(d) == 0;
  int64_t m = zero ? 0 : 1;
  for (int64_t d = s; d <= e && !zero; ++d) m = checked_mul(m, x.size(d), op::flatten::op_name());
  shape.push_back(m);
  for (int64_t d = e + 1; d < nd; ++d) shape.push_back(x.size(d));
  return ember::reshape(x, shape);
}

Tensor permute_any(const Tensor& x, IntArrayRef dims) {
  int64_t nd = x.dim();
  EMBER_CHECK_SHAPE(static_cast<int64_t>(dims.size()) == nd, op::permute::op_name(), ": number of dims ", dims.size(),
                    " doesn't match the tensor's ", nd, " dims (dims ", dims, ", shape ", x.sizes_ref(), ")");
  DimVector sizes(static_cast<size_t>(nd)), strides(static_cast<size_t>(nd));
  uint64_t seen = 0;
  for (int64_t i = 0; i < nd; ++i) {
    int64_t d = wrap_dim(dims[static_cast<size_t>(i)], nd, op::permute::op_name());
    EMBER_CHECK_INDEX(!(seen & (uint64_t(1) << d)), op::permute::op_name(), ": repeated dim ", d, " in ", dims);
    seen |= uint64_t(1) << d;
    sizes[static_cast<size_t>(i)] = x.sizes_ref()[static_cast<size_t>(d)];
    strides[static_cast<size_t>(i)] = x.strides_ref()[static_cast<size_t>(d)];
  }
  return view_of(x, sizes, strides, x.storage_offset());
}

Tensor transpose_any(const Tensor& x, int64_t d0, int64_t d1) {
  int64_t nd = x.dim();
  if (nd == 0) {
    wrap_dim(d0, nd, op::transpose::op_name());
    wrap_dim(d1, nd, op::transpose::op_name());
    return view_of(x, x.sizes_ref(), x.strides_ref(), x.storage_offset());
  }
  int64_t a = wrap_dim(d0, nd, op::transpose::op_name()), b = wrap_dim(d1, nd, op::transpose::op_name());
  DimVector sizes(x.sizes_ref()), strides(x.strides_ref());
  std::swap(sizes[static_cast<size_t>(a)], sizes[static_cast<size_t>(b)]);
  std::swap(strides[static_cast<size_t>(a)], strides[static_cast<size_t>(b)]);
  return view_of(x, sizes, strides, x.storage_offset());
}

Tensor t_any(const Tensor& x) {
  EMBER_CHECK_SHAPE(x.dim() <= 2, op::t::op_name(), ": expects a tensor with <= 2 dimensions, but self is ", x.dim(),
                    "-D (shape ", x.sizes_ref(), ")");
  return x.dim() < 2 ? ember::transpose(x, 0, 0) : ember::transpose(x, 0, 1);
}

Tensor unsqueeze_any(const Tensor& x, int64_t dim) {
  int64_t d = wrap_dim(dim, x.dim() + 1, op::unsqueeze::op_name());
  DimVector sizes(x.sizes_ref()), strides(x.strides_ref());
  // The new dim has size 1, so its stride never moves an index; PyTorch's choice (size * stride of
  // the dim it goes before) is kept where it fits in 64 bits (views may have huge strides).
  int64_t st = 1;
  if (d < x.dim() && __builtin_mul_overflow(x.strides_ref()[static_cast<size_t>(d)],
                                            x.sizes_ref()[static_cast<size_t>(d)], &st))
    st = x.strides_ref()[static_cast<size_t>(d)];
  sizes.insert(static_cast<size_t>(d), 1);
  strides.insert(static_cast<size_t>(d), st);
  return view_of(x, sizes, strides, x.storage_offset());
}

Tensor squeeze_any(const Tensor& x) {
  DimVector sizes, strides;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (x.sizes_ref()[static_cast<size_t>(d)] == 1) continue;
    sizes.push_back(x.sizes_ref()[static_cast<size_t>(d)]);
    strides.push_back(x.strides_ref()[static_cast<size_t>(d)]);
  }
  return view_of(x, sizes, strides, x.storage_offset());
}

Tensor squeeze_dim_any(const Tensor& x, int64_t dim) {
  int64_t d = wrap_dim(dim, x.dim(), op::squeeze::op_name());
  if (x.dim() == 0 || x.sizes_ref()[static_cast<size_t>(d)] != 1)
    return view_of(x, x.sizes_ref(), x.strides_ref(), x.storage_offset());
  DimVector sizes(x.sizes_ref()), strides(x.strides_ref());
  sizes.erase(static_cast<size_t>(d));
  strides.erase(static_cast<size_t>(d));
  return view_of(x, sizes, strides, x.storage_offset());
}

Tensor expand_any(const Tensor& x, IntArrayRef shape) {
  int64_t nd = static_cast<int64_t>(shape.size());
  EMBER_CHECK_SHAPE(nd >= x.dim(), op::expand::op_name(), ": the number of sizes provided (", nd,
                    ") must be greater or equal to the number of dimensions in the tensor (", x.dim(), ")");
  DimVector sizes(static_cast<size_t>(nd)), strides(static_cast<size_t>(nd));
  int64_t lead = nd - x.dim();
  for (int64_t i = nd - 1; i >= 0; --i) {
    int64_t want = shape[static_cast<size_t>(i)];
    if (i < lead) {
      EMBER_CHECK_SHAPE(want >= 0, op::expand::op_name(),
                        ": -1 is not allowed in a leading, non-existing dimension (shape ", shape, ")");
      sizes[static_cast<size_t>(i)] = want;
      strides[static_cast<size_t>(i)] = 0;
      continue;
    }
    int64_t have = x.sizes_ref()[static_cast<size_t>(i - lead)];
    if (want == -1) want = have;
    EMBER_CHECK_SHAPE(have == want || have == 1, op::expand::op_name(), ": the expanded size of the tensor (", want,
                      ") must match the existing size (", have, ") at non-singleton dimension ", i,
                      ". Target sizes: ", shape, ". Tensor sizes: ", x.sizes_ref());
    sizes[static_cast<size_t>(i)] = want;
    strides[static_cast<size_t>(i)] = have == want ? x.strides_ref()[static_cast<size_t>(i - lead)] : 0;
  }
  return view_of(x, sizes, strides, x.storage_offset());
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::view());
  m.impl(op::view(), DispatchKey::CompositeExplicit, &view_any);
  m.def(op::permute());
  m.impl(op::permute(), DispatchKey::CompositeExplicit, &permute_any);
  m.def(op::transpose());
  m.impl(op::transpose(), DispatchKey::CompositeExplicit, &transpose_any);
  m.def(op::unsqueeze());
  m.impl(op::unsqueeze(), DispatchKey::CompositeExplicit, &unsqueeze_any);
  m.def(op::squeeze());
  m.impl(op::squeeze(), DispatchKey::CompositeExplicit, &squeeze_any);
  m.def(op::squeeze_dim());
  m.impl(op::squeeze_dim(), DispatchKey::CompositeExplicit, &squeeze_dim_any);
  m.def(op::expand());
  m.impl(op::expand(), DispatchKey::CompositeExplicit, &expand_any);
  // Written in terms of the views above.
  m.def(op::reshape(), &reshape_any);
  m.def(op::flatten(), &flatten_any);
  m.def(op::t(), &t_any);
}

using TL = Tensor(const Tensor&, IntArrayRef);
using T1 = Tensor(const Tensor&);
using TI = Tensor(const Tensor&, int64_t);
using TII = Tensor(const Tensor&, int64_t, int64_t);
Tensor view(const Tensor& x, IntArrayRef s) { return op::view::call(x, s); }
Tensor reshape(const Tensor& x, IntArrayRef s) { return op::reshape::call(x, s); }
Tensor flatten(const Tensor& x, int64_t a, int64_t b) { return op::flatten::call(x, a, b); }
Tensor transpose(const Tensor& x, int64_t a, int64_t b) { return op::transpose::call(x, a, b); }
Tensor t(const Tensor& x) { return op::t::call(x); }
Tensor permute(const Tensor& x, IntArrayRef d) { return op::permute::call(x, d); }
Tensor unsqueeze(const Tensor& x, int64_t d) { return op::unsqueeze::call(x, d); }
Tensor squeeze(const Tensor& x) { return op::squeeze::call(x); }
Tensor squeeze(const Tensor& x, int64_t d) { return op::squeeze_dim::call(x, d); }
Tensor expand(const Tensor& x, IntArrayRef s) { return op::expand::call(x, s); }

Tensor Tensor::view(IntArrayRef s) const { return ember::view(*this, s); }
Tensor Tensor::reshape(IntArrayRef s) const { return ember::reshape(*this, s); }
Tensor Tensor::flatten(int64_t a, int64_t b) const { return ember::flatten(*this, a, b); }
Tensor Tensor::transpose(int64_t a, int64_t b) const { return ember::transpose(*this, a, b); }
Tensor Tensor::t() const { return ember::t(*this); }
Tensor Tensor::permute(IntArrayRef d) const { return ember::permute(*this, d); }
Tensor Tensor::unsqueeze(int64_t d) const { return ember::unsqueeze(*this, d); }
Tensor Tensor::squeeze() const { return ember::squeeze(*this); }
Tensor Tensor::squeeze(int64_t d) const { return ember::squeeze(*this, d); }
Tensor Tensor::expand(IntArrayRef s, bool) const { return ember::expand(*this, s); }
Tensor Tensor::expand_as(const Tensor& o) const { return ember::expand(*this, o.sizes_ref()); }

// ---------------------------------------------------------------- backward
// Views: the gradient is the view undone (reshape back, inverse permutation, squeeze/unsqueeze,
// sum over the expanded dims).
namespace {
using namespace autograd;
using TLSig = Tensor(const Tensor&, IntArrayRef);
using TIISig = Tensor(const Tensor&, int64_t, int64_t);
using TISig = Tensor(const Tensor&, int64_t);
using T1Sig = Tensor(const Tensor&);
std::vector<Tensor> view_bw(const BackwardCtx<TLSig>& c) { return {c.grad().reshape(c.meta<0>().sizes)}; }
std::vector<Tensor> permute_bw(const BackwardCtx<TLSig>& c) {
  IntArrayRef dims = c.arg<1>();
  int64_t n = static_cast<int64_t>(dims.size());
  Shape inv(dims.size());
  for (int64_t i = 0; i < n; ++i) inv[static_cast<size_t>(dims[static_cast<size_t>(i)] < 0 ? dims[static_cast<size_t>(i)] + n : dims[static_cast<size_t>(i)])] = i;
  return {c.grad().permute(inv)};
}
std::vector<Tensor> transpose_bw(const BackwardCtx<TIISig>& c) { return {c.grad().transpose(c.arg<1>(), c.arg<2>())}; }
std::vector<Tensor> unsqueeze_bw(const BackwardCtx<TISig>& c) { return {c.grad().reshape(c.meta<0>().sizes)}; }
std::vector<Tensor> squeeze_bw(const BackwardCtx<T1Sig>& c) { return {c.grad().reshape(c.meta<0>().sizes)}; }
std::vector<Tensor> squeeze_dim_bw(const BackwardCtx<TISig>& c) { return {c.grad().reshape(c.meta<0>().sizes)}; }
std::vector<Tensor> expand_bw(const BackwardCtx<TLSig>& c) { return {sum_to(c.grad(), c.meta<0>().sizes)}; }
const auto kView = spec_of<op::view>("ViewBackward", &view_bw);
const auto kPermute = spec_of<op::permute>("PermuteBackward", &permute_bw);
const auto kTranspose = spec_of<op::transpose>("TransposeBackward", &transpose_bw);
const auto kUnsqueeze = spec_of<op::unsqueeze>("UnsqueezeBackward", &unsqueeze_bw);
const auto kSqueeze = spec_of<op::squeeze>("SqueezeBackward", &squeeze_bw);
const auto kSqueezeDim = spec_of<op::squeeze_dim>("SqueezeBackward", &squeeze_dim_bw);
const auto kExpand = spec_of<op::expand>("ExpandBackward", &expand_bw);
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::view(), autograd_kernel<&kView>());
  m.impl(op::permute(), autograd_kernel<&kPermute>());
  m.impl(op::transpose(), autograd_kernel<&kTranspose>());
  m.impl(op::unsqueeze(), autograd_kernel<&kUnsqueeze>());
  m.impl(op::squeeze(), autograd_kernel<&kSqueeze>());
  m.impl(op::squeeze_dim(), autograd_kernel<&kSqueezeDim>());
  m.impl(op::expand(), autograd_kernel<&kExpand>());
}

}  // namespace ember
