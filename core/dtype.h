// ember: element types, their C++ storage types and PyTorch's type promotion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

#include "ember/core/half.h"

namespace ember {

// New dtypes go at the end: the values are stable (the profiler and fuzz corpora record them).
enum class DType : uint8_t { Float32, Float64, Float16, BFloat16, Int64, Int32, Bool, UInt8, Int8, Int16 };
constexpr int kNumDTypes = 10;

constexpr DType kFloat32 = DType::Float32;
constexpr DType kFloat64 = DType::Float64;
constexpr DType kFloat16 = DType::Float16;
constexpr DType kBFloat16 = DType::BFloat16;
constexpr DType kInt64 = DType::Int64;
constexpr DType kInt32 = DType::Int32;
constexpr DType kBool = DType::Bool;
constexpr DType kUInt8 = DType::UInt8;
constexpr DType kInt8 = DType::Int8;
constexpr DType kInt16 = DType::Int16;
constexpr DType kFloat = kFloat32;
constexpr DType kDouble = kFloat64;
constexpr DType kHalf = kFloat16;
constexpr DType kLong = kInt64;
constexpr DType kInt = kInt32;
constexpr DType kByte = kUInt8;  // libtorch's names for uint8 and int8
constexpr DType kChar = kInt8;
constexpr DType kShort = kInt16;

constexpr size_t element_size(DType t) {
  switch (t) {
    case DType::Float64:
    case DType::Int64: return 8;
    case DType::Float32:
    case DType::Int32: return 4;
    case DType::Float16:
    case DType::BFloat16:
    case DType::Int16: return 2;
    case DType::Bool:
    case DType::UInt8:
    case DType::Int8: return 1;
  }
  return 0;
}
constexpr bool is_floating_point(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}
constexpr bool is_integral(DType t, bool include_bool = false) {
  return t == DType::Int64 || t == DType::Int32 || t == DType::Int16 || t == DType::UInt8 || t == DType::Int8 ||
         (include_bool && t == DType::Bool);
}
constexpr bool is_reduced_float(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

// "float32", "bfloat16", ... (PyTorch's names without the torch. prefix).
const char* dtype_name(DType t);
std::ostream& operator<<(std::ostream& os, DType t);
// Parses the names above and the safetensors codes ("F32", "BF16", ...); throws DTypeError.
DType dtype_from_string(const std::string& s);

// The dtype produced by combining two tensors of the same priority (PyTorch's promote_types):
// bool < integers < floats; f16 + bf16 -> f32; between integers the wider one, and uint8 + int8
// -> int16.
DType promote_types(DType a, DType b);

// The rules every layer applies (the framework's ops and the emulated NPU's aclnn ops alike):
// A dtype's category: bool 0 < integers 1 < floats 2.
constexpr int dtype_category(DType t) { return t == DType::Bool ? 0 : is_integral(t) ? 1 : 2; }
// Whether a result of dtype `from` may be written into a tensor of dtype `to` (in-place and out
// forms): never to a lower category (float -> int, int -> bool), as PyTorch's can_cast.
constexpr bool can_cast(DType from, DType to) { return dtype_category(from) <= dtype_category(to); }
// A lower-priority operand (a 0-d tensor against tensors with dims, a Scalar against tensors)
// only raises the category, never the width within one (c10's combine_categories): int32 tensor
// + float scalar -> float32 (the scalar's dtype is the default float), float16 tensor + float
// scalar -> float16.
inline DType combine_categories(DType higher, DType lower) {
  return dtype_category(lower) > dtype_category(higher) ? promote_types(higher, lower) : higher;
}

// The default floating dtype (float32), used when integer inputs meet float ops.
constexpr DType default_float_dtype() { return DType::Float32; }

// Map C++ types to DTypes and back.
template <class T>
struct CppTypeToDType;
#define EMBER_MAP_DTYPE(T, D) \
  template <>                 \
  struct CppTypeToDType<T> {  \
    static constexpr DType value = D; \
  };
EMBER_MAP_DTYPE(float, DType::Float32)
EMBER_MAP_DTYPE(double, DType::Float64)
EMBER_MAP_DTYPE(Half, DType::Float16)
EMBER_MAP_DTYPE(BFloat16, DType::BFloat16)
EMBER_MAP_DTYPE(int64_t, DType::Int64)
EMBER_MAP_DTYPE(int32_t, DType::Int32)
EMBER_MAP_DTYPE(bool, DType::Bool)
EMBER_MAP_DTYPE(uint8_t, DType::UInt8)
EMBER_MAP_DTYPE(int8_t, DType::Int8)
EMBER_MAP_DTYPE(int16_t, DType::Int16)
#undef EMBER_MAP_DTYPE
template <class T>
constexpr DType dtype_of = CppTypeToDType<T>::value;

// EMBER_DISPATCH_DTYPE(dt, "op", [&](auto tag) { using T = decltype(tag); ... });
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Float16: return f(Half{});
    case DType::BFloat16: return f(BFloat16{});
    case DType::Int64: return f(int64_t{});
    case DType::Int32: return f(int32_t{});
    case DType::Bool: return f(bool{});
    case DType::UInt8: return f(uint8_t{});
    case DType::Int8: return f(int8_t{});
    case DType::Int16: return f(int16_t{});
  }
  return f(float{});
}

// double -> int64 without undefined behaviour: truncates, NaN gives 0 (CANN's Cast rule, as
// tensor conversions do), values beyond the range saturate.
inline int64_t saturating_int64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(v);
}

}  // namespace ember
