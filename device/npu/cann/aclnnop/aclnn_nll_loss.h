/* ember's emulated NPU: aclnnop/aclnn_nll_loss.h, as in CANN's operator library.
 *
 * self [N, C] (or [C]) of log-probabilities, target [N] (or 0-d) of classes, weight [C]: per row
 * -weight[t] self[i, t] (0 where t == ignoreIndex), reduced; totalWeightOut = the sum of weight[t]
 * over the rows not ignored (mean divides by it). A target outside [0, C) fails the kernel.
 * Float inputs may be float32, float16, bfloat16 or double; the emulator computes in double.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_NLL_LOSS_H_
#define EMBER_CANN_ACLNNOP_ACLNN_NLL_LOSS_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnNLLLossGetWorkspaceSize(const aclTensor* self, const aclTensor* target, const aclTensor* weight, int64_t reduction, int64_t ignoreIndex, aclTensor* out, aclTensor* totalWeightOut,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnNLLLoss(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_NLL_LOSS_H_ */
