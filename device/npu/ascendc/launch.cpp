// The libember side of kernel_operator.h: launches as stream tasks, global memory lookups (device
// allocations and CPU-debug GmAlloc blocks), race notes and atomic adds.
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

#include "acl/acl.h"
#include "acl/error_codes/rt_error_codes.h"
#include "ember/device/npu/ascendc/core_pool.h"
#include "ember/device/npu/runtime.h"

namespace ember {
namespace npu {
namespace ascendc {
namespace {

// Kernel names outlive their launches (a task's name is never freed): interned once each.
const char* intern(const char* name) {
  static std::mutex mu;
  static auto* names = new std::set<std::string>();
  std::lock_guard<std::mutex> g(mu);
  return names->insert(name ? name : "(unnamed kernel)").first->c_str();
}

// CPU-debug global memory (GmAlloc): host blocks, by address.
std::mutex g_gm_mu;
std::map<uintptr_t, size_t>& gm_blocks() {
  static auto* m = new std::map<uintptr_t, size_t>();
  return *m;
}

std::mutex g_atomic_mu;  // SetAtomicAdd copies of all cores

}  // namespace
}  // namespace ascendc
}  // namespace npu
}  // namespace ember

using namespace ember::npu;

extern "C" int ember_ascendc_gm_map(const void* dev, char** host, uint64_t* avail, uintptr_t* base,
                                    const char** what) {
  detail::Allocation a;
  if (void* h = detail::translate(dev, 0, &a)) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(dev);
    *host = static_cast<char*>(h);
    uintptr_t start = a.addr;
    uint64_t size = a.size;
    *what = "aclrtMalloc allocation";
    // Inside a region the launch's arguments reach (a tensor's block), that region bounds it.
    if (const auto* regions = ascendc::current_regions())
      for (const ascendc::Region& r : *regions)
        if (p >= r.start && p < r.start + r.size) {
          start = r.start;
          size = r.size;
          *what = r.what;
          break;
        }
    *avail = p < start + size ? start + size - p : 0;
    *base = start;
    return 1;
  }
  std::lock_guard<std::mutex> g(ascendc::g_gm_mu);
  auto& m = ascendc::gm_blocks();
  const uintptr_t p = reinterpret_cast<uintptr_t>(dev);
  auto it = m.upper_bound(p);
  if (it == m.begin()) return 0;
  --it;
  if (p >= it->first + it->second) return 0;
  *host = reinterpret_cast<char*>(p);
  *avail = it->first + it->second - p;
  *base = it->first;
  *what = "GmAlloc block";
  return 1;
}

extern "C" void ember_ascendc_gm_note(const void* dev, uint64_t bytes, int write, const char* call) {
  ascendc::note_access(reinterpret_cast<uintptr_t>(dev), bytes, write, call);
}

extern "C" void* ember_ascendc_gm_alloc(size_t bytes) {
  // 32-byte aligned like device memory; at least one byte so every block has an address.
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  if (!p) return nullptr;
  std::lock_guard<std::mutex> g(ascendc::g_gm_mu);
  ascendc::gm_blocks()[reinterpret_cast<uintptr_t>(p)] = bytes;
  return p;
}

extern "C" void ember_ascendc_gm_free(void* p) {
  if (!p) return;
  {
    std::lock_guard<std::mutex> g(ascendc::g_gm_mu);
    if (ascendc::gm_blocks().erase(reinterpret_cast<uintptr_t>(p)) == 0)
      throw std::invalid_argument("AscendC::GmFree: " + detail::hex(p) + " is not a block of GmAlloc (freed twice?)");
  }
  std::free(p);
}

extern "C" int ember_ascendc_launch(const char* kernel, uint32_t block_dim, void* stream, ember_ascendc_body body,
                                    void* args, ember_ascendc_free free_args, const void* const* ptrs, uint32_t nptrs) {
  std::unique_ptr<void, ember_ascendc_free> owned(args, free_args);
  const std::string api = std::string("launch of kernel ") + (kernel ? kernel : "?");
  if (aclError e = detail::check_runtime_stream(api.c_str(), stream)) return e;
  if (block_dim == 0 || block_dim > ascendc::kMaxBlockDim)
    return detail::fail(ACL_ERROR_RT_PARAM_INVALID, api + ": blockDim " + std::to_string(block_dim) +
                                                        " is not 1 to " + std::to_string(ascendc::kMaxBlockDim));
  detail::StreamPtr s = detail::resolve_stream(stream);
  if (!s) return detail::fail(ACL_ERROR_RT_PARAM_INVALID, api + ": not a live stream");
  const char* name = ascendc::intern(kernel);
  // The allocations the pointer arguments reach stay in use until the launch has run; a pointer
  // into a tensor's block of the caching allocator is bounded by that block (as it is now: by the
  // time the launch runs, the host may have handed the memory around it to later work).
  detail::AllocList uses;
  auto regions = std::make_shared<std::vector<ascendc::Region>>();
  for (uint32_t i = 0; i < nptrs; ++i) {
    detail::Allocation a;
    if (!detail::translate(ptrs[i], 0, &a)) continue;
    uses.add(a.addr);
    const uintptr_t p = reinterpret_cast<uintptr_t>(ptrs[i]);
    uintptr_t start = 0;
    size_t size = 0;
    if (detail::cached_block_of(detail::device_of(ptrs[i]), p, &start, &size))
      regions->push_back({start, size, "block of ember's caching allocator (a tensor's memory)"});
  }
  std::shared_ptr<void> held(owned.release(), free_args);
  const int device = s->device();
  const uint64_t stream_id = s->id();
  detail::Task task(name, [name, block_dim, body, held, regions, device, stream_id] {
    std::string err = ascendc::run_cores(name, block_dim, body, held.get(), regions.get(), device, stream_id);
    if (!err.empty()) throw std::runtime_error(err);
  });
  s->enqueue(std::move(task), std::move(uses));
  return ACL_SUCCESS;
}

extern "C" int ember_ascendc_run_now(const char* kernel, uint32_t block_dim, ember_ascendc_body body, void* args,
                                     char* msg, size_t msg_size) {
  std::string err;
  if (block_dim == 0 || block_dim > ascendc::kMaxBlockDim)
    err = std::string("ICPU_RUN_KF(") + kernel + "): blockDim " + std::to_string(block_dim) + " is not 1 to " +
          std::to_string(ascendc::kMaxBlockDim);
  else
    err = ascendc::run_cores(ascendc::intern(kernel), block_dim, body, args);
  if (err.empty()) return 0;
  if (msg && msg_size) {
    std::strncpy(msg, err.c_str(), msg_size - 1);
    msg[msg_size - 1] = '\0';
  }
  return 1;
}

extern "C" void ember_ascendc_atomic_add(int dtype, void* dst, const void* src, uint64_t n) {
  std::lock_guard<std::mutex> g(ascendc::g_atomic_mu);
  ember_ascendc_binary(EMBER_ASC_ADD, dtype, dst, dst, src, n);
}
