/* ember's emulated NPU: aclnnop/aclnn_randperm.h, as in CANN's operator library.
 *
 * out (1-d, n elements) = a random permutation of 0 .. n - 1, determined by seed and offset
 * (ember's emulator: mt19937_64 and Fisher-Yates, the same permutation as ember's CPU).
 * out: int64, int32, uint8, int8 or a floating dtype that holds n - 1 exactly.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_RANDPERM_H_
#define EMBER_CANN_ACLNNOP_ACLNN_RANDPERM_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnRandpermGetWorkspaceSize(int64_t n, int64_t seed, int64_t offset, aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnRandperm(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_RANDPERM_H_ */
