/* ember's emulated NPU: aclnnop/aclnn_max_pool2d_with_indices.h, as in CANN's operator library.
 *
 * out = the max over each window of self [N, C, H, W] (or [C, H, W]) inside the input, indices
 * = its flat position h W + w in the plane (int32 or int64); PyTorch's output size and ceilMode.
 * Floats: float32, float16, bfloat16 or double (the emulator computes in float, double for double).
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_MAX_POOL2D_WITH_INDICES_H_
#define EMBER_CANN_ACLNNOP_ACLNN_MAX_POOL2D_WITH_INDICES_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnMaxPool2dWithIndicesGetWorkspaceSize(const aclTensor* self, const aclIntArray* kernelSize, const aclIntArray* stride, const aclIntArray* padding, const aclIntArray* dilation, bool ceilMode, aclTensor* out, aclTensor* indices,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnMaxPool2dWithIndices(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_MAX_POOL2D_WITH_INDICES_H_ */
