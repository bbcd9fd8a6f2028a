// The vector instructions of kernel_operator.h over UB buffers: float math with Eigen's
// vectorised arrays; half and bfloat16_t go through float in blocks of kBlock (rounded to nearest
// even on the way back); integers wrap as the hardware's do.
#include "ember/device/cpu/eigen_util.h"  // first: see the note there

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "ember/core/half.h"
#include "ember/device/cpu/strided.h"
#include "ember/device/npu/ascendc/include/ember_ascendc/abi.h"

namespace ember {
namespace npu {
namespace ascendc {
namespace {

constexpr uint64_t kBlock = 1024;
using cpu::ArrIn;
using cpu::ArrOut;

DType storage_dtype(int code) {
  switch (code) {
    case EMBER_ASC_F16: return DType::Float16;
    case EMBER_ASC_BF16: return DType::BFloat16;
    case EMBER_ASC_F32: return DType::Float32;
    case EMBER_ASC_I32: return DType::Int32;
    case EMBER_ASC_I8: return DType::Int8;
    case EMBER_ASC_U8: return DType::UInt8;
    case EMBER_ASC_I64: return DType::Int64;
    default: throw std::invalid_argument("ember Ascend C: dtype code " + std::to_string(code) + " has no float path");
  }
}
bool is_float(int code) { return code == EMBER_ASC_F32 || code == EMBER_ASC_F16 || code == EMBER_ASC_BF16; }
size_t size_of(int code) {
  switch (code) {
    case EMBER_ASC_F32: case EMBER_ASC_I32: case EMBER_ASC_U32: return 4;
    case EMBER_ASC_F16: case EMBER_ASC_BF16: case EMBER_ASC_I16: case EMBER_ASC_U16: return 2;
    case EMBER_ASC_I64: return 8;
    default: return 1;
  }
}

void binary_f32(int op, float* d, const float* a, const float* b, int64_t n) {
  ArrOut<float> o(d, n);
  ArrIn<float> x(a, n), y(b, n);
  switch (op) {
    case EMBER_ASC_ADD: o = x + y; break;
    case EMBER_ASC_SUB: o = x - y; break;
    case EMBER_ASC_MUL: o = x * y; break;
    case EMBER_ASC_DIV: o = x / y; break;
    case EMBER_ASC_MAX: o = x.max(y); break;
    case EMBER_ASC_MIN: o = x.min(y); break;
    default: throw std::invalid_argument("ember Ascend C: binary op " + std::to_string(op) + " on floats");
  }
}
void scalar_f32(int op, float* d, const float* a, float s, int64_t n) {
  ArrOut<float> o(d, n);
  ArrIn<float> x(a, n);
  switch (op) {
    case EMBER_ASC_ADD: o = x + s; break;
    case EMBER_ASC_MUL: o = x * s; break;
    case EMBER_ASC_MAX: o = x.max(s); break;
    case EMBER_ASC_MIN: o = x.min(s); break;
    default: throw std::invalid_argument("ember Ascend C: scalar op " + std::to_string(op));
  }
}
void unary_f32(int op, float* d, const float* a, int64_t n) {
  ArrOut<float> o(d, n);
  ArrIn<float> x(a, n);
  switch (op) {
    case EMBER_ASC_EXP: o = x.exp(); break;
    case EMBER_ASC_LN: o = x.log(); break;
    case EMBER_ASC_ABS: o = x.abs(); break;
    case EMBER_ASC_SQRT: o = x.sqrt(); break;
    case EMBER_ASC_RSQRT: o = x.rsqrt(); break;
    case EMBER_ASC_RECIPROCAL: o = x.inverse(); break;
    case EMBER_ASC_RELU: o = x.max(0.0f); break;
    case EMBER_ASC_SILU: o = x * x.logistic(); break;
    case EMBER_ASC_SIGMOID: o = x.logistic(); break;
    case EMBER_ASC_TANH: o = x.tanh(); break;
    // CANN's Gelu: x * sigmoid(1.5957691 * (x + 0.044715 x^3)), the tanh form
    case EMBER_ASC_GELU: o = x * (1.5957691216057308f * (x + 0.044715f * x * x * x)).logistic(); break;
    case EMBER_ASC_NEG: o = -x; break;
    default: throw std::invalid_argument("ember Ascend C: unary op " + std::to_string(op) + " on floats");
  }
}

// half / bfloat16: through float, a block at a time.
template <class F>
void via_float(int code, void* dst, std::initializer_list<const void*> srcs, uint64_t n, F&& f) {
  const DType t = storage_dtype(code);
  const size_t es = size_of(code);
  float in[2][kBlock], out[kBlock];
  for (uint64_t i = 0; i < n; i += kBlock) {
    const int64_t m = static_cast<int64_t>(std::min(kBlock, n - i));
    int k = 0;
    for (const void* s : srcs) cpu::convert(static_cast<const char*>(s) + i * es, t, 1, in[k++], DType::Float32, 1, m);
    f(out, in[0], in[1], m);
    cpu::convert(out, DType::Float32, 1, static_cast<char*>(dst) + i * es, t, 1, m);
  }
}

template <class I>
void binary_int(int op, I* d, const I* a, const I* b, uint64_t n) {
  using U = std::make_unsigned_t<I>;
  for (uint64_t i = 0; i < n; ++i) {
    const I x = a[i], y = b[i];
    switch (op) {
      case EMBER_ASC_ADD: d[i] = static_cast<I>(static_cast<U>(x) + static_cast<U>(y)); break;
      case EMBER_ASC_SUB: d[i] = static_cast<I>(static_cast<U>(x) - static_cast<U>(y)); break;
      case EMBER_ASC_MUL: d[i] = static_cast<I>(static_cast<U>(x) * static_cast<U>(y)); break;
      case EMBER_ASC_MAX: d[i] = x > y ? x : y; break;
      case EMBER_ASC_MIN: d[i] = x < y ? x : y; break;
      case EMBER_ASC_AND: d[i] = static_cast<I>(x & y); break;
      case EMBER_ASC_OR: d[i] = static_cast<I>(x | y); break;
      default: throw std::invalid_argument("ember Ascend C: binary op " + std::to_string(op) + " on integers");
    }
  }
}

template <class Fn>
void by_int_type(int code, Fn&& fn) {
  switch (code) {
    case EMBER_ASC_I32: fn(int32_t()); break;
    case EMBER_ASC_I16: fn(int16_t()); break;
    case EMBER_ASC_U16: fn(uint16_t()); break;
    case EMBER_ASC_U32: fn(uint32_t()); break;
    default: throw std::invalid_argument("ember Ascend C: dtype code " + std::to_string(code));
  }
}

}  // namespace
}  // namespace ascendc
}  // namespace npu
}  // namespace ember

using namespace ember::npu::ascendc;

extern "C" void ember_ascendc_binary(int op, int dtype, void* dst, const void* a, const void* b, uint64_t n) {
  if (n == 0) return;
  if (dtype == EMBER_ASC_F32) return binary_f32(op, static_cast<float*>(dst), static_cast<const float*>(a),
                                                static_cast<const float*>(b), static_cast<int64_t>(n));
  if (is_float(dtype))
    return via_float(dtype, dst, {a, b}, n, [op](float* o, const float* x, const float* y, int64_t m) {
      binary_f32(op, o, x, y, m);
    });
  by_int_type(dtype, [&](auto t) {
    using I = decltype(t);
    binary_int<I>(op, static_cast<I*>(dst), static_cast<const I*>(a), static_cast<const I*>(b), n);
  });
}

extern "C" void ember_ascendc_scalar(int op, int dtype, void* dst, const void* a, double s, uint64_t n) {
  if (n == 0) return;
  const float f = static_cast<float>(s);
  if (dtype == EMBER_ASC_F32)
    return scalar_f32(op, static_cast<float*>(dst), static_cast<const float*>(a), f, static_cast<int64_t>(n));
  if (is_float(dtype))
    return via_float(dtype, dst, {a}, n, [op, f](float* o, const float* x, const float*, int64_t m) {
      scalar_f32(op, o, x, f, m);
    });
  by_int_type(dtype, [&](auto t) {
    using I = decltype(t);
    const I v = static_cast<I>(s);
    const I* x = static_cast<const I*>(a);
    I* d = static_cast<I*>(dst);
    for (uint64_t i = 0; i < n; ++i) {
      const I y[1] = {v};
      binary_int<I>(op, d + i, x + i, y, 1);
    }
  });
}

extern "C" void ember_ascendc_unary(int op, int dtype, void* dst, const void* a, uint64_t n) {
  if (n == 0) return;
  if (dtype == EMBER_ASC_F32)
    return unary_f32(op, static_cast<float*>(dst), static_cast<const float*>(a), static_cast<int64_t>(n));
  if (is_float(dtype))
    return via_float(dtype, dst, {a}, n, [op](float* o, const float* x, const float*, int64_t m) { unary_f32(op, o, x, m); });
  by_int_type(dtype, [&](auto t) {
    using I = decltype(t);
    const I* x = static_cast<const I*>(a);
    I* d = static_cast<I*>(dst);
    for (uint64_t i = 0; i < n; ++i) {
      if (op == EMBER_ASC_RELU) d[i] = x[i] > 0 ? x[i] : I(0);
      else if (op == EMBER_ASC_NOT) d[i] = static_cast<I>(~x[i]);
      else throw std::invalid_argument("ember Ascend C: unary op " + std::to_string(op) + " on integers");
    }
  });
}
