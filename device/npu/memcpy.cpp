// The emulated NPU's copies and fills: aclrtMemcpy(Async) and aclrtMemset(Async), each pointer
// checked against the copy kind and the live allocations before any byte moves.
#include <cstring>
#include <string>

#include "ember/device/npu/runtime.h"
#include "ember/core/error.h"

namespace ember {
namespace npu {
namespace detail {
namespace {

// Phase-1 style check used by memcpy/memset: the whole range must be live device memory.
aclError check_device_range(const char* fn, const char* what, const void* p, size_t bytes) {
  if (device_of(p) < 0)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(fn) + ": " + what + " " + hex(p) +
                                             " is not device memory (a host pointer where a device pointer is expected)");
  if (!translate(p, bytes, nullptr))
    return fail(ACL_ERROR_INVALID_PARAM, std::string(fn) + ": " + what + " range [" + hex(p) + ", +" +
                                             std::to_string(bytes) + " bytes) is not inside one live aclrtMalloc allocation");
  return ACL_SUCCESS;
}
aclError check_host(const char* fn, const char* what, const void* p) {
  if (device_of(p) >= 0)
    return fail(ACL_ERROR_INVALID_PARAM, std::string(fn) + ": " + what + " " + hex(p) +
                                             " is device memory, but the copy kind says host memory");
  return ACL_SUCCESS;
}

// Resolves kind (DEFAULT: from the addresses) and validates both pointers against it.
aclError check_copy(const char* fn, void* dst, const void* src, size_t count, aclrtMemcpyKind* kind) {
  if (*kind == ACL_MEMCPY_DEFAULT) {
    bool dd = device_of(dst) >= 0, sd = device_of(src) >= 0;
    *kind = dd ? (sd ? ACL_MEMCPY_DEVICE_TO_DEVICE : ACL_MEMCPY_HOST_TO_DEVICE)
               : (sd ? ACL_MEMCPY_DEVICE_TO_HOST : ACL_MEMCPY_HOST_TO_HOST);
  }
  aclError e = ACL_SUCCESS;
  switch (*kind) {
    case ACL_MEMCPY_HOST_TO_HOST:
      if ((e = check_host(fn, "dst", dst)) || (e = check_host(fn, "src", src))) return e;
      break;
    case ACL_MEMCPY_HOST_TO_DEVICE:
      if ((e = check_device_range(fn, "dst", dst, count)) || (e = check_host(fn, "src", src))) return e;
      break;
    case ACL_MEMCPY_DEVICE_TO_HOST:
      if ((e = check_host(fn, "dst", dst)) || (e = check_device_range(fn, "src", src, count))) return e;
      break;
    case ACL_MEMCPY_DEVICE_TO_DEVICE:
      if ((e = check_device_range(fn, "dst", dst, count)) || (e = check_device_range(fn, "src", src, count))) return e;
      break;
    default:
      return fail(ACL_ERROR_INVALID_PARAM, std::string(fn) + ": invalid copy kind " + std::to_string(*kind));
  }
  return ACL_SUCCESS;
}

void raw_copy(void* dst, const void* src, size_t count, aclrtMemcpyKind kind) {
  char* d = (kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE) ? host_ptr(dst)
                                                                                    : static_cast<char*>(dst);
  const char* s = (kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE)
                      ? host_ptr(src)
                      : static_cast<const char*>(src);
  std::memmove(d, s, count);
}

}  // namespace
}  // namespace detail

using namespace detail;

extern "C" aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
  if (aclError e = check_runtime("aclrtMemcpy")) return e;
  if (count == 0) return ACL_SUCCESS;
  if (!dst || !src) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: dst and src must not be null");
  if (count > destMax)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: count " + std::to_string(count) + " exceeds destMax " +
                                             std::to_string(destMax));
  if (aclError e = check_copy("aclrtMemcpy", dst, src, count, &kind)) return e;
  raw_copy(dst, src, count, kind);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                                     aclrtStream stream) {
  if (aclError e = check_runtime_stream("aclrtMemcpyAsync", stream)) return e;
  if (count == 0) return ACL_SUCCESS;
  if (!dst || !src) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyAsync: dst and src must not be null");
  if (count > destMax)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyAsync: count " + std::to_string(count) + " exceeds destMax " +
                                             std::to_string(destMax));
  if (kind == ACL_MEMCPY_HOST_TO_HOST)
    return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtMemcpyAsync: host-to-host copies are not supported; use aclrtMemcpy");
  if (aclError e = check_copy("aclrtMemcpyAsync", dst, src, count, &kind)) return e;
  if (kind == ACL_MEMCPY_HOST_TO_HOST)
    return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtMemcpyAsync: host-to-host copies are not supported; use aclrtMemcpy");
  StreamPtr s = resolve_stream(stream);
  if (!s) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyAsync: invalid stream");
  // The device memory on either side stays in use until the copy has run.
  Task task{"aclrtMemcpyAsync", nullptr};
  AllocList uses;
  for (const void* p : {static_cast<const void*>(dst), src})
    if (uintptr_t base = allocation_base(p)) uses.add(base);
  if (kind == ACL_MEMCPY_HOST_TO_DEVICE && !is_pinned(src, count)) {
    // Pageable source: staged now, so the caller may reuse its buffer when the call returns.
    auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src), static_cast<const char*>(src) + count);
    task.run = [dst, staged, count] { std::memcpy(host_ptr(dst), staged->data(), count); };
  } else {
    task.run = [dst, src, count, kind] { raw_copy(dst, src, count, kind); };
  }
  s->enqueue(std::move(task), std::move(uses));
  if (kind == ACL_MEMCPY_DEVICE_TO_HOST && !is_pinned(dst, count)) {
    // Pageable destination: like newer CANN, the call returns when the copy is done.
    std::string msg;
    int kind = 0;
    aclError e = s->synchronize(&msg, &kind);
    if (e) return fail(e, msg, kind);
  }
  return ACL_SUCCESS;
}

extern "C" aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
  if (aclError e = check_runtime("aclrtMemset")) return e;
  if (!devPtr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemset: devPtr is null");
  if (count > maxCount)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemset: count " + std::to_string(count) + " exceeds maxCount " +
                                             std::to_string(maxCount));
  if (count == 0) return ACL_SUCCESS;
  if (aclError e = check_device_range("aclrtMemset", "devPtr", devPtr, count)) return e;
  std::memset(host_ptr(devPtr), value, count);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream) {
  if (aclError e = check_runtime_stream("aclrtMemsetAsync", stream)) return e;
  if (!devPtr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemsetAsync: devPtr is null");
  if (count > maxCount)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemsetAsync: count " + std::to_string(count) + " exceeds maxCount " +
                                             std::to_string(maxCount));
  if (count == 0) return ACL_SUCCESS;
  if (aclError e = check_device_range("aclrtMemsetAsync", "devPtr", devPtr, count)) return e;
  StreamPtr s = resolve_stream(stream);
  if (!s) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemsetAsync: invalid stream");
  AllocList uses;
  if (uintptr_t base = allocation_base(devPtr)) uses.add(base);
  s->enqueue({"aclrtMemsetAsync", [devPtr, value, count] { std::memset(host_ptr(devPtr), value, count); }},
             std::move(uses));
  return ACL_SUCCESS;
}

}  // namespace npu
}  // namespace ember
