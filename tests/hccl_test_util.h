// Helpers for the HCCL tests (tests/test_hccl.cpp in one process, tests/mpi/ under mpirun): the
// data types, small integer values exact in every type, and the reductions computed on the host.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"

namespace hccl_test {

struct TypeInfo {
  HcclDataType type;
  const char* name;
  size_t size;
  bool is_signed;
};
inline const TypeInfo kTypes[] = {
    {HCCL_DATA_TYPE_INT8, "int8", 1, true},     {HCCL_DATA_TYPE_INT16, "int16", 2, true},
    {HCCL_DATA_TYPE_INT32, "int32", 4, true},   {HCCL_DATA_TYPE_FP16, "fp16", 2, true},
    {HCCL_DATA_TYPE_FP32, "fp32", 4, true},     {HCCL_DATA_TYPE_INT64, "int64", 8, true},
    {HCCL_DATA_TYPE_UINT64, "uint64", 8, false}, {HCCL_DATA_TYPE_UINT8, "uint8", 1, false},
    {HCCL_DATA_TYPE_UINT16, "uint16", 2, false}, {HCCL_DATA_TYPE_UINT32, "uint32", 4, false},
    {HCCL_DATA_TYPE_FP64, "fp64", 8, true},     {HCCL_DATA_TYPE_BFP16, "bf16", 2, true}};

// Small integers, exact in every type: encoded to / decoded from the type's bytes.
inline void encode(HcclDataType t, double v, void* p) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: *static_cast<int8_t*>(p) = static_cast<int8_t>(v); break;
    case HCCL_DATA_TYPE_INT16: *static_cast<int16_t*>(p) = static_cast<int16_t>(v); break;
    case HCCL_DATA_TYPE_INT32: *static_cast<int32_t*>(p) = static_cast<int32_t>(v); break;
    case HCCL_DATA_TYPE_INT64: *static_cast<int64_t*>(p) = static_cast<int64_t>(v); break;
    case HCCL_DATA_TYPE_UINT8: *static_cast<uint8_t*>(p) = static_cast<uint8_t>(v); break;
    case HCCL_DATA_TYPE_UINT16: *static_cast<uint16_t*>(p) = static_cast<uint16_t>(v); break;
    case HCCL_DATA_TYPE_UINT32: *static_cast<uint32_t*>(p) = static_cast<uint32_t>(v); break;
    case HCCL_DATA_TYPE_UINT64: *static_cast<uint64_t*>(p) = static_cast<uint64_t>(v); break;
    case HCCL_DATA_TYPE_FP32: *static_cast<float*>(p) = static_cast<float>(v); break;
    case HCCL_DATA_TYPE_FP64: *static_cast<double*>(p) = v; break;
    case HCCL_DATA_TYPE_FP16: *static_cast<uint16_t*>(p) = aclFloatToFloat16(static_cast<float>(v)); break;
    case HCCL_DATA_TYPE_BFP16: {
      float f = static_cast<float>(v);  // small integers: exact in bf16, the top half of the fp32 bits
      uint32_t u;
      std::memcpy(&u, &f, 4);
      *static_cast<uint16_t*>(p) = static_cast<uint16_t>(u >> 16);
      break;
    }
    default: break;
  }
}
inline double decode(HcclDataType t, const void* p) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: return *static_cast<const int8_t*>(p);
    case HCCL_DATA_TYPE_INT16: return *static_cast<const int16_t*>(p);
    case HCCL_DATA_TYPE_INT32: return *static_cast<const int32_t*>(p);
    case HCCL_DATA_TYPE_INT64: return static_cast<double>(*static_cast<const int64_t*>(p));
    case HCCL_DATA_TYPE_UINT8: return *static_cast<const uint8_t*>(p);
    case HCCL_DATA_TYPE_UINT16: return *static_cast<const uint16_t*>(p);
    case HCCL_DATA_TYPE_UINT32: return *static_cast<const uint32_t*>(p);
    case HCCL_DATA_TYPE_UINT64: return static_cast<double>(*static_cast<const uint64_t*>(p));
    case HCCL_DATA_TYPE_FP32: return *static_cast<const float*>(p);
    case HCCL_DATA_TYPE_FP64: return *static_cast<const double*>(p);
    case HCCL_DATA_TYPE_FP16: return aclFloat16ToFloat(*static_cast<const uint16_t*>(p));
    case HCCL_DATA_TYPE_BFP16: {
      uint32_t u = static_cast<uint32_t>(*static_cast<const uint16_t*>(p)) << 16;
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
    default: return 0;
  }
}

// Rank r's element i: in [-3, 3] (signed types) or [0, 3], so every sum and product of two is
// exact in every type.
inline double value(const TypeInfo& t, int r, size_t i) {
  const int v = static_cast<int>((i * 7 + static_cast<size_t>(r) * 3 + i / 5) % 7) - 3;
  return t.is_signed ? v : (v < 0 ? -v : v);
}

inline double combine(HcclReduceOp op, double a, double b) {
  switch (op) {
    case HCCL_REDUCE_SUM: return a + b;
    case HCCL_REDUCE_PROD: return a * b;
    case HCCL_REDUCE_MAX: return a > b ? a : b;
    default: return a < b ? a : b;
  }
}


// rank r's n values, encoded.
inline std::vector<char> host_values(const TypeInfo& t, int r, size_t n) {
  std::vector<char> h(n * t.size);
  for (size_t i = 0; i < n; ++i) encode(t.type, value(t, r, i), h.data() + i * t.size);
  return h;
}

}  // namespace hccl_test
