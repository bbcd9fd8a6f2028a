/* ember's emulated NPU: aclnnop/aclnn_index_select.h, as in CANN's operator library.
 *
 * out = the slices of self at index (1-D, INT32 or INT64) along dim. An index out of range is a
 * kernel fault reported at the next synchronize
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_INDEX_SELECT_H_
#define EMBER_CANN_ACLNNOP_ACLNN_INDEX_SELECT_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnIndexSelectGetWorkspaceSize(const aclTensor* self, int64_t dim, const aclTensor* index,
                                                       aclTensor* out, uint64_t* workspaceSize,
                                                       aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnIndexSelect(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                       aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_INDEX_SELECT_H_ */
