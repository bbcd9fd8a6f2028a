// ember: TensorImpl, the shared state behind a Tensor handle.
#pragma once

#include <memory>

#include "ember/tensor/dispatch_key.h"
#include "ember/core/dtype.h"
#include "ember/core/shape.h"
#include "ember/tensor/storage.h"

namespace ember {

// The autograd layer's per-tensor state (requires_grad, grad, grad_fn, hooks, ...). Declared here
// as an interface so the tensor layer knows nothing about autograd (see autograd/meta.h).
struct AutogradMetaInterface {
  virtual ~AutogradMetaInterface() = default;
};

class TensorImpl final : public IntrusiveTarget {
 public:
  TensorImpl(Storage storage, DType dtype, IntArrayRef sizes, IntArrayRef strides, int64_t offset);
  ~TensorImpl() override;

  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t size(size_t d) const { return sizes_[d]; }
  int64_t stride(size_t d) const { return strides_[d]; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return offset_; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  bool is_contiguous() const { return contiguous_; }
  // True for tensors made by a view op (they share another tensor's storage); see
  // Note [In-place on views] in autograd/meta.h.
  bool is_view() const { return is_view_; }
  void set_is_view(bool v) { is_view_ = v; }
  // The tensor a view's storage belongs to (the root: a view of a view has its base's base);
  // null for non-views and detached tensors. In-place ops on a view rewrite the base's history
  // (autograd's CopySlices), and a view takes part in autograd when its base does.
  TensorImpl* view_base() const { return view_base_.get(); }
  const IntrusivePtr<TensorImpl>& view_base_ptr() const { return view_base_; }
  void set_view_base(IntrusivePtr<TensorImpl> b) { view_base_ = std::move(b); }
  size_t itemsize() const { return element_size(dtype_); }

  const Storage& storage() const { return storage_; }
  // Address of element [0, ..., 0] (for NPU tensors a device address).
  // An empty view may sit at any offset (as in PyTorch), so the byte offset is computed in
  // unsigned arithmetic: defined for every offset, and never dereferenced when out of range.
  // Storage of 0 bytes has a null base, and then so is the address (no element to address); the
  // offset is masked rather than branched on (this is on every op's path).
  void* data() const {
    uintptr_t base = reinterpret_cast<uintptr_t>(storage_->data());
    uintptr_t off = static_cast<uint64_t>(offset_) * static_cast<uint64_t>(itemsize());
    return reinterpret_cast<void*>(base + (off & (uintptr_t(0) - uintptr_t(base != 0))));
  }

  // A view of a base in autograd routes to autograd too (its history may have to follow the base's).
  DispatchKeySet key_set() const {
    return __builtin_expect(view_base_.get() != nullptr, 0) && view_base_->key_set_.has(DispatchKey::Autograd)
               ? key_set_.add(DispatchKey::Autograd)
               : key_set_;
  }
  void set_autograd_key(bool on) {
    key_set_ = on ? key_set_.add(DispatchKey::Autograd) : key_set_.remove(DispatchKey::Autograd);
  }

  // Metadata changes (views are new TensorImpls; these serve in-place metadata ops).
  void set_sizes_strides(IntArrayRef sizes, IntArrayRef strides);
  void set_storage_offset(int64_t offset) { offset_ = offset; }
  void set_storage(Storage s) { storage_ = std::move(s); }
  // Takes src's storage, dtype, sizes, strides and offset (and backend key), keeping this
  // TensorImpl's identity and autograd state: what Module::to uses so that every holder of a
  // parameter (an optimizer) sees it move.
  void set_data_from(const TensorImpl& src);

  uint32_t version() const { return storage_->version(); }
  void bump_version() { storage_->bump_version(); }

  AutogradMetaInterface* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaInterface> m) { autograd_meta_ = std::move(m); }

 private:
  void refresh();

  Storage storage_;
  DimVector sizes_;
  DimVector strides_;
  int64_t offset_ = 0;
  int64_t numel_ = 0;
  DType dtype_;
  bool contiguous_ = true;
  bool is_view_ = false;
  DispatchKeySet key_set_;
  IntrusivePtr<TensorImpl> view_base_;
  std::unique_ptr<AutogradMetaInterface> autograd_meta_;
};

}  // namespace ember
