// The emulated NPU runtime: initialisation, the devices' address space, device memory, memory
// info, and aclGetRecentErrMsg (devices: context.cpp; pinned host memory: host_memory.cpp;
// copies and memset: memcpy.cpp).
//
// Each device reserves `capacity` bytes of address space mapped PROT_NONE: device pointers are
// addresses in that range, so a host dereference faults as on real hardware. The bytes live in a
// second, host-accessible "shadow" mapping at the same offsets; the runtime and kernels reach
// them through translate()/host().

#include <sys/mman.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "ember/device/device.h"
#include "ember/device/env.h"
#include "ember/device/npu/runtime.h"
#include "ember/core/error.h"

namespace ember {
namespace npu {
namespace detail {

std::string hex(const void* p) {
  std::ostringstream os;
  os << p;
  return os.str();
}

namespace {

// Start alignment of device allocations. CANN documents 64 bytes (aclrtMalloc); hardware hands
// out more, and clients written on it rely on that (ggml's CANN buffers ask 128 bytes). ember
// starts every allocation on 512 bytes, and those above 1 MiB under a huge-page policy on 2 MiB
// (CANN's aclrtMemMallocPolicy doc: huge pages have a 2 MiB granularity and are used above 1 MiB).
// Sizes keep CANN's accounting (extent_of); the gaps the alignment leaves stay unallocated, so an
// overrun into them is still outside every allocation.
constexpr size_t kAlign = 512;
constexpr size_t kHugeAlign = size_t(2) << 20;

// Address space of `size` bytes (PROT_NONE) starting on an `align` boundary, or MAP_FAILED.
void* reserve_aligned(size_t size, size_t align) {
  void* raw = mmap(nullptr, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return raw;
  uintptr_t r = reinterpret_cast<uintptr_t>(raw), a = (r + align - 1) / align * align;
  if (a > r) munmap(raw, a - r);
  munmap(reinterpret_cast<void*>(a + size), r + align - a);
  return reinterpret_cast<void*>(a);
}

struct Runtime {
  std::vector<std::unique_ptr<DeviceState>> devices;
  bool user_initialized = false;
  std::mutex init_mu;

  std::string config_error;  // why there are no devices (a bad EMBER_NPU_* value, no address space)
  // aclrtFree of memory that unfinished work uses: an error (default), or deferred until the
  // work is done, with a warning (EMBER_NPU_FREE_IN_USE=defer).
  bool defer_frees_in_use = false;
  // EMBER_NPU_MALLOC_FILL: what new device memory holds. "nan" (default): 0xFF bytes, a NaN in
  // every float type, so reading memory nothing wrote shows; "zero": zeros, as fresh pages from
  // the driver happen to be on hardware (CANN documents the contents as uninitialised).
  unsigned char malloc_fill = 0xFF;
  // EMBER_NPU_WORKSPACE_POISON: "sparse" (default) or "full" (executor.cpp, guarded_task).
  bool full_workspace_poison = false;

  Runtime() {
    int n = 2;
    size_t capacity = size_t(8) << 30;
    try {
      n = static_cast<int>(env_int("EMBER_NPU_DEVICES", 1, 64).value_or(n));
      capacity = env_bytes("EMBER_NPU_MEMORY", 4096, uint64_t(1) << 44).value_or(capacity);  // 4 KiB .. 16 TiB
    } catch (const ::ember::ValueError& e) {
      config_error = e.what();  // no devices: every call reports it
      return;
    }
    // A two-way switch: unset or `usual` leaves *on false, `other` sets it; anything else is the
    // configuration error every call reports.
    auto flag = [this](const char* var, const char* usual, const char* other, bool* on) {
      const char* v = std::getenv(var);
      if (!v || !*v || std::strcmp(v, usual) == 0) return true;
      if (std::strcmp(v, other) == 0) return *on = true;
      config_error = std::string(var) + "='" + v + "': expected '" + usual + "' or '" + other + "'";
      return false;
    };
    bool zero_fill = false;
    if (!flag("EMBER_NPU_FREE_IN_USE", "error", "defer", &defer_frees_in_use) ||
        !flag("EMBER_NPU_MALLOC_FILL", "nan", "zero", &zero_fill) ||
        !flag("EMBER_NPU_WORKSPACE_POISON", "sparse", "full", &full_workspace_poison))
      return;
    if (zero_fill) malloc_fill = 0;
    capacity = (capacity + 4095) / 4096 * 4096;
    // The window for aclrtReserveMemAddress: 4x the memory, so that several clients can each
    // reserve all of it (ggml's pool reserves the free memory); 1x when that much address
    // space is not to be had (16 TiB of address space per device at most, 128 TiB in all).
    size_t window = capacity <= (size_t(1) << 42) && capacity * 5 * static_cast<size_t>(n) <= (size_t(1) << 47)
                        ? 4 * capacity
                        : capacity;
    const size_t window_at = (capacity + kHugeAlign - 1) / kHugeAlign * kHugeAlign, span = window_at + window;
    for (int i = 0; i < n; ++i) {
      auto d = std::make_unique<DeviceState>();
      d->index = i;
      d->capacity = capacity;
      d->span = span;
      void* addr = reserve_aligned(span, kHugeAlign);
      void* shadow = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (addr == MAP_FAILED || shadow == MAP_FAILED) {
        config_error = "cannot reserve " + std::to_string(span) +
                       " bytes of address space for npu:" + std::to_string(i) + " (EMBER_NPU_MEMORY)";
        if (addr != MAP_FAILED) munmap(addr, span);
        if (shadow != MAP_FAILED) munmap(shadow, span);
        devices.clear();
        return;
      }
      d->base = reinterpret_cast<uintptr_t>(addr);
      d->shadow = static_cast<char*>(shadow);
      d->free_ranges[0] = capacity;
      d->va_free[window_at] = window;
      devices.push_back(std::move(d));
    }
    watch_device_ranges(devices);
  }
};

Runtime& rt() {
  static auto* r = new Runtime();  // never destroyed: streams may run during static destruction
  return *r;
}

thread_local std::string tls_pending;   // newest first
thread_local std::string tls_returned;  // what the last aclGetRecentErrMsg returned
thread_local int tls_error_kind = 0;     // push_error's kind

// SIZE_MAX for sizes no device holds (the rounding would wrap): no free range fits it.
// padded: aclrtMalloc's 32 bytes of padding (aclrtMallocAlign32 has none).
size_t extent_of(size_t size, bool padded = true) {
  if (size > (SIZE_MAX >> 1)) return SIZE_MAX;
  size_t e = (size + 31) / 32 * 32 + (padded ? 32 : 0);  // CANN: round up to 32 bytes, plus the padding
  return (e + 63) / 64 * 64;  // and a multiple of 64 (CANN's ALIGN_UP[m, 64] for carved segments)
}

// Returns a live allocation's range to the free ranges (d.mu held).
void release_locked(DeviceState& d, std::map<uintptr_t, Allocation>::iterator it) {
  uintptr_t a = it->first;
  size_t extent = it->second.extent;
  d.live.erase(it);
  // Give a large freed block's pages back to the OS (whole pages inside the block only),
  // before the range can be handed out again.
  uintptr_t start = (a + 4095) / 4096 * 4096, stop = (a + extent) / 4096 * 4096;
  if (stop > start + (size_t(1) << 20)) madvise(host(d, reinterpret_cast<void*>(start)), stop - start, MADV_DONTNEED);
  d.used -= extent;
  add_free_range(d.free_ranges, a - d.base, extent);
}

// Completes the deferred frees whose work has finished (d.mu held).
void reclaim_deferred_frees(DeviceState& d) {
  if (d.deferred_frees.empty()) return;
  auto keep = d.deferred_frees.begin();
  for (uintptr_t a : d.deferred_frees) {
    auto it = d.live.find(a);
    const char* op = nullptr;
    bool planned = false;
    if (in_use(a, &op, &planned)) {
      *keep++ = a;
    } else {
      release_locked(d, it);
    }
  }
  d.deferred_frees.erase(keep, d.deferred_frees.end());
}

}  // namespace

unsigned char malloc_fill() { return rt().malloc_fill; }
bool full_workspace_poison() { return rt().full_workspace_poison; }

void add_free_range(std::map<size_t, size_t>& ranges, size_t off, size_t len) {
  auto next = ranges.lower_bound(off);  // coalesce with the neighbouring free ranges
  if (next != ranges.end() && next->first == off + len) {
    len += next->second;
    ranges.erase(next);
  }
  auto prev = ranges.lower_bound(off);
  if (prev != ranges.begin() && std::prev(prev)->first + std::prev(prev)->second == off) {
    --prev;
    off = prev->first;
    len += prev->second;
    ranges.erase(prev);
  }
  ranges[off] = len;
}

thread_local int tls_device = 0;
thread_local uintptr_t tls_context = 0;

void push_error(const std::string& msg, int kind) {
  tls_pending = tls_pending.empty() ? msg : msg + "\n" + tls_pending;
  tls_error_kind = kind;
}
int recent_error_kind() { return tls_error_kind; }

int device_count() { return static_cast<int>(rt().devices.size()); }

// Read by every runtime call: a plain global, not behind rt()'s initialisation guard.
std::atomic<bool> g_finalized{false};
bool finalized() { return g_finalized.load(std::memory_order_relaxed); }

aclError check_runtime(const char* api) {
  if (EMBER_UNLIKELY(finalized()))
    return fail(ACL_ERROR_UNINITIALIZE,
                std::string(api) + ": acl is not initialized (aclFinalize was called; call aclInit first)");
  return ACL_SUCCESS;
}

aclError check_runtime(const char* api, int dev) {
  if (aclError e = check_runtime(api)) return e;
  if (EMBER_UNLIKELY(dev < 0 || dev >= device_count()))
    return fail(ACL_ERROR_RT_INVALID_DEVICEID, std::string(api) + ": no npu:" + std::to_string(dev) + " (" +
                                                   std::to_string(device_count()) + " devices; " + devices_note() + ")");
  return ACL_SUCCESS;
}

aclError check_runtime_stream(const char* api, aclrtStream stream) {
  return stream ? check_runtime(api) : check_runtime(api, current_device());
}
std::string devices_note() {
  const std::string& e = rt().config_error;
  return e.empty() ? "set EMBER_NPU_DEVICES" : e;
}
DeviceState& device(int index) { return *rt().devices[static_cast<size_t>(index)]; }
int current_device() { return tls_device; }
// Device(kNPU) and Device("npu") are the calling thread's current device (Note [Current device]).
const bool g_current_device_fn = (::ember::detail::set_current_device_fn(::ember::DeviceType::NPU, [] { return tls_device; }), true);

int device_of(const void* p) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  for (const auto& d : rt().devices)
    if (d->span && a >= d->base && a < d->base + d->span) return d->index;
  return -1;
}

uintptr_t allocation_base(const void* p) {
  int dev = device_of(p);
  if (dev < 0) return 0;
  DeviceState& d = device(dev);
  std::lock_guard<std::mutex> g(d.mu);
  const Allocation* al = live_at(d, reinterpret_cast<uintptr_t>(p));
  return al ? al->addr : 0;
}

void* translate(const void* p, size_t bytes, Allocation* alloc) {
  int dev = device_of(p);
  if (dev < 0) return nullptr;
  DeviceState& d = device(dev);
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> g(d.mu);
  const Allocation* al = live_at(d, a);
  if (!al || bytes > al->addr + al->extent - a) return nullptr;  // no wrap-around
  if (alloc) *alloc = *al;
  return host(d, p);
}

char* host_ptr(const void* p) {
  int dev = device_of(p);
  return dev < 0 ? nullptr : host(device(dev), p);
}

}  // namespace detail

using namespace detail;

extern "C" const char* aclGetRecentErrMsg() {
  tls_error_kind = 0;
  if (tls_pending.empty()) return nullptr;
  tls_returned.swap(tls_pending);
  tls_pending.clear();
  return tls_returned.c_str();
}

extern "C" aclError aclInit(const char*) {
  Runtime& r = rt();
  std::lock_guard<std::mutex> g(r.init_mu);
  if (r.user_initialized) return fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit: acl is already initialized");
  r.user_initialized = true;
  g_finalized = false;
  return ACL_SUCCESS;
}

extern "C" aclError aclFinalize() {
  Runtime& r = rt();
  std::lock_guard<std::mutex> g(r.init_mu);
  if (g_finalized.load())
    return fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize: acl is already finalized (aclFinalize was called before)");
  if (!r.user_initialized) return fail(ACL_ERROR_UNINITIALIZE, "aclFinalize: acl is not initialized (call aclInit)");
  for (int i = 0; i < device_count(); ++i)
    for (const StreamPtr& s : streams_of(i)) {
      std::string msg;
      s->synchronize(&msg);
    }
  r.user_initialized = false;
  g_finalized = true;  // aclFinalize ran and no aclInit since
  return ACL_SUCCESS;
}

namespace {
aclError device_malloc(const char* api, void** devPtr, size_t size, aclrtMemMallocPolicy policy, bool padded) {
  if (aclError e = check_runtime(api)) return e;
  if (!devPtr) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": devPtr is null");
  if (size == 0) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": size must be greater than 0");
  if (policy < ACL_MEM_MALLOC_HUGE_FIRST || policy > ACL_MEM_MALLOC_NORMAL_ONLY_P2P)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": invalid policy " + std::to_string(policy));
  if (tls_device >= device_count())
    return fail(ACL_ERROR_RT_INVALID_DEVICEID, std::string(api) + ": no npu:" + std::to_string(tls_device) + " (" +
                                                   std::to_string(device_count()) + " devices; " + devices_note() +
                                                   ")");
  DeviceState& d = device(tls_device);
  size_t extent = extent_of(size, padded);
  const bool huge = policy != ACL_MEM_MALLOC_NORMAL_ONLY && policy != ACL_MEM_MALLOC_NORMAL_ONLY_P2P;
  const size_t align = huge && size > (size_t(1) << 20) ? kHugeAlign : kAlign;
  uintptr_t addr = 0;
  {
    std::lock_guard<std::mutex> g(d.mu);
    reclaim_deferred_frees(d);
    for (auto it = d.free_ranges.begin(); it != d.free_ranges.end(); ++it) {  // first fit, aligned
      size_t off = it->first, len = it->second, skip = (align - off % align) % align;
      if (len < skip || len - skip < extent) continue;
      d.free_ranges.erase(it);
      if (skip) d.free_ranges[off] = skip;
      if (len - skip > extent) d.free_ranges[off + skip + extent] = len - skip - extent;
      addr = d.base + off + skip;
      break;
    }
    if (addr) {
      d.live[addr] = Allocation{addr, size, extent, false};
      d.used += extent;
    }
  }
  if (!addr) {
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
                std::string(api) + ": out of device memory on npu:" + std::to_string(d.index) + ": requested " +
                    std::to_string(size) + " bytes, " + std::to_string(d.capacity - d.used) + " of " +
                    std::to_string(d.capacity) + " free (EMBER_NPU_MEMORY)");
  }
  std::memset(host(d, reinterpret_cast<void*>(addr)), rt().malloc_fill, extent);  // uninitialised: NaN (or zero)
  *devPtr = reinterpret_cast<void*>(addr);
  return ACL_SUCCESS;
}
}  // namespace

extern "C" aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return device_malloc("aclrtMalloc", devPtr, size, policy, true);
}

// As aclrtMalloc, without the 32 bytes of padding: an overrun past the 32-byte-rounded size is
// outside the allocation at once.
extern "C" aclError aclrtMallocAlign32(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return device_malloc("aclrtMallocAlign32", devPtr, size, policy, false);
}

extern "C" aclError aclrtFree(void* devPtr) {
  if (aclError e = check_runtime("aclrtFree")) return e;
  if (!devPtr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtFree: devPtr is null");
  int dev = device_of(devPtr);
  if (dev < 0)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtFree: " + hex(devPtr) + " is not device memory (host pointer?)");
  DeviceState& d = device(dev);
  uintptr_t a = reinterpret_cast<uintptr_t>(devPtr);
  std::lock_guard<std::mutex> g(d.mu);
  reclaim_deferred_frees(d);
  auto it = d.live.find(a);
  if (it == d.live.end() || it->second.freed)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtFree: " + hex(devPtr) +
                                             " is not the start of a live aclrtMalloc allocation (double free?)");
  Allocation& al = it->second;
  if (al.mapped)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtFree: " + hex(devPtr) +
                                             " is mapped physical memory (aclrtMapMem): release it with aclrtUnmapMem "
                                             "and aclrtFreePhysical");
  const char* op = nullptr;
  bool planned = false;  // an executor made by phase 1, not yet run
  if (in_use(a, &op, &planned)) {
    // Unfinished work still reads or writes it: on hardware the next allocation at this address
    // would be overwritten by that work, silently.
    std::string what = "aclrtFree: " + hex(devPtr) + " (an allocation of " + std::to_string(al.size) +
                       " bytes on npu:" + std::to_string(dev) + ") is still used by work that has not finished" +
                       (op ? std::string(" (") + (planned ? "planned" : "queued") + " by " + op + ")" : std::string()) +
                       (planned ? ": an executor planned on it has not been run" : "");
    if (!rt().defer_frees_in_use)
      return fail(ACL_ERROR_INVALID_PARAM, what + "; synchronize its stream first (or set "
                                                  "EMBER_NPU_FREE_IN_USE=defer to defer such frees)");
    std::fprintf(stderr, "ember: warning: %s; the free is deferred until that work is done (EMBER_NPU_FREE_IN_USE=defer)\n",
                 what.c_str());
    al.freed = true;
    d.deferred_frees.push_back(a);
    return ACL_SUCCESS;
  }
  release_locked(d, it);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total) {
  if (aclError e = check_runtime("aclrtGetMemInfo")) return e;
  if (!free || !total) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo: free and total must not be null");
  if (attr != ACL_DDR_MEM && attr != ACL_HBM_MEM)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo: invalid attribute " + std::to_string(attr));
  if (tls_device >= device_count())
    return fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtGetMemInfo: no npu:" + std::to_string(tls_device) + " (" +
                                                   std::to_string(device_count()) + " devices; " + devices_note() +
                                                   ")");
  DeviceState& d = device(tls_device);
  std::lock_guard<std::mutex> g(d.mu);
  reclaim_deferred_frees(d);
  *total = d.capacity;
  *free = d.capacity - d.used;
  return ACL_SUCCESS;
}

}  // namespace npu
}  // namespace ember
