// ember: the emulated NPU's CANN API for C++ callers.
//
// The API itself is plain C at global scope, under CANN's own header names (acl/acl.h,
// acl/acl_prof.h, aclnn/acl_meta.h, aclnnop/aclnn_<op>.h, hccl/hccl.h; ember's install is a CANN toolkit tree, README
// "Running CANN host code on the emulated NPU"). This header includes all of it and makes every
// name reachable as ember::npu::X too, for code written against ember::npu.
//
// (Inside device/npu, the sources that define these functions include the C headers, not this
// one: a function with C linkage is defined there in namespace ember::npu, which must not
// already hold a using-declaration of it.)
#pragma once

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "aclnn/aclnn_base.h"
#include "ember/device/npu/aclnn_ops.h"
#include "hccl/hccl.h"

// EMBER_ACLNN_OP_NAMES(_), every aclnn op of aclnn_ops.h by name, is generated with the headers
// (aclnnop/ember_aclnn_all.h, cmake/cann_headers.cmake).

namespace ember {
namespace npu {

// ---- types and codes (acl/acl_base.h, acl/acl_rt.h, aclnn/acl_meta.h, aclnn/aclnn_base.h)
using ::aclBoolArray;
using ::aclError;
using ::aclFloat16;
using ::aclFloatArray;
using ::aclIntArray;
using ::aclnnStatus;
using ::aclOpExecutor;
using ::aclrtContext;
using ::aclrtEvent;
using ::aclrtStream;
using ::aclScalar;
using ::aclScalarList;
using ::aclTensor;
using ::aclTensorList;

using ::ACL_ERROR_BAD_ALLOC;
using ::ACL_ERROR_FAILURE;
using ::ACL_ERROR_INTERNAL_ERROR;
using ::ACL_ERROR_INVALID_DEVICE;
using ::ACL_ERROR_INVALID_PARAM;
using ::ACL_ERROR_REPEAT_FINALIZE;
using ::ACL_ERROR_REPEAT_INITIALIZE;
using ::ACL_ERROR_RT_AICORE_EXCEPTION;
using ::ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
using ::ACL_ERROR_RT_INVALID_DEVICEID;
using ::ACL_ERROR_RT_MEMORY_ALLOCATION;
using ::ACL_ERROR_RT_PARAM_INVALID;
using ::ACL_ERROR_RT_STREAM_SYNC_TIMEOUT;
using ::ACL_ERROR_UNINITIALIZE;
using ::ACL_SUCCESS;
using ::ACLNN_ERR_INNER;
using ::ACLNN_ERR_INNER_NULLPTR;
using ::ACLNN_ERR_PARAM_INVALID;
using ::ACLNN_ERR_PARAM_NULLPTR;
using ::ACLNN_ERR_RUNTIME_ERROR;
using ::ACLNN_SUCCESS;

using ::ACL_BF16;
using ::ACL_BOOL;
using ::ACL_DDR_MEM;
using ::ACL_DOUBLE;
using ::ACL_DT_UNDEFINED;
using ::ACL_EVENT_RECORDED_STATUS_COMPLETE;
using ::ACL_EVENT_RECORDED_STATUS_NOT_READY;
using ::ACL_FLOAT;
using ::ACL_FLOAT16;
using ::ACL_FORMAT_NCHW;
using ::ACL_FORMAT_ND;
using ::ACL_FORMAT_NHWC;
using ::ACL_FORMAT_UNDEFINED;
using ::ACL_HBM_MEM;
using ::ACL_INT16;
using ::ACL_INT32;
using ::ACL_INT64;
using ::ACL_INT8;
using ::ACL_MEM_MALLOC_HUGE_FIRST;
using ::ACL_MEM_MALLOC_HUGE_ONLY;
using ::ACL_MEM_MALLOC_NORMAL_ONLY;
using ::ACL_MEMCPY_DEFAULT;
using ::ACL_MEMCPY_DEVICE_TO_DEVICE;
using ::ACL_MEMCPY_DEVICE_TO_HOST;
using ::ACL_MEMCPY_HOST_TO_DEVICE;
using ::ACL_MEMCPY_HOST_TO_HOST;
using ::ACL_UINT16;
using ::ACL_UINT32;
using ::ACL_UINT64;
using ::ACL_UINT8;
using ::aclDataType;
using ::aclFormat;
using ::aclrtEventRecordedStatus;
using ::aclrtMemAttr;
using ::aclrtMemcpyKind;
using ::aclrtMemMallocPolicy;
using ::aclrtRunMode;
using ::aclrtStreamStatus;

// ---- runtime (acl/acl.h, acl/acl_rt.h)
using ::aclDataTypeSize;
using ::aclFinalize;
using ::aclFloat16ToFloat;
using ::aclFloatToFloat16;
using ::aclGetRecentErrMsg;
using ::aclInit;
using ::aclrtCreateContext;
using ::aclrtCreateEvent;
using ::aclrtCreateEventExWithFlag;
using ::aclrtCreateEventWithFlag;
using ::aclrtCreateStream;
using ::aclrtCreateStreamWithConfig;
using ::aclrtDestroyContext;
using ::aclrtDestroyEvent;
using ::aclrtDestroyStream;
using ::aclrtEventElapsedTime;
using ::aclrtFree;
using ::aclrtFreeHost;
using ::aclrtGetCurrentContext;
using ::aclrtGetDevice;
using ::aclrtGetDeviceCount;
using ::aclrtGetMemInfo;
using ::aclrtMemGetAllocationGranularity;
using ::aclrtReserveMemAddress;
using ::aclrtReleaseMemAddress;
using ::aclrtMallocPhysical;
using ::aclrtFreePhysical;
using ::aclrtMapMem;
using ::aclrtUnmapMem;
using ::aclrtDeviceCanAccessPeer;
using ::aclrtDeviceEnablePeerAccess;
using ::aclrtDeviceDisablePeerAccess;
using ::aclrtGetRunMode;
using ::aclrtGetSocName;
using ::aclrtMalloc;
using ::aclrtMallocAlign32;
using ::aclrtMallocHost;
using ::aclrtMemcpy;
using ::aclrtMemcpyAsync;
using ::aclrtMemset;
using ::aclrtMemsetAsync;
using ::aclrtQueryEventStatus;
using ::aclrtRecordEvent;
using ::aclrtResetDevice;
using ::aclrtSetCurrentContext;
using ::aclrtSetDevice;
using ::aclrtStreamQuery;
using ::aclrtStreamWaitEvent;
using ::aclrtSynchronizeDevice;
using ::aclrtSynchronizeEvent;
using ::aclrtSynchronizeStream;
using ::aclrtSynchronizeStreamWithTimeout;

// ---- descriptors (aclnn/acl_meta.h)
using ::aclCreateBoolArray;
using ::aclCreateFloatArray;
using ::aclCreateIntArray;
using ::aclCreateScalar;
using ::aclCreateScalarList;
using ::aclCreateTensor;
using ::aclCreateTensorList;
using ::aclDestroyAclOpExecutor;
using ::aclDestroyBoolArray;
using ::aclDestroyFloatArray;
using ::aclDestroyIntArray;
using ::aclDestroyScalar;
using ::aclDestroyScalarList;
using ::aclDestroyTensor;
using ::aclDestroyTensorList;
using ::aclGetDataType;
using ::aclGetFormat;
using ::aclGetStorageShape;
using ::aclGetViewOffset;
using ::aclGetViewShape;
using ::aclGetViewStrides;
using ::aclSetAclOpExecutorRepeatable;
using ::aclSetDynamicInputTensorAddr;
using ::aclSetInputTensorAddr;
using ::aclSetOutputTensorAddr;

// ---- HCCL
using ::HcclAllGather;
using ::HcclAllReduce;
using ::HcclAlltoAll;
using ::HcclAlltoAllV;
using ::HcclAlltoAllVC;
using ::HcclBatchSendRecv;
using ::HcclCommConfigInit;
using ::HcclGroupEnd;
using ::HcclGroupStart;
using ::HcclReduce;
using ::HcclScatter;
using ::HcclBarrier;
using ::HcclBroadcast;
using ::HcclCommDestroy;
using ::HcclCommInitAll;
using ::HcclCommInitRootInfo;
using ::HcclCommInitClusterInfo;
using ::HcclCommInitClusterInfoConfig;
using ::HcclCommInitRootInfoConfig;
using ::HcclGetCommAsyncError;
using ::HcclGetCommName;
using ::HcclGetErrorString;
using ::HcclGetRankId;
using ::HcclGetRankSize;
using ::HcclGetRootInfo;
using ::HcclRecv;
using ::HcclReduceScatter;
using ::HcclSend;

// ---- profiling (acl/acl_prof.h)
using ::aclprofConfig;
using ::aclprofCreateConfig;
using ::aclprofCreateStamp;
using ::aclprofDestroyConfig;
using ::aclprofDestroyStamp;
using ::aclprofFinalize;
using ::aclprofInit;
using ::aclprofMark;
using ::aclprofMarkEx;
using ::aclprofPop;
using ::aclprofPush;
using ::aclprofRangeStart;
using ::aclprofRangeStop;
using ::aclprofSetStampTraceMessage;
using ::aclprofStart;
using ::aclprofStop;
using ::aclprofStr2Id;

// ---- the two-phase ops
#define EMBER_ACLNN_USING(Name) \
  using ::Name;                 \
  using ::Name##GetWorkspaceSize;
EMBER_ACLNN_OP_NAMES(EMBER_ACLNN_USING)
// aclnn functions that are not an op's two phases
using ::aclnnCalculateMatmulWeightSize;
using ::aclnnCalculateMatmulWeightSizeV2;
#undef EMBER_ACLNN_USING

}  // namespace npu
}  // namespace ember
