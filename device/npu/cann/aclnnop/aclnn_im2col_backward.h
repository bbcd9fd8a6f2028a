/* ember's emulated NPU: aclnnop/aclnn_im2col_backward.h, as in CANN's operator library.
 *
 * out [N, C, H, W] (or [C, H, W]) = the sum, at its source, of every element of the windows
 * gradOutput [N, C*kh*kw, L] (or [C*kh*kw, L]) holds: im2col's adjoint (col2im, fold), for an
 * input of spatial size inputSize (int64 array of 2: H, W) and the kernelSize, dilation,
 * padding and stride of the Im2col.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_IM2COL_BACKWARD_H_
#define EMBER_CANN_ACLNNOP_ACLNN_IM2COL_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnIm2colBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclIntArray* inputSize,
                                                          const aclIntArray* kernelSize, const aclIntArray* dilation,
                                                          const aclIntArray* padding, const aclIntArray* stride,
                                                          aclTensor* out, uint64_t* workspaceSize,
                                                          aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnIm2colBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                          aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_IM2COL_BACKWARD_H_ */
