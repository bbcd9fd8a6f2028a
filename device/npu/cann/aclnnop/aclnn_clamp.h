/* ember's emulated NPU: aclnnop/aclnn_clamp.h, as in CANN's operator library.
 *
 * out = min(max(self, clipValueMin), clipValueMax); either bound may be NULL, not both. ClampMin
 * and ClampMax take one bound; the Inplace forms write selfRef.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_CLAMP_H_
#define EMBER_CANN_ACLNNOP_ACLNN_CLAMP_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnClampGetWorkspaceSize(const aclTensor* self, const aclScalar* clipValueMin,
                                                 const aclScalar* clipValueMax, aclTensor* out, uint64_t* workspaceSize,
                                                 aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnClamp(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);
ACLNN_API aclnnStatus aclnnClampMinGetWorkspaceSize(const aclTensor* self, const aclScalar* clipValueMin,
                                                    aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnClampMin(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);
ACLNN_API aclnnStatus aclnnClampMaxGetWorkspaceSize(const aclTensor* self, const aclScalar* clipValueMax,
                                                    aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnClampMax(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);
ACLNN_API aclnnStatus aclnnInplaceClampGetWorkspaceSize(const aclTensor* selfRef, const aclScalar* clipValueMin,
                                                        const aclScalar* clipValueMax, uint64_t* workspaceSize,
                                                        aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnInplaceClamp(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                        aclrtStream stream);
ACLNN_API aclnnStatus aclnnInplaceClampMinGetWorkspaceSize(const aclTensor* selfRef, const aclScalar* clipValueMin,
                                                           uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnInplaceClampMin(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                           aclrtStream stream);
ACLNN_API aclnnStatus aclnnInplaceClampMaxGetWorkspaceSize(const aclTensor* selfRef, const aclScalar* clipValueMax,
                                                           uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnInplaceClampMax(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                           aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_CLAMP_H_ */
