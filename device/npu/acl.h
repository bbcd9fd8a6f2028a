// ember: the emulated NPU's CANN-style API (namespace ember::npu).
//
// A faithful subset of Ascend CANN's runtime (acl.h / acl_rt.h) and aclnn op API with CANN's
// names, signatures, numeric status codes and semantics (those of CANN's public acl and aclnn headers), so host
// code written against it reads like real Ascend code. The device is emulated on the CPU:
// device memory lives in an address range the host cannot read (a host dereference of a device
// pointer crashes, as on hardware), streams are in-order queues run by worker threads, and
// kernels run on ember's intra-op thread pool (the "AI cores").
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/device/binary_ops.def"
#include "ember/device/reduce_ops.def"
#include "ember/device/unary_ops.def"

namespace ember {
namespace npu {

// ---------------------------------------------------------------- types and codes
typedef void* aclrtStream;
typedef void* aclrtEvent;
typedef int aclError;
typedef int32_t aclnnStatus;
struct aclOpExecutor;
struct aclTensor;
struct aclScalar;
struct aclIntArray;
struct aclTensorList;

constexpr aclError ACL_SUCCESS = 0;
constexpr aclError ACL_ERROR_INVALID_PARAM = 100000;
constexpr aclError ACL_ERROR_UNINITIALIZE = 100001;
constexpr aclError ACL_ERROR_REPEAT_INITIALIZE = 100002;
constexpr aclError ACL_ERROR_BAD_ALLOC = 200000;
constexpr aclError ACL_ERROR_INVALID_DEVICE = 200002;
constexpr aclError ACL_ERROR_RT_PARAM_INVALID = 107000;
constexpr aclError ACL_ERROR_RT_INVALID_DEVICEID = 107001;
constexpr aclError ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000;
constexpr aclError ACL_ERROR_RT_MEMORY_ALLOCATION = 207001;
constexpr aclError ACL_ERROR_INTERNAL_ERROR = 500000;
constexpr aclError ACL_ERROR_RT_AICORE_EXCEPTION = 507015;

constexpr aclnnStatus ACLNN_SUCCESS = 0;
constexpr aclnnStatus ACLNN_ERR_PARAM_NULLPTR = 161001;
constexpr aclnnStatus ACLNN_ERR_PARAM_INVALID = 161002;
constexpr aclnnStatus ACLNN_ERR_RUNTIME_ERROR = 361001;
constexpr aclnnStatus ACLNN_ERR_INNER = 561000;
constexpr aclnnStatus ACLNN_ERR_INNER_NULLPTR = 561103;

// Enums have int as their fixed underlying type (the C ABI's): a value the caller passes that
// is not an enumerator is still a well-defined value the API can reject.
typedef enum : int {
  ACL_DT_UNDEFINED = -1,
  ACL_FLOAT = 0,
  ACL_FLOAT16 = 1,
  ACL_INT8 = 2,
  ACL_INT32 = 3,
  ACL_UINT8 = 4,
  ACL_INT16 = 6,
  ACL_UINT16 = 7,
  ACL_UINT32 = 8,
  ACL_INT64 = 9,
  ACL_UINT64 = 10,
  ACL_DOUBLE = 11,
  ACL_BOOL = 12,
  ACL_BF16 = 27,
} aclDataType;

typedef enum : int { ACL_FORMAT_UNDEFINED = -1, ACL_FORMAT_NCHW = 0, ACL_FORMAT_NHWC = 1, ACL_FORMAT_ND = 2 } aclFormat;

typedef enum : int {
  ACL_MEMCPY_HOST_TO_HOST = 0,
  ACL_MEMCPY_HOST_TO_DEVICE = 1,
  ACL_MEMCPY_DEVICE_TO_HOST = 2,
  ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
  ACL_MEMCPY_DEFAULT = 4,
} aclrtMemcpyKind;

typedef enum : int {
  ACL_MEM_MALLOC_HUGE_FIRST = 0,
  ACL_MEM_MALLOC_HUGE_ONLY = 1,
  ACL_MEM_MALLOC_NORMAL_ONLY = 2,
} aclrtMemMallocPolicy;

typedef enum : int { ACL_DDR_MEM = 0, ACL_HBM_MEM = 1 } aclrtMemAttr;

typedef enum : int { ACL_EVENT_RECORDED_STATUS_NOT_READY = 0, ACL_EVENT_RECORDED_STATUS_COMPLETE = 1 } aclrtEventRecordedStatus;

// ---------------------------------------------------------------- runtime
aclError aclInit(const char* configPath);
aclError aclFinalize();
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtGetDevice(int32_t* deviceId);
aclError aclrtGetDeviceCount(uint32_t* count);
// Device memory: size rounded up to 32 bytes plus 32 bytes of padding, 64-byte aligned,
// contents uninitialised (the emulator fills them with 0xFF, a NaN pattern).
aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void* devPtr);
aclError aclrtMallocHost(void** hostPtr, size_t size);  // pinned host memory
aclError aclrtFreeHost(void* hostPtr);
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind);
aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream);
aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count);
aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream);
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total);
aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);  // nullptr: the current device's default stream
aclError aclrtSynchronizeDevice();
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
aclError aclrtCreateEvent(aclrtEvent* event);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtSynchronizeEvent(aclrtEvent event);
aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus* status);
aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent, aclrtEvent endEvent);
// The calling thread's accumulated error messages (newest first); cleared by the call.
// nullptr when there are none; the pointer stays valid until the thread's next call.
const char* aclGetRecentErrMsg();

// ---------------------------------------------------------------- descriptors (aclnn/acl_meta.h)
aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType, const int64_t* stride,
                           int64_t offset, aclFormat format, const int64_t* storageDims, uint64_t storageDimsNum,
                           void* tensorData);
aclnnStatus aclDestroyTensor(const aclTensor* tensor);
aclScalar* aclCreateScalar(void* value, aclDataType dataType);
aclnnStatus aclDestroyScalar(const aclScalar* scalar);
aclIntArray* aclCreateIntArray(const int64_t* value, uint64_t size);
aclnnStatus aclDestroyIntArray(const aclIntArray* array);
// A list of tensors; destroying the list destroys its member tensors (as in CANN).
aclTensorList* aclCreateTensorList(const aclTensor* const* value, uint64_t size);
aclnnStatus aclDestroyTensorList(const aclTensorList* array);

// ---------------------------------------------------------------- two-phase ops
// Every op is a pair:
//   aclnnXxxGetWorkspaceSize(inputs..., outputs..., uint64_t* workspaceSize, aclOpExecutor** executor)
//   aclnnXxx(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream)
// Phase 1 validates (161001 null, 161002 invalid), plans and sizes the workspace (a pure function
// of shapes, dtypes and attributes; 0 means pass nullptr); phase 2 enqueues on the stream.
// Executors are single-use: deleted after phase 2 and on a phase-2 error.
#define EMBER_ACLNN_PHASE2(Name) \
  aclnnStatus Name(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);
#define EMBER_ACLNN_PHASE1(Name, ...) \
  aclnnStatus Name##GetWorkspaceSize(__VA_ARGS__, uint64_t* workspaceSize, aclOpExecutor** executor);
#define EMBER_ACLNN_OP(Name, ...)       \
  EMBER_ACLNN_PHASE1(Name, __VA_ARGS__) \
  EMBER_ACLNN_PHASE2(Name)

// out = self + alpha * other (and the other arithmetic ops; tensor or scalar `other`)
EMBER_ACLNN_OP(aclnnAdd, const aclTensor* self, const aclTensor* other, const aclScalar* alpha, aclTensor* out)
EMBER_ACLNN_OP(aclnnAdds, const aclTensor* self, const aclScalar* other, const aclScalar* alpha, aclTensor* out)
EMBER_ACLNN_OP(aclnnInplaceAdd, aclTensor* selfRef, const aclTensor* other, const aclScalar* alpha)
EMBER_ACLNN_OP(aclnnInplaceAdds, aclTensor* selfRef, const aclScalar* other, const aclScalar* alpha)
EMBER_ACLNN_OP(aclnnSub, const aclTensor* self, const aclTensor* other, const aclScalar* alpha, aclTensor* out)
EMBER_ACLNN_OP(aclnnSubs, const aclTensor* self, const aclScalar* other, const aclScalar* alpha, aclTensor* out)
EMBER_ACLNN_OP(aclnnInplaceSub, aclTensor* selfRef, const aclTensor* other, const aclScalar* alpha)
EMBER_ACLNN_OP(aclnnInplaceSubs, aclTensor* selfRef, const aclScalar* other, const aclScalar* alpha)
EMBER_ACLNN_OP(aclnnMul, const aclTensor* self, const aclTensor* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnMuls, const aclTensor* self, const aclScalar* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnInplaceMul, aclTensor* selfRef, const aclTensor* other)
EMBER_ACLNN_OP(aclnnInplaceMuls, aclTensor* selfRef, const aclScalar* other)
EMBER_ACLNN_OP(aclnnDiv, const aclTensor* self, const aclTensor* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnDivs, const aclTensor* self, const aclScalar* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnInplaceDiv, aclTensor* selfRef, const aclTensor* other)
EMBER_ACLNN_OP(aclnnInplaceDivs, aclTensor* selfRef, const aclScalar* other)
EMBER_ACLNN_OP(aclnnPowTensorTensor, const aclTensor* self, const aclTensor* exponent, aclTensor* out)
EMBER_ACLNN_OP(aclnnPowTensorScalar, const aclTensor* self, const aclScalar* exponent, aclTensor* out)
// the binary table (device/binary_ops.def): Maximum, Minimum, ...
#define EMBER_ACLNN_DECLARE_TABLE_BINARY(name, Acl, ...) \
  EMBER_ACLNN_OP(aclnn##Acl, const aclTensor* self, const aclTensor* other, aclTensor* out)
EMBER_BINARY_OPS(EMBER_ACLNN_DECLARE_TABLE_BINARY)
#undef EMBER_ACLNN_DECLARE_TABLE_BINARY
// comparisons: out is bool
EMBER_ACLNN_OP(aclnnEqTensor, const aclTensor* self, const aclTensor* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnEqScalar, const aclTensor* self, const aclScalar* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnNeTensor, const aclTensor* self, const aclTensor* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnNeScalar, const aclTensor* self, const aclScalar* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnLtTensor, const aclTensor* self, const aclTensor* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnLtScalar, const aclTensor* self, const aclScalar* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnLeTensor, const aclTensor* self, const aclTensor* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnLeScalar, const aclTensor* self, const aclScalar* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnGtTensor, const aclTensor* self, const aclTensor* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnGtScalar, const aclTensor* self, const aclScalar* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnGeTensor, const aclTensor* self, const aclTensor* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnGeScalar, const aclTensor* self, const aclScalar* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnLogicalAnd, const aclTensor* self, const aclTensor* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnLogicalOr, const aclTensor* self, const aclTensor* other, aclTensor* out)
EMBER_ACLNN_OP(aclnnLogicalNot, const aclTensor* self, aclTensor* out)
EMBER_ACLNN_OP(aclnnSWhere, const aclTensor* condition, const aclTensor* self, const aclTensor* other, aclTensor* out)
// unary
// (those of the unary table, device/unary_ops.def, and the others)
#define EMBER_ACLNN_UNARY_LIST(_) _(Neg) _(Tanh) _(Sigmoid) _(Relu) _(Silu)
#define EMBER_ACLNN_DECLARE_UNARY(N) EMBER_ACLNN_OP(aclnn##N, const aclTensor* self, aclTensor* out)
#define EMBER_ACLNN_DECLARE_TABLE_UNARY(name, Acl, ...) EMBER_ACLNN_DECLARE_UNARY(Acl)
EMBER_ACLNN_UNARY_LIST(EMBER_ACLNN_DECLARE_UNARY)
EMBER_UNARY_OPS(EMBER_ACLNN_DECLARE_TABLE_UNARY)
#undef EMBER_ACLNN_DECLARE_TABLE_UNARY
#undef EMBER_ACLNN_DECLARE_UNARY
EMBER_ACLNN_OP(aclnnInplaceRelu, aclTensor* selfRef)
// approximate: 0 = erf ("none"), 1 = tanh
EMBER_ACLNN_OP(aclnnGeluV2, const aclTensor* self, int64_t approximate, aclTensor* out)
EMBER_ACLNN_OP(aclnnGeluBackwardV2, const aclTensor* gradOutput, const aclTensor* self, int64_t approximate,
               aclTensor* gradInput)
EMBER_ACLNN_OP(aclnnClamp, const aclTensor* self, const aclScalar* clipValueMin, const aclScalar* clipValueMax,
               aclTensor* out)
// SwiGlu: x split in halves a, b along dim; out = silu(a) * b. SwiGluGrad: the gradient for x.
EMBER_ACLNN_OP(aclnnSwiGlu, const aclTensor* x, int64_t dim, const aclTensor* out)
EMBER_ACLNN_OP(aclnnSwiGluGrad, const aclTensor* yGrad, const aclTensor* x, int64_t dim, const aclTensor* out)
// ember extensions: the two-input SwiGLU gate silu(a) * b and its gradients.
EMBER_ACLNN_OP(aclnnSiluMul, const aclTensor* a, const aclTensor* b, aclTensor* out)
EMBER_ACLNN_OP(aclnnSiluMulGrad, const aclTensor* grad, const aclTensor* a, const aclTensor* b, aclTensor* gradA,
               aclTensor* gradB)
// RmsNorm over the trailing dims covered by gamma; rstdOut is float32 with those dims kept as 1.
EMBER_ACLNN_OP(aclnnRmsNorm, const aclTensor* x, const aclTensor* gamma, double epsilon, const aclTensor* yOut,
               const aclTensor* rstdOut)
EMBER_ACLNN_OP(aclnnRmsNormGrad, const aclTensor* dy, const aclTensor* x, const aclTensor* rstd,
               const aclTensor* gamma, const aclTensor* dxOut, const aclTensor* dgammaOut)
// the reduce table (device/reduce_ops.def: ReduceSum, Amax, Amin, ...); dtype (sum-like
// reductions): the output dtype (fp16/bf16 accumulate in fp32)
#define EMBER_ACLNN_DECLARE_REDUCE_S(Acl) \
  EMBER_ACLNN_OP(aclnn##Acl, const aclTensor* self, const aclIntArray* dim, bool keepDim, aclDataType dtype, aclTensor* out)
#define EMBER_ACLNN_DECLARE_REDUCE_M(Acl) \
  EMBER_ACLNN_OP(aclnn##Acl, const aclTensor* self, const aclIntArray* dim, bool keepDim, aclTensor* out)
#define EMBER_ACLNN_DECLARE_TABLE_REDUCE(name, Acl, Node, Acc, form, ...) EMBER_ACLNN_DECLARE_REDUCE_##form(Acl)
EMBER_REDUCE_OPS(EMBER_ACLNN_DECLARE_TABLE_REDUCE)
#undef EMBER_ACLNN_DECLARE_TABLE_REDUCE
#undef EMBER_ACLNN_DECLARE_REDUCE_S
#undef EMBER_ACLNN_DECLARE_REDUCE_M
EMBER_ACLNN_OP(aclnnArgMax, const aclTensor* self, int64_t dim, bool keepdim, aclTensor* out)
EMBER_ACLNN_OP(aclnnArgMin, const aclTensor* self, int64_t dim, bool keepdim, aclTensor* out)
EMBER_ACLNN_OP(aclnnSoftmax, const aclTensor* self, int64_t dim, aclTensor* out)
EMBER_ACLNN_OP(aclnnLogSoftmax, const aclTensor* self, int64_t dim, aclTensor* out)
EMBER_ACLNN_OP(aclnnSoftmaxBackward, const aclTensor* gradOutput, const aclTensor* output, int64_t dim,
               aclTensor* gradInput)
EMBER_ACLNN_OP(aclnnLogSoftmaxBackward, const aclTensor* gradOutput, const aclTensor* output, int64_t dim,
               aclTensor* out)
// torch.matmul semantics (1-6 D, batch broadcast, transposes as strided views); cubeMathType
// 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32, 4 USE_FP32_ADD.
EMBER_ACLNN_OP(aclnnMatmul, const aclTensor* self, const aclTensor* mat2, aclTensor* out, int8_t cubeMathType)
EMBER_ACLNN_OP(aclnnCast, const aclTensor* self, aclDataType dtype, aclTensor* out)
// selfRef = src (strided, any dtypes, src broadcast to selfRef's shape)
EMBER_ACLNN_OP(aclnnInplaceCopy, aclTensor* selfRef, const aclTensor* src)
EMBER_ACLNN_OP(aclnnInplaceFillScalar, aclTensor* selfRef, const aclScalar* value)
// out[i] = start + i * step over the flattened (contiguous) out
EMBER_ACLNN_OP(aclnnArange, const aclScalar* start, const aclScalar* end, const aclScalar* step, aclTensor* out)
EMBER_ACLNN_OP(aclnnInplaceUniform, aclTensor* selfRef, double from, double to, uint64_t seed, uint64_t offset)
EMBER_ACLNN_OP(aclnnInplaceNormal, aclTensor* selfRef, float mean, float std, int64_t seed, int64_t offset)
EMBER_ACLNN_OP(aclnnInplaceRandom, aclTensor* selfRef, int64_t from, int64_t to, int64_t seed, int64_t offset)
EMBER_ACLNN_OP(aclnnCat, const aclTensorList* tensors, int64_t dim, aclTensor* out)
// out[i, :] = weight[indices[i], :] (weight 2-D). An index out of range is a kernel fault
// reported at the next synchronize (real hardware returns garbage rows).
EMBER_ACLNN_OP(aclnnEmbedding, const aclTensor* weight, const aclTensor* indices, const aclTensor* out)
// out [numWeights, D] = the rows of grad summed by index; paddingIdx (>= numWeights: none) gets
// none; scaleGradByFreq divides each contribution by its index's count.
EMBER_ACLNN_OP(aclnnEmbeddingDenseBackward, const aclTensor* grad, const aclTensor* sortIndices, uint64_t numWeights,
               uint64_t paddingIdx, bool scaleGradByFreq, aclTensor* out)
// ember extensions: mean cross entropy over rows of logits [N, C] with int64 targets (fused
// log-softmax; rows whose target is ignoreIndex skipped), and its gradient for the logits.
EMBER_ACLNN_OP(aclnnCrossEntropy, const aclTensor* logits, const aclTensor* target, int64_t ignoreIndex,
               aclTensor* out)
EMBER_ACLNN_OP(aclnnCrossEntropyGrad, const aclTensor* gradOutput, const aclTensor* logits, const aclTensor* target,
               int64_t ignoreIndex, aclTensor* gradInput)
// AdamW in place on varRef, mRef, vRef (maxGradNormOptionalRef with amsgrad); step: int64 or
// float32 of shape (1,), read when the kernel runs.
EMBER_ACLNN_OP(aclnnApplyAdamWV2, aclTensor* varRef, aclTensor* mRef, aclTensor* vRef,
               aclTensor* maxGradNormOptionalRef, const aclTensor* grad, const aclTensor* step, float lr, float beta1,
               float beta2, float weightDecay, float eps, bool amsgrad, bool maximize)

}  // namespace npu
}  // namespace ember
