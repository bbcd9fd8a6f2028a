// Helpers for tests that drive the emulated NPU through its CANN-style API.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include <ember/ember.h>
#include "ember/device/npu/kernel.h"

namespace npu_test {

using namespace ember::npu;

// A device buffer holding `values` (float32 by default) and an aclTensor over it.
struct DevTensor {
  void* dev = nullptr;
  aclTensor* t = nullptr;
  std::vector<int64_t> shape;
  aclDataType dtype = ACL_FLOAT;
  size_t bytes = 0;

  DevTensor() = default;
  DevTensor(std::vector<int64_t> shp, const std::vector<float>& values) : shape(std::move(shp)) {
    bytes = values.size() * sizeof(float);
    aclrtMalloc(&dev, bytes ? bytes : 4, ACL_MEM_MALLOC_HUGE_FIRST);
    if (bytes) aclrtMemcpy(dev, bytes, values.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    int64_t n = static_cast<int64_t>(values.size());
    t = aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, &n, 1, dev);
  }
  DevTensor(const DevTensor&) = delete;
  DevTensor& operator=(const DevTensor&) = delete;
  ~DevTensor() {
    if (t) aclDestroyTensor(t);
    if (dev) aclrtFree(dev);
  }
  std::vector<float> read() const {
    std::vector<float> out(bytes / sizeof(float));
    aclrtSynchronizeDevice();
    if (bytes) aclrtMemcpy(out.data(), bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    return out;
  }
};

inline std::string recent_error() {
  const char* m = aclGetRecentErrMsg();
  return m ? m : "";
}

}  // namespace npu_test
