/* ember's emulated NPU: CANN's acl/acl.h, the header CANN programs include first. It brings in
 * the runtime (acl_rt.h) and declares process set-up. Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACL_ACL_H_
#define EMBER_CANN_ACL_ACL_H_

#include "acl/acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Once per process; configPath may be NULL (its contents are not read). A second aclInit
 * returns ACL_ERROR_REPEAT_INITIALIZE, a second aclFinalize ACL_ERROR_REPEAT_FINALIZE. */
ACL_FUNC_VISIBILITY aclError aclInit(const char* configPath);
ACL_FUNC_VISIBILITY aclError aclFinalize(void);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACL_ACL_H_ */
