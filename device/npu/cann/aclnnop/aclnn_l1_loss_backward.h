/* ember's emulated NPU: aclnnop/aclnn_l1_loss_backward.h, as in CANN's operator library.
 *
 * gradInput = sign(self - target) gradOutput (divided by the element count for reduction 1),
 * of the broadcast shape of gradOutput, self and target.
 * Floats: float32, float16, bfloat16 or double (the emulator computes in double).
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_L1_LOSS_BACKWARD_H_
#define EMBER_CANN_ACLNNOP_ACLNN_L1_LOSS_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnL1LossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self, const aclTensor* target,
    int64_t reduction, aclTensor* gradInput,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnL1LossBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_L1_LOSS_BACKWARD_H_ */
