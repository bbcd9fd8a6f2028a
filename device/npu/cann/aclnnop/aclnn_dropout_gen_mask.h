/* ember's emulated NPU: aclnnop/aclnn_dropout_gen_mask.h, as in CANN's operator library.
 *
 * out (uint8, align(n, 128) / 8 bytes for the n elements of shape): bit i (least significant
 * first) is 1 when element i is kept, with probability 1 - prob, from Philox(seed, offset + i).
 * Floats: float32, float16, bfloat16 or double (the emulator computes in double).
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACLNNOP_ACLNN_DROPOUT_GEN_MASK_H_
#define EMBER_CANN_ACLNNOP_ACLNN_DROPOUT_GEN_MASK_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnDropoutGenMaskGetWorkspaceSize(const aclIntArray* shape, double prob, int64_t seed, int64_t offset, aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);
ACLNN_API aclnnStatus aclnnDropoutGenMask(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNNOP_ACLNN_DROPOUT_GEN_MASK_H_ */
