// Helpers of the Ascend C kernel tests: device buffers and a launch that reports its fault.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "kernel_operator.h"

namespace ascendc_test {

// A device buffer of n elements of T, copied from / to host vectors.
template <class T>
struct DeviceBuf {
  explicit DeviceBuf(size_t n) : n(n) { EXPECT_EQ(aclrtMalloc(&p, n * sizeof(T), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS); }
  DeviceBuf(const std::vector<T>& v) : DeviceBuf(v.size()) {  // NOLINT: a buffer holding v
    EXPECT_EQ(aclrtMemcpy(p, n * sizeof(T), v.data(), n * sizeof(T), ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  }
  ~DeviceBuf() { aclrtFree(p); }
  std::vector<T> host() const {
    std::vector<T> v(n);
    EXPECT_EQ(aclrtMemcpy(v.data(), n * sizeof(T), p, n * sizeof(T), ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    return v;
  }
  uint8_t* gm() const { return static_cast<uint8_t*>(p); }
  void* p = nullptr;
  size_t n;
};

// Synchronizes the default stream: "" when the launch ran, else the fault's message.
inline std::string sync_error() {
  aclError e = aclrtSynchronizeStream(nullptr);
  if (e == ACL_SUCCESS) return "";
  EXPECT_EQ(e, ACL_ERROR_RT_AICORE_EXCEPTION);
  const char* m = aclGetRecentErrMsg();
  return m ? m : "(no message)";
}

}  // namespace ascendc_test
