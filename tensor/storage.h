// ember: Storage, the bytes behind one or more tensors.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "ember/core/dtype.h"
#include "ember/core/intrusive_ptr.h"
#include "ember/device/allocator.h"

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

  // Note [Rounded storage]
  // A kernel that has just written every element of this storage as a value a 16-bit float
  // (bf16, f16) holds exactly (the fp32 results of _round_to and of _mm_rounded) marks it so;
  // the rounded GEMMs then read such an operand in place instead of rounding a staged copy. The
  // mark holds for the version it was made at: any in-place op bumps the version and drops it.
  // Writes through raw pointers (data_ptr, an aclnn call on the memory) bump nothing, as for
  // autograd's saved tensors: after one, a marked operand is read as it is, unrounded.
  void mark_rounded(DType dtype) {
    rounded_.store((static_cast<uint64_t>(version()) << 8) | (static_cast<uint64_t>(dtype) + 1),
                   std::memory_order_relaxed);
  }
  bool is_rounded_to(DType dtype) const {
    return rounded_.load(std::memory_order_relaxed) ==
           ((static_cast<uint64_t>(version()) << 8) | (static_cast<uint64_t>(dtype) + 1));
  }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Allocator* allocator_ = nullptr;           // null for external memory
  std::function<void(void*)> deleter_;       // external memory only
  std::atomic<uint32_t> version_{0};
  std::atomic<uint64_t> rounded_{0};  // mark_rounded: version << 8 | (dtype + 1); 0: none
};

using Storage = IntrusivePtr<StorageImpl>;

}  // namespace ember
