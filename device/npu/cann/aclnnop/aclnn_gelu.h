/* ember's emulated NPU: aclnnop/aclnn_gelu.h, as in CANN's operator library.
 *
 * out = gelu(self), the tanh form: 0.5 self (1 + tanh(sqrt(2/pi) (self + 0.044715 self^3))), as
 * CANN documents and its kernel computes it (the erf form is aclnnGeluV2 with approximate 0)
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_GELU_H_
#define EMBER_CANN_ACLNNOP_ACLNN_GELU_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnGeluGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* workspaceSize,
                                                aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnGelu(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_GELU_H_ */
