/* A CANN host program in C (C99) that profiles itself through acl/acl_prof.h, as CANN's hccl_test
 * does: aclprofInit on the directory given as argv[1], a config with msproftx, aclprofStart, an
 * aclnnAdd inside an msproftx push/pop range, aclprofStop, aclprofFinalize. Links -lmsprofiler.
 * tests/check_cann_toolkit.sh then looks for the op, its kernel and the range in the trace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "aclnnop/aclnn_add.h"

#define CHECK(call)                                                                     \
  do {                                                                                  \
    int status_ = (int)(call);                                                          \
    if (status_ != 0) {                                                                 \
      const char* msg_ = aclGetRecentErrMsg();                                          \
      fprintf(stderr, "%s failed: %d (%s)\n", #call, status_, msg_ ? msg_ : "no message"); \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

int main(int argc, char** argv) {
  int64_t shape[1] = {4};
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, out[4], one = 1.0f;
  void *ad = NULL, *bd = NULL, *od = NULL;
  aclrtStream stream = NULL;
  uint32_t devices[1] = {0};
  aclprofConfig* config;
  void* stamp;
  uint64_t ws = 0;
  aclOpExecutor* executor = NULL;
  aclTensor *ta, *tb, *to;
  aclScalar* alpha;
  int i;
  if (argc != 2) {
    fprintf(stderr, "usage: prof_add <result directory>\n");
    return 2;
  }
  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));
  CHECK(aclrtCreateStream(&stream));
  CHECK(aclprofInit(argv[1], strlen(argv[1])));
  config = aclprofCreateConfig(devices, 1, ACL_AICORE_PIPE_UTILIZATION, NULL,
                               ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_AICORE_METRICS | ACL_PROF_AICPU |
                                   ACL_PROF_HCCL_TRACE | ACL_PROF_MSPROFTX | ACL_PROF_RUNTIME_API);
  if (!config) {
    fprintf(stderr, "aclprofCreateConfig failed: %s\n", aclGetRecentErrMsg());
    return 1;
  }
  CHECK(aclprofStart(config));
  stamp = aclprofCreateStamp();
  CHECK(aclprofSetStampTraceMessage(stamp, "add_phase", 9));
  CHECK(aclprofPush(stamp));

  CHECK(aclrtMalloc(&ad, sizeof a, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&bd, sizeof b, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&od, sizeof out, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMemcpy(ad, sizeof a, a, sizeof a, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK(aclrtMemcpy(bd, sizeof b, b, sizeof b, ACL_MEMCPY_HOST_TO_DEVICE));
  ta = aclCreateTensor(shape, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, shape, 1, ad);
  tb = aclCreateTensor(shape, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, shape, 1, bd);
  to = aclCreateTensor(shape, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, shape, 1, od);
  alpha = aclCreateScalar(&one, ACL_FLOAT);
  CHECK(aclnnAddGetWorkspaceSize(ta, tb, alpha, to, &ws, &executor));
  CHECK(aclnnAdd(NULL, 0, executor, stream));
  CHECK(aclrtSynchronizeStream(stream));

  CHECK(aclprofPop());
  aclprofDestroyStamp(stamp);
  CHECK(aclprofStop(config));
  CHECK(aclprofDestroyConfig(config));
  CHECK(aclprofFinalize());

  CHECK(aclrtMemcpy(out, sizeof out, od, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST));
  for (i = 0; i < 4; ++i)
    if (out[i] != a[i] + b[i]) {
      printf("out[%d] = %g, expected %g\n", i, out[i], a[i] + b[i]);
      return 1;
    }
  CHECK(aclDestroyTensor(ta));
  CHECK(aclDestroyTensor(tb));
  CHECK(aclDestroyTensor(to));
  CHECK(aclDestroyScalar(alpha));
  CHECK(aclrtFree(ad));
  CHECK(aclrtFree(bd));
  CHECK(aclrtFree(od));
  CHECK(aclrtDestroyStream(stream));
  CHECK(aclrtResetDevice(0));
  CHECK(aclFinalize());
  printf("ok\n");
  return 0;
}
