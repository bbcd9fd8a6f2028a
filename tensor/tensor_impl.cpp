#include "ember/tensor/tensor_impl.h"

#include "ember/core/error.h"

namespace ember {

TensorImpl::TensorImpl(Storage storage, DType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t offset)
    : storage_(std::move(storage)),
      sizes_(sizes),
      strides_(strides),
      offset_(offset),
      dtype_(dtype),
      key_set_(backend_key(storage_->device().type())) {
  EMBER_ASSERT(sizes.size() == strides.size(), "sizes and strides must have the same rank");
  refresh();
}

TensorImpl::~TensorImpl() = default;

void TensorImpl::set_sizes_strides(IntArrayRef sizes, IntArrayRef strides) {
  EMBER_ASSERT(sizes.size() == strides.size(), "sizes and strides must have the same rank");
  sizes_ = sizes;
  strides_ = strides;
  refresh();
}

void TensorImpl::set_data_from(const TensorImpl& src) {
  storage_ = src.storage_;
  sizes_ = src.sizes_;
  strides_ = src.strides_;
  offset_ = src.offset_;
  dtype_ = src.dtype_;
  is_view_ = false;
  bool autograd = key_set_.has(DispatchKey::Autograd);
  key_set_ = DispatchKeySet(backend_key(storage_->device().type()));
  if (autograd) key_set_ = key_set_.add(DispatchKey::Autograd);
  refresh();
}

void TensorImpl::refresh() {
  numel_ = numel_of(sizes_);
  contiguous_ = is_contiguous_layout(sizes_, strides_);
}

}  // namespace ember
