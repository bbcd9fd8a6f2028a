// ember: writing aclnn-style two-phase ops for the emulated NPU.
//
// The built-in aclnn ops are written with these helpers, and so are users' own ops (see
// examples/custom_op.cpp). Phase 1 validates the descriptors, copies what the kernel needs into
// TensorRefs (descriptors may be destroyed as soon as phase 2 returns), sizes the workspace and
// makes a single-use executor; phase 2 is run_executor(), which checks the workspace, poisons
// it, enqueues the kernel on the stream and checks the workspace's canaries afterwards.
//
//   aclnnStatus aclnnScaleGetWorkspaceSize(const aclTensor* x, double k, aclTensor* out,
//                                          uint64_t* workspaceSize, aclOpExecutor** executor) {
//     if (aclnnStatus s = check_not_null("aclnnScale", {{"x", x}, {"out", out},
//                                                      {"workspaceSize", workspaceSize}, {"executor", executor}}))
//       return s;
//     if (aclnnStatus s = check_tensor("aclnnScale", "x", x)) return s;
//     ...
//     TensorRef rx = ref(x), ro = ref(out);
//     return make_executor("aclnnScale", 0, [=](KernelContext& ctx) {
//       cpu::affine(ctx.view(ro), ctx.view(rx), k, 0.0);
//     }, workspaceSize, executor);
//   }
//   aclnnStatus aclnnScale(void* ws, uint64_t n, aclOpExecutor* e, aclrtStream s) {
//     return run_executor("aclnnScale", ws, n, e, s);
//   }
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ember/device/cpu/strided.h"
#include "acl/acl.h"
#include "ember/device/npu/aclnn_ops.h"

namespace ember {
namespace npu {

// A copy of an aclTensor descriptor, safe to keep until the kernel runs.
struct TensorRef {
  DimVector view, strides, storage;  // inline up to 6 dims: planning a kernel allocates nothing for them
  int64_t offset = 0;
  aclDataType acl_dtype = ACL_FLOAT;
  DType dtype = DType::Float32;
  void* data = nullptr;  // device address of the storage base
  // Set by ref(): the executor planned next on this thread holds the tensor's allocation in use
  // until its kernel has run (or the executor is destroyed), so aclrtFree of it before then is
  // caught (EMBER_NPU_FREE_IN_USE) and the kernel reaches the memory without a lookup.
  bool tracked = false;
  // The descriptor phase 1 was given (its identity only): aclSetInputTensorAddr and
  // aclSetOutputTensorAddr name tensors of a repeatable executor by it.
  const void* source = nullptr;
  bool defined() const { return data != nullptr || !view.empty(); }
};
// New device addresses for a repeatable executor's tensors, by their descriptors.
using AddressOverrides = std::vector<std::pair<const void*, void*>>;
TensorRef ref(const aclTensor* t);

// What a kernel sees when it runs on its stream.
class KernelContext {
 public:
  KernelContext(void* workspace, uint64_t workspace_size, int device, const AddressOverrides* addresses = nullptr)
      : workspace_(workspace), workspace_size_(workspace_size), device_(device), addresses_(addresses) {}
  // The host view of a tensor's elements (throws if its memory was freed since phase 1).
  cpu::Strided view(const TensorRef& t) const;
  // The workspace's host view (nullptr when the op planned none).
  void* workspace() const { return workspace_; }
  uint64_t workspace_size() const { return workspace_size_; }
  // The device's AI cores (EMBER_NPU_CORES, default 8).
  uint32_t cores() const;
  // The NPU the kernel runs on.
  int device() const { return device_; }
  // Runs fn(block, blockDim) for block in [0, blockDim) on the cores (the intra-op pool).
  void launch(uint32_t block_dim, const std::function<void(uint32_t block, uint32_t block_dim)>& fn) const;

 private:
  void* workspace_;
  uint64_t workspace_size_;
  int device_;
  const AddressOverrides* addresses_;  // a repeatable executor's refreshed addresses, or null
};

using Kernel = std::function<void(KernelContext&)>;

// ---- phase 1 helpers ----
// Each returns ACLNN_SUCCESS or a status, with a message for aclGetRecentErrMsg naming op and arg.
aclnnStatus check_not_null(const char* op, const char* name, const void* p);
// check_not_null(op, {{"self", self}, {"out", out}, ...}): 161001 naming the first null.
aclnnStatus check_not_null(const char* op, std::initializer_list<std::pair<const char*, const void*>> args);
// Non-null, a supported dtype, view inside its storage, storage in live device memory.
aclnnStatus check_tensor(const char* op, const char* name, const aclTensor* t);
// The elements from t's storage start that its view may reach: its storage dims', or more when
// the view runs past them (-1 on overflow). check_tensor bounds them by the allocation.
int64_t reach_elements(const aclTensor* t);
// check_tensor for a matmul weight, which may also be ACL_FORMAT_FRACTAL_NZ: aclnnTransMatmulWeight
// leaves a weight's bytes as they are in the emulator, so NZ names the same layout as ND.
aclnnStatus check_weight_tensor(const char* op, const char* name, const aclTensor* t);
aclnnStatus check_dtype(const char* op, const char* name, const aclTensor* t, std::initializer_list<DType> allowed);
aclnnStatus check_shape(const char* op, const char* name, const aclTensor* t, IntArrayRef expected);
// CANN's rule for a written tensor and the tensors an op reads (Ascend C's general address-overlap
// constraint, which its vector instructions state: source and destination overlap completely or
// not at all): out must not alias itself (an expanded view) and each input must be disjoint from
// out or be exactly out (the in-place form). 161002 naming both otherwise. Live descriptors.
// identical_ok = false: the op is not element-wise (a GEMM), so even an input that is exactly out
// is refused.
aclnnStatus check_overlap(const char* op, const char* out_name, const aclTensor* out,
                          std::initializer_list<std::pair<const char*, const aclTensor*>> inputs,
                          bool identical_ok = true);
aclnnStatus invalid(const char* op, const std::string& msg);  // 161002 with a message
// 161002 for an ember::Error raised while planning (e.g. a size that overflows): the message, and
// the error's class for EXEC_NPU_CMD to rethrow (a ShapeError stays a ShapeError).
aclnnStatus invalid(const char* op, const Error& e);
aclnnStatus error(aclnnStatus code, const std::string& msg);  // any status with a message
aclnnStatus null_arg(const char* op, const char* name);       // 161001 with a message

IntArrayRef shape_of(const aclTensor* t);
IntArrayRef strides_of(const aclTensor* t);
bool is_contiguous(const aclTensor* t);
DType dtype_of(const aclTensor* t);
bool dtype_from_acl(aclDataType t, DType* out);
aclDataType acl_from_dtype(DType t);
// A scalar's value and kind (integral or floating).
double scalar_value(const aclScalar* s);
// The value as int64: exact for integral scalars; floating ones truncate, NaN gives 0, and values
// beyond the range saturate (ember::saturating_int64).
int64_t scalar_int_value(const aclScalar* s);
bool scalar_is_floating(const aclScalar* s);
bool scalar_is_bool(const aclScalar* s);
std::vector<int64_t> int_array(const aclIntArray* a);
std::vector<bool> bool_array(const aclBoolArray* a);
std::vector<const aclTensor*> tensor_list(const aclTensorList* l);

// Makes the single-use executor for kernel and reports its workspace size.
aclnnStatus make_executor(const char* op, uint64_t workspace_size, Kernel kernel, uint64_t* workspaceSize,
                          aclOpExecutor** executor);
// Phase 2 for any op made with make_executor.
aclnnStatus run_executor(const char* op, void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                         aclrtStream stream);

// Leak checks (tests): executors made but not yet consumed; live descriptors of all kinds.
size_t live_executor_count();
size_t live_descriptor_count();

// Broadcasts a view to shape (stride 0 on broadcast dims).
cpu::Strided expand_to(const cpu::Strided& s, IntArrayRef shape);

}  // namespace npu
}  // namespace ember

