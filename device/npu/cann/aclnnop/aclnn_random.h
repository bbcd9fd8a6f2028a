/* ember's emulated NPU: aclnnop/aclnn_random.h, as in CANN's operator library.
 *
 * selfRef = integers uniform in [from, to) from the Philox stream (seed, offset)
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_RANDOM_H_
#define EMBER_CANN_ACLNNOP_ACLNN_RANDOM_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnInplaceRandomGetWorkspaceSize(const aclTensor* selfRef, int64_t from, int64_t to,
                                                         int64_t seed, int64_t offset, uint64_t* workspaceSize,
                                                         aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnInplaceRandom(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                         aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_RANDOM_H_ */
