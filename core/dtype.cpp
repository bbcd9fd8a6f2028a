#include "ember/core/dtype.h"

#include "ember/core/error.h"

namespace ember {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Int64: return "int64";
    case DType::Int32: return "int32";
    case DType::Bool: return "bool";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::Int16: return "int16";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

DType dtype_from_string(const std::string& s) {
  struct Entry {
    const char* name;
    const char* code;
    DType t;
  };
  static const Entry kTable[] = {
      {"float32", "F32", DType::Float32}, {"float64", "F64", DType::Float64},
      {"float16", "F16", DType::Float16}, {"bfloat16", "BF16", DType::BFloat16},
      {"int64", "I64", DType::Int64},     {"int32", "I32", DType::Int32},
      {"bool", "BOOL", DType::Bool},     {"uint8", "U8", DType::UInt8},
      {"int8", "I8", DType::Int8},       {"int16", "I16", DType::Int16},
  };
  for (const auto& e : kTable)
    if (s == e.name || s == e.code) return e.t;
  EMBER_THROW(DTypeError, "dtype_from_string: unknown dtype '", s,
              "'; expected one of float32, float64, float16, bfloat16, int64, int32, int16, uint8, "
              "int8, bool (or F32, F64, F16, BF16, I64, I32, I16, U8, I8, BOOL)");
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // Categories: bool (0) < integer (1) < floating (2). Within floats, f16 and bf16 meet at f32.
  int ca = dtype_category(a), cb = dtype_category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 1) {
    // The wider integer holds both; uint8 + int8 (the only pair of one width) needs int16.
    if (element_size(a) != element_size(b)) return element_size(a) > element_size(b) ? a : b;
    return DType::Int16;
  }
  // both floating, different
  if (a == DType::Float64 || b == DType::Float64) return DType::Float64;
  return DType::Float32;  // f32 with f16/bf16, or f16 with bf16
}

}  // namespace ember
