/* ember's emulated NPU: aclnnop/aclnn_max_pool2d_with_indices_backward.h, as in CANN's operator library.
 *
 * gradInput (self's shape) = 0, plus gradOutput added at each output's index.
 * Floats: float32, float16, bfloat16 or double (the emulator computes in float, double for double).
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_MAX_POOL2D_WITH_INDICES_BACKWARD_H_
#define EMBER_CANN_ACLNNOP_ACLNN_MAX_POOL2D_WITH_INDICES_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self, const aclTensor* indices, const aclIntArray* kernelSize, const aclIntArray* stride, const aclIntArray* padding, const aclIntArray* dilation, bool ceilMode, aclTensor* gradInput,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnMaxPool2dWithIndicesBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_MAX_POOL2D_WITH_INDICES_BACKWARD_H_ */
