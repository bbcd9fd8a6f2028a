/* ember: the emulated NPU's own aclnn ops, which CANN does not have. Their names carry "Ember"
 * so no one takes them for CANN's; they follow the same two-phase convention and have C
 * linkage. Valid C (C99) and C++ (C++11). */
#ifndef EMBER_DEVICE_NPU_ACLNN_EMBER_H_
#define EMBER_DEVICE_NPU_ACLNN_EMBER_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The two-input SwiGLU gate: out = silu(a) * b (a, b and out of one shape). */
ACLNN_API aclnnStatus aclnnEmberSiluMulGetWorkspaceSize(const aclTensor* a, const aclTensor* b, aclTensor* out,
                                                        uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnEmberSiluMul(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                        aclrtStream stream);
/* Its gradients: gradA = grad * b * silu'(a), gradB = grad * silu(a). */
ACLNN_API aclnnStatus aclnnEmberSiluMulGradGetWorkspaceSize(const aclTensor* grad, const aclTensor* a,
                                                            const aclTensor* b, aclTensor* gradA, aclTensor* gradB,
                                                            uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnEmberSiluMulGrad(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                            aclrtStream stream);
/* Mean cross entropy over the rows of logits [N, C] with INT64 targets (a fused log-softmax;
 * rows whose target is ignoreIndex are skipped); out is a 0-d tensor. */
ACLNN_API aclnnStatus aclnnEmberCrossEntropyGetWorkspaceSize(const aclTensor* logits, const aclTensor* target,
                                                             int64_t ignoreIndex, aclTensor* out,
                                                             uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnEmberCrossEntropy(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                             aclrtStream stream);
/* Its gradient for the logits, given the 0-d gradOutput. */
ACLNN_API aclnnStatus aclnnEmberCrossEntropyGradGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* logits,
                                                                 const aclTensor* target, int64_t ignoreIndex,
                                                                 aclTensor* gradInput, uint64_t* workspaceSize,
                                                                 aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnEmberCrossEntropyGrad(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                                 aclrtStream stream);
/* out = round(round(self) @ round(mat2)): every element of the 2-D self [M, K] and mat2 [K, N]
 * rounded to computeType (ACL_BF16 or ACL_FLOAT16), products accumulated in fp32, each output
 * rounded to computeType and stored in out's dtype; self, mat2 and out are each FLOAT or
 * computeType, any strides. The product of computeType casts, without the cast copies (ember's
 * autocast linear where bf16 GEMMs compute in fp32). */
ACLNN_API aclnnStatus aclnnEmberMatmulRoundedGetWorkspaceSize(const aclTensor* self, const aclTensor* mat2,
                                                              aclDataType computeType, aclTensor* out,
                                                              uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnEmberMatmulRounded(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                              aclrtStream stream);
/* The same, where selfRounded / mat2Rounded say that operand's elements are already computeType
 * values (made by aclnnEmberRoundTo): the GEMM then reads a FLOAT operand with a unit stride as
 * it is instead of rounding a staged copy, and asks for less workspace. The result is the same;
 * a flag set on an operand that is not rounded gives the product of its unrounded values. */
ACLNN_API aclnnStatus aclnnEmberMatmulRoundedV2GetWorkspaceSize(const aclTensor* self, const aclTensor* mat2,
                                                                aclDataType computeType, bool selfRounded,
                                                                bool mat2Rounded, aclTensor* out,
                                                                uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnEmberMatmulRoundedV2(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                                aclrtStream stream);
/* out = self with every element rounded to computeType (ACL_BF16 or ACL_FLOAT16) and stored in
 * out's dtype: a cast to computeType and back in one pass. self and out are floating, of one
 * shape, any strides; out may be self. */
ACLNN_API aclnnStatus aclnnEmberRoundToGetWorkspaceSize(const aclTensor* self, aclDataType computeType, aclTensor* out,
                                                        uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnEmberRoundTo(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                        aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_DEVICE_NPU_ACLNN_EMBER_H_ */
