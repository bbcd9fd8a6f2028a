/* ember's emulated NPU: aclnnop/aclnn_batch_norm.h, as in CANN's operator library.
 *
 * input [N, C, ...]: training normalizes by the batch statistics per channel (saveMean,
 * saveInvstd = 1 / sqrt(biased variance + eps)) and updates runningMean / runningVar (may be null)
 * by momentum with the unbiased variance; otherwise by the running statistics. weight and bias may be null.
 * Floats: float32, float16, bfloat16 or double (the emulator computes in double).
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_BATCH_NORM_H_
#define EMBER_CANN_ACLNNOP_ACLNN_BATCH_NORM_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBatchNormGetWorkspaceSize(const aclTensor* input, const aclTensor* weight, const aclTensor* bias, aclTensor* runningMean, aclTensor* runningVar, bool training, double momentum, double eps, aclTensor* output, aclTensor* saveMean, aclTensor* saveInvstd,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnBatchNorm(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_BATCH_NORM_H_ */
