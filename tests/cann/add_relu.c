/* A CANN host program in C (C99): builds with gcc against CANN's headers (acl/acl.h and the
 * aclnnop ones) and links CANN's libraries; on ember's install it runs on the emulated NPU.
 * out = relu(self + 0.5 * other), printed; tests/check_cann_toolkit.sh compares the output
 * with values computed here on the host. */
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_relu.h"

#define CHECK(call)                                                                     \
  do {                                                                                  \
    int status_ = (int)(call);                                                          \
    if (status_ != 0) {                                                                 \
      const char* msg_ = aclGetRecentErrMsg();                                          \
      fprintf(stderr, "%s failed: %d (%s)\n", #call, status_, msg_ ? msg_ : "no message"); \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

/* Phase 1 has run: take a workspace if asked for, run phase 2, give the workspace back after the
 * stream is done with it. */
static void run(aclnnStatus (*phase2)(void*, uint64_t, aclOpExecutor*, aclrtStream), uint64_t ws,
                aclOpExecutor* executor, aclrtStream stream) {
  void* workspace = NULL;
  if (ws > 0) CHECK(aclrtMalloc(&workspace, ws, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(phase2(workspace, ws, executor, stream));
  CHECK(aclrtSynchronizeStream(stream));
  if (workspace) CHECK(aclrtFree(workspace));
}

int main(void) {
  enum { N = 6 };
  int64_t shape[2] = {2, 3};
  int64_t strides[2] = {3, 1};
  float self_host[N] = {-3.0f, -1.0f, 0.0f, 0.5f, 2.0f, 4.0f};
  float other_host[N] = {1.0f, 4.0f, -2.0f, 1.0f, -8.0f, 2.0f};
  float out_host[N];
  float alpha_value = 0.5f;
  size_t bytes = N * sizeof(float);
  void *self_dev = NULL, *other_dev = NULL, *out_dev = NULL;
  aclrtStream stream = NULL;
  uint64_t ws = 0;
  aclOpExecutor* executor = NULL;
  int i;

  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));
  CHECK(aclrtCreateStream(&stream));
  CHECK(aclrtMalloc(&self_dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&other_dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&out_dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMemcpy(self_dev, bytes, self_host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK(aclrtMemcpy(other_dev, bytes, other_host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));

  {
    aclTensor* self = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, self_dev);
    aclTensor* other = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, other_dev);
    aclTensor* out = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, out_dev);
    aclScalar* alpha = aclCreateScalar(&alpha_value, ACL_FLOAT);
    if (!self || !other || !out || !alpha) {
      fprintf(stderr, "descriptor creation failed: %s\n", aclGetRecentErrMsg());
      return 1;
    }
    CHECK(aclnnAddGetWorkspaceSize(self, other, alpha, out, &ws, &executor));
    run(aclnnAdd, ws, executor, stream);
    CHECK(aclnnInplaceReluGetWorkspaceSize(out, &ws, &executor));
    run(aclnnInplaceRelu, ws, executor, stream);
    CHECK(aclDestroyTensor(self));
    CHECK(aclDestroyTensor(other));
    CHECK(aclDestroyTensor(out));
    CHECK(aclDestroyScalar(alpha));
  }

  CHECK(aclrtMemcpy(out_host, bytes, out_dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  for (i = 0; i < N; ++i) {
    float expect = self_host[i] + alpha_value * other_host[i];
    if (expect < 0) expect = 0;
    printf("out[%d] = %g expected %g\n", i, out_host[i], expect);
    if (out_host[i] != expect) return 2;
  }
  CHECK(aclrtFree(self_dev));
  CHECK(aclrtFree(other_dev));
  CHECK(aclrtFree(out_dev));
  CHECK(aclrtDestroyStream(stream));
  CHECK(aclrtResetDevice(0));
  CHECK(aclFinalize());
  if (aclFinalize() != ACL_ERROR_REPEAT_FINALIZE) return 3;
  printf("ok\n");
  return 0;
}
