/* ember's emulated NPU: aclnnop/aclnn_binary_cross_entropy.h, as in CANN's operator library.
 *
 * out = -weight (target log(self) + (1 - target) log(1 - self)), each log clamped at -100;
 * weight may be null.
 * Float inputs may be float32, float16, bfloat16 or double; the emulator computes in double.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_H_
#define EMBER_CANN_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyGetWorkspaceSize(const aclTensor* self, const aclTensor* target, const aclTensor* weight, int64_t reduction, aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnBinaryCrossEntropy(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_H_ */
