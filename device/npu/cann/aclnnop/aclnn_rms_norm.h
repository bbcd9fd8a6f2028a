/* ember's emulated NPU: aclnnop/aclnn_rms_norm.h, as in CANN's operator library.
 *
 * RmsNorm over the trailing dims covered by gamma: yOut = x * rstd * gamma, rstd = 1 /
 * sqrt(mean(x^2) + epsilon); rstdOut is FLOAT with those dims kept as 1
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_RMS_NORM_H_
#define EMBER_CANN_ACLNNOP_ACLNN_RMS_NORM_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnRmsNormGetWorkspaceSize(const aclTensor* x, const aclTensor* gamma, double epsilon,
                                                   const aclTensor* yOut, const aclTensor* rstdOut,
                                                   uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnRmsNorm(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                   aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_RMS_NORM_H_ */
