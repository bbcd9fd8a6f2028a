#include "ember/ops/op_util.h"

namespace ember {
namespace ops {

DType result_type(std::initializer_list<TypeOperand> ops) {
  bool have[3] = {false, false, false};
  DType best[3] = {DType::Bool, DType::Bool, DType::Bool};
  for (const TypeOperand& o : ops) {
    best[o.priority] = have[o.priority] ? promote_types(best[o.priority], o.dtype) : o.dtype;
    have[o.priority] = true;
  }
  // A lower-priority operand only raises the category (core's combine_categories).
  auto combine = [](bool hh, DType h, bool hl, DType l, bool* out_have) -> DType {
    *out_have = hh || hl;
    if (!hh) return l;
    return hl ? combine_categories(h, l) : h;
  };
  bool h01;
  DType r01 = combine(have[1], best[1], have[0], best[0], &h01);
  bool h;
  DType r = combine(have[2], best[2], h01, r01, &h);
  // A float scalar meeting only scalars/ints gives the default float (float32), which
  // Scalar::dtype() already returns.
  return r;
}

void check_can_cast(const char* op, DType from, DType to) {
  EMBER_CHECK_DTYPE(can_cast(from, to), op, ": result type ", from, " can't be cast to the desired output type ", to);
}

Device common_device(const char* op, std::initializer_list<const Tensor*> ts) {
  const Tensor* first = nullptr;
  for (const Tensor* t : ts) {
    if (!t->defined()) continue;
    if (!first) {
      first = t;
      continue;
    }
    EMBER_CHECK_DEVICE(t->device() == first->device(), op,
                       ": Expected all tensors to be on the same device, but found at least two devices, ",
                       first->device(), " and ", t->device(), "!");
  }
  return first ? first->device() : Device(DeviceType::CPU);
}

cpu::Strided strided(const Tensor& t) {
  return cpu::Strided(t.impl()->data(), t.dtype(), t.sizes_ref(), t.strides_ref());
}

cpu::Strided strided_as(const Tensor& t, IntArrayRef shape) {
  cpu::Strided s(t.impl()->data(), t.dtype(), shape, IntArrayRef());
  s.strides.resize(shape.size(), 0);
  IntArrayRef ts = t.sizes_ref(), tst = t.strides_ref();
  size_t lead = shape.size() - ts.size();
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i] == shape[lead + i]) s.strides[lead + i] = tst[i];
  }
  return s;
}

Tensor empty_on(IntArrayRef shape, DType dtype, Device device) {
  for (int64_t s : shape) EMBER_CHECK_SHAPE(s >= 0, "empty: negative dimension in shape ", shape);
  int64_t n = numel_of(shape);
  auto storage = Storage::make(checked_bytes(n, element_size(dtype), "empty"), device);
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(storage), dtype, shape, contiguous_strides(shape), 0));
}

Tensor view_of(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset, bool is_view) {
  auto impl = IntrusivePtr<TensorImpl>::make(base.impl()->storage(), base.dtype(), sizes, strides, offset);
  impl->set_is_view(is_view);
  if (is_view) impl->set_view_base(base.impl()->view_base() ? base.impl()->view_base_ptr() : base.impl_ptr());
  return Tensor(std::move(impl));
}

uint64_t reduce_mask(const char* op, IntArrayRef dims, int64_t ndim) {
  EMBER_CHECK_INDEX(ndim <= 64, op, ": tensors with more than 64 dims are not supported");
  if (dims.empty()) return ndim == 0 ? 0 : (ndim == 64 ? ~uint64_t(0) : (uint64_t(1) << ndim) - 1);
  uint64_t mask = 0;
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, ndim, op);
    if (ndim == 0) continue;
    EMBER_CHECK_INDEX(!(mask & (uint64_t(1) << w)), op, ": dim ", w, " appears multiple times in the list of dims ",
                      dims);
    mask |= uint64_t(1) << w;
  }
  return mask;
}

DimVector reduced_shape(IntArrayRef in, uint64_t mask, bool keepdim) {
  DimVector out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (mask & (uint64_t(1) << d)) {
      if (keepdim) out.push_back(1);
    } else {
      out.push_back(in[d]);
    }
  }
  return out;
}

}  // namespace ops
}  // namespace ember
