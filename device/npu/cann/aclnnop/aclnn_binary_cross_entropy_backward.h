/* ember's emulated NPU: aclnnop/aclnn_binary_cross_entropy_backward.h, as in CANN's operator library.
 *
 * out = gradOutput weight (self - target) / max(self (1 - self), 1e-12).
 * Float inputs may be float32, float16, bfloat16 or double; the emulator computes in double.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_BACKWARD_H_
#define EMBER_CANN_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self, const aclTensor* target, const aclTensor* weightOptional, int64_t reduction, aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnBinaryCrossEntropyBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_BACKWARD_H_ */
