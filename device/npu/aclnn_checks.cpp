// The phase-1 helpers of kernel.h: error statuses, dtype conversions, argument and layout checks,
// and reading descriptors (shapes, strides, scalars, arrays, tensor lists).
#include <sstream>

#include "ember/core/error.h"
#include "ember/core/memory_overlap.h"
#include "ember/device/npu/descriptors.h"
#include "ember/device/npu/kernel.h"
#include "ember/device/npu/runtime.h"

namespace ember {
namespace npu {

using detail::fail;

aclnnStatus invalid(const char* op, const std::string& msg) {
  drop_notes();
  return fail(ACLNN_ERR_PARAM_INVALID, std::string(op) + ": " + msg);
}
aclnnStatus invalid(const char* op, const Error& e) {
  drop_notes();
  detail::push_error(std::string(op) + ": " + e.what(), detail::error_kind_of(e));
  return ACLNN_ERR_PARAM_INVALID;
}
aclnnStatus error(aclnnStatus code, const std::string& msg) {
  drop_notes();
  return fail(code, msg);
}
aclnnStatus null_arg(const char* op, const char* name) {
  drop_notes();
  return fail(ACLNN_ERR_PARAM_NULLPTR, std::string(op) + ": " + name + " is null");
}
aclnnStatus check_not_null(const char* op, const char* name, const void* p) {
  return p ? ACLNN_SUCCESS : null_arg(op, name);
}
aclnnStatus check_not_null(const char* op, std::initializer_list<std::pair<const char*, const void*>> args) {
  for (const auto& a : args)
    if (!a.second) return null_arg(op, a.first);
  return ACLNN_SUCCESS;
}

bool dtype_from_acl(aclDataType t, DType* out) {
  switch (t) {
    case ACL_FLOAT: *out = DType::Float32; return true;
    case ACL_DOUBLE: *out = DType::Float64; return true;
    case ACL_FLOAT16: *out = DType::Float16; return true;
    case ACL_BF16: *out = DType::BFloat16; return true;
    case ACL_INT64: *out = DType::Int64; return true;
    case ACL_INT32: *out = DType::Int32; return true;
    case ACL_BOOL: *out = DType::Bool; return true;
    case ACL_UINT8: *out = DType::UInt8; return true;
    case ACL_INT8: *out = DType::Int8; return true;
    case ACL_INT16: *out = DType::Int16; return true;
    default: return false;
  }
}

aclDataType acl_from_dtype(DType t) {
  switch (t) {
    case DType::Float32: return ACL_FLOAT;
    case DType::Float64: return ACL_DOUBLE;
    case DType::Float16: return ACL_FLOAT16;
    case DType::BFloat16: return ACL_BF16;
    case DType::Int64: return ACL_INT64;
    case DType::Int32: return ACL_INT32;
    case DType::Bool: return ACL_BOOL;
    case DType::UInt8: return ACL_UINT8;
    case DType::Int8: return ACL_INT8;
    case DType::Int16: return ACL_INT16;
  }
  return ACL_DT_UNDEFINED;
}

namespace {
const char* acl_dtype_name(aclDataType t) {
  switch (t) {
    case ACL_FLOAT: return "ACL_FLOAT";
    case ACL_FLOAT16: return "ACL_FLOAT16";
    case ACL_INT8: return "ACL_INT8";
    case ACL_INT32: return "ACL_INT32";
    case ACL_UINT8: return "ACL_UINT8";
    case ACL_INT16: return "ACL_INT16";
    case ACL_UINT16: return "ACL_UINT16";
    case ACL_UINT32: return "ACL_UINT32";
    case ACL_INT64: return "ACL_INT64";
    case ACL_UINT64: return "ACL_UINT64";
    case ACL_DOUBLE: return "ACL_DOUBLE";
    case ACL_BOOL: return "ACL_BOOL";
    case ACL_STRING: return "ACL_STRING";
    case ACL_COMPLEX64: return "ACL_COMPLEX64";
    case ACL_COMPLEX128: return "ACL_COMPLEX128";
    case ACL_BF16: return "ACL_BF16";
    case ACL_INT4: return "ACL_INT4";
    case ACL_UINT1: return "ACL_UINT1";
    case ACL_COMPLEX32: return "ACL_COMPLEX32";
    default: return "not an aclDataType";
  }
}
}  // namespace

namespace {
MemLayout layout_of(const aclTensor* t) {
  DType dt = DType::Float32;
  dtype_from_acl(t->dtype, &dt);
  const size_t item = element_size(dt);
  return {reinterpret_cast<uintptr_t>(t->data) + static_cast<uintptr_t>(t->offset) * item, item, t->view, t->strides};
}
// The bytes t may reach, [data, data + reach_elements * item size): check_tensor has shown
// the view lies inside them, so tensors whose ranges are apart cannot overlap.
bool storage_range(const aclTensor* t, uintptr_t* lo, uintptr_t* hi) {
  DType dt = DType::Float32;
  if (!dtype_from_acl(t->dtype, &dt)) return false;
  const int64_t reach = reach_elements(t);
  if (reach < 0) return false;
  const uint64_t n = static_cast<uint64_t>(reach);
  uint64_t bytes;
  if (__builtin_mul_overflow(n, element_size(dt), &bytes)) return false;
  *lo = reinterpret_cast<uintptr_t>(t->data);
  return !__builtin_add_overflow(*lo, bytes, hi);
}
std::string layout_str(const aclTensor* t) {
  std::ostringstream os;
  os << "shape " << IntArrayRef(t->view) << ", strides " << IntArrayRef(t->strides) << ", offset " << t->offset;
  return os.str();
}
}  // namespace

aclnnStatus check_overlap(const char* op, const char* out_name, const aclTensor* out,
                          std::initializer_list<std::pair<const char*, const aclTensor*>> inputs, bool identical_ok) {
  uintptr_t out_lo = 0, out_hi = 0;
  const bool out_known = storage_range(out, &out_lo, &out_hi);
  if (!is_contiguous(out) && has_internal_overlap(layout_of(out)))
    return invalid(op, std::string(out_name) + " (" + layout_str(out) +
                           ") has elements that share one address; a written tensor's elements must be distinct");
  for (auto [name, in] : inputs) {
    if (!in || in->data == nullptr) continue;
    uintptr_t lo, hi;
    if (in != out && out_known && storage_range(in, &lo, &hi) && (hi <= out_lo || out_hi <= lo)) continue;
    const MemOverlap v = in == out ? MemOverlap::Full : get_overlap(layout_of(out), layout_of(in));
    if (v == MemOverlap::No || (v == MemOverlap::Full && identical_ok)) continue;
    if (v == MemOverlap::Full)
      return invalid(op, std::string(name) + " and " + out_name + " (" + layout_str(out) +
                             ") are the same memory; this op reads all of its input while writing its output, "
                             "so they must be disjoint");
    return invalid(op, std::string(name) + " (" + layout_str(in) + ") and " + out_name + " (" + layout_str(out) +
                           ") overlap in part (" + to_string(v) +
                           "); an input must be disjoint from the output or be exactly it");
  }
  return ACLNN_SUCCESS;
}

namespace {
// The formats that name a plain row-major layout (the tags torch_npu and CANN's samples put on
// tensors) are all computed as ND; the private blocked ones (NC1HWC0, FRACTAL_Z, FRACTAL_NZ, ...)
// are not emulated.
aclnnStatus check_format(const char* op, const char* name, const aclTensor* t, bool weight) {
  if (weight && t->format == ACL_FORMAT_FRACTAL_NZ) return ACLNN_SUCCESS;  // see check_weight_tensor
  switch (t->format) {
    case ACL_FORMAT_ND:
    case ACL_FORMAT_NCHW:
    case ACL_FORMAT_NHWC:
    case ACL_FORMAT_HWCN:
    case ACL_FORMAT_NDHWC:
    case ACL_FORMAT_NCDHW:
    case ACL_FORMAT_NC:
    case ACL_FORMAT_NCL:
      return ACLNN_SUCCESS;
    default:
      return invalid(op, std::string(name) + " has format " + std::to_string(t->format) +
                             ", a blocked (private) layout the emulated NPU does not support; use ND");
  }
}

// The view starts inside its storage (sizes, strides and offset without overflow); *bytes: the
// bytes it may reach from the storage's start (0 elements reach nothing: *empty). A view may reach
// past its storage dims: CANN does not check that, and ggml's CANN backend counts its views'
// storage from their offset; reach_elements says how far, and the allocation bounds it.
aclnnStatus check_extent(const char* op, const char* name, const aclTensor* t, DType dt, size_t* bytes, bool* empty) {
  auto overflow = [&] { return invalid(op, std::string(name) + ": its sizes, strides and offset overflow 64 bits"); };
  int64_t storage = 1;
  for (int64_t d : t->storage)
    if (d < 0 || __builtin_mul_overflow(storage, d, &storage)) return overflow();
  *empty = false;
  for (int64_t d : t->view) {
    if (d < 0) return invalid(op, std::string(name) + " has a negative dimension");
    if (d == 0) *empty = true;
  }
  if (*empty) return ACLNN_SUCCESS;
  int64_t lo = t->offset, hi = t->offset;
  for (size_t i = 0; i < t->view.size(); ++i) {
    int64_t span;
    if (__builtin_mul_overflow(t->view[i] - 1, t->strides[i], &span) ||
        __builtin_add_overflow(span > 0 ? hi : lo, span, span > 0 ? &hi : &lo))
      return overflow();
  }
  if (lo < 0) {
    std::ostringstream os;
    os << name << ": ViewShape overlap: the view reaches elements [" << lo << ", " << hi
       << "], before the start of its storage";
    return invalid(op, os.str());
  }
  if (__builtin_mul_overflow(static_cast<size_t>(std::max(storage, hi + 1)), element_size(dt), bytes)) return overflow();
  return ACLNN_SUCCESS;
}
}  // namespace

namespace {
aclnnStatus check_tensor_of(const char* op, const char* name, const aclTensor* t, bool weight);
}
aclnnStatus check_tensor(const char* op, const char* name, const aclTensor* t) {
  return check_tensor_of(op, name, t, false);
}
aclnnStatus check_weight_tensor(const char* op, const char* name, const aclTensor* t) {
  return check_tensor_of(op, name, t, true);
}

namespace {
aclnnStatus check_tensor_of(const char* op, const char* name, const aclTensor* t, bool weight) {
  if (!t) return null_arg(op, name);
  if (!detail::descriptor_live(t)) return invalid(op, std::string(name) + " is not a live aclTensor (destroyed?)");
  DType dt;
  if (!dtype_from_acl(t->dtype, &dt))
    return invalid(op, std::string(name) + " has data type " + acl_dtype_name(t->dtype) + " (" +
                           std::to_string(t->dtype) + "), which the emulated NPU does not support");
  if (aclnnStatus s = check_format(op, name, t, weight)) return s;
  size_t bytes = 0;
  bool empty = false;
  if (aclnnStatus s = check_extent(op, name, t, dt, &bytes, &empty)) return s;
  if (empty) return ACLNN_SUCCESS;
  int dev = detail::device_of(t->data);
  if (dev < 0)
    return invalid(op, std::string(name) + ": tensor data is not device memory (a host pointer where a device pointer "
                                           "is expected)");
  if (!detail::translate_planned(t->data, bytes, dev))
    return invalid(op, std::string(name) + ": tensor storage of " + std::to_string(bytes) +
                           " bytes is not inside one live aclrtMalloc allocation");
  return ACLNN_SUCCESS;
}
}  // namespace

aclnnStatus check_dtype(const char* op, const char* name, const aclTensor* t, std::initializer_list<DType> allowed) {
  DType dt = dtype_of(t);
  for (DType a : allowed)
    if (a == dt) return ACLNN_SUCCESS;
  std::ostringstream os;
  os << name << " has dtype " << dt << ", expected one of";
  for (DType a : allowed) os << " " << a;
  return invalid(op, os.str());
}

aclnnStatus check_shape(const char* op, const char* name, const aclTensor* t, IntArrayRef expected) {
  if (shape_of(t) == expected) return ACLNN_SUCCESS;
  std::ostringstream os;
  os << name << " has shape " << shape_of(t) << ", expected " << expected;
  return invalid(op, os.str());
}

int64_t reach_elements(const aclTensor* t) {
  int64_t storage = 1, hi = t->offset;
  for (int64_t d : t->storage)
    if (d < 0 || __builtin_mul_overflow(storage, d, &storage)) return -1;
  for (size_t i = 0; i < t->view.size(); ++i) {
    if (t->view[i] == 0) return storage;
    int64_t span;
    if (__builtin_mul_overflow(t->view[i] - 1, t->strides[i], &span)) return -1;
    if (span > 0 && __builtin_add_overflow(hi, span, &hi)) return -1;
  }
  return std::max(storage, hi + 1);
}

IntArrayRef shape_of(const aclTensor* t) { return IntArrayRef(t->view); }
IntArrayRef strides_of(const aclTensor* t) { return IntArrayRef(t->strides); }
bool is_contiguous(const aclTensor* t) { return is_contiguous_layout(shape_of(t), strides_of(t)); }
DType dtype_of(const aclTensor* t) {
  DType d = DType::Float32;
  dtype_from_acl(t->dtype, &d);
  return d;
}
double scalar_value(const aclScalar* s) { return s->d; }
int64_t scalar_int_value(const aclScalar* s) {
  return scalar_is_floating(s) ? saturating_int64(s->d) : s->i;
}
bool scalar_is_floating(const aclScalar* s) {
  return s->dtype == ACL_FLOAT || s->dtype == ACL_DOUBLE || s->dtype == ACL_FLOAT16 || s->dtype == ACL_BF16;
}
bool scalar_is_bool(const aclScalar* s) { return s->dtype == ACL_BOOL; }
std::vector<int64_t> int_array(const aclIntArray* a) { return a ? a->values : std::vector<int64_t>(); }
std::vector<bool> bool_array(const aclBoolArray* a) { return a ? a->values : std::vector<bool>(); }
std::vector<const aclTensor*> tensor_list(const aclTensorList* l) {
  std::vector<const aclTensor*> v;
  if (l)
    for (aclTensor* t : l->tensors) v.push_back(t);
  return v;
}

cpu::Strided expand_to(const cpu::Strided& s, IntArrayRef shape) {
  cpu::Strided r(s.data, s.dtype, DimVector(shape), DimVector(shape.size(), 0));
  size_t lead = shape.size() - s.sizes.size();
  for (size_t i = 0; i < s.sizes.size(); ++i)
    if (s.sizes[i] == shape[lead + i]) r.strides[lead + i] = s.strides[i];
  return r;
}

}  // namespace npu
}  // namespace ember
