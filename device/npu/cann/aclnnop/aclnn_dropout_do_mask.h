/* ember's emulated NPU: aclnnop/aclnn_dropout_do_mask.h, as in CANN's operator library.
 *
 * out = self / (1 - prob) where mask's bit is 1, else 0 (prob 1: all 0).
 * Floats: float32, float16, bfloat16 or double (the emulator computes in double).
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_DROPOUT_DO_MASK_H_
#define EMBER_CANN_ACLNNOP_ACLNN_DROPOUT_DO_MASK_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnDropoutDoMaskGetWorkspaceSize(const aclTensor* self, const aclTensor* mask, double prob, aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnDropoutDoMask(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_DROPOUT_DO_MASK_H_ */
