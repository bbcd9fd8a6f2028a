/* ember's emulated NPU: aclnnop/aclnn_smooth_l1_loss_backward.h, as in CANN's operator library.
 *
 * gradInput = gradOut (d / beta where |d| < beta, else sign(d)), d = self - target, divided by
 * the element count for reduction 1.
 * Float inputs may be float32, float16, bfloat16 or double; the emulator computes in double.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_SMOOTH_L1_LOSS_BACKWARD_H_
#define EMBER_CANN_ACLNNOP_ACLNN_SMOOTH_L1_LOSS_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnSmoothL1LossBackwardGetWorkspaceSize(const aclTensor* gradOut, const aclTensor* self, const aclTensor* target, int64_t reduction, float beta, aclTensor* gradInput,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnSmoothL1LossBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_SMOOTH_L1_LOSS_BACKWARD_H_ */
