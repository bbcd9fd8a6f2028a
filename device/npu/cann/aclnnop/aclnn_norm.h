/* ember's emulated NPU: aclnnop/aclnn_norm.h, as in CANN's operator library.
 *
 * out = the p-norm of self over dim (an empty dim: all dims): (sum |x|^p)^(1/p); p = 0 counts
 * the nonzeros, p = inf / -inf takes the largest / smallest |x|. out has self's dtype.
 * Floats: float32, float16, bfloat16 or double (the emulator computes in double).
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_NORM_H_
#define EMBER_CANN_ACLNNOP_ACLNN_NORM_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnNormGetWorkspaceSize(const aclTensor* self, const aclScalar* pScalar, const aclIntArray* dim, bool keepdim,
    aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnNorm(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_NORM_H_ */
