/* An HCCL host program in C (C99), as on a machine with several NPUs: one communicator per device
 * of this process (HcclCommInitAll), one stream per device, an all-reduce (sum) and an all-gather
 * enqueued on each, then the results read back and checked against values computed here.
 * Builds with gcc against hccl/hccl.h and links -lhccl -lascendcl. Prints "ok" last. */
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"
#include "hccl/hccl.h"

#define CHECK(call)                                                                     \
  do {                                                                                  \
    int status_ = (int)(call);                                                          \
    if (status_ != 0) {                                                                 \
      const char* msg_ = aclGetRecentErrMsg();                                          \
      fprintf(stderr, "%s failed: %d (%s)\n", #call, status_, msg_ ? msg_ : "no message"); \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

enum { RANKS = 2, N = 5 };

int main(void) {
  int32_t devices[RANKS] = {0, 1};
  HcclComm comms[RANKS];
  aclrtStream streams[RANKS];
  void *send[RANKS], *sum[RANKS], *gathered[RANKS];
  float host[RANKS][N], out[RANKS * N];
  size_t bytes = N * sizeof(float);
  int r, i, bad = 0;
  uint32_t size = 0;

  CHECK(aclInit(NULL));
  CHECK(HcclCommInitAll(RANKS, devices, comms));
  CHECK(HcclGetRankSize(comms[0], &size));
  for (r = 0; r < RANKS; ++r) {
    CHECK(aclrtSetDevice(devices[r]));
    CHECK(aclrtCreateStream(&streams[r]));
    CHECK(aclrtMalloc(&send[r], bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&sum[r], bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&gathered[r], RANKS * bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    for (i = 0; i < N; ++i) host[r][i] = (float)(10 * r + i) * 0.5f;
    CHECK(aclrtMemcpy(send[r], bytes, host[r], bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  }
  /* Enqueued rank by rank from one thread: each call returns at once. */
  for (r = 0; r < RANKS; ++r)
    CHECK(HcclAllReduce(send[r], sum[r], N, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms[r], streams[r]));
  for (r = 0; r < RANKS; ++r) CHECK(HcclAllGather(send[r], gathered[r], N, HCCL_DATA_TYPE_FP32, comms[r], streams[r]));
  for (r = 0; r < RANKS; ++r) CHECK(aclrtSynchronizeStream(streams[r]));

  for (r = 0; r < RANKS; ++r) {
    CHECK(aclrtMemcpy(out, bytes, sum[r], bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (i = 0; i < N; ++i) {
      float want = host[0][i] + host[1][i];
      printf("rank %d sum[%d] = %g expected %g\n", r, i, out[i], want);
      bad |= out[i] != want;
    }
    CHECK(aclrtMemcpy(out, RANKS * bytes, gathered[r], RANKS * bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (i = 0; i < RANKS * N; ++i) {
      float want = host[i / N][i % N];
      printf("rank %d gathered[%d] = %g expected %g\n", r, i, out[i], want);
      bad |= out[i] != want;
    }
  }
  for (r = 0; r < RANKS; ++r) {
    CHECK(aclrtFree(send[r]));
    CHECK(aclrtFree(sum[r]));
    CHECK(aclrtFree(gathered[r]));
    CHECK(aclrtDestroyStream(streams[r]));
    CHECK(HcclCommDestroy(comms[r]));
  }
  CHECK(aclFinalize());
  if (bad || size != RANKS) {
    printf("wrong\n");
    return 1;
  }
  printf("ok\n");
  return 0;
}
