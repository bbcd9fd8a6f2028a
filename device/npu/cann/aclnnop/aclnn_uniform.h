/* ember's emulated NPU: aclnnop/aclnn_uniform.h, as in CANN's operator library.
 *
 * selfRef = uniform samples in [from, to) from the Philox stream (seed, offset)
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_UNIFORM_H_
#define EMBER_CANN_ACLNNOP_ACLNN_UNIFORM_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnInplaceUniformGetWorkspaceSize(const aclTensor* selfRef, double from, double to,
                                                          uint64_t seed, uint64_t offset, uint64_t* workspaceSize,
                                                          aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnInplaceUniform(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                          aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_UNIFORM_H_ */
