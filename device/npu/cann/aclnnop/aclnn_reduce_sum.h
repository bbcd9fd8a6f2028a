/* ember's emulated NPU: aclnnop/aclnn_reduce_sum.h, as in CANN's operator library.
 *
 * out = the sum of self over dims (keepDims keeps them as 1), accumulated and written in dtype
 * (FLOAT16/BF16 accumulate in FLOAT)
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_REDUCE_SUM_H_
#define EMBER_CANN_ACLNNOP_ACLNN_REDUCE_SUM_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor* self, const aclIntArray* dims, bool keepDims,
                                                     aclDataType dtype, aclTensor* out, uint64_t* workspaceSize,
                                                     aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnReduceSum(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                     aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_REDUCE_SUM_H_ */
