/* ember's emulated NPU: aclnnop/aclnn_cross_entropy_loss.h, as in CANN's operator library.
 *
 * cross entropy of input [N, C] against target [N] (INT32/INT64), optional class weights [C],
 * reductionOptional "mean" / "sum" / "none", ignoreIndex, labelSmoothing; lossOut and logProbOut
 * (log-softmax of input). zloss is not supported: returnZloss must be false, zlossOut and
 * lseForZlossOut are not written
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_CROSS_ENTROPY_LOSS_H_
#define EMBER_CANN_ACLNNOP_ACLNN_CROSS_ENTROPY_LOSS_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnCrossEntropyLossGetWorkspaceSize(const aclTensor* input, const aclTensor* target,
                                                            const aclTensor* weightOptional, char* reductionOptional,
                                                            int64_t ignoreIndex, double labelSmoothing,
                                                            double lseSquareScaleForZloss, bool returnZloss,
                                                            const aclTensor* lossOut, const aclTensor* logProbOut,
                                                            const aclTensor* zlossOut, const aclTensor* lseForZlossOut,
                                                            uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnCrossEntropyLoss(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                            aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_CROSS_ENTROPY_LOSS_H_ */
