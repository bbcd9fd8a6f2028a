/* ember's emulated NPU: aclnnop/aclnn_smooth_l1_loss.h, as in CANN's operator library.
 *
 * result = PyTorch's smooth_l1_loss: |d| < beta ? 0.5 d^2 / beta : |d| - 0.5 beta, d = self -
 * target, reduced by reduction (0 none, 1 mean, 2 sum).
 * Float inputs may be float32, float16, bfloat16 or double; the emulator computes in double.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_SMOOTH_L1_LOSS_H_
#define EMBER_CANN_ACLNNOP_ACLNN_SMOOTH_L1_LOSS_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnSmoothL1LossGetWorkspaceSize(const aclTensor* self, const aclTensor* target, int64_t reduction, float beta, aclTensor* result,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnSmoothL1Loss(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_SMOOTH_L1_LOSS_H_ */
