/* ember's emulated NPU: aclnnop/aclnn_avgpool2d.h, as in CANN's operator library.
 *
 * out = the average of each window of self; the divisor is divisorOverride when positive, else the
 * window clipped to the padded input (countIncludePad) or to the input. cubeMathType: 0..3.
 * Floats: float32, float16, bfloat16 or double (the emulator computes in float, double for double).
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_AVGPOOL2D_H_
#define EMBER_CANN_ACLNNOP_ACLNN_AVGPOOL2D_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAvgPool2dGetWorkspaceSize(const aclTensor* self, const aclIntArray* kernelSize, const aclIntArray* strides, const aclIntArray* paddings, const bool ceilMode, const bool countIncludePad, const int64_t divisorOverride, const int8_t cubeMathType, aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnAvgPool2d(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_AVGPOOL2D_H_ */
