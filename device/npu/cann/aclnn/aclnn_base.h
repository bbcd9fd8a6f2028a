/* ember's emulated NPU: CANN's aclnn/aclnn_base.h, what every aclnnop/aclnn_<op>.h builds on:
 * the descriptors (acl_meta.h), the aclnn status codes and the ACLNN_API marker.
 * Valid C (C99) and C++ (C++11).
 *
 * Every op is a pair:
 *   aclnnXxxGetWorkspaceSize(inputs..., outputs..., uint64_t* workspaceSize, aclOpExecutor** executor)
 *   aclnnXxx(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream)
 * Phase 1 validates (161001 null, 161002 invalid), plans and sizes the workspace (0 means pass
 * NULL); phase 2 enqueues on the stream. Executors are single-use: deleted after phase 2 and on
 * a phase-2 error. */
#ifndef EMBER_CANN_ACLNN_ACLNN_BASE_H_
#define EMBER_CANN_ACLNN_ACLNN_BASE_H_

#include "acl/acl_base.h"
#include "aclnn/acl_meta.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ACLNN_API
#define ACLNN_API __attribute__((visibility("default")))
#endif

static const aclnnStatus ACLNN_SUCCESS = 0;
static const aclnnStatus ACLNN_ERR_PARAM_NULLPTR = 161001;
static const aclnnStatus ACLNN_ERR_PARAM_INVALID = 161002;
static const aclnnStatus ACLNN_ERR_RUNTIME_ERROR = 361001;
static const aclnnStatus ACLNN_ERR_INNER = 561000;
static const aclnnStatus ACLNN_ERR_INNER_INFERSHAPE_ERROR = 561001;
static const aclnnStatus ACLNN_ERR_INNER_TILING_ERROR = 561002;
static const aclnnStatus ACLNN_ERR_INNER_FIND_KERNEL_ERROR = 561003;
static const aclnnStatus ACLNN_ERR_INNER_CREATE_EXECUTOR = 561101;
static const aclnnStatus ACLNN_ERR_INNER_NULLPTR = 561103;

/* Repeatable executors. Called right after an op's GetWorkspaceSize (on the same thread), it
 * makes the executor reusable: each phase 2 runs it again instead of consuming it, until
 * aclDestroyAclOpExecutor. The address setters point one of its tensors (the aclTensor given to
 * phase 1; index is CANN's input or output position) at new device memory for later runs. */
ACLNN_API aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor);
ACLNN_API aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor);
ACLNN_API aclnnStatus aclSetInputTensorAddr(aclOpExecutor* executor, const size_t index, aclTensor* tensor,
                                            void* addr);
ACLNN_API aclnnStatus aclSetOutputTensorAddr(aclOpExecutor* executor, const size_t index, aclTensor* tensor,
                                             void* addr);
ACLNN_API aclnnStatus aclSetDynamicInputTensorAddr(aclOpExecutor* executor, size_t irIndex,
                                                   const size_t relativeIndex, aclTensorList* tensors, void* addr);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNN_ACLNN_BASE_H_ */
