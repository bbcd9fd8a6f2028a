/* ember's emulated NPU: aclnnop/aclnn_apply_adam_w_v2.h, as in CANN's operator library.
 *
 * AdamW in place on varRef, mRef, vRef (maxGradNormOptionalRef with amsgrad); step: INT64 or
 * FLOAT of shape (1,), read when the kernel runs: the updates taken before this one. As CANN's
 * kernel does, the bias correction is taken at step + 1; step itself is not written.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_APPLY_ADAM_W_V2_H_
#define EMBER_CANN_ACLNNOP_ACLNN_APPLY_ADAM_W_V2_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnApplyAdamWV2GetWorkspaceSize(aclTensor* varRef, aclTensor* mRef, aclTensor* vRef,
                                                        aclTensor* maxGradNormOptionalRef, const aclTensor* grad,
                                                        const aclTensor* step, float lr, float beta1, float beta2,
                                                        float weightDecay, float eps, bool amsgrad, bool maximize,
                                                        uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnApplyAdamWV2(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                        aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_APPLY_ADAM_W_V2_H_ */
