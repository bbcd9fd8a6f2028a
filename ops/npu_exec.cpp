#include "ember/ops/npu_exec.h"

#include "ember/device/allocator.h"
#include "ember/device/npu/runtime.h"

namespace ember {
namespace npu {

void record_stream(const Tensor& t, const Stream& s) {
  EMBER_CHECK_DEVICE(t.defined() && t.is_npu() && t.device().index() == s.device(),
                     "npu::record_stream: expected a tensor on npu:", s.device(), " (the stream's device), got ",
                     t.defined() ? t.device().str() : std::string("an undefined tensor"));
  record_stream(t.impl()->storage()->data(), s);
}

void* device_ptr(const Tensor& t) {
  EMBER_CHECK_DEVICE(t.defined() && t.device().is_npu(), "npu::device_ptr: expects a tensor on an NPU, got ",
                     t.defined() ? t.device().str() : std::string("an undefined tensor"));
  return t.impl()->data();
}

aclTensor* to_acl_tensor(const Tensor& t) {
  EMBER_CHECK_DEVICE(t.is_npu(), "to_acl_tensor: expected an NPU tensor, got one on ", t.device());
  const Storage& s = t.impl()->storage();
  int64_t storage_elems = static_cast<int64_t>(s->nbytes() / t.element_size());
  return aclCreateTensor(t.sizes().data(), t.sizes().size(), acl_from_dtype(t.dtype()), t.strides().data(),
                         t.storage_offset(), ACL_FORMAT_ND, &storage_elems, 1, s->data());
}

aclScalar* to_acl_scalar(const Scalar& s) {
  if (s.is_floating_point()) {
    double d = s.to_double();
    return aclCreateScalar(&d, ACL_DOUBLE);
  }
  if (s.is_bool()) {
    bool b = s.to_bool();
    return aclCreateScalar(&b, ACL_BOOL);
  }
  int64_t i = s.to_int();
  return aclCreateScalar(&i, ACL_INT64);
}

namespace exec_detail {

TensorListArg convert(const std::vector<Tensor>& ts) {
  std::vector<aclTensor*> v;
  for (const Tensor& t : ts) v.push_back(to_acl_tensor(t));
  return TensorListArg(aclCreateTensorList(v.data(), v.size()));
}

void fail(const char* api, const char* phase, aclnnStatus status) {
  const int kind = npu::detail::recent_error_kind();  // before aclGetRecentErrMsg consumes the message
  const char* msg = aclGetRecentErrMsg();
  npu::detail::throw_error_of_kind(kind, ::ember::detail::str_cat(api, phase, " failed with status ", status,
                                                                   msg ? std::string(": ") + msg : std::string()));
}

void* workspace_alloc(int device, uint64_t bytes, uint64_t* granted) {
  constexpr uint64_t kGuard = 256;  // caught by the executor's workspace canaries
  *granted = bytes + kGuard;
  return get_allocator(Device(DeviceType::NPU, device))->allocate(*granted);
}
void workspace_free(int device, void* p, uint64_t bytes) {
  get_allocator(Device(DeviceType::NPU, device))->deallocate(p, bytes);
}

}  // namespace exec_detail
}  // namespace npu
}  // namespace ember
