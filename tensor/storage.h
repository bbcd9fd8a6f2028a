// ember: Storage, the bytes behind one or more tensors.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "ember/device/allocator.h"
#include "ember/core/intrusive_ptr.h"

namespace ember {

// Note [Version counter sharing]
// The version counter lives on the storage: a tensor and all its views (which share the storage)
// see one counter, as in PyTorch where views share the base's VariableVersion. Every in-place
// op bumps it; autograd's saved tensors remember the version at save time and refuse to unpack
// a tensor modified since ("modified by an in-place operation").
class StorageImpl final : public IntrusiveTarget {
 public:
  // Allocates nbytes from the device's allocator.
  StorageImpl(size_t nbytes, Device device);
  // Wraps external memory (from_blob); the deleter (may be empty) runs on destruction.
  StorageImpl(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter);
  ~StorageImpl() override;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  Allocator* allocator() const { return allocator_; }

  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Allocator* allocator_ = nullptr;           // null for external memory
  std::function<void(void*)> deleter_;       // external memory only
  std::atomic<uint32_t> version_{0};
};

using Storage = IntrusivePtr<StorageImpl>;

}  // namespace ember
