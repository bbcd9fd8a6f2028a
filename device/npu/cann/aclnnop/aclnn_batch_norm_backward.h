/* ember's emulated NPU: aclnnop/aclnn_batch_norm_backward.h, as in CANN's operator library.
 *
 * The gradients of BatchNorm's output for input, weight and bias (outputMask: which).
 * Floats: float32, float16, bfloat16 or double (the emulator computes in double).
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_BATCH_NORM_BACKWARD_H_
#define EMBER_CANN_ACLNNOP_ACLNN_BATCH_NORM_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBatchNormBackwardGetWorkspaceSize(const aclTensor* gradOut, const aclTensor* input, const aclTensor* weight, const aclTensor* runningMean, const aclTensor* runningVar, const aclTensor* saveMean, const aclTensor* saveInvstd, bool training, double eps, const aclBoolArray* outputMask, aclTensor* gradInput, aclTensor* gradWeight, aclTensor* gradBias,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnBatchNormBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_BATCH_NORM_BACKWARD_H_ */
