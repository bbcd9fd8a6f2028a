// Pinned host memory: aclrtMallocHost / aclrtFreeHost, and is_pinned, which aclrtMemcpyAsync asks
// (a pageable host buffer is staged at the call; pinned memory is read when the copy runs).
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "ember/device/npu/runtime.h"

namespace ember {
namespace npu {
namespace detail {
namespace {
// host address -> size of every live aclrtMallocHost block, under pinned_mu (both never destroyed:
// frees may come during static destruction).
std::mutex& pinned_mu() {
  static auto* m = new std::mutex();
  return *m;
}
std::map<uintptr_t, size_t>& pinned() {
  static auto* m = new std::map<uintptr_t, size_t>();
  return *m;
}
}  // namespace

bool is_pinned(const void* p, size_t bytes) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> g(pinned_mu());
  auto it = pinned().upper_bound(a);
  if (it == pinned().begin()) return false;
  --it;
  return a + bytes <= it->first + it->second;
}

}  // namespace detail

using namespace detail;

extern "C" aclError aclrtMallocHost(void** hostPtr, size_t size) {
  if (aclError e = check_runtime("aclrtMallocHost")) return e;
  if (!hostPtr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: hostPtr is null");
  if (size == 0) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: size must be greater than 0");
  void* p = nullptr;
  if (posix_memalign(&p, 64, size) != 0)
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMallocHost: out of host memory (" + std::to_string(size) + " bytes)");
  std::lock_guard<std::mutex> g(pinned_mu());
  pinned()[reinterpret_cast<uintptr_t>(p)] = size;
  *hostPtr = p;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtFreeHost(void* hostPtr) {
  if (aclError e = check_runtime("aclrtFreeHost")) return e;
  if (!hostPtr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtFreeHost: hostPtr is null");
  {
    std::lock_guard<std::mutex> g(pinned_mu());
    auto it = pinned().find(reinterpret_cast<uintptr_t>(hostPtr));
    if (it == pinned().end())
      return fail(ACL_ERROR_INVALID_PARAM, "aclrtFreeHost: " + hex(hostPtr) + " was not allocated by aclrtMallocHost");
    pinned().erase(it);
  }
  std::free(hostPtr);
  return ACL_SUCCESS;
}

}  // namespace npu
}  // namespace ember
