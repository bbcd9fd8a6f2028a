// The CPU caching allocator: 64-byte aligned blocks, reused by size class.
//
// libtorch 1.13 has no CPU caching allocator, so every `a + b` on a large tensor maps fresh pages
// and page-faults them (measured with libtorch 1.13 on the Xeon: a large add spends most of its
// time in page faults). Here freed blocks go to a free list per
// size class (4 classes per power of two, so at most 25% slack) and are handed out again without
// touching the system allocator. The cache is capped (EMBER_CPU_CACHE_MB, default 2048).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "ember/device/allocator.h"
#include "ember/device/env.h"
#include "ember/device/profiler.h"
#include "ember/core/error.h"

namespace ember {
namespace {

constexpr size_t kAlign = 64;
constexpr int kNumClasses = 4 * 48;

// Requests above this are not cached (the classes stop here); none of that size succeeds today.
constexpr size_t kMaxCached = size_t(1) << 52;

// Size class index and its rounded byte size; -1 (uncached, rounded to kAlign) above kMaxCached.
inline int size_class(size_t n, size_t* rounded) {
  if (n <= 64) {
    *rounded = 64;
    return 0;
  }
  if (n > kMaxCached) {
    *rounded = n > SIZE_MAX - kAlign ? SIZE_MAX / kAlign * kAlign : (n + kAlign - 1) / kAlign * kAlign;
    return -1;
  }
  int log2 = 63 - __builtin_clzll(n - 1);        // 2^log2 < n <= 2^(log2+1)
  size_t base = size_t(1) << log2;
  size_t step = base / 4;
  size_t k = (n - base + step - 1) / step;         // 1..4
  *rounded = base + k * step;
  *rounded = (*rounded + kAlign - 1) / kAlign * kAlign;
  return (log2 - 5) * 4 + static_cast<int>(k) - 1;  // log2 >= 6 here
}

class CpuCachingAllocator final : public Allocator {
 public:
  CpuCachingAllocator() {
    limit_ = static_cast<size_t>(env_int("EMBER_CPU_CACHE_MB", 0, int64_t(1) << 30).value_or(2048)) << 20;
  }
  ~CpuCachingAllocator() override = default;  // process exit: blocks are left to the OS

  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    size_t rounded;
    int c = size_class(nbytes, &rounded);
    if (c >= 0) {
      std::lock_guard<std::mutex> g(mu_);
      auto& list = free_[static_cast<size_t>(c)];
      if (!list.empty()) {
        void* p = list.back();
        list.pop_back();
        stats_.cached -= rounded;
        note_alloc(rounded);
        return p;
      }
    }
    void* p = raw_alloc(rounded);
    if (!p) {
      cpu_empty_cache();
      p = raw_alloc(rounded);
    }
    if (!p) {
      auto s = cpu_allocator_stats();
      EMBER_THROW(OutOfMemoryError, "cpu allocator: out of memory allocating ", nbytes, " bytes (",
                  s.allocated, " bytes in use)");
    }
    std::lock_guard<std::mutex> g(mu_);
    stats_.raw_allocations++;
    note_alloc(rounded);
    return p;
  }

  void deallocate(void* p, size_t nbytes) override {
    if (!p) return;
    size_t rounded;
    int c = size_class(nbytes, &rounded);
    {
      std::lock_guard<std::mutex> g(mu_);
      stats_.allocated -= rounded;
      if (c >= 0 && stats_.cached + rounded <= limit_) {
        free_[static_cast<size_t>(c)].push_back(p);
        stats_.cached += rounded;
        trace_locked();
        return;
      }
      trace_locked();
    }
    std::free(p);
  }

  Device device() const override { return Device(DeviceType::CPU); }

  CpuAllocatorStats stats() {
    std::lock_guard<std::mutex> g(mu_);
    return stats_;
  }

  void empty_cache() {
    std::array<std::vector<void*>, kNumClasses> lists;
    {
      std::lock_guard<std::mutex> g(mu_);
      lists.swap(free_);
      stats_.cached = 0;
      trace_locked();
    }
    for (auto& l : lists)
      for (void* p : l) std::free(p);
  }

 private:
  static void* raw_alloc(size_t n) {
    void* p = nullptr;
    return posix_memalign(&p, kAlign, n) == 0 ? p : nullptr;
  }
  void note_alloc(size_t n) {
    stats_.allocated += n;
    stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
    trace_locked();
  }
  // The profiler's memory counter (mu_ held). Reserved: in use plus cached.
  void trace_locked() {
    if (EMBER_UNLIKELY(profiler::detail::memory_enabled()))
      profiler::detail::record_memory(-1, stats_.allocated, stats_.allocated + stats_.cached);
  }

  std::mutex mu_;
  std::array<std::vector<void*>, kNumClasses> free_;
  CpuAllocatorStats stats_;
  size_t limit_ = size_t(2048) << 20;
};

CpuCachingAllocator& cpu_allocator() {
  static auto* a = new CpuCachingAllocator();  // leaked on purpose: outlives static tensors
  return *a;
}

Allocator* cpu_getter(int) { return &cpu_allocator(); }

std::array<AllocatorGetter, kNumDeviceTypes>& getters() {
  static std::array<AllocatorGetter, kNumDeviceTypes> g{cpu_getter, nullptr};
  return g;
}

}  // namespace

size_t round_to_size_class(size_t nbytes) {
  size_t rounded;
  size_class(nbytes, &rounded);
  return rounded;
}

Allocator* get_allocator(Device device) {
  AllocatorGetter g = getters()[static_cast<int>(device.type())];
  EMBER_CHECK_DEVICE(g != nullptr, "no allocator registered for device ", device);
  return g(device.index());
}

void register_allocator(DeviceType type, AllocatorGetter getter) {
  getters()[static_cast<int>(type)] = getter;
}

CpuAllocatorStats cpu_allocator_stats() { return cpu_allocator().stats(); }
void cpu_empty_cache() { cpu_allocator().empty_cache(); }

}  // namespace ember
