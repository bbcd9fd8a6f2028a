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
  DevTensor(std::vector<int64_t> shp, const std::vector<float>& values) : DevTensor(std::move(shp), values, ACL_FLOAT) {}
  // The same in float16 or bfloat16 (values rounded to nearest even), or float32.
  DevTensor(std::vector<int64_t> shp, const std::vector<float>& values, aclDataType dt) : shape(std::move(shp)), dtype(dt) {
    const size_t es = dt == ACL_FLOAT ? 4 : 2;
    std::vector<char> host(values.size() * es);
    for (size_t i = 0; i < values.size(); ++i) {
      if (es == 4) {
        std::memcpy(&host[i * 4], &values[i], 4);
      } else {
        uint16_t b = to16(values[i]);
        std::memcpy(&host[i * 2], &b, 2);
      }
    }
    bytes = host.size();
    aclrtMalloc(&dev, bytes ? bytes : 4, ACL_MEM_MALLOC_HUGE_FIRST);
    if (bytes) aclrtMemcpy(dev, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    int64_t n = static_cast<int64_t>(values.size());
    t = aclCreateTensor(shape.data(), shape.size(), dt, nullptr, 0, ACL_FORMAT_ND, &n, 1, dev);
  }
  uint16_t to16(float v) const {
    if (dtype == ACL_FLOAT16) return aclFloatToFloat16(v);
    uint32_t u;
    std::memcpy(&u, &v, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN stays NaN
    return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  float from16(uint16_t b) const {
    if (dtype == ACL_FLOAT16) return aclFloat16ToFloat(b);
    uint32_t u = uint32_t(b) << 16;
    float v;
    std::memcpy(&v, &u, 4);
    return v;
  }
  DevTensor(const DevTensor&) = delete;
  DevTensor& operator=(const DevTensor&) = delete;
  ~DevTensor() {
    if (t) aclDestroyTensor(t);
    if (dev) aclrtFree(dev);
  }
  std::vector<float> read() const {
    aclrtSynchronizeDevice();
    if (dtype == ACL_FLOAT16 || dtype == ACL_BF16) {
      std::vector<uint16_t> bits(bytes / 2);
      if (bytes) aclrtMemcpy(bits.data(), bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
      std::vector<float> out(bits.size());
      for (size_t i = 0; i < bits.size(); ++i) out[i] = from16(bits[i]);
      return out;
    }
    std::vector<float> out(bytes / sizeof(float));
    if (bytes) aclrtMemcpy(out.data(), bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    return out;
  }
};

inline std::string recent_error() {
  const char* m = aclGetRecentErrMsg();
  return m ? m : "";
}

}  // namespace npu_test
