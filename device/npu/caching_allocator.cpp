// The NPU caching allocator (one per device), behind every NPU tensor and op workspace.
//
// Blocks come from aclrtMalloc, rounded to size classes, and are kept by (stream, size) when
// freed: a block is reused only by allocations on the stream it was last used on, where the
// stream's ordering makes immediate reuse safe (as torch_npu / CUDA's caching allocators do
// without record_stream). On out-of-memory the cache is synchronised and released, the
// allocation retried, and only then OutOfMemoryError thrown (with the summary); the device
// stays usable.
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "ember/device/allocator.h"
#include "ember/device/npu/npu.h"
#include "ember/device/npu/runtime.h"
#include "ember/tensor/error.h"

namespace ember {
namespace npu {
namespace {

class NpuCachingAllocator final : public Allocator {
 public:
  explicit NpuCachingAllocator(int device) : device_(device) {}

  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    size_t size = round_to_size_class(nbytes);
    aclrtStream stream = current_stream(device_).raw();
    {
      std::lock_guard<std::mutex> g(mu_);
      auto it = free_.find({stream, size});
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        cached_ -= size;
        note_alloc(size);
        return p;
      }
    }
    void* p = raw_alloc(size);
    if (!p) {
      release_cache();
      p = raw_alloc(size);
    }
    if (!p) {
      EMBER_THROW(OutOfMemoryError, "npu:", device_, " out of memory: tried to allocate ", nbytes, " bytes (",
                  size, " with rounding) after releasing the cache\n", summary());
    }
    std::lock_guard<std::mutex> g(mu_);
    blocks_[p] = Block{size, stream};
    reserved_ += size;
    ++raw_allocs_;
    note_alloc(size);
    return p;
  }

  void deallocate(void* p, size_t) override {
    if (!p) return;
    std::lock_guard<std::mutex> g(mu_);
    auto it = blocks_.find(p);
    EMBER_ASSERT(it != blocks_.end(), "npu allocator: freeing a block it does not own");
    free_[{it->second.stream, it->second.size}].push_back(p);
    allocated_ -= it->second.size;
    cached_ += it->second.size;
  }

  Device device() const override { return Device(DeviceType::NPU, device_); }

  // Frees every cached block (after the device's pending work, which may still use them).
  void release_cache() {
    detail::wait_device_idle(device_);  // any fault stays for the user's next synchronize
    std::vector<void*> to_free;
    {
      std::lock_guard<std::mutex> g(mu_);
      for (auto& kv : free_) {
        for (void* p : kv.second) {
          to_free.push_back(p);
          reserved_ -= kv.first.second;
          cached_ -= kv.first.second;
          blocks_.erase(p);
        }
      }
      free_.clear();
    }
    for (void* p : to_free) aclrtFree(p);
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
       << "| allocated (live tensors) : " << mib(allocated_) << " MiB\n"
       << "| cached (free blocks)     : " << mib(cached_) << " MiB\n"
       << "| reserved (alloc + cache) : " << mib(reserved_) << " MiB\n"
       << "| peak allocated           : " << mib(peak_) << " MiB\n"
       << "| aclrtMalloc calls        : " << raw_allocs_ << "\n"
       << "| device memory free/total : " << mib(free_b) << " / " << mib(total) << " MiB (EMBER_NPU_MEMORY)\n";
    return os.str();
  }

 private:
  struct Block {
    size_t size;
    aclrtStream stream;
  };
  void* raw_alloc(size_t size) {
    DeviceGuard dg(device_);
    void* p = nullptr;
    if (aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
      aclGetRecentErrMsg();  // consumed: the allocator reports OOM itself
      return nullptr;
    }
    return p;
  }
  void note_alloc(size_t size) {
    allocated_ += size;
    if (allocated_ > peak_) peak_ = allocated_;
  }

  int device_;
  std::mutex mu_;
  std::map<std::pair<aclrtStream, size_t>, std::vector<void*>> free_;
  std::unordered_map<void*, Block> blocks_;
  size_t allocated_ = 0, cached_ = 0, reserved_ = 0, peak_ = 0;
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
                     " NPU devices; set EMBER_NPU_DEVICES)");
  std::lock_guard<std::mutex> g(g_mu);
  auto& v = allocators();
  if (v.empty()) v.resize(static_cast<size_t>(detail::device_count()));
  auto& a = v[static_cast<size_t>(d)];
  if (!a) a = std::make_unique<NpuCachingAllocator>(d);
  return *a;
}

Allocator* npu_getter(int index) { return &allocator(index); }

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
void empty_cache() {
  for (int d = 0; d < detail::device_count(); ++d) allocator(d).release_cache();
}

}  // namespace npu
}  // namespace ember
