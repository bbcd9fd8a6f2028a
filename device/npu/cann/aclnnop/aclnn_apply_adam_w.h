/* ember's emulated NPU: aclnnop/aclnn_apply_adam_w.h, as in CANN's operator library.
 *
 * AdamW in place on varRef, mRef, vRef; the hyperparameters are [1] tensors read when the kernel
 * runs, beta1Power and beta2Power hold beta^(t-1); with amsgrad v becomes
 * max(maxGradNormOptional, v)
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_APPLY_ADAM_W_H_
#define EMBER_CANN_ACLNNOP_ACLNN_APPLY_ADAM_W_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnApplyAdamWGetWorkspaceSize(aclTensor* varRef, aclTensor* mRef, aclTensor* vRef,
                                                      const aclTensor* beta1Power, const aclTensor* beta2Power,
                                                      const aclTensor* lr, const aclTensor* weightDecay,
                                                      const aclTensor* beta1, const aclTensor* beta2,
                                                      const aclTensor* eps, const aclTensor* grad,
                                                      const aclTensor* maxGradNormOptional, bool amsgrad, bool maximize,
                                                      uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnApplyAdamW(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                      aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_APPLY_ADAM_W_H_ */
