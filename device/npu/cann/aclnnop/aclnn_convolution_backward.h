/* ember's emulated NPU: aclnnop/aclnn_convolution_backward.h, as in CANN's operator library.
 *
 * The gradients of aclnnConvolution from gradOutput [N, Cout, Hout, Wout]: gradInput (like
 * input), gradWeight (like weight) and gradBias [Cout], each computed when its outputMask entry
 * (a bool array of 3) is true, and may be null when it is false. biasSizes is the forward bias's
 * shape ([Cout]; may be null without gradBias). The other arguments are the forward's; the
 * emulator runs 2-D convolutions with transposed = false.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_CONVOLUTION_BACKWARD_H_
#define EMBER_CANN_ACLNNOP_ACLNN_CONVOLUTION_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnConvolutionBackwardGetWorkspaceSize(
    const aclTensor* gradOutput, const aclTensor* input, const aclTensor* weight, const aclIntArray* biasSizes,
    const aclIntArray* stride, const aclIntArray* padding, const aclIntArray* dilation, bool transposed,
    const aclIntArray* outputPadding, int groups, const aclBoolArray* outputMask, int8_t cubeMathType,
    aclTensor* gradInput, aclTensor* gradWeight, aclTensor* gradBias, uint64_t* workspaceSize,
    aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnConvolutionBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                               aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_CONVOLUTION_BACKWARD_H_ */
