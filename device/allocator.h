// ember: allocators. Storage gets its bytes from the Allocator registered for its device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ember/device/device.h"

namespace ember {

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns nbytes of memory (aligned to at least 64 bytes), or nullptr for nbytes == 0.
  // Throws OutOfMemoryError when the request cannot be satisfied.
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* ptr, size_t nbytes) = 0;
  virtual Device device() const = 0;
};

// The allocator for a device (the CPU one is always registered; the NPU registers its own).
Allocator* get_allocator(Device device);
using AllocatorGetter = Allocator* (*)(int index);
void register_allocator(DeviceType type, AllocatorGetter getter);

// The size class (bytes) a caching allocator rounds a request to: 4 classes per power of two,
// multiples of 64, so at most 25% slack.
size_t round_to_size_class(size_t nbytes);

// Statistics of the CPU caching allocator (bytes).
struct CpuAllocatorStats {
  size_t allocated = 0;      // bytes currently handed out
  size_t cached = 0;         // bytes held in free lists for reuse
  size_t peak_allocated = 0;
  uint64_t raw_allocations = 0;  // calls into the system allocator
};
CpuAllocatorStats cpu_allocator_stats();
// Returns every cached CPU block to the system.
void cpu_empty_cache();

}  // namespace ember
