/* ember's emulated NPU: aclnnop/aclnn_any.h, as in CANN's operator library.
 *
 * out (bool, or uint8 1 / 0) = whether some element of self over dim is nonzero (an empty
 * dim: over all dims), keepdim keeping the reduced dims as size 1.
 * self: any dtype (bool, integer or floating); NaN counts as nonzero.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_ANY_H_
#define EMBER_CANN_ACLNNOP_ACLNN_ANY_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAnyGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepdim, aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnAny(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_ANY_H_ */
