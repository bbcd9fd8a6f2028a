/* ember: every aclnn op the emulated NPU implements, CANN's (one aclnnop/aclnn_<op>.h each, as
 * in CANN's operator library: aclnnop/ember_aclnn_all.h includes them all, generated at configure
 * time with the op-name list EMBER_ACLNN_OP_NAMES) and ember's own (aclnn_ember.h). Valid C (C99)
 * and C++ (C++11). tests/check_cann_toolkit.sh checks that the list, the headers and libember's
 * exported symbols agree. */
#ifndef EMBER_DEVICE_NPU_ACLNN_OPS_H_
#define EMBER_DEVICE_NPU_ACLNN_OPS_H_

#include "aclnnop/ember_aclnn_all.h"

#include "ember/device/npu/aclnn_ember.h"

#endif /* EMBER_DEVICE_NPU_ACLNN_OPS_H_ */
