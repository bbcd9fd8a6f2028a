// aclTensor / aclScalar / aclIntArray / aclTensorList: creation, destruction (double destroys are
// caught: descriptors are tracked), and their conversions.
#include "ember/device/npu/descriptors.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "ember/core/half.h"
#include "ember/device/npu/runtime.h"

namespace ember {
namespace npu {
namespace detail {

constexpr uint64_t kMaxDims = 64;  // more than any aclnn op takes (CANN's own limit is 8 for most)
namespace {
std::mutex g_mu;
std::unordered_set<const void*>& live() {
  static auto* s = new std::unordered_set<const void*>();
  return *s;
}
void track(const void* p) {
  std::lock_guard<std::mutex> g(g_mu);
  live().insert(p);
}
bool untrack(const void* p) {
  std::lock_guard<std::mutex> g(g_mu);
  return live().erase(p) == 1;
}
}  // namespace
bool descriptor_live(const void* p) {
  std::lock_guard<std::mutex> g(g_mu);
  return live().count(p) == 1;
}
}  // namespace detail

size_t live_descriptor_count() {
  std::lock_guard<std::mutex> g(detail::g_mu);
  return detail::live().size();
}

using namespace detail;

extern "C" aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                                      const int64_t* stride, int64_t offset, aclFormat format,
                                      const int64_t* storageDims, uint64_t storageDimsNum, void* tensorData) {
  if ((!viewDims && viewDimsNum > 0) || (!storageDims && storageDimsNum > 0)) {
    push_error("aclCreateTensor: viewDims/storageDims is null but its length is greater than 0");
    return nullptr;
  }
  if (viewDimsNum > kMaxDims || storageDimsNum > kMaxDims) {
    push_error("aclCreateTensor: " + std::to_string(std::max(viewDimsNum, storageDimsNum)) +
               " dimensions; at most " + std::to_string(kMaxDims) + " are supported");
    return nullptr;
  }
  for (uint64_t i = 0; i < viewDimsNum; ++i) {
    if (viewDims[i] < 0) {
      push_error("aclCreateTensor: viewDims[" + std::to_string(i) + "] is negative (" + std::to_string(viewDims[i]) + ")");
      return nullptr;
    }
  }
  for (uint64_t i = 0; i < storageDimsNum; ++i) {
    if (storageDims[i] < 0) {
      push_error("aclCreateTensor: storageDims[" + std::to_string(i) + "] is negative (" +
                 std::to_string(storageDims[i]) + ")");
      return nullptr;
    }
  }
  auto* t = new aclTensor();
  t->view.assign(IntArrayRef(viewDims, viewDimsNum));
  if (stride) {
    t->strides.assign(IntArrayRef(stride, viewDimsNum));
  } else {  // contiguous
    t->strides.assign(viewDimsNum, 1);
    for (size_t i = viewDimsNum; i-- > 1;) {
      if (__builtin_mul_overflow(t->strides[i], std::max<int64_t>(t->view[i], 1), &t->strides[i - 1])) {
        delete t;
        push_error("aclCreateTensor: the contiguous strides of these viewDims overflow 64 bits");
        return nullptr;
      }
    }
  }
  t->offset = offset;
  t->dtype = dataType;
  t->format = format;
  t->storage.assign(IntArrayRef(storageDims, storageDimsNum));
  t->data = tensorData;
  track(t);
  return t;
}

extern "C" aclnnStatus aclDestroyTensor(const aclTensor* tensor) {
  if (!tensor) return ACLNN_SUCCESS;
  if (!untrack(tensor)) return fail(ACLNN_ERR_PARAM_INVALID, "aclDestroyTensor: not a live aclTensor (destroyed twice?)");
  delete tensor;
  return ACLNN_SUCCESS;
}

extern "C" aclScalar* aclCreateScalar(void* value, aclDataType dataType) {
  if (!value) {
    push_error("aclCreateScalar: value is null");
    return nullptr;
  }
  auto* s = new aclScalar();
  s->dtype = dataType;
  switch (dataType) {
    case ACL_FLOAT: s->d = *static_cast<float*>(value); break;
    case ACL_DOUBLE: s->d = *static_cast<double*>(value); break;
    case ACL_FLOAT16: s->d = static_cast<float>(*static_cast<Half*>(value)); break;
    case ACL_BF16: s->d = static_cast<float>(*static_cast<BFloat16*>(value)); break;
    case ACL_INT64: s->i = *static_cast<int64_t*>(value); break;
    case ACL_INT32: s->i = *static_cast<int32_t*>(value); break;
    case ACL_BOOL: s->i = *static_cast<bool*>(value) ? 1 : 0; break;
    default:
      delete s;
      push_error("aclCreateScalar: unsupported data type " + std::to_string(dataType));
      return nullptr;
  }
  if (dataType == ACL_INT64 || dataType == ACL_INT32 || dataType == ACL_BOOL) s->d = static_cast<double>(s->i);
  track(s);
  return s;
}

extern "C" aclnnStatus aclDestroyScalar(const aclScalar* scalar) {
  if (!scalar) return ACLNN_SUCCESS;
  if (!untrack(scalar)) return fail(ACLNN_ERR_PARAM_INVALID, "aclDestroyScalar: not a live aclScalar (destroyed twice?)");
  delete scalar;
  return ACLNN_SUCCESS;
}

extern "C" aclIntArray* aclCreateIntArray(const int64_t* value, uint64_t size) {
  if (!value && size > 0) {
    push_error("aclCreateIntArray: value is null but size is greater than 0");
    return nullptr;
  }
  auto* a = new aclIntArray();
  a->values.assign(value, value + size);
  track(a);
  return a;
}

extern "C" aclnnStatus aclDestroyIntArray(const aclIntArray* array) {
  if (!array) return ACLNN_SUCCESS;
  if (!untrack(array)) return fail(ACLNN_ERR_PARAM_INVALID, "aclDestroyIntArray: not a live aclIntArray (destroyed twice?)");
  delete array;
  return ACLNN_SUCCESS;
}

extern "C" aclTensorList* aclCreateTensorList(const aclTensor* const* value, uint64_t size) {
  if (!value && size > 0) {
    push_error("aclCreateTensorList: value is null but size is greater than 0");
    return nullptr;
  }
  auto* l = new aclTensorList();
  for (uint64_t i = 0; i < size; ++i) l->tensors.push_back(const_cast<aclTensor*>(value[i]));
  track(l);
  return l;
}

extern "C" aclnnStatus aclDestroyTensorList(const aclTensorList* list) {
  if (!list) return ACLNN_SUCCESS;
  if (!untrack(list)) return fail(ACLNN_ERR_PARAM_INVALID, "aclDestroyTensorList: not a live aclTensorList (destroyed twice?)");
  for (aclTensor* t : list->tensors) aclDestroyTensor(t);  // CANN: the list owns its tensors
  delete list;
  return ACLNN_SUCCESS;
}

extern "C" size_t aclDataTypeSize(aclDataType dataType) {
  switch (dataType) {
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_BOOL:
      return 1;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
    case ACL_UINT16:
      return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_COMPLEX32:
      return 4;
    case ACL_DOUBLE:
    case ACL_INT64:
    case ACL_UINT64:
    case ACL_COMPLEX64:
      return 8;
    case ACL_COMPLEX128:
      return 16;
    default:  // undefined, strings, sub-byte types and values that are not data types
      return 0;
  }
}

extern "C" float aclFloat16ToFloat(aclFloat16 value) { return ember::detail::half_bits_to_float(value); }

extern "C" aclFloat16 aclFloatToFloat16(float value) { return ember::detail::float_to_half_bits(value); }

}  // namespace npu
}  // namespace ember
