/* ember's emulated NPU: aclnnop/aclnn_mse_loss.h, as in CANN's operator library.
 *
 * out = the mean (reduction 1), sum (2) or elementwise values (0) of (self - target)^2, self and
 * target broadcast together.
 * Float inputs may be float32, float16, bfloat16 or double; the emulator computes in double.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_MSE_LOSS_H_
#define EMBER_CANN_ACLNNOP_ACLNN_MSE_LOSS_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnMseLossGetWorkspaceSize(const aclTensor* self, const aclTensor* target, int64_t reduction, aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnMseLoss(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_MSE_LOSS_H_ */
