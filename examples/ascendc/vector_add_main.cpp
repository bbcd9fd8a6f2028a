// vector_add: host code of CANN's kernel-launch style for the Ascend C kernel vector_add.cpp:
// allocate device memory, copy in, ACLRT_LAUNCH_KERNEL(vector_add)(blockDim, stream, ...), wait,
// copy out, check. Then the same launch with a length past the buffers, as a named fault.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "aclrtlaunch_vector_add.h"

#define CHECK_ACL(x)                                                                  \
  do {                                                                                \
    aclError rc_ = (x);                                                               \
    if (rc_ != ACL_SUCCESS) {                                                         \
      std::printf("%s: error %d: %s\n", #x, static_cast<int>(rc_), aclGetRecentErrMsg()); \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

int main(int argc, char** argv) {
  if (argc > 1) {  // no options; --help says what it does
    const bool help = std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0;
    std::fprintf(help ? stdout : stderr,
                 "usage: ascendc_vector_add\n"
                 "  The Ascend C kernel vector_add launched CANN's way (ACLRT_LAUNCH_KERNEL) on 8 cores of the\n"
                 "  emulated NPU and checked; then the launch with a length past the buffers, refused by name.\n"
                 "  No options.\n");
    return help ? 0 : 2;
  }
  const uint32_t blockDim = 8, tile = 512, n = blockDim * 4096;
  const size_t bytes = n * sizeof(float);
  std::vector<float> x(n), y(n), z(n);
  for (uint32_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i) * 0.5f;
    y[i] = 1.0f - static_cast<float>(i % 9);
  }
  CHECK_ACL(aclInit(nullptr));
  CHECK_ACL(aclrtSetDevice(0));
  aclrtStream stream = nullptr;
  CHECK_ACL(aclrtCreateStream(&stream));
  void *dx, *dy, *dz;
  CHECK_ACL(aclrtMalloc(&dx, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&dy, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&dz, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMemcpy(dx, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK_ACL(aclrtMemcpy(dy, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK_ACL(ACLRT_LAUNCH_KERNEL(vector_add)(blockDim, stream, dx, dy, dz, n, tile));
  CHECK_ACL(aclrtSynchronizeStream(stream));
  CHECK_ACL(aclrtMemcpy(z.data(), bytes, dz, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  uint32_t bad = 0;
  for (uint32_t i = 0; i < n; ++i) bad += z[i] != x[i] + y[i];
  std::printf("vector_add on %u cores: %u of %u values differ from x + y\n", blockDim, bad, n);

  // Told twice the length: each core's slice and GlobalTensors now reach past the allocations.
  CHECK_ACL(ACLRT_LAUNCH_KERNEL(vector_add)(blockDim, stream, dx, dy, dz, 2 * n, tile));
  aclError e = aclrtSynchronizeStream(stream);
  std::printf("a launch told 2n: %s (%d)\n  %s\n", e == ACL_ERROR_RT_AICORE_EXCEPTION ? "refused" : "NOT refused",
              static_cast<int>(e), aclGetRecentErrMsg());
  CHECK_ACL(aclrtFree(dx));
  CHECK_ACL(aclrtFree(dy));
  CHECK_ACL(aclrtFree(dz));
  CHECK_ACL(aclrtDestroyStream(stream));
  CHECK_ACL(aclrtResetDevice(0));
  CHECK_ACL(aclFinalize());
  return bad == 0 && e == ACL_ERROR_RT_AICORE_EXCEPTION ? 0 : 1;
}
