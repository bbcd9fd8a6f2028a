// Host code in CANN's kernel-launch style: npu mode launches with ACLRT_LAUNCH_KERNEL (and the
// <<<>>> wrapper scale_add_do), cpu mode with ICPU_RUN_KF on GmAlloc memory. Checks z = 2x + y.
#include <cmath>
#include <cstdio>
#include <vector>
#include "acl/acl.h"  // aclFloat16 and its conversions, in both modes
#ifndef __CCE_KT_TEST__
#include "aclrtlaunch_scale_add.h"
extern void scale_add_do(uint32_t blockDim, void* l2ctrl, void* stream, uint8_t* x, uint8_t* y, uint8_t* z);
#else
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void scale_add(GM_ADDR x, GM_ADDR y, GM_ADDR z);
#endif
#include <cstring>

#define CHECK_ACL(x)                                                       \
  do {                                                                     \
    auto rc = (x);                                                         \
    if (rc != 0) {                                                         \
      std::printf("%s failed: %d (%s)\n", #x, (int)rc, aclGetRecentErrMsg()); \
      return 1;                                                            \
    }                                                                      \
  } while (0)

// z = 2x + y within half's rounding (x, y and 2x are exact in half here; one rounding of the sum).
static int verify(const aclFloat16* x, const aclFloat16* y, const aclFloat16* z, size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const float want = 2.0f * aclFloat16ToFloat(x[i]) + aclFloat16ToFloat(y[i]);
    if (std::fabs(aclFloat16ToFloat(z[i]) - want) > std::fabs(want) * 0x1p-11f) ++bad;
  }
  std::printf("%zu of %zu values wrong\n", bad, n);
  return bad ? 1 : 0;
}

int main() {
  const uint32_t blockDim = 8;
  const size_t n = 8 * 4096, bytes = n * sizeof(aclFloat16);
  std::vector<aclFloat16> x(n), y(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = aclFloatToFloat16(static_cast<float>(i % 100) * 0.25f);
    y[i] = aclFloatToFloat16(static_cast<float>(i % 7) - 3.0f);
  }
#ifdef __CCE_KT_TEST__
  uint8_t* gx = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* gy = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* gz = (uint8_t*)AscendC::GmAlloc(bytes);
  std::memcpy(gx, x.data(), bytes);
  std::memcpy(gy, y.data(), bytes);
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(scale_add, blockDim, gx, gy, gz);
  int rc = verify(x.data(), y.data(), (aclFloat16*)gz, n);
  AscendC::GmFree(gx);
  AscendC::GmFree(gy);
  AscendC::GmFree(gz);
  return rc;
#else
  CHECK_ACL(aclInit(nullptr));
  CHECK_ACL(aclrtSetDevice(0));
  aclrtStream stream = nullptr;
  CHECK_ACL(aclrtCreateStream(&stream));
  uint8_t *dx, *dy, *dz;
  CHECK_ACL(aclrtMalloc((void**)&dx, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc((void**)&dy, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc((void**)&dz, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMemcpy(dx, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK_ACL(aclrtMemcpy(dy, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  std::vector<aclFloat16> z(n);
  int rc = 0;
  for (int form = 0; form < 2; ++form) {  // ACLRT_LAUNCH_KERNEL, then the <<<>>> wrapper
    CHECK_ACL(aclrtMemset(dz, bytes, 0, bytes));
    if (form == 0) CHECK_ACL(ACLRT_LAUNCH_KERNEL(scale_add)(blockDim, stream, dx, dy, dz));
    else scale_add_do(blockDim, nullptr, stream, dx, dy, dz);
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_ACL(aclrtMemcpy(z.data(), bytes, dz, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    rc |= verify(x.data(), y.data(), z.data(), n);
  }
  CHECK_ACL(aclrtFree(dx));
  CHECK_ACL(aclrtFree(dy));
  CHECK_ACL(aclrtFree(dz));
  CHECK_ACL(aclrtDestroyStream(stream));
  CHECK_ACL(aclrtResetDevice(0));
  CHECK_ACL(aclFinalize());
  return rc;
#endif
}
