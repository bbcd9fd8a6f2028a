/* ember's emulated NPU: aclnnop/aclnn_avgpool2d_backward.h, as in CANN's operator library.
 *
 * gradInput = each gradOutput element spread evenly (by the forward's divisor) over its window.
 * Floats: float32, float16, bfloat16 or double (the emulator computes in float, double for double).
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_AVGPOOL2D_BACKWARD_H_
#define EMBER_CANN_ACLNNOP_ACLNN_AVGPOOL2D_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAvgPool2dBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self, const aclIntArray* kernelSize, const aclIntArray* stride, const aclIntArray* padding, bool ceilMode, bool countIncludePad, int64_t divisorOverride, int8_t cubeMathType, aclTensor* gradInput,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnAvgPool2dBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_AVGPOOL2D_BACKWARD_H_ */
