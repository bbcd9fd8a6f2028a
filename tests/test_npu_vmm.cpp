// The emulated NPU's virtual memory calls (aclrtReserveMemAddress, aclrtMallocPhysical,
// aclrtMapMem, ...) as ggml's CANN pool uses them, their rules, and peer access.
#include <cstring>
#include <vector>

#include "npu_test_util.h"
#include "test_util.h"

using namespace ember::npu;
using npu_test::recent_error;

namespace {

aclrtPhysicalMemProp device_prop(int dev, aclrtMemAttr attr = ACL_HBM_MEM_HUGE) {
  aclrtPhysicalMemProp p = {};
  p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  p.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  p.memAttr = attr;
  p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = static_cast<uint32_t>(dev);
  return p;
}

size_t free_memory() {
  size_t free = 0, total = 0;
  EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free, &total), ACL_SUCCESS);
  return free;
}

// ggml's pool: reserve the free memory's worth of addresses, then map physical chunks end to
// end; a tensor that spans two chunks is one range to the ops.
TEST(NpuVmm, MappedChunksEndToEndAreOneRangeForCopiesAndOps) {
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  aclrtPhysicalMemProp prop = device_prop(0);
  size_t gran = 0, rec = 0;
  ASSERT_EQ(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &gran), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &rec), ACL_SUCCESS);
  EXPECT_EQ(gran, size_t(2) << 20);
  EXPECT_EQ(rec, gran);
  aclrtPhysicalMemProp p1g = device_prop(0, ACL_HBM_MEM_HUGE1G);
  ASSERT_EQ(aclrtMemGetAllocationGranularity(&p1g, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &rec), ACL_SUCCESS);
  EXPECT_EQ(rec, size_t(1) << 30);

  const size_t free0 = free_memory();
  void* va = nullptr;
  ASSERT_EQ(aclrtReserveMemAddress(&va, free0, 0, nullptr, 1), ACL_SUCCESS) << recent_error();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(va) % gran, 0u);
  EXPECT_EQ(free_memory(), free0);  // addresses cost no memory
  aclrtDrvMemHandle h[2] = {};
  for (auto& x : h) ASSERT_EQ(aclrtMallocPhysical(&x, gran, &prop, 0), ACL_SUCCESS) << recent_error();
  EXPECT_EQ(free_memory(), free0 - 2 * gran);
  char* base = static_cast<char*>(va);
  ASSERT_EQ(aclrtMapMem(base, gran, 0, h[0], 0), ACL_SUCCESS) << recent_error();
  ASSERT_EQ(aclrtMapMem(base + gran, gran, 0, h[1], 0), ACL_SUCCESS) << recent_error();

  // 1024 floats straddling the two chunks.
  const int64_t n = 1024;
  char* at = base + gran - 512 * sizeof(float);
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i) - 300.5f;
  ASSERT_EQ(aclrtMemcpy(at, n * 4, x.data(), n * 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS) << recent_error();
  aclTensor* t = aclCreateTensor(&n, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, &n, 1, at);
  float two = 2.0f;
  aclScalar* s = aclCreateScalar(&two, ACL_FLOAT);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(aclnnInplaceMulsGetWorkspaceSize(t, s, &ws, &ex), ACLNN_SUCCESS) << recent_error();
  // Planned work holds the memory: unmapping it now would pull memory from under the kernel.
  EXPECT_EQ(aclrtUnmapMem(base + gran), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("planned by aclnnInplaceMuls"), std::string::npos);
  ASSERT_EQ(aclnnInplaceMuls(nullptr, 0, ex, nullptr), ACLNN_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  std::vector<float> y(n);
  ASSERT_EQ(aclrtMemcpy(y.data(), n * 4, at, n * 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[static_cast<size_t>(i)], 2 * x[static_cast<size_t>(i)]) << i;
  aclDestroyTensor(t);
  aclDestroyScalar(s);

  // The contents belong to the physical memory: unmapped and mapped elsewhere, they follow it.
  ASSERT_EQ(aclrtUnmapMem(base + gran), ACL_SUCCESS) << recent_error();
  float probe = 0;
  EXPECT_NE(aclrtMemcpy(&probe, 4, base + gran, 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);  // nothing mapped there
  recent_error();
  ASSERT_EQ(aclrtMapMem(base + 4 * gran, gran, 0, h[1], 0), ACL_SUCCESS) << recent_error();
  ASSERT_EQ(aclrtMemcpy(&probe, 4, base + 4 * gran, 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_EQ(probe, y[512]);

  // A copy may not run past the mapped run into unmapped addresses.
  EXPECT_NE(aclrtMemcpy(y.data(), n * 4, at, n * 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  recent_error();

  for (char* m : {base, base + 4 * gran}) ASSERT_EQ(aclrtUnmapMem(m), ACL_SUCCESS) << recent_error();
  for (auto& x : h) ASSERT_EQ(aclrtFreePhysical(x), ACL_SUCCESS) << recent_error();
  ASSERT_EQ(aclrtReleaseMemAddress(va), ACL_SUCCESS) << recent_error();
  EXPECT_EQ(free_memory(), free0);
}

TEST(NpuVmm, MisuseIsRefusedWithCannCodesAndMessages) {
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  aclrtPhysicalMemProp prop = device_prop(0);
  const size_t gran = size_t(2) << 20;
  auto refused = [](aclError e, const char* words) {
    EXPECT_EQ(e, ACL_ERROR_INVALID_PARAM);
    std::string m = recent_error();
    EXPECT_NE(m.find(words), std::string::npos) << m;
  };
  void* va = nullptr;
  refused(aclrtReserveMemAddress(&va, 0, 0, nullptr, 0), "size must be greater than 0");
  refused(aclrtReserveMemAddress(&va, gran, 4096, nullptr, 0), "alignment must be 0");
  refused(aclrtReserveMemAddress(nullptr, gran, 0, nullptr, 0), "virPtr is null");
  ASSERT_EQ(aclrtReserveMemAddress(&va, 3 * gran, 0, nullptr, 0), ACL_SUCCESS);
  char* base = static_cast<char*>(va);

  aclrtDrvMemHandle h = nullptr, h2 = nullptr, odd = nullptr;
  aclrtPhysicalMemProp bad = prop;
  bad.location.type = ACL_MEM_LOCATION_TYPE_HOST;
  refused(aclrtMallocPhysical(&h, gran, &bad, 0), "ACL_MEM_LOCATION_TYPE_DEVICE");
  bad = prop;
  bad.memAttr = ACL_DDR_MEM;
  refused(aclrtMallocPhysical(&h, gran, &bad, 0), "memAttr");
  refused(aclrtMallocPhysical(&h, gran, &prop, 1), "flags must be 0");
  bad = prop;
  bad.location.id = 999;
  EXPECT_EQ(aclrtMallocPhysical(&h, gran, &bad, 0), ACL_ERROR_RT_INVALID_DEVICEID);
  recent_error();
  ASSERT_EQ(aclrtMallocPhysical(&h, gran, &prop, 0), ACL_SUCCESS);
  ASSERT_EQ(aclrtMallocPhysical(&h2, gran, &prop, 0), ACL_SUCCESS);
  ASSERT_EQ(aclrtMallocPhysical(&odd, 1000, &prop, 0), ACL_SUCCESS);  // accepted; whole pages are charged

  refused(aclrtMapMem(base, gran / 2, 0, h, 0), "must be the physical allocation's size");
  refused(aclrtMapMem(base, gran, 64, h, 0), "offset must be 0");
  refused(aclrtMapMem(base, 1000, 0, odd, 0), "granularity");
  refused(aclrtMapMem(base + 4096, gran, 0, h, 0), "granularity-aligned");
  refused(aclrtMapMem(base + 2 * gran + gran, gran, 0, h, 0), "not inside one reservation");
  ASSERT_EQ(aclrtMapMem(base, gran, 0, h, 0), ACL_SUCCESS);
  refused(aclrtMapMem(base + gran, gran, 0, h, 0), "already mapped");
  refused(aclrtMapMem(base, gran, 0, h2, 0), "overlaps the mapping");
  refused(aclrtFree(base), "aclrtUnmapMem");
  refused(aclrtFreePhysical(h), "still mapped");
  refused(aclrtReleaseMemAddress(va), "aclrtUnmapMem it first");
  refused(aclrtUnmapMem(base + 4096), "not the start of a mapping");

  ASSERT_EQ(aclrtUnmapMem(base), ACL_SUCCESS);
  refused(aclrtUnmapMem(base), "not the start of a mapping");
  for (aclrtDrvMemHandle x : {h, h2, odd}) ASSERT_EQ(aclrtFreePhysical(x), ACL_SUCCESS);
  refused(aclrtFreePhysical(h), "not a live physical allocation");
  ASSERT_EQ(aclrtReleaseMemAddress(va), ACL_SUCCESS);
  refused(aclrtReleaseMemAddress(va), "not the start of a live reservation");

  // Physical memory counts against the device's memory.
  size_t free = 0, total = 0;
  ASSERT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free, &total), ACL_SUCCESS);
  EXPECT_EQ(aclrtMallocPhysical(&h, free + gran, &prop, 0), ACL_ERROR_RT_MEMORY_ALLOCATION);
  EXPECT_NE(recent_error().find("EMBER_NPU_MEMORY"), std::string::npos);
}

TEST(NpuVmm, PeerAccessIsOneWayBetweenTwoDevices) {
  uint32_t count = 0;
  ASSERT_EQ(aclrtGetDeviceCount(&count), ACL_SUCCESS);
  ASSERT_GE(count, 2u);
  int32_t can = -1;
  ASSERT_EQ(aclrtDeviceCanAccessPeer(&can, 0, 1), ACL_SUCCESS);
  EXPECT_EQ(can, 1);
  ASSERT_EQ(aclrtDeviceCanAccessPeer(&can, 1, 1), ACL_SUCCESS);
  EXPECT_EQ(can, 0);
  EXPECT_EQ(aclrtDeviceCanAccessPeer(&can, 0, 99), ACL_ERROR_RT_INVALID_DEVICEID);
  recent_error();
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  EXPECT_EQ(aclrtDeviceEnablePeerAccess(0, 0), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("is the current device"), std::string::npos);
  EXPECT_EQ(aclrtDeviceEnablePeerAccess(1, 7), ACL_ERROR_INVALID_PARAM);
  recent_error();
  ASSERT_EQ(aclrtDeviceEnablePeerAccess(1, 0), ACL_SUCCESS);
  ASSERT_EQ(aclrtDeviceEnablePeerAccess(1, 0), ACL_SUCCESS);  // again: ggml enables before every copy
  ASSERT_EQ(aclrtDeviceDisablePeerAccess(1), ACL_SUCCESS);
  EXPECT_EQ(aclrtDeviceDisablePeerAccess(1), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("was not enabled"), std::string::npos);
}

}  // namespace
