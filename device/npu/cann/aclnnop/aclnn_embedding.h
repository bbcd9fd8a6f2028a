/* ember's emulated NPU: aclnnop/aclnn_embedding.h, as in CANN's operator library.
 *
 * out[i, :] = weight[indices[i], :] (weight 2-D). An index out of range is a kernel fault
 * reported at the next synchronize (hardware returns garbage rows)
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_EMBEDDING_H_
#define EMBER_CANN_ACLNNOP_ACLNN_EMBEDDING_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnEmbeddingGetWorkspaceSize(const aclTensor* weight, const aclTensor* indices,
                                                     const aclTensor* out, uint64_t* workspaceSize,
                                                     aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnEmbedding(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                     aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_EMBEDDING_H_ */
