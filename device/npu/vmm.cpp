// Virtual memory management (aclrtReserveMemAddress, aclrtMallocPhysical, aclrtMapMem and their
// inverses) and peer access between devices.
//
// A reservation is a range of the device's reservation window (DeviceState: [capacity, span)).
// Physical memory is a memfd: mapping it maps the memfd over the reservation's shadow bytes, so
// its contents follow the handle, as on hardware, when it is unmapped and mapped elsewhere.
// Mapped physical allocations that touch inside one reservation form one live Allocation
// (mapped = true), so an op may reach a tensor that spans two of them, as the contiguous virtual
// addresses allow on hardware. Rules are CANN's (hicann/runtime docs/api_docs/aclrtMapMem.md and
// its neighbours): alignment 0, offset 0, flags 0, a mapping of the physical allocation's whole
// size; and where CANN's docs say nothing, the emulator refuses what would corrupt memory
// (unmapping memory that queued work uses, freeing mapped physical memory, releasing a
// reservation with mappings in it).
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>

#include "ember/device/npu/runtime.h"

namespace ember {
namespace npu {
namespace detail {
namespace {

constexpr size_t kGranularity = size_t(2) << 20;   // huge pages (and the emulator's minimum)
constexpr size_t kGranularity1G = size_t(1) << 30;  // ACL_HBM_MEM_HUGE1G

struct Physical {
  int device = 0;
  size_t size = 0;     // as requested
  size_t charged = 0;  // rounded up to the granularity: what DeviceState::used counts
  int fd = -1;
  uintptr_t mapped_at = 0;  // 0: not mapped
};

// Guards the handles and every mapping; taken before a DeviceState::mu.
std::mutex g_vmm_mu;
std::map<uintptr_t, Physical> g_physical;   // handle -> memory
std::map<uintptr_t, uintptr_t> g_mappings;  // mapped address -> handle

Physical* physical_of(aclrtDrvMemHandle h) {
  auto it = g_physical.find(reinterpret_cast<uintptr_t>(h));
  return it == g_physical.end() ? nullptr : &it->second;
}

std::string str(size_t v) { return std::to_string(v); }

// prop names a device's physical memory the emulator makes: *granularity its page size.
aclError check_prop(const char* api, const aclrtPhysicalMemProp* prop, size_t* granularity) {
  if (!prop) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": prop is null");
  if (prop->handleType != ACL_MEM_HANDLE_TYPE_NONE)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": prop.handleType " + str(prop->handleType) +
                                             " is not ACL_MEM_HANDLE_TYPE_NONE, the only type CANN supports");
  if (prop->allocationType != ACL_MEM_ALLOCATION_TYPE_PINNED)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": prop.allocationType " + str(prop->allocationType) +
                                             " is not ACL_MEM_ALLOCATION_TYPE_PINNED, the only type CANN supports");
  if (prop->location.type != ACL_MEM_LOCATION_TYPE_DEVICE)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) +
                                             ": prop.location.type must be ACL_MEM_LOCATION_TYPE_DEVICE (the emulator "
                                             "has no host physical memory)");
  if (aclError e = check_runtime(api, static_cast<int>(prop->location.id))) return e;
  switch (prop->memAttr) {
    case ACL_HBM_MEM_HUGE1G:
    case ACL_HBM_MEM_P2P_HUGE1G:
      *granularity = kGranularity1G;
      return ACL_SUCCESS;
    case ACL_HBM_MEM_HUGE:
    case ACL_HBM_MEM_NORMAL:
    case ACL_HBM_MEM_P2P_HUGE:
    case ACL_HBM_MEM_P2P_NORMAL:
      *granularity = kGranularity;
      return ACL_SUCCESS;
    default:
      return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": prop.memAttr " + str(prop->memAttr) +
                                               " is not a device (HBM) memory attribute");
  }
}

// The reservation of d holding [a, a + size), or reservations.end() (d.mu held).
std::map<uintptr_t, size_t>::iterator reservation_of(DeviceState& d, uintptr_t a, size_t size) {
  auto it = d.reservations.upper_bound(a);
  if (it == d.reservations.begin()) return d.reservations.end();
  --it;
  if (a - it->first > it->second || size > it->second - (a - it->first)) return d.reservations.end();
  return it;
}

// Restores [a, a + size) of d's shadow to private anonymous memory (what an unmapped range holds).
void reset_shadow(DeviceState& d, uintptr_t a, size_t size) {
  mmap(host(d, reinterpret_cast<void*>(a)), size, PROT_READ | PROT_WRITE,
       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

}  // namespace
}  // namespace detail

using namespace detail;

extern "C" aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp* prop, aclrtMemGranularityOptions option,
                                                     size_t* granularity) {
  const char* api = "aclrtMemGetAllocationGranularity";
  if (aclError e = check_runtime(api)) return e;
  if (!granularity) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": granularity is null");
  if (option != ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM && option != ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": option " + str(option) +
                                             " is not ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM or _RECOMMENDED");
  size_t g = 0;
  if (aclError e = check_prop(api, prop, &g)) return e;
  *granularity = g;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtReserveMemAddress(void** virPtr, size_t size, size_t alignment, void* expectPtr,
                                           uint64_t flags) {
  const char* api = "aclrtReserveMemAddress";
  if (aclError e = check_runtime(api, tls_device)) return e;
  if (!virPtr) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": virPtr is null");
  if (size == 0) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": size must be greater than 0");
  if (alignment != 0)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": alignment must be 0 (reserved), got " + str(alignment));
  if (expectPtr)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) +
                                             ": expectPtr must be NULL (a chosen address is an experimental CANN "
                                             "feature the emulator does not have)");
  if (flags > 1)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": flags must be 0 or 1 (page-size hint), got " + str(flags));
  DeviceState& d = device(tls_device);
  if (size > d.span) {
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, std::string(api) + ": " + str(size) + " bytes is more address space than npu:" +
                                                    str(d.index) + " has (" + str(d.span - d.capacity) + " bytes to reserve)");
  }
  const size_t rounded = (size + kGranularity - 1) / kGranularity * kGranularity;
  std::lock_guard<std::mutex> g(d.mu);
  for (auto it = d.va_free.begin(); it != d.va_free.end(); ++it) {  // first fit (offsets stay 2 MiB-aligned)
    if (it->second < rounded) continue;
    const size_t off = it->first, len = it->second;
    d.va_free.erase(it);
    if (len > rounded) d.va_free[off + rounded] = len - rounded;
    d.reservations[d.base + off] = rounded;
    *virPtr = reinterpret_cast<void*>(d.base + off);
    return ACL_SUCCESS;
  }
  return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, std::string(api) + ": npu:" + str(d.index) + " has no free range of " +
                                                  str(rounded) + " bytes of address space left to reserve");
}

extern "C" aclError aclrtReleaseMemAddress(void* virPtr) {
  const char* api = "aclrtReleaseMemAddress";
  if (aclError e = check_runtime(api)) return e;
  const int dev = device_of(virPtr);
  if (!virPtr || dev < 0) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": " + hex(virPtr) + " is not a reservation");
  std::lock_guard<std::mutex> gv(g_vmm_mu);
  DeviceState& d = device(dev);
  std::lock_guard<std::mutex> g(d.mu);
  const uintptr_t a = reinterpret_cast<uintptr_t>(virPtr);
  auto it = d.reservations.find(a);
  if (it == d.reservations.end())
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": " + hex(virPtr) +
                                             " is not the start of a live reservation (aclrtReserveMemAddress)");
  const size_t len = it->second;
  auto m = g_mappings.lower_bound(a);
  if (m != g_mappings.end() && m->first < a + len)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": the reservation at " + hex(virPtr) +
                                             " still has physical memory mapped at " +
                                             hex(reinterpret_cast<void*>(m->first)) + "; aclrtUnmapMem it first");
  d.reservations.erase(it);
  add_free_range(d.va_free, a - d.base, len);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtMallocPhysical(aclrtDrvMemHandle* handle, size_t size, const aclrtPhysicalMemProp* prop,
                                        uint64_t flags) {
  const char* api = "aclrtMallocPhysical";
  if (aclError e = check_runtime(api)) return e;
  if (!handle) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": handle is null");
  if (size == 0) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": size must be greater than 0");
  if (flags != 0) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": flags must be 0, got " + str(flags));
  size_t gran = 0;
  if (aclError e = check_prop(api, prop, &gran)) return e;
  DeviceState& d = device(static_cast<int>(prop->location.id));
  if (size > d.capacity)
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, std::string(api) + ": " + str(size) + " bytes is more than npu:" +
                                                    str(d.index) + "'s " + str(d.capacity) + " (EMBER_NPU_MEMORY)");
  const size_t charged = (size + gran - 1) / gran * gran;
  {
    std::lock_guard<std::mutex> g(d.mu);
    if (charged > d.capacity - d.used)
      return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, std::string(api) + ": out of device memory on npu:" + str(d.index) +
                                                      ": requested " + str(size) + " bytes (" + str(charged) +
                                                      " in whole pages), " + str(d.capacity - d.used) + " of " +
                                                      str(d.capacity) + " free (EMBER_NPU_MEMORY)");
    d.used += charged;
  }
  int fd = memfd_create("ember-npu-physical", MFD_CLOEXEC);
  bool ok = fd >= 0 && ftruncate(fd, static_cast<off_t>(size)) == 0;
  if (ok && malloc_fill()) {  // uninitialised: the NaN fill (zero pages need no writing)
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ok = p != MAP_FAILED;
    if (ok) {
      std::memset(p, malloc_fill(), size);
      munmap(p, size);
    }
  }
  if (!ok) {
    if (fd >= 0) close(fd);
    std::lock_guard<std::mutex> g(d.mu);
    d.used -= charged;
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, std::string(api) + ": the host could not provide " + str(size) +
                                                    " bytes of physical memory (" + std::strerror(errno) + ")");
  }
  std::lock_guard<std::mutex> gv(g_vmm_mu);
  const uintptr_t h = new_handle();
  g_physical[h] = Physical{d.index, size, charged, fd, 0};
  *handle = reinterpret_cast<aclrtDrvMemHandle>(h);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtFreePhysical(aclrtDrvMemHandle handle) {
  const char* api = "aclrtFreePhysical";
  if (aclError e = check_runtime(api)) return e;
  std::lock_guard<std::mutex> gv(g_vmm_mu);
  Physical* p = physical_of(handle);
  if (!p)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": " + hex(handle) +
                                             " is not a live physical allocation (aclrtMallocPhysical; freed twice?)");
  if (p->mapped_at)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": the physical allocation " + hex(handle) +
                                             " is still mapped at " + hex(reinterpret_cast<void*>(p->mapped_at)) +
                                             "; aclrtUnmapMem it first");
  DeviceState& d = device(p->device);
  close(p->fd);
  {
    std::lock_guard<std::mutex> g(d.mu);
    d.used -= p->charged;
  }
  g_physical.erase(reinterpret_cast<uintptr_t>(handle));
  return ACL_SUCCESS;
}

extern "C" aclError aclrtMapMem(void* virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags) {
  const char* api = "aclrtMapMem";
  if (aclError e = check_runtime(api)) return e;
  if (offset != 0) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": offset must be 0, got " + str(offset));
  if (flags != 0) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": flags must be 0, got " + str(flags));
  std::lock_guard<std::mutex> gv(g_vmm_mu);
  Physical* p = physical_of(handle);
  if (!p) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": " + hex(handle) + " is not a live physical allocation");
  if (size != p->size)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": size " + str(size) +
                                             " must be the physical allocation's size, " + str(p->size));
  if (size % kGranularity)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": size " + str(size) + " must be a multiple of the " +
                                             str(kGranularity) + "-byte granularity");
  if (p->mapped_at)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": the physical allocation " + hex(handle) +
                                             " is already mapped at " + hex(reinterpret_cast<void*>(p->mapped_at)));
  const uintptr_t a = reinterpret_cast<uintptr_t>(virPtr);
  const int dev = device_of(virPtr);
  if (!virPtr || dev < 0 || a % kGranularity)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": " + hex(virPtr) +
                                             " is not a granularity-aligned address in a reservation");
  DeviceState& d = device(dev);
  std::lock_guard<std::mutex> g(d.mu);
  auto res = reservation_of(d, a, size);
  if (res == d.reservations.end())
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": [" + hex(virPtr) + ", +" + str(size) +
                                             ") is not inside one reservation (aclrtReserveMemAddress)");
  if (dev != p->device)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": the reservation is npu:" + str(dev) +
                                             "'s and the physical memory npu:" + str(p->device) +
                                             "'s; the emulator maps a device's memory only into its own reservations");
  auto m = g_mappings.lower_bound(a);
  if (m != g_mappings.end() && m->first < a + size)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": [" + hex(virPtr) + ", +" + str(size) +
                                             ") overlaps the mapping at " + hex(reinterpret_cast<void*>(m->first)));
  if (mmap(host(d, virPtr), size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, p->fd, 0) == MAP_FAILED)
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, std::string(api) + ": the host could not map the memory (" +
                                                    std::strerror(errno) + ")");
  // One live range with the mapped runs it touches inside this reservation.
  uintptr_t lo = a, hi = a + size;
  const uintptr_t res_lo = res->first, res_hi = res->first + res->second;
  if (lo > res_lo) {
    const Allocation* left = live_at(d, lo - 1);
    if (left && left->mapped && left->addr >= res_lo) {
      lo = left->addr;
      d.live.erase(lo);
    }
  }
  auto right = d.live.find(hi);
  if (hi < res_hi && right != d.live.end() && right->second.mapped) {
    hi += right->second.size;
    d.live.erase(right);
  }
  d.live[lo] = Allocation{lo, hi - lo, hi - lo, false, true};
  g_mappings[a] = reinterpret_cast<uintptr_t>(handle);
  p->mapped_at = a;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtUnmapMem(void* virPtr) {
  const char* api = "aclrtUnmapMem";
  if (aclError e = check_runtime(api)) return e;
  std::lock_guard<std::mutex> gv(g_vmm_mu);
  const uintptr_t a = reinterpret_cast<uintptr_t>(virPtr);
  auto m = g_mappings.find(a);
  const int dev = device_of(virPtr);
  if (m == g_mappings.end() || dev < 0)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": " + hex(virPtr) + " is not the start of a mapping (aclrtMapMem)");
  Physical& p = g_physical.at(m->second);
  DeviceState& d = device(dev);
  std::lock_guard<std::mutex> g(d.mu);
  auto it = d.live.upper_bound(a);
  --it;  // the mapped range holding a
  const uintptr_t lo = it->first, hi = lo + it->second.size;
  // Queued or planned work notes a range by its start, which merges and splits move: ask for
  // every mapping's start in the range.
  for (auto q = g_mappings.lower_bound(lo); q != g_mappings.end() && q->first < hi; ++q) {
    const char* op = nullptr;
    bool planned = false;
    if (in_use(q->first, &op, &planned))
      return fail(ACL_ERROR_INVALID_PARAM,
                  std::string(api) + ": the memory at " + hex(virPtr) + " is still used by work that has not finished" +
                      (op ? std::string(" (") + (planned ? "planned" : "queued") + " by " + op + ")" : std::string()) +
                      "; synchronize its stream first");
  }
  d.live.erase(it);
  if (a > lo) d.live[lo] = Allocation{lo, a - lo, a - lo, false, true};
  if (a + p.size < hi) d.live[a + p.size] = Allocation{a + p.size, hi - a - p.size, hi - a - p.size, false, true};
  reset_shadow(d, a, p.size);
  p.mapped_at = 0;
  g_mappings.erase(m);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtDeviceCanAccessPeer(int32_t* canAccessPeer, int32_t deviceId, int32_t peerDeviceId) {
  const char* api = "aclrtDeviceCanAccessPeer";
  if (aclError e = check_runtime(api, deviceId)) return e;
  if (aclError e = check_runtime(api, peerDeviceId)) return e;
  if (!canAccessPeer) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": canAccessPeer is null");
  *canAccessPeer = deviceId != peerDeviceId ? 1 : 0;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags) {
  const char* api = "aclrtDeviceEnablePeerAccess";
  if (aclError e = check_runtime(api, tls_device)) return e;
  if (aclError e = check_runtime(api, peerDeviceId)) return e;
  if (flags != 0) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": flags must be 0, got " + str(flags));
  if (peerDeviceId == tls_device)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": peerDeviceId " + str(peerDeviceId) +
                                             " is the current device; CANN requires another device");
  DeviceState& d = device(tls_device);
  std::lock_guard<std::mutex> g(d.mu);
  d.peers.insert(peerDeviceId);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId) {
  const char* api = "aclrtDeviceDisablePeerAccess";
  if (aclError e = check_runtime(api, tls_device)) return e;
  if (aclError e = check_runtime(api, peerDeviceId)) return e;
  DeviceState& d = device(tls_device);
  std::lock_guard<std::mutex> g(d.mu);
  if (!d.peers.erase(peerDeviceId))
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": access from npu:" + str(tls_device) + " to npu:" +
                                             str(peerDeviceId) + " was not enabled");
  return ACL_SUCCESS;
}

}  // namespace npu
}  // namespace ember
