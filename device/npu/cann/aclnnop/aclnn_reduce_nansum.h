/* ember's emulated NPU: aclnnop/aclnn_reduce_nansum.h, as in CANN's operator library.
 *
 * ReduceSum with NaN counted as 0
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_REDUCE_NANSUM_H_
#define EMBER_CANN_ACLNNOP_ACLNN_REDUCE_NANSUM_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnReduceNansumGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim,
                                                        aclDataType dtype, aclTensor* out, uint64_t* workspaceSize,
                                                        aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnReduceNansum(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                        aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_REDUCE_NANSUM_H_ */
