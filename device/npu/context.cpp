// The emulated NPU runtime's devices (aclrtSetDevice & co.), contexts (aclrtCreateContext & co.),
// run mode and SoC name.
#include <map>
#include <mutex>
#include <string>

#include "ember/core/error.h"
#include "ember/device/npu/runtime.h"

namespace ember {
namespace npu {

using namespace detail;

// ---- devices ----
namespace {
// ACL_ERROR_RT_INVALID_DEVICEID naming the api and the devices there are, unless id is one of them.
aclError check_device_id(const char* api, int32_t id) {
  if (id >= 0 && id < device_count()) return ACL_SUCCESS;
  return fail(ACL_ERROR_RT_INVALID_DEVICEID, std::string(api) + ": invalid device id " + std::to_string(id) + " (" +
                                                 std::to_string(device_count()) + " devices; " + devices_note() + ")");
}
}  // namespace

extern "C" aclError aclrtSetDevice(int32_t id) {
  if (aclError e = check_runtime("aclrtSetDevice")) return e;
  if (aclError e = check_device_id("aclrtSetDevice", id)) return e;
  tls_device = id;
  tls_context = default_context(id);
  default_stream(id);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtResetDevice(int32_t id) {
  if (aclError e = check_runtime("aclrtResetDevice")) return e;
  if (aclError e = check_device_id("aclrtResetDevice", id)) return e;
  for (const StreamPtr& s : streams_of(id)) {
    std::string msg;
    s->synchronize(&msg);
  }
  return ACL_SUCCESS;
}

extern "C" aclError aclrtGetDevice(int32_t* id) {
  if (aclError e = check_runtime("aclrtGetDevice")) return e;
  if (!id) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is null");
  *id = tls_device;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtGetDeviceCount(uint32_t* count) {
  if (aclError e = check_runtime("aclrtGetDeviceCount")) return e;
  if (!count) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is null");
  *count = static_cast<uint32_t>(device_count());
  return ACL_SUCCESS;
}

// ---- contexts ----
// A context is a handle naming a device (handles are never reused, like streams'). Each device has
// a default context, made current by aclrtSetDevice. Streams belong to devices, not contexts:
// every context of a device shares its default stream (on CANN each context has its own).
namespace detail {
namespace {
std::map<uintptr_t, int>& live_contexts() {  // handle -> device (g_registry_mu)
  static auto* m = new std::map<uintptr_t, int>();
  return *m;
}
std::map<int, uintptr_t>& default_contexts() {  // device -> its default context (g_registry_mu)
  static auto* m = new std::map<int, uintptr_t>();
  return *m;
}
}  // namespace

uintptr_t default_context(int dev) {
  std::lock_guard<std::mutex> g(g_registry_mu);
  uintptr_t& h = default_contexts()[dev];
  if (!h) {
    h = new_handle();
    live_contexts()[h] = dev;
  }
  return h;
}
}  // namespace detail

extern "C" aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId) {
  if (aclError e = check_runtime("aclrtCreateContext")) return e;
  if (!context) return fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateContext: context is null");
  if (aclError e = check_device_id("aclrtCreateContext", deviceId)) return e;
  uintptr_t h = new_handle();
  {
    std::lock_guard<std::mutex> g(g_registry_mu);
    live_contexts()[h] = deviceId;
  }
  default_stream(deviceId);
  tls_device = deviceId;  // CANN: the new context becomes the thread's current one
  tls_context = h;
  *context = reinterpret_cast<aclrtContext>(h);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtDestroyContext(aclrtContext context) {
  if (aclError e = check_runtime("aclrtDestroyContext")) return e;
  if (!context) return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyContext: context is null");
  uintptr_t h = reinterpret_cast<uintptr_t>(context);
  std::lock_guard<std::mutex> g(g_registry_mu);
  auto it = live_contexts().find(h);
  if (it == live_contexts().end())
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyContext: not a live context (destroyed twice?)");
  auto d = default_contexts().find(it->second);
  if (d != default_contexts().end() && d->second == h)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyContext: a device's default context cannot be destroyed "
                                         "(aclrtResetDevice releases the device)");
  live_contexts().erase(it);
  if (tls_context == h) tls_context = 0;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtSetCurrentContext(aclrtContext context) {
  if (aclError e = check_runtime("aclrtSetCurrentContext")) return e;
  if (!context) return fail(ACL_ERROR_INVALID_PARAM, "aclrtSetCurrentContext: context is null");
  uintptr_t h = reinterpret_cast<uintptr_t>(context);
  int dev;
  {
    std::lock_guard<std::mutex> g(g_registry_mu);
    auto it = live_contexts().find(h);
    if (it == live_contexts().end())
      return fail(ACL_ERROR_INVALID_PARAM, "aclrtSetCurrentContext: not a live context (destroyed?)");
    dev = it->second;
  }
  tls_device = dev;
  tls_context = h;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtGetCurrentContext(aclrtContext* context) {
  if (aclError e = check_runtime("aclrtGetCurrentContext")) return e;
  if (!context) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetCurrentContext: context is null");
  if (!tls_context)
    return fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetCurrentContext: this thread has no context (call aclrtSetDevice "
                                           "or aclrtCreateContext first)");
  *context = reinterpret_cast<aclrtContext>(tls_context);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtGetRunMode(aclrtRunMode* runMode) {
  if (aclError e = check_runtime("aclrtGetRunMode")) return e;
  if (!runMode) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode: runMode is null");
  *runMode = ACL_HOST;  // the program runs on the host, the device is attached (emulated)
  return ACL_SUCCESS;
}

// The SoC the emulator stands in for: an Atlas A2 training part (bf16, HF32, the aclnn op set).
extern "C" const char* aclrtGetSocName() { return "Ascend910B4"; }

}  // namespace npu
}  // namespace ember
