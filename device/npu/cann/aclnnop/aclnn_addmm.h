/* ember's emulated NPU: aclnnop/aclnn_addmm.h, as in CANN's operator library.
 *
 * out = beta * self + alpha * (mat1 @ mat2), mat1 and mat2 2-D, self broadcast to out;
 * cubeMathType as Matmul's. Inplace: selfRef = beta * selfRef + alpha * (mat1 @ mat2)
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_ADDMM_H_
#define EMBER_CANN_ACLNNOP_ACLNN_ADDMM_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor* self, const aclTensor* mat1, const aclTensor* mat2,
                                                 const aclScalar* beta, const aclScalar* alpha, aclTensor* out,
                                                 int8_t cubeMathType, uint64_t* workspaceSize,
                                                 aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnAddmm(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

ACLNN_API aclnnStatus aclnnInplaceAddmmGetWorkspaceSize(const aclTensor* selfRef, const aclTensor* mat1,
                                                        const aclTensor* mat2, const aclScalar* beta,
                                                        const aclScalar* alpha, int8_t cubeMathType,
                                                        uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnInplaceAddmm(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                        aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_ADDMM_H_ */
