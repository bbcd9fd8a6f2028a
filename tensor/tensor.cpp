#include "ember/tensor/tensor.h"

#include <cstring>

namespace ember {

void Tensor::throw_undefined() {
  EMBER_THROW(Error, "Tensor: operation on an undefined tensor (default-constructed or moved-from)");
}

int64_t Tensor::size(int64_t dim) const {
  TensorImpl* t = checked();
  int64_t d = wrap_dim(dim, t->dim(), "size");
  EMBER_CHECK_INDEX(t->dim() > 0, "size: tensor is 0-d, it has no dimension ", dim);
  return t->size(static_cast<size_t>(d));
}

int64_t Tensor::stride(int64_t dim) const {
  TensorImpl* t = checked();
  int64_t d = wrap_dim(dim, t->dim(), "stride");
  EMBER_CHECK_INDEX(t->dim() > 0, "stride: tensor is 0-d, it has no dimension ", dim);
  return t->stride(static_cast<size_t>(d));
}

void Tensor::set_data(const Tensor& other) {
  EMBER_CHECK_VALUE(defined() && other.defined(), "set_data: both tensors must be defined");
  impl_->set_data_from(*other.impl());
}

bool Tensor::is_alias_of(const Tensor& o) const {
  return defined() && o.defined() && impl_->storage().get() == o.impl_->storage().get();
}

void Tensor::check_data_ptr(DType requested) const {
  TensorImpl* t = checked();
  EMBER_CHECK_DEVICE(t->device().is_cpu(), "data_ptr: tensor is on ", t->device(),
                     "; device memory is not host-accessible. Copy it with .cpu() first");
  EMBER_CHECK_DTYPE(requested == t->dtype(), "data_ptr<", requested, ">: tensor has dtype ", t->dtype());
}

void* Tensor::raw_data_ptr() const {
  TensorImpl* t = checked();
  EMBER_CHECK_DEVICE(t->device().is_cpu(), "data_ptr: tensor is on ", t->device(),
                     "; device memory is not host-accessible. Copy it with .cpu() first");
  return t->data();
}

void Tensor::copy_to_host(void* dst, DType dst_dtype) const {
  Tensor src = cpu().contiguous();
  if (src.dtype() != dst_dtype) src = src.to(dst_dtype);
  if (src.numel()) std::memcpy(dst, src.impl()->data(), src.nbytes());
}

Scalar Tensor::item() const {
  EMBER_CHECK_VALUE(numel() == 1, "item: only one-element tensors can be converted to a scalar, got shape ",
                    sizes_ref());
  Tensor c = cpu();
  const void* p = c.impl()->data();
  switch (c.dtype()) {
    case DType::Float32: return Scalar(*static_cast<const float*>(p));
    case DType::Float64: return Scalar(*static_cast<const double*>(p));
    case DType::Float16: return Scalar(*static_cast<const Half*>(p));
    case DType::BFloat16: return Scalar(*static_cast<const BFloat16*>(p));
    case DType::Int64: return Scalar(*static_cast<const int64_t*>(p));
    case DType::Int32: return Scalar(*static_cast<const int32_t*>(p));
    case DType::Bool: return Scalar(*static_cast<const bool*>(p));
    case DType::UInt8: return Scalar(int64_t{*static_cast<const uint8_t*>(p)});
    case DType::Int8: return Scalar(int64_t{*static_cast<const int8_t*>(p)});
    case DType::Int16: return Scalar(int64_t{*static_cast<const int16_t*>(p)});
  }
  return Scalar();
}

}  // namespace ember
