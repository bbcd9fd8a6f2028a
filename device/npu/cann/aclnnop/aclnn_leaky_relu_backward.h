/* ember's emulated NPU: aclnnop/aclnn_leaky_relu_backward.h, as in CANN's operator library.
 *
 * out = self > 0 ? gradOutput : negativeSlope gradOutput; selfIsResult says self is the
 * forward's output (then negativeSlope must be positive).
 * Float inputs may be float32, float16, bfloat16 or double; the emulator computes in double.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_LEAKY_RELU_BACKWARD_H_
#define EMBER_CANN_ACLNNOP_ACLNN_LEAKY_RELU_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnLeakyReluBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self, const aclScalar* negativeSlope, bool selfIsResult, aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnLeakyReluBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_LEAKY_RELU_BACKWARD_H_ */
