/* ember's emulated NPU: aclnnop/aclnn_embedding_dense_backward.h, as in CANN's operator library.
 *
 * out [numWeights, D] = the rows of grad summed by index; the row paddingIdx (>= numWeights:
 * none) gets none; scaleGradByFreq divides each contribution by its index's count
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_EMBEDDING_DENSE_BACKWARD_H_
#define EMBER_CANN_ACLNNOP_ACLNN_EMBEDDING_DENSE_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnEmbeddingDenseBackwardGetWorkspaceSize(const aclTensor* grad, const aclTensor* indices,
                                                                  uint64_t numWeights, uint64_t paddingIdx,
                                                                  bool scaleGradByFreq, const aclTensor* out,
                                                                  uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnEmbeddingDenseBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                                  aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_EMBEDDING_DENSE_BACKWARD_H_ */
