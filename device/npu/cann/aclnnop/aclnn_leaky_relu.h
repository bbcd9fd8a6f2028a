/* ember's emulated NPU: aclnnop/aclnn_leaky_relu.h, as in CANN's operator library.
 *
 * out = self > 0 ? self : negativeSlope self; the in-place form writes selfRef.
 * Float inputs may be float32, float16, bfloat16 or double; the emulator computes in double.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_LEAKY_RELU_H_
#define EMBER_CANN_ACLNNOP_ACLNN_LEAKY_RELU_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnLeakyReluGetWorkspaceSize(const aclTensor* self, const aclScalar* negativeSlope, aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnLeakyRelu(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);
ACLNN_API aclnnStatus aclnnInplaceLeakyReluGetWorkspaceSize(aclTensor* selfRef, const aclScalar* negativeSlope,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnInplaceLeakyRelu(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_LEAKY_RELU_H_ */
