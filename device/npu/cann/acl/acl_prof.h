/* ember's emulated NPU: CANN's acl/acl_prof.h, the profiling API (link -lmsprofiler, or any of
 * the CANN library names: one library). aclprofInit names a directory; aclprofStart records with
 * ember's profiler (every aclnn call, both phases, the kernels on each stream, HCCL collectives,
 * the msproftx marks and ranges below); aclprofStop writes there a Chrome trace
 * (ember_prof_<pid>_<n>.json, for chrome://tracing or ui.perfetto.dev) and its tables (.txt).
 * Valid C (C99) and C++ (C++11). */
#ifndef EMBER_CANN_ACL_ACL_PROF_H_
#define EMBER_CANN_ACL_ACL_PROF_H_

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dataTypeConfig bits (aclprofCreateConfig). ember records the same events whatever the bits,
 * except ACL_PROF_MSPROFTX (the marks and ranges are recorded only with it, as on CANN) and
 * ACL_PROF_TASK_MEMORY (device memory counters). */
#define ACL_PROF_ACL_API 0x0001ULL
#define ACL_PROF_TASK_TIME 0x0002ULL
#define ACL_PROF_AICORE_METRICS 0x0004ULL
#define ACL_PROF_AICPU 0x0008ULL
#define ACL_PROF_L2CACHE 0x0010ULL
#define ACL_PROF_HCCL_TRACE 0x0020ULL
#define ACL_PROF_TRAINING_TRACE 0x0040ULL
#define ACL_PROF_MSPROFTX 0x0080ULL
#define ACL_PROF_RUNTIME_API 0x0100ULL
#define ACL_PROF_FWK_SCHEDULE_L0 0x0200ULL
#define ACL_PROF_TASK_TIME_L0 0x0800ULL
#define ACL_PROF_TASK_MEMORY 0x1000ULL
#define ACL_PROF_TASK_TIME_L2 0x2000ULL
#define ACL_PROF_OP_ATTR 0x4000ULL
#define ACL_PROF_FWK_SCHEDULE_L1 0x01000000ULL

#define ACL_PROF_MAX_OP_NAME_LEN 257
#define ACL_PROF_MAX_OP_TYPE_LEN 65

/* AI Core metrics: accepted and not measured (the emulator has no AI Core counters). */
typedef enum {
  ACL_AICORE_ARITHMETIC_UTILIZATION = 0,
  ACL_AICORE_PIPE_UTILIZATION = 1,
  ACL_AICORE_MEMORY_BANDWIDTH = 2,
  ACL_AICORE_L0B_AND_WIDTH = 3,
  ACL_AICORE_RESOURCE_CONFLICT_RATIO = 4,
  ACL_AICORE_MEMORY_UB = 5,
  ACL_AICORE_L2_CACHE = 6,
  ACL_AICORE_NONE = 0xFF
} aclprofAicoreMetrics;

typedef struct aclprofConfig aclprofConfig;
typedef struct aclprofStopConfig aclprofStopConfig;
typedef struct aclprofAicoreEvents aclprofAicoreEvents;
typedef struct aclprofSubscribeConfig aclprofSubscribeConfig;

/* Once per process before aclprofStart: the directory the results go to (made if missing).
 * length is the path's length (at most 4096). A second call: ACL_ERROR_REPEAT_INITIALIZE. */
ACL_FUNC_VISIBILITY aclError aclprofInit(const char* profilerResultPath, size_t length);
/* After aclprofStop (a profile still running is stopped and written first). */
ACL_FUNC_VISIBILITY aclError aclprofFinalize(void);

/* deviceIdList: deviceNums devices of this process (0 devices only with ACL_PROF_MSPROFTX);
 * aicoreEvents must be NULL. NULL on a bad argument, with the reason in aclGetRecentErrMsg(). */
ACL_FUNC_VISIBILITY aclprofConfig* aclprofCreateConfig(uint32_t* deviceIdList, uint32_t deviceNums,
                                                       aclprofAicoreMetrics aicoreMetrics,
                                                       const aclprofAicoreEvents* aicoreEvents,
                                                       uint64_t dataTypeConfig);
ACL_FUNC_VISIBILITY aclError aclprofDestroyConfig(const aclprofConfig* profilerConfig);

/* One profile at a time (ACL_ERROR_PROF_ALREADY_RUN); aclprofStop takes the config (or one of
 * the same contents) aclprofStart was given (else ACL_ERROR_INVALID_PROFILING_CONFIG). */
ACL_FUNC_VISIBILITY aclError aclprofStart(const aclprofConfig* profilerConfig);
ACL_FUNC_VISIBILITY aclError aclprofStop(const aclprofConfig* profilerConfig);

/* msproftx, between aclprofStart and aclprofStop: a stamp carries a message; aclprofMark records
 * an instant, aclprofPush/aclprofPop a range of the calling thread, aclprofRangeStart/Stop a
 * range that may end on another thread; aclprofMarkEx marks a stream (an instant on its track
 * when the stream reaches it). */
ACL_FUNC_VISIBILITY void* aclprofCreateStamp(void);
ACL_FUNC_VISIBILITY void aclprofDestroyStamp(void* stamp);
ACL_FUNC_VISIBILITY aclError aclprofSetStampTraceMessage(void* stamp, const char* msg, uint32_t msgLen);
ACL_FUNC_VISIBILITY aclError aclprofMark(void* stamp);
ACL_FUNC_VISIBILITY aclError aclprofMarkEx(const char* msg, size_t msgLen, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclprofPush(void* stamp);
ACL_FUNC_VISIBILITY aclError aclprofPop(void);
ACL_FUNC_VISIBILITY aclError aclprofRangeStart(void* stamp, uint32_t* rangeId);
ACL_FUNC_VISIBILITY aclError aclprofRangeStop(uint32_t rangeId);
/* A hash of the message (FNV-1a); UINT64_MAX for NULL. */
ACL_FUNC_VISIBILITY uint64_t aclprofStr2Id(const char* message);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACL_ACL_PROF_H_ */
