// The NPU caching allocator (one per device), behind every NPU tensor and op workspace.
//
// Modelled on torch_npu's / CUDA's caching allocator. Requests are rounded to 512 bytes and
// carved out of segments obtained from aclrtMalloc: requests up to 1 MiB share 2 MiB segments
// (the small pool), larger ones get 20 MiB segments below 10 MiB and their own 2 MiB-rounded
// segment above. A free block is split when the rest is worth keeping and merged with its free
// neighbours when released, so a training loop whose live set varies a little from step to step
// still stops calling aclrtMalloc after its first step. Blocks are reused only on the stream
// their segment was allocated on, where stream order makes immediate reuse safe. A block that
// other streams used (record_stream) is held back when freed: an event is recorded on each of
// them and the block returns to its pool once all have completed. On out-of-memory the free
// segments are released (after the device's pending work), the allocation retried, and only
// then OutOfMemoryError thrown with the summary; the device stays usable.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ember/device/allocator.h"
#include "ember/device/npu/npu.h"
#include "ember/device/npu/runtime.h"
#include "ember/device/profiler.h"
#include "ember/core/error.h"

namespace ember {
namespace npu {
namespace {

constexpr size_t kMinBlock = 512;              // every request is rounded to this
constexpr size_t kSmallSize = size_t(1) << 20;  // requests up to this use the small pool
constexpr size_t kSmallSegment = size_t(2) << 20;
constexpr size_t kMinLargeAlloc = size_t(10) << 20;  // below this, large requests share...
constexpr size_t kLargeSegment = size_t(20) << 20;   // ...20 MiB segments
constexpr size_t kRoundLarge = size_t(2) << 20;

size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

struct Block {
  uintptr_t addr = 0;
  size_t size = 0;
  aclrtStream stream = nullptr;
  bool small = false;
  bool allocated = false;
  Block* prev = nullptr;  // neighbours within the segment
  Block* next = nullptr;
  std::vector<aclrtStream> uses = {};  // other streams that use it (record_stream)
};

struct PendingFree {  // a freed block waiting for the work of other streams that use it
  Block* block;
  std::vector<aclrtEvent> events;
};

struct BlockOrder {  // free blocks by (stream, size, address): best fit on the stream
  bool operator()(const Block* a, const Block* b) const {
    return std::make_tuple(reinterpret_cast<uintptr_t>(a->stream), a->size, a->addr) <
           std::make_tuple(reinterpret_cast<uintptr_t>(b->stream), b->size, b->addr);
  }
};

class NpuCachingAllocator final : public Allocator {
 public:
  explicit NpuCachingAllocator(int device) : device_(device) {}

  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    EMBER_CHECK_T(OutOfMemoryError, nbytes <= (SIZE_MAX >> 1), "npu:", device_, " out of memory: tried to allocate ",
                  nbytes, " bytes, more than any device holds");
    size_t size = round_up(nbytes, kMinBlock);
    bool small = size <= kSmallSize;
    aclrtStream stream = current_stream(device_).raw();
    std::unique_lock<std::mutex> lk(mu_);
    reclaim_pending();
    Block* b = take_free(stream, size, small);
    if (!b) {
      size_t seg = small ? kSmallSegment : size < kMinLargeAlloc ? kLargeSegment : round_up(size, kRoundLarge);
      lk.unlock();
      void* p = raw_alloc(seg);
      if (!p) {
        release_cache();
        p = raw_alloc(seg);
        if (!p && seg > size) p = raw_alloc(seg = size);  // no room for a whole segment: exact fit
      }
      if (!p) {
        EMBER_THROW(OutOfMemoryError, "npu:", device_, " out of memory: tried to allocate ", nbytes, " bytes (",
                    size, " with rounding) after releasing the cache\n", summary());
      }
      lk.lock();
      b = new Block{reinterpret_cast<uintptr_t>(p), seg, stream, small};
      reserved_ += seg;
      ++raw_allocs_;
      ++segments_;
    }
    // Split off the tail when it is worth keeping: any 512 bytes in the small pool, more than
    // the small-pool limit in the large one (smaller remnants would only fragment it).
    size_t rest = b->size - size;
    if (rest >= (small ? kMinBlock : kSmallSize + 1)) {
      Block* tail = new Block{b->addr + size, rest, stream, small, false, b, b->next};
      if (b->next) b->next->prev = tail;
      b->next = tail;
      b->size = size;
      pools_[small].insert(tail);
    }
    b->allocated = true;
    active_[b->addr] = b;
    allocated_ += b->size;
    if (allocated_ > peak_) peak_ = allocated_;
    trace_locked();
    return reinterpret_cast<void*>(b->addr);
  }

  void deallocate(void* p, size_t) override {
    if (!p) return;
    std::vector<aclrtStream> uses;
    Block* b = nullptr;
    {
      std::lock_guard<std::mutex> g(mu_);
      auto it = active_.find(reinterpret_cast<uintptr_t>(p));
      EMBER_ASSERT(it != active_.end(), "npu allocator: freeing a block it does not own");
      b = it->second;
      active_.erase(it);
      if (b->uses.empty()) {
        free_block(b);
        return;
      }
      uses.swap(b->uses);
    }
    // Events are recorded outside the lock (the runtime never calls back into the allocator,
    // but a stream's queue lock is not worth nesting under ours).
    PendingFree pf{b, {}};
    DeviceGuard dg(device_);
    for (aclrtStream s : uses) {
      aclrtEvent e = nullptr;
      if (aclrtCreateEvent(&e) == ACL_SUCCESS && aclrtRecordEvent(e, s) == ACL_SUCCESS) {
        pf.events.push_back(e);
      } else {  // the stream is gone (destroyed after its work drained): nothing to wait for
        aclGetRecentErrMsg();
        if (e) aclrtDestroyEvent(e);
      }
    }
    std::lock_guard<std::mutex> g(mu_);
    pending_.push_back(std::move(pf));
  }

  // Marks the live block at p as used by stream s (torch's Tensor.record_stream).
  void record_stream(const void* p, aclrtStream s) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = active_.find(reinterpret_cast<uintptr_t>(p));
    EMBER_CHECK_VALUE(it != active_.end(), "npu::record_stream: ", p, " is not the start of a live allocation on npu:",
                      device_);
    Block* b = it->second;
    if (s == b->stream || std::find(b->uses.begin(), b->uses.end(), s) != b->uses.end()) return;
    b->uses.push_back(s);
  }

  Device device() const override { return Device(DeviceType::NPU, device_); }

  // Frees every wholly unused segment (after the device's pending work, which may still use it).
  void release_cache() {
    detail::wait_device_idle(device_);  // any fault stays for the user's next synchronize
    std::vector<void*> to_free;
    {
      std::lock_guard<std::mutex> g(mu_);
      reclaim_pending();  // after wait_device_idle: every block held back so far
      for (auto& pool : pools_) {
        for (auto it = pool.begin(); it != pool.end();) {
          Block* b = *it;
          if (b->prev || b->next) {
            ++it;
            continue;
          }
          to_free.push_back(reinterpret_cast<void*>(b->addr));
          reserved_ -= b->size;
          --segments_;
          delete b;
          it = pool.erase(it);
        }
      }
      if (!to_free.empty()) trace_locked();
    }
    for (void* p : to_free) aclrtFree(p);
  }

  // The live block holding p (a scan: for Ascend C's SetGlobalBuffer, not a hot path).
  bool block_of(uintptr_t p, uintptr_t* start, size_t* size) {
    std::lock_guard<std::mutex> g(mu_);
    for (const auto& kv : active_) {
      const Block* b = kv.second;
      if (p >= b->addr && p < b->addr + b->size) {
        *start = b->addr;
        *size = b->size;
        return true;
      }
    }
    return false;
  }
  size_t allocated() {
    std::lock_guard<std::mutex> g(mu_);
    return allocated_;
  }
  size_t reserved() {
    std::lock_guard<std::mutex> g(mu_);
    return reserved_;
  }
  size_t peak() {
    std::lock_guard<std::mutex> g(mu_);
    return peak_;
  }
  uint64_t raw_allocs() {
    std::lock_guard<std::mutex> g(mu_);
    return raw_allocs_;
  }
  void reset_peak() {
    std::lock_guard<std::mutex> g(mu_);
    peak_ = allocated_;
  }
  std::string summary() {
    size_t free_b = 0, total = 0;
    {
      DeviceGuard dg(device_);
      aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total);
    }
    std::lock_guard<std::mutex> g(mu_);
    std::ostringstream os;
    auto mib = [](size_t b) { return static_cast<double>(b) / (1 << 20); };
    os.precision(2);
    os << std::fixed;
    os << "|===== npu:" << device_ << " caching allocator =====|\n"
       << "| allocated (live tensors) : " << mib(allocated_) << " MiB in " << active_.size() << " blocks\n"
       << "| cached (free blocks)     : " << mib(reserved_ - allocated_) << " MiB in " << pools_[0].size() + pools_[1].size() << " blocks\n"
       << "| reserved (alloc + cache) : " << mib(reserved_) << " MiB in " << segments_ << " segments\n"
       << "| peak allocated           : " << mib(peak_) << " MiB\n"
       << "| aclrtMalloc calls        : " << raw_allocs_ << "\n"
       << "| device memory free/total : " << mib(free_b) << " / " << mib(total) << " MiB (EMBER_NPU_MEMORY)\n";
    return os.str();
  }

 private:
  // Returns a freed block to its pool, merged with its free neighbours. Caller holds mu_.
  // The profiler's memory counter (mu_ held, so the values follow each other in order).
  void trace_locked() {
    if (EMBER_UNLIKELY(profiler::detail::memory_enabled())) profiler::detail::record_memory(device_, allocated_, reserved_);
  }

  void free_block(Block* b) {
    allocated_ -= b->size;
    b->allocated = false;
    for (Block* n : {b->prev, b->next}) {
      if (!n || n->allocated) continue;
      pools_[n->small].erase(n);
      if (n == b->prev) {  // absorb b into its predecessor
        n->size += b->size;
        n->next = b->next;
        if (b->next) b->next->prev = n;
        delete b;
        b = n;
      } else {  // absorb the successor into b
        b->size += n->size;
        b->next = n->next;
        if (n->next) n->next->prev = b;
        delete n;
      }
    }
    pools_[b->small].insert(b);
    trace_locked();
  }

  // Frees the held-back blocks whose other streams have finished with them. Never waits: it
  // runs under mu_, and a stream worker may need mu_ (a task releasing a tensor) to get there.
  // Caller holds mu_.
  void reclaim_pending() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      bool done = true;
      for (aclrtEvent e : it->events) {
        aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;
        if (aclrtQueryEventStatus(e, &st) != ACL_SUCCESS || st != ACL_EVENT_RECORDED_STATUS_COMPLETE) {
          done = false;
          break;
        }
      }
      if (!done) {
        ++it;
        continue;
      }
      for (aclrtEvent e : it->events) aclrtDestroyEvent(e);
      free_block(it->block);
      it = pending_.erase(it);
    }
  }

  // The smallest free block of the pool on `stream` that holds `size` bytes (removed from the
  // free set), or nullptr.
  Block* take_free(aclrtStream stream, size_t size, bool small) {
    Block key{0, size, stream};
    auto& pool = pools_[small];
    auto it = pool.lower_bound(&key);
    if (it == pool.end() || (*it)->stream != stream) return nullptr;
    Block* b = *it;
    pool.erase(it);
    return b;
  }
  void* raw_alloc(size_t size) {
    DeviceGuard dg(device_);
    void* p = nullptr;
    const aclError e = aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST);
    if (e != ACL_SUCCESS) {
      const char* m = aclGetRecentErrMsg();  // consumed: the allocator reports OOM itself
      // Not a lack of memory (after aclFinalize, no such device): that error, as the runtime said it.
      if (e != ACL_ERROR_RT_MEMORY_ALLOCATION)
        EMBER_THROW(Error, "npu:", device_, ": cannot allocate ", size, " bytes: ", m ? m : "aclrtMalloc failed", " (",
                    e, ")");
      return nullptr;
    }
    return p;
  }

  int device_;
  std::mutex mu_;
  std::set<Block*, BlockOrder> pools_[2];  // free blocks: [0] large, [1] small
  std::unordered_map<uintptr_t, Block*> active_;
  std::vector<PendingFree> pending_;  // freed, waiting for other streams (counted as allocated)
  size_t allocated_ = 0, reserved_ = 0, peak_ = 0, segments_ = 0;
  uint64_t raw_allocs_ = 0;
};

std::mutex g_mu;
std::vector<std::unique_ptr<NpuCachingAllocator>>& allocators() {
  static auto* v = new std::vector<std::unique_ptr<NpuCachingAllocator>>();
  return *v;
}

NpuCachingAllocator& allocator(int device) {
  int d = device < 0 ? detail::current_device() : device;
  EMBER_CHECK_DEVICE(d >= 0 && d < detail::device_count(), "npu:", d, " does not exist (", detail::device_count(),
                     " NPU devices; ", detail::devices_note(), ")");
  std::lock_guard<std::mutex> g(g_mu);
  auto& v = allocators();
  if (v.empty()) v.resize(static_cast<size_t>(detail::device_count()));
  auto& a = v[static_cast<size_t>(d)];
  if (!a) a = std::make_unique<NpuCachingAllocator>(d);
  return *a;
}

Allocator* npu_getter(int index) { return &allocator(index); }

}  // namespace

namespace detail {
bool cached_block_of(int device, uintptr_t p, uintptr_t* start, size_t* size) {
  NpuCachingAllocator* a = nullptr;
  {
    std::lock_guard<std::mutex> g(g_mu);
    auto& v = allocators();
    if (device < 0 || static_cast<size_t>(device) >= v.size() || !v[static_cast<size_t>(device)]) return false;
    a = v[static_cast<size_t>(device)].get();
  }
  return a->block_of(p, start, size);
}
}  // namespace detail

namespace {

struct Register {
  Register() { register_allocator(DeviceType::NPU, &npu_getter); }
} g_register;

}  // namespace

size_t memory_allocated(int device) { return allocator(device).allocated(); }
size_t memory_reserved(int device) { return allocator(device).reserved(); }
size_t max_memory_allocated(int device) { return allocator(device).peak(); }
uint64_t num_raw_allocations(int device) { return allocator(device).raw_allocs(); }
void reset_peak_memory_stats(int device) { allocator(device).reset_peak(); }
std::string memory_summary(int device) { return allocator(device).summary(); }
void record_stream(const void* data, const Stream& s) {
  if (data) allocator(s.device()).record_stream(data, s.raw());
}
void empty_cache() {
  for (int d = 0; d < detail::device_count(); ++d) allocator(d).release_cache();
}

}  // namespace npu
}  // namespace ember
