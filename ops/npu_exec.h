// ember: calling aclnn ops on ember tensors (torch_npu's EXEC_NPU_CMD).
//
//   EXEC_NPU_CMD(npu::aclnnAdd, self, other, alpha, out);
//
// converts Tensors to aclTensors (and Scalars, int lists, tensor lists, dtypes to their acl
// forms), runs phase 1 on the calling thread, takes the workspace from the device's caching
// allocator, enqueues phase 2 on the current stream of the tensors' device, and destroys the
// descriptors. A failing status throws ember::Error with the op name and aclGetRecentErrMsg.
#pragma once

#include <array>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ember/device/npu/acl.h"
#include "ember/device/npu/kernel.h"
#include "ember/device/npu/npu.h"
#include "ember/device/profiler.h"
#include "ember/tensor/tensor.h"

namespace ember {
namespace npu {

// A new aclTensor describing t (torch_npu's convention: data = the storage base, offset =
// storage_offset, storage dims = the whole storage); the caller destroys it.
aclTensor* to_acl_tensor(const Tensor& t);
// Tells the caching allocator that stream s uses t's memory (torch's Tensor.record_stream): a
// tensor allocated on one stream and used on another is then not handed out again, once freed,
// before s's work queued up to the free has completed. Without it, order the streams with
// Stream::wait_stream before freeing.
void record_stream(const Tensor& t, const Stream& s);
aclScalar* to_acl_scalar(const Scalar& s);
// The device address of t's element [0, ..., 0] (t on an NPU), for kernels that take raw global
// memory: an Ascend C kernel's GM_ADDR arguments (ACLRT_LAUNCH_KERNEL). Not host-accessible. Launch
// on t's device's current stream (raw_stream(current_stream(...))) to stay in order with ember's
// ops and its caching allocator.
void* device_ptr(const Tensor& t);

namespace exec_detail {

struct TensorArg {
  aclTensor* p = nullptr;
  explicit TensorArg(aclTensor* t) : p(t) {}
  TensorArg(TensorArg&& o) noexcept : p(o.p) { o.p = nullptr; }
  TensorArg(const TensorArg&) = delete;
  ~TensorArg() { aclDestroyTensor(p); }
  aclTensor* get() const { return p; }
};
struct ScalarArg {
  aclScalar* p = nullptr;
  explicit ScalarArg(aclScalar* s) : p(s) {}
  ScalarArg(ScalarArg&& o) noexcept : p(o.p) { o.p = nullptr; }
  ScalarArg(const ScalarArg&) = delete;
  ~ScalarArg() { aclDestroyScalar(p); }
  aclScalar* get() const { return p; }
};
struct IntArrayArg {
  aclIntArray* p = nullptr;
  explicit IntArrayArg(aclIntArray* a) : p(a) {}
  IntArrayArg(IntArrayArg&& o) noexcept : p(o.p) { o.p = nullptr; }
  IntArrayArg(const IntArrayArg&) = delete;
  ~IntArrayArg() { aclDestroyIntArray(p); }
  aclIntArray* get() const { return p; }
};
struct TensorListArg {
  aclTensorList* p = nullptr;
  explicit TensorListArg(aclTensorList* l) : p(l) {}
  TensorListArg(TensorListArg&& o) noexcept : p(o.p) { o.p = nullptr; }
  TensorListArg(const TensorListArg&) = delete;
  ~TensorListArg() { aclDestroyTensorList(p); }
  aclTensorList* get() const { return p; }
};
struct BoolArrayArg {
  aclBoolArray* p = nullptr;
  explicit BoolArrayArg(aclBoolArray* a) : p(a) {}
  BoolArrayArg(BoolArrayArg&& o) noexcept : p(o.p) { o.p = nullptr; }
  BoolArrayArg(const BoolArrayArg&) = delete;
  ~BoolArrayArg() { aclDestroyBoolArray(p); }
  aclBoolArray* get() const { return p; }
};
template <class T>
struct Plain {
  T v;
  T get() const { return v; }
};

inline TensorArg convert(const Tensor& t) { return TensorArg(t.defined() ? to_acl_tensor(t) : nullptr); }
inline TensorArg convert(const std::optional<Tensor>& t) { return TensorArg(t && t->defined() ? to_acl_tensor(*t) : nullptr); }
inline ScalarArg convert(const Scalar& s) { return ScalarArg(to_acl_scalar(s)); }
inline ScalarArg convert(const std::optional<Scalar>& s) { return ScalarArg(s ? to_acl_scalar(*s) : nullptr); }
inline IntArrayArg convert(IntArrayRef a) { return IntArrayArg(aclCreateIntArray(a.data(), a.size())); }
inline IntArrayArg convert(const std::vector<int64_t>& a) { return IntArrayArg(aclCreateIntArray(a.data(), a.size())); }
TensorListArg convert(const std::vector<Tensor>& ts);
template <size_t N>
inline BoolArrayArg convert(const std::array<bool, N>& a) {
  return BoolArrayArg(aclCreateBoolArray(a.data(), N));
}
inline Plain<aclDataType> convert(DType t) { return {acl_from_dtype(t)}; }
// CANN's string attributes are char* (e.g. GeluBackwardV2's approximate); the op does not write them.
inline Plain<char*> convert(const std::string& s) { return {const_cast<char*>(s.c_str())}; }
template <class T, std::enable_if_t<std::is_arithmetic<T>::value, int> = 0>
inline Plain<T> convert(T v) {
  return {v};
}

// The device of the first NPU tensor argument.
inline int device_of_args() { return -1; }
template <class A, class... Rest>
int device_of_args(const A& a, const Rest&... rest) {
  if constexpr (std::is_same<std::decay_t<A>, Tensor>::value) {
    if (a.defined() && a.is_npu()) return a.device().index();
  } else if constexpr (std::is_same<std::decay_t<A>, std::vector<Tensor>>::value) {
    for (const Tensor& t : a)
      if (t.defined() && t.is_npu()) return t.device().index();
  }
  return device_of_args(rest...);
}

[[noreturn]] void fail(const char* api, const char* phase, aclnnStatus status);
// The workspace for `bytes` of planned scratch, with guard bytes after it; *granted is the size
// handed to phase 2, so the executor's canaries fence the overrun inside this block.
void* workspace_alloc(int device, uint64_t bytes, uint64_t* granted);
void workspace_free(int device, void* p, uint64_t bytes);

}  // namespace exec_detail

template <class P1, class P2, class... Args>
void exec_cmd(const char* qualified_api, P1 phase1, P2 phase2, const Args&... args) {
  const char* api = qualified_api;
  for (const char* c = qualified_api; *c; ++c)
    if (*c == ':') api = c + 1;
  int device = exec_detail::device_of_args(args...);
  EMBER_CHECK_DEVICE(device >= 0, api, ": no NPU tensor among the arguments");
  DeviceGuard guard(device);
  auto converted = std::make_tuple(exec_detail::convert(args)...);
  uint64_t ws = 0;
  aclOpExecutor* executor = nullptr;
  const bool profiling = profiler::detail::enabled();
  aclnnStatus st;
  {
    profiler::detail::Scope scope("aclnn", profiling ? std::string(api) + "GetWorkspaceSize" : std::string());
    st = std::apply([&](auto&... c) { return phase1(c.get()..., &ws, &executor); }, converted);
  }
  if (st != ACLNN_SUCCESS) exec_detail::fail(api, "GetWorkspaceSize", st);
  uint64_t granted = 0;
  void* w = ws ? exec_detail::workspace_alloc(device, ws, &granted) : nullptr;
  st = phase2(w, granted, executor, current_stream(device).raw());  // (recorded by run_executor)
  // Stream order makes returning the workspace now safe: later users on this stream run after.
  if (w) exec_detail::workspace_free(device, w, granted);
  if (st != ACLNN_SUCCESS) exec_detail::fail(api, "", st);
}

}  // namespace npu
}  // namespace ember

// aclnn_api names the op as the caller sees it (npu::aclnnAdd in ember's own files, a user op
// from its own namespace); its GetWorkspaceSize twin is found by appending to the last token.
#define EXEC_NPU_CMD(aclnn_api, ...) \
  ::ember::npu::exec_cmd(#aclnn_api, &aclnn_api##GetWorkspaceSize, &aclnn_api, __VA_ARGS__)
