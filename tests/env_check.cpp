// Bad values of ember's environment variables, checked in a process of their own (each is read
// once). CTest sets the variable (tests/CMakeLists.txt):
//   env_check npu EMBER_NPU_MEMORY   the runtime has no device, and every way in (aclrtMalloc,
//                                    aclrtGetMemInfo, aclrtSetDevice, an npu tensor) says which
//                                    variable and value are wrong; the CPU keeps working.
//   env_check cpu EMBER_CPU_CACHE_MB every CPU allocation is a ValueError naming the variable.
#include <cstdlib>
#include <iostream>
#include <string>

#include <ember/device/npu/acl.h>
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
    expect(zeros({2}).sum().item<float>() == 0.0f, "the CPU still works");
  } else if (mode == "cpu") {
    expect_throw<ValueError>([] { zeros({2}); }, var, value, "zeros on the CPU");
  } else {
    return 2;
  }
  return failures ? 1 : 0;
}
