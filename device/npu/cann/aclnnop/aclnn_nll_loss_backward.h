/* ember's emulated NPU: aclnnop/aclnn_nll_loss_backward.h, as in CANN's operator library.
 *
 * out (self's shape) = -weight[t] gradOutput at (i, target[i]) (divided by totalWeight for
 * reduction 1), 0 elsewhere.
 * Float inputs may be float32, float16, bfloat16 or double; the emulator computes in double.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_NLL_LOSS_BACKWARD_H_
#define EMBER_CANN_ACLNNOP_ACLNN_NLL_LOSS_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self, const aclTensor* target, const aclTensor* weight, int64_t reduction, int64_t ignoreIndex, const aclTensor* totalWeight, aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnNLLLossBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_NLL_LOSS_BACKWARD_H_ */
