/* ember's emulated NPU: aclnnop/aclnn_binary_cross_entropy_with_logits.h, as in CANN's operator library.
 *
 * out = weight ((1 - target) self + (1 + (posWeight - 1) target) log(1 + exp(-self))), computed
 * stably; weightOptional and posWeightOptional may be null.
 * Float inputs may be float32, float16, bfloat16 or double; the emulator computes in double.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_H_
#define EMBER_CANN_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(const aclTensor* self, const aclTensor* target, const aclTensor* weightOptional, const aclTensor* posWeightOptional, int64_t reduction, aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogits(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_H_ */
