/* ember's emulated NPU: aclnnop/aclnn_im2col.h, as in CANN's operator library.
 *
 * out [N, C*kh*kw, L] (or [C*kh*kw, L] for a 3-D self) = the sliding kh x kw windows of self
 * [N, C, H, W] (or [C, H, W]), with dilation, zero padding and stride (int64 arrays of 2):
 * L = oh * ow windows, oh = (H + 2 padding[0] - dilation[0] (kh - 1) - 1) / stride[0] + 1.
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_IM2COL_H_
#define EMBER_CANN_ACLNNOP_ACLNN_IM2COL_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnIm2colGetWorkspaceSize(const aclTensor* self, const aclIntArray* kernelSize,
                                                  const aclIntArray* dilation, const aclIntArray* padding,
                                                  const aclIntArray* stride, const aclTensor* out,
                                                  uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnIm2col(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                  aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_IM2COL_H_ */
