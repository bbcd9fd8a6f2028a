/* ember's emulated NPU: aclnnop/aclnn_adaptive_avg_pool2d.h, as in CANN's operator library.
 *
 * out [.., oh, ow]: output (i, j) averages rows [floor(i H / oh), ceil((i + 1) H / oh)) and the
 * same columns of self.
 * Floats: float32, float16, bfloat16 or double (the emulator computes in float, double for double).
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_ADAPTIVE_AVG_POOL2D_H_
#define EMBER_CANN_ACLNNOP_ACLNN_ADAPTIVE_AVG_POOL2D_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAdaptiveAvgPool2dGetWorkspaceSize(const aclTensor* self, const aclIntArray* outputSize, aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnAdaptiveAvgPool2d(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_ADAPTIVE_AVG_POOL2D_H_ */
