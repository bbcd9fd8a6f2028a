/* ember's emulated NPU: aclnnop/aclnn_layer_norm_backward.h, as in CANN's operator library.
 *
 * The gradients of LayerNorm's out for input, weight and bias (outputMask: which), from mean and
 * rstd (input's shape with the normalized dims as 1); biasOptional is not read.
 * Floats: float32, float16, bfloat16 or double (the emulator computes in double).
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_LAYER_NORM_BACKWARD_H_
#define EMBER_CANN_ACLNNOP_ACLNN_LAYER_NORM_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnLayerNormBackwardGetWorkspaceSize(const aclTensor* gradOut, const aclTensor* input, const aclIntArray* normalizedShape, const aclTensor* mean, const aclTensor* rstd, const aclTensor* weightOptional, const aclTensor* biasOptional, const aclBoolArray* outputMask, aclTensor* gradInputOut, aclTensor* gradWeightOut, aclTensor* gradBiasOut,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnLayerNormBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_LAYER_NORM_BACKWARD_H_ */
