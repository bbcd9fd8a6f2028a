/* ember's emulated NPU: CANN's runtime API (acl/acl_rt.h): devices, memory, streams, events.
 * CANN's names, signatures, status codes and C linkage. Valid C (C99) and C++ (C++11).
 *
 * The device is emulated on the CPU: device memory lives in an address range the host cannot
 * read (a host dereference of a device pointer faults, as on hardware), streams are in-order
 * queues run by worker threads, and kernels run on ember's intra-op thread pool. */
#ifndef EMBER_CANN_ACL_ACL_RT_H_
#define EMBER_CANN_ACL_ACL_RT_H_

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of CANN's runtime API whose declarations these follow. */
#define ACL_MAJOR_VERSION 1
#define ACL_MINOR_VERSION 15
#define ACL_PATCH_VERSION 0

/* aclrtCreateEventWithFlag / ExWithFlag flags (a bitmap) */
#define ACL_EVENT_SYNC 0x00000001U
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS 0x00000002U
#define ACL_EVENT_TIME_LINE 0x00000008U
/* aclrtCreateStreamWithConfig flags (a bitmap) */
#define ACL_STREAM_FAST_LAUNCH 0x00000001U
#define ACL_STREAM_FAST_SYNC 0x00000002U

typedef enum EMBER_ACL_ENUM_BASE { ACL_DEVICE = 0, ACL_HOST = 1 } aclrtRunMode;

typedef enum EMBER_ACL_ENUM_BASE {
  ACL_STREAM_STATUS_COMPLETE = 0,
  ACL_STREAM_STATUS_NOT_READY = 1,
  ACL_STREAM_STATUS_RESERVED = 0xFFFF
} aclrtStreamStatus;

typedef enum EMBER_ACL_ENUM_BASE {
  ACL_MEMCPY_HOST_TO_HOST = 0,
  ACL_MEMCPY_HOST_TO_DEVICE = 1,
  ACL_MEMCPY_DEVICE_TO_HOST = 2,
  ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
  ACL_MEMCPY_DEFAULT = 4
} aclrtMemcpyKind;

typedef enum EMBER_ACL_ENUM_BASE {
  ACL_MEM_MALLOC_HUGE_FIRST = 0,
  ACL_MEM_MALLOC_HUGE_ONLY = 1,
  ACL_MEM_MALLOC_NORMAL_ONLY = 2,
  ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
  ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
  ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5
} aclrtMemMallocPolicy;

typedef enum EMBER_ACL_ENUM_BASE {
  ACL_DDR_MEM = 0,
  ACL_HBM_MEM = 1,
  ACL_DDR_MEM_HUGE = 2,
  ACL_DDR_MEM_NORMAL = 3,
  ACL_HBM_MEM_HUGE = 4,
  ACL_HBM_MEM_NORMAL = 5,
  ACL_DDR_MEM_P2P_HUGE = 6,
  ACL_DDR_MEM_P2P_NORMAL = 7,
  ACL_HBM_MEM_P2P_HUGE = 8,
  ACL_HBM_MEM_P2P_NORMAL = 9,
  ACL_HBM_MEM_HUGE1G = 10,
  ACL_HBM_MEM_P2P_HUGE1G = 11
} aclrtMemAttr;

/* ---- virtual memory (aclrtReserveMemAddress and friends) ---- */
typedef enum EMBER_ACL_ENUM_BASE {
  ACL_MEM_LOCATION_TYPE_HOST = 0,
  ACL_MEM_LOCATION_TYPE_DEVICE = 1
} aclrtMemLocationType;

typedef struct aclrtMemLocation {
  uint32_t id;
  aclrtMemLocationType type;
} aclrtMemLocation;

typedef enum EMBER_ACL_ENUM_BASE { ACL_MEM_ALLOCATION_TYPE_PINNED = 0 } aclrtMemAllocationType;
typedef enum EMBER_ACL_ENUM_BASE { ACL_MEM_HANDLE_TYPE_NONE = 0 } aclrtMemHandleType;

typedef struct aclrtPhysicalMemProp {
  aclrtMemHandleType handleType;         /* ACL_MEM_HANDLE_TYPE_NONE */
  aclrtMemAllocationType allocationType; /* ACL_MEM_ALLOCATION_TYPE_PINNED */
  aclrtMemAttr memAttr;                  /* ACL_HBM_MEM_HUGE, _NORMAL, _HUGE1G (and the P2P forms) */
  aclrtMemLocation location;             /* a device: ACL_MEM_LOCATION_TYPE_DEVICE and its id */
  uint64_t reserve;
} aclrtPhysicalMemProp;

typedef enum EMBER_ACL_ENUM_BASE {
  ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM = 0,
  ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1,
  ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF = 0xFFFF
} aclrtMemGranularityOptions;

typedef void* aclrtDrvMemHandle;

typedef enum EMBER_ACL_ENUM_BASE {
  ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
  ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
} aclrtEventRecordedStatus;

/* ---- devices ---- */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t* deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t* count);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void);
/* ACL_HOST: the program runs on the host with the device attached. */
ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode* runMode);
/* The SoC the emulator stands in for ("Ascend910B4"). */
ACL_FUNC_VISIBILITY const char* aclrtGetSocName(void);

/* ---- contexts ----
 * A context names a device. aclrtSetDevice makes the device's default context current;
 * aclrtCreateContext makes a new one and makes it current. The contexts of a device share its
 * streams (on CANN each context has its own default stream). */
ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext* context);

/* ---- memory ----
 * Device memory: size rounded up to 32 bytes plus 32 bytes of padding, 64-byte aligned,
 * contents uninitialised (the emulator fills them with 0xFF, a NaN pattern). */
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
/* As aclrtMalloc without the 32 bytes of padding. */
ACL_FUNC_VISIBILITY aclError aclrtMallocAlign32(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtFree(void* devPtr);
/* pinned host memory */
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void** hostPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void* hostPtr);
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count,
                                         aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count,
                                              aclrtMemcpyKind kind, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count);
ACL_FUNC_VISIBILITY aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count,
                                              aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total);

/* Virtual memory: reserve an address range (alignment 0, expectPtr NULL, flags 0), allocate
 * physical memory in multiples of the granularity (2 MiB; 1 GiB for ACL_HBM_MEM_HUGE1G), map each
 * physical allocation whole at an address inside a reservation, then unmap, free, release. Mapped
 * runs that touch form one range for the ops (a tensor may span two physical allocations). */
ACL_FUNC_VISIBILITY aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp* prop,
                                                              aclrtMemGranularityOptions option, size_t* granularity);
ACL_FUNC_VISIBILITY aclError aclrtReserveMemAddress(void** virPtr, size_t size, size_t alignment, void* expectPtr,
                                                    uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtReleaseMemAddress(void* virPtr);
ACL_FUNC_VISIBILITY aclError aclrtMallocPhysical(aclrtDrvMemHandle* handle, size_t size,
                                                 const aclrtPhysicalMemProp* prop, uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtFreePhysical(aclrtDrvMemHandle handle);
ACL_FUNC_VISIBILITY aclError aclrtMapMem(void* virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle,
                                         uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtUnmapMem(void* virPtr);

/* Peer access between two devices of this process: always possible (canAccessPeer 1 for two
 * different devices). Enabling is one-way, from the current device to peerDeviceId. */
ACL_FUNC_VISIBILITY aclError aclrtDeviceCanAccessPeer(int32_t* canAccessPeer, int32_t deviceId, int32_t peerDeviceId);
ACL_FUNC_VISIBILITY aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags);
ACL_FUNC_VISIBILITY aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId);

/* ---- streams ---- */
ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream* stream);
/* priority and flag are hardware scheduling hints: checked, then the same as aclrtCreateStream. */
ACL_FUNC_VISIBILITY aclError aclrtCreateStreamWithConfig(aclrtStream* stream, uint32_t priority, uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
/* NULL: the current device's default stream */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);
/* timeout in ms, -1 for none: ACL_ERROR_RT_STREAM_SYNC_TIMEOUT if the work is not done by then */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus* status);
ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);

/* ---- events ---- */
ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent* event);
ACL_FUNC_VISIBILITY aclError aclrtCreateEventWithFlag(aclrtEvent* event, uint32_t flag);
/* As WithFlag; before its first record the event reports complete (aclrtCreateEvent's: not ready). */
ACL_FUNC_VISIBILITY aclError aclrtCreateEventExWithFlag(aclrtEvent* event, uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus* status);
ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent, aclrtEvent endEvent);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACL_ACL_RT_H_ */
