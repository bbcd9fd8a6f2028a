// Bad values of ember's environment variables, checked in a process of their own (each is read
// once). CTest sets the variable (tests/CMakeLists.txt):
//   env_check npu EMBER_NPU_MEMORY   the runtime has no device, and every way in (aclrtMalloc,
//                                    aclrtGetMemInfo, aclrtSetDevice, an npu tensor) says which
//                                    variable and value are wrong; the CPU keeps working.
//   env_check cpu EMBER_CPU_CACHE_MB every CPU allocation is a ValueError naming the variable.
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>

#include <ember/device/npu/acl.h>
#include "hccl/hccl.h"
#include <ember/ember.h>

using namespace ember;
using namespace ember::npu;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::cout << (ok ? "ok:   " : "FAIL: ") << what << "\n";
  if (!ok) ++failures;
}

bool names(const std::string& msg, const std::string& var, const std::string& value) {
  return msg.find(var + "='" + value + "'") != std::string::npos;
}

template <class E, class Fn>
void expect_throw(Fn fn, const std::string& var, const std::string& value, const std::string& what) {
  try {
    fn();
    expect(false, what + ": no error");
  } catch (const E& e) {
    expect(names(e.what(), var, value), what + ": " + e.what());
  } catch (const std::exception& e) {
    expect(false, what + ": wrong error type: " + e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const std::string mode = argv[1], var = argv[2];
  const std::string value = std::getenv(var.c_str()) ? std::getenv(var.c_str()) : "";
  if (mode == "npu") {
    void* p = nullptr;
    expect(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_ERROR_RT_INVALID_DEVICEID && p == nullptr,
           "aclrtMalloc fails with ACL_ERROR_RT_INVALID_DEVICEID");
    auto recent = [] {
      const char* m = aclGetRecentErrMsg();  // read once: reading clears it
      return std::string(m ? m : "");
    };
    std::string msg = recent();
    expect(names(msg, var, value), "its message: " + msg);
    size_t free_b = 0, total = 0;
    expect(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total) == ACL_ERROR_RT_INVALID_DEVICEID,
           "aclrtGetMemInfo fails with ACL_ERROR_RT_INVALID_DEVICEID");
    expect(aclrtSetDevice(0) == ACL_ERROR_RT_INVALID_DEVICEID, "aclrtSetDevice(0) fails");
    msg = recent();
    expect(names(msg, var, value), "its message: " + msg);
    expect_throw<DeviceError>([] { zeros({2}, Device(DeviceType::NPU, 0)); }, var, value, "zeros on npu:0");
    // Every other runtime entry point returns its error (and says why) instead of crashing.
    const aclError kNoDevice = ACL_ERROR_RT_INVALID_DEVICEID;
    aclrtStream stream = nullptr;
    aclrtEvent event = nullptr;
    aclrtContext ctx = nullptr;
    aclrtStreamStatus sst;
    char host[64] = {};
    void* pinned = nullptr;
    struct Call {
      const char* what;
      std::function<aclError()> call;
      aclError want;
    };
    const Call calls[] = {
        {"aclrtCreateStream", [&] { return aclrtCreateStream(&stream); }, kNoDevice},
        {"aclrtCreateStreamWithConfig", [&] { return aclrtCreateStreamWithConfig(&stream, 0, 0); }, kNoDevice},
        {"aclrtSynchronizeStream(default)", [&] { return aclrtSynchronizeStream(nullptr); }, kNoDevice},
        {"aclrtSynchronizeStreamWithTimeout(default)", [&] { return aclrtSynchronizeStreamWithTimeout(nullptr, 10); }, kNoDevice},
        {"aclrtStreamQuery(default)", [&] { return aclrtStreamQuery(nullptr, &sst); }, kNoDevice},
        {"aclrtSynchronizeDevice", [&] { return aclrtSynchronizeDevice(); }, kNoDevice},
        {"aclrtCreateContext", [&] { return aclrtCreateContext(&ctx, 0); }, kNoDevice},
        {"aclrtResetDevice", [&] { return aclrtResetDevice(0); }, kNoDevice},
        {"aclrtMallocAlign32", [&] { return aclrtMallocAlign32(&pinned, 64, ACL_MEM_MALLOC_HUGE_FIRST); }, kNoDevice},
        {"aclrtMemsetAsync(default)", [&] { return aclrtMemsetAsync(host, 64, 0, 64, nullptr); }, kNoDevice},
        {"aclrtMemcpyAsync(default)", [&] { return aclrtMemcpyAsync(host, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, nullptr); }, kNoDevice},
        {"aclrtMemcpy(H2D)", [&] { return aclrtMemcpy(host, 64, host + 8, 8, ACL_MEMCPY_HOST_TO_DEVICE); }, ACL_ERROR_INVALID_PARAM},
        {"aclrtMemset(host)", [&] { return aclrtMemset(host, 64, 0, 64); }, ACL_ERROR_INVALID_PARAM},
        {"aclrtCreateEvent", [&] { return aclrtCreateEvent(&event); }, ACL_SUCCESS},
        {"aclrtRecordEvent(default stream)", [&] { return aclrtRecordEvent(event, nullptr); }, kNoDevice},
        {"aclrtStreamWaitEvent(default stream)", [&] { return aclrtStreamWaitEvent(nullptr, event); }, kNoDevice},
        {"aclrtSynchronizeEvent", [&] { return aclrtSynchronizeEvent(event); }, ACL_SUCCESS},
        {"aclrtDestroyEvent", [&] { return aclrtDestroyEvent(event); }, ACL_SUCCESS},
    };
    HcclRootInfo root;
    HcclComm hccl = nullptr;
    expect(HcclGetRootInfo(&root) == HCCL_SUCCESS, "HcclGetRootInfo needs no device");
    expect(HcclCommInitRootInfo(1, &root, 0, &hccl) == HCCL_E_RUNTIME, "HcclCommInitRootInfo fails with HCCL_E_RUNTIME");
    const std::string hm = recent();
    expect(names(hm, var, value), "its message: " + hm);
    for (const Call& c : calls) {
      recent();
      const aclError got = c.call();
      const std::string m = recent();
      expect(got == c.want, std::string(c.what) + " returns " + std::to_string(c.want) + " (got " +
                                  std::to_string(got) + "): " + m);
      if (c.want == kNoDevice) expect(names(m, var, value), std::string(c.what) + "'s message names the variable");
    }
    expect(zeros({2}).sum().item<float>() == 0.0f, "the CPU still works");
  } else if (mode == "cpu") {
    expect_throw<ValueError>([] { zeros({2}); }, var, value, "zeros on the CPU");
  } else {
    return 2;
  }
  return failures ? 1 : 0;
}
