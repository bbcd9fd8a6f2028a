// aclTensor / aclScalar / aclIntArray / aclTensorList: creation, destruction (double destroys are
// caught: descriptors are tracked), and their conversions.
#include "ember/device/npu/descriptors.h"
#include "ember/device/npu/handle_arena.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>

#include "ember/core/half.h"
#include "ember/device/npu/kernel.h"
#include "ember/device/npu/runtime.h"

namespace ember {
namespace npu {
namespace detail {

constexpr uint64_t kMaxDims = 64;  // more than any aclnn op takes (CANN's own limit is 8 for most)
namespace {
std::mutex g_mu;
// 16 bytes before every descriptor: what is there while it lives (no registry lookup per check).
struct SlotHeader {
  const void* self;  // the descriptor's own address while it lives, else null
  DescKind kind;
};
static_assert(sizeof(SlotHeader) <= 16, "the header fits its 16 bytes");
size_t g_live_count = 0;  // (g_mu)

HandleArena& arena() {
  static auto* a = new HandleArena();
  return *a;
}

// The header of p if p is a live descriptor's address or could be (g_mu held), else nullptr.
SlotHeader* header_of(const void* p) {
  if (!p || !arena().holds_live(p)) return nullptr;
  return reinterpret_cast<SlotHeader*>(const_cast<char*>(static_cast<const char*>(p)) - 16);
}

template <class D, DescKind K>
D* new_descriptor() {
  std::lock_guard<std::mutex> g(g_mu);
  char* mem = static_cast<char*>(arena().allocate(16 + sizeof(D)));
  if (!mem) {
    push_error("out of address space for descriptors (mmap failed)");
    return nullptr;
  }
  D* d = new (mem + 16) D();
  auto* h = reinterpret_cast<SlotHeader*>(mem);
  h->self = d;
  h->kind = K;
  ++g_live_count;
  return d;
}
const char* kind_name(DescKind k) {
  switch (k) {
    case DescKind::Tensor: return "aclTensor";
    case DescKind::Scalar: return "aclScalar";
    case DescKind::IntArray: return "aclIntArray";
    case DescKind::FloatArray: return "aclFloatArray";
    case DescKind::BoolArray: return "aclBoolArray";
    case DescKind::TensorList: return "aclTensorList";
    case DescKind::ScalarList: return "aclScalarList";
  }
  return "descriptor";
}
}  // namespace
// Destroys a tracked descriptor: null is fine; a second destroy, or a handle of another type, is an
// error naming both.
template <class D>
aclnnStatus destroy_descriptor(const char* api, DescKind kind, const D* d) {
  if (!d) return ACLNN_SUCCESS;
  std::unique_lock<std::mutex> g(g_mu);  // one lock for all of it: every launch destroys a few
  SlotHeader* h = header_of(d);
  if (!h || h->self != d || h->kind != kind) {
    const std::string what = h && h->self == d ? std::string("it is an ") + kind_name(h->kind)
                                               : std::string("destroyed twice, or never created");
    g.unlock();
    return fail(ACLNN_ERR_PARAM_INVALID, std::string(api) + ": not a live " + kind_name(kind) + " (" + what + ")");
  }
  h->self = nullptr;
  --g_live_count;
  d->~D();  // (frees only the descriptor's own heap arrays, if any)
  arena().release(h);
  return ACLNN_SUCCESS;
}
// An array descriptor holding a copy of value[0, size).
template <class D, DescKind K, class V>
D* create_array(const char* api, const V* value, uint64_t size) {
  if (!value && size > 0) {
    push_error(std::string(api) + ": value is null but size is greater than 0");
    return nullptr;
  }
  auto* a = new_descriptor<D, K>();
  if (!a) return nullptr;
  a->values.assign(value, value + size);
  return a;
}
// A list descriptor holding value[0, size) (the list takes ownership of the elements).
template <class D, DescKind K, class E>
D* create_list(const char* api, const E* const* value, uint64_t size, std::vector<E*> D::*elements) {
  if (!value && size > 0) {
    push_error(std::string(api) + ": value is null but size is greater than 0");
    return nullptr;
  }
  auto* l = new_descriptor<D, K>();
  if (!l) return nullptr;
  for (uint64_t i = 0; i < size; ++i) (l->*elements).push_back(const_cast<E*>(value[i]));
  return l;
}
bool descriptor_live(const void* p, DescKind kind) {
  std::lock_guard<std::mutex> g(g_mu);
  const SlotHeader* h = header_of(p);
  return h && h->self == p && h->kind == kind;
}
}  // namespace detail

size_t live_descriptor_count() {
  std::lock_guard<std::mutex> g(detail::g_mu);
  return detail::g_live_count;
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
  auto* t = new_descriptor<aclTensor, DescKind::Tensor>();
  if (!t) return nullptr;
  t->view.assign(IntArrayRef(viewDims, viewDimsNum));
  if (stride) {
    t->strides.assign(IntArrayRef(stride, viewDimsNum));
  } else {  // contiguous
    t->strides.assign(viewDimsNum, 1);
    for (size_t i = viewDimsNum; i-- > 1;) {
      if (__builtin_mul_overflow(t->strides[i], std::max<int64_t>(t->view[i], 1), &t->strides[i - 1])) {
        destroy_descriptor("aclCreateTensor", DescKind::Tensor, t);
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
  return t;
}

extern "C" aclnnStatus aclDestroyTensor(const aclTensor* tensor) {
  return destroy_descriptor("aclDestroyTensor", DescKind::Tensor, tensor);
}

extern "C" aclScalar* aclCreateScalar(void* value, aclDataType dataType) {
  if (!value) {
    push_error("aclCreateScalar: value is null");
    return nullptr;
  }
  auto* s = new_descriptor<aclScalar, DescKind::Scalar>();
  if (!s) return nullptr;
  s->dtype = dataType;
  switch (dataType) {
    case ACL_FLOAT: s->d = *static_cast<float*>(value); break;
    case ACL_DOUBLE: s->d = *static_cast<double*>(value); break;
    case ACL_FLOAT16: s->d = static_cast<float>(*static_cast<Half*>(value)); break;
    case ACL_BF16: s->d = static_cast<float>(*static_cast<BFloat16*>(value)); break;
    case ACL_INT64: s->i = *static_cast<int64_t*>(value); break;
    case ACL_INT32: s->i = *static_cast<int32_t*>(value); break;
    case ACL_BOOL: s->i = *static_cast<bool*>(value) ? 1 : 0; break;
    case ACL_UINT8: s->i = *static_cast<uint8_t*>(value); break;
    case ACL_INT8: s->i = *static_cast<int8_t*>(value); break;
    default:
      destroy_descriptor("aclCreateScalar", DescKind::Scalar, s);
      push_error("aclCreateScalar: unsupported data type " + std::to_string(dataType));
      return nullptr;
  }
  if (dataType == ACL_INT64 || dataType == ACL_INT32 || dataType == ACL_BOOL || dataType == ACL_UINT8 ||
      dataType == ACL_INT8)
    s->d = static_cast<double>(s->i);
  return s;
}

extern "C" aclnnStatus aclDestroyScalar(const aclScalar* scalar) {
  return destroy_descriptor("aclDestroyScalar", DescKind::Scalar, scalar);
}

extern "C" aclIntArray* aclCreateIntArray(const int64_t* value, uint64_t size) {
  return create_array<aclIntArray, DescKind::IntArray>("aclCreateIntArray", value, size);
}

extern "C" aclnnStatus aclDestroyIntArray(const aclIntArray* array) {
  return destroy_descriptor("aclDestroyIntArray", DescKind::IntArray, array);
}

extern "C" aclFloatArray* aclCreateFloatArray(const float* value, uint64_t size) {
  return create_array<aclFloatArray, DescKind::FloatArray>("aclCreateFloatArray", value, size);
}

extern "C" aclnnStatus aclDestroyFloatArray(const aclFloatArray* array) {
  return destroy_descriptor("aclDestroyFloatArray", DescKind::FloatArray, array);
}

extern "C" aclBoolArray* aclCreateBoolArray(const bool* value, uint64_t size) {
  return create_array<aclBoolArray, DescKind::BoolArray>("aclCreateBoolArray", value, size);
}

extern "C" aclnnStatus aclDestroyBoolArray(const aclBoolArray* array) {
  return destroy_descriptor("aclDestroyBoolArray", DescKind::BoolArray, array);
}

// A list of scalars; destroying the list destroys them (as in CANN).
extern "C" aclScalarList* aclCreateScalarList(const aclScalar* const* value, uint64_t size) {
  return create_list<aclScalarList, DescKind::ScalarList>("aclCreateScalarList", value, size, &aclScalarList::scalars);
}

extern "C" aclnnStatus aclDestroyScalarList(const aclScalarList* list) {
  if (list && descriptor_live(list))
    for (aclScalar* s : list->scalars) aclDestroyScalar(s);
  return destroy_descriptor("aclDestroyScalarList", DescKind::ScalarList, list);
}

// ---- what a tensor descriptor holds. The shape, stride and storage arrays are new int64_t[]
// arrays the caller owns and frees with delete[] (CANN's contract).
namespace {
aclnnStatus dims_out(const char* api, const aclTensor* t, const ember::DimVector& dims, int64_t** out,
                     uint64_t* num) {
  if (!t || !out || !num) return null_arg(api, !t ? "tensor" : !out ? "the array pointer" : "the count pointer");
  if (!descriptor_live(t)) return fail(ACLNN_ERR_PARAM_INVALID, std::string(api) + ": not a live aclTensor");
  *num = dims.size();
  *out = new (std::nothrow) int64_t[dims.size() ? dims.size() : 1];
  if (!*out) return fail(ACLNN_ERR_INNER_NULLPTR, std::string(api) + ": out of host memory");
  std::copy(dims.begin(), dims.end(), *out);
  return ACLNN_SUCCESS;
}
}  // namespace

extern "C" aclnnStatus aclGetViewShape(const aclTensor* tensor, int64_t** viewDims, uint64_t* viewDimsNum) {
  return dims_out("aclGetViewShape", tensor, tensor ? tensor->view : ember::DimVector(), viewDims, viewDimsNum);
}

extern "C" aclnnStatus aclGetStorageShape(const aclTensor* tensor, int64_t** storageDims, uint64_t* storageDimsNum) {
  return dims_out("aclGetStorageShape", tensor, tensor ? tensor->storage : ember::DimVector(), storageDims,
                  storageDimsNum);
}

extern "C" aclnnStatus aclGetViewStrides(const aclTensor* tensor, int64_t** stridesValue, uint64_t* stridesNum) {
  return dims_out("aclGetViewStrides", tensor, tensor ? tensor->strides : ember::DimVector(), stridesValue,
                  stridesNum);
}

namespace {
// The live tensor a getter reads, or a status with a message.
aclnnStatus check_get(const char* api, const aclTensor* t, const void* out) {
  if (!t || !out) return null_arg(api, !t ? "tensor" : "the output pointer");
  if (!descriptor_live(t)) return fail(ACLNN_ERR_PARAM_INVALID, std::string(api) + ": not a live aclTensor");
  return ACLNN_SUCCESS;
}
}  // namespace

extern "C" aclnnStatus aclGetViewOffset(const aclTensor* tensor, int64_t* offset) {
  if (aclnnStatus s = check_get("aclGetViewOffset", tensor, offset)) return s;
  *offset = tensor->offset;
  return ACLNN_SUCCESS;
}

extern "C" aclnnStatus aclGetFormat(const aclTensor* tensor, aclFormat* format) {
  if (aclnnStatus s = check_get("aclGetFormat", tensor, format)) return s;
  *format = tensor->format;
  return ACLNN_SUCCESS;
}

extern "C" aclnnStatus aclGetDataType(const aclTensor* tensor, aclDataType* dataType) {
  if (aclnnStatus s = check_get("aclGetDataType", tensor, dataType)) return s;
  *dataType = tensor->dtype;
  return ACLNN_SUCCESS;
}

extern "C" aclTensorList* aclCreateTensorList(const aclTensor* const* value, uint64_t size) {
  return create_list<aclTensorList, DescKind::TensorList>("aclCreateTensorList", value, size, &aclTensorList::tensors);
}

extern "C" aclnnStatus aclDestroyTensorList(const aclTensorList* list) {
  if (list && descriptor_live(list))
    for (aclTensor* t : list->tensors) aclDestroyTensor(t);  // CANN: the list owns its tensors
  return destroy_descriptor("aclDestroyTensorList", DescKind::TensorList, list);
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
