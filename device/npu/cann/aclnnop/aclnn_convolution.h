/* ember's emulated NPU: aclnnop/aclnn_convolution.h, as in CANN's operator library.
 *
 * output [N, Cout, Hout, Wout] = the 2-D cross-correlation of input [N, Cin, H, W] with weight
 * [Cout, Cin / groups, kh, kw], plus bias [Cout] when given (may be null); stride, padding and
 * dilation are int64 arrays of 2 (or 1: both dims), Hout = (H + 2 padding[0] - dilation[0]
 * (kh - 1) - 1) / stride[0] + 1. The emulator runs 2-D convolutions (4-D input) with
 * transposed = false; cubeMathType is 0..3 (KEEP_DTYPE, ALLOW_FP32_DOWN_PRECISION, USE_FP16,
 * USE_HF32) and the emulator computes in fp32 (fp64 for double) whatever it says.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_CONVOLUTION_H_
#define EMBER_CANN_ACLNNOP_ACLNN_CONVOLUTION_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnConvolutionGetWorkspaceSize(const aclTensor* input, const aclTensor* weight,
                                                       const aclTensor* bias, const aclIntArray* stride,
                                                       const aclIntArray* padding, const aclIntArray* dilation,
                                                       bool transposed, const aclIntArray* outputPadding,
                                                       int64_t groups, aclTensor* output, int8_t cubeMathType,
                                                       uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnConvolution(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                       aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_CONVOLUTION_H_ */
