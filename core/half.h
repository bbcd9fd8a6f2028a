// ember: 16-bit floating point storage types.
//
// Half and BFloat16 are bit-compatible with Eigen::half / Eigen::bfloat16 (a uint16_t holding the
// IEEE binary16 / bfloat16 pattern), so kernels may reinterpret buffers as Eigen's types; this
// header stays Eigen-free so user code does not pay Eigen's compile time. Narrowing from float
// rounds to nearest even (tests/test_dtype.cpp checks every pattern against Eigen).
#pragma once

#include <cstdint>
#include <cstring>
#include <ostream>

namespace ember {

namespace detail {
inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float f32_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// float -> binary16, round to nearest even; NaN stays NaN (quiet), overflow -> inf.
inline uint16_t float_to_half_bits(float f) {
  uint32_t x = f32_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return static_cast<uint16_t>(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520
  if (ax < 0x38800000u) {
    // Subnormal half (or zero): add 0.5 (as a float) so the FPU performs the RNE shift for us.
    float v = f32_from_bits(ax) + 0.5f;
    return static_cast<uint16_t>(sign | (f32_bits(v) - 0x3f000000u));
  }
  uint32_t mant_odd = (ax >> 13) & 1u;
  ax += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
  return static_cast<uint16_t>(sign | (ax >> 13));
}

inline float half_bits_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t em = h & 0x7fffu;
  if (em >= 0x7c00u) return f32_from_bits(sign | 0x7f800000u | (static_cast<uint32_t>(em & 0x3ffu) << 13));
  if (em < 0x0400u) {  // zero or subnormal: exact via float arithmetic
    float v = static_cast<float>(em) * 5.9604644775390625e-08f;  // 2^-24
    return sign ? -v : v;
  }
  return f32_from_bits(sign | ((em + 0x1c000u) << 13));  // rebias (112 << 10)
}

// float -> bfloat16, round to nearest even; NaN stays a quiet NaN.
inline uint16_t float_to_bf16_bits(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}
inline float bf16_bits_to_float(uint16_t b) { return f32_from_bits(static_cast<uint32_t>(b) << 16); }
}  // namespace detail

struct Half {
  uint16_t x = 0;
  Half() = default;
  Half(float f) : x(detail::float_to_half_bits(f)) {}  // NOLINT: implicit like Eigen::half
  explicit Half(double d) : Half(static_cast<float>(d)) {}
  operator float() const { return detail::half_bits_to_float(x); }  // NOLINT
  static Half from_bits(uint16_t bits) {
    Half h;
    h.x = bits;
    return h;
  }
};

struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  BFloat16(float f) : x(detail::float_to_bf16_bits(f)) {}  // NOLINT
  explicit BFloat16(double d) : BFloat16(static_cast<float>(d)) {}
  operator float() const { return detail::bf16_bits_to_float(x); }  // NOLINT
  static BFloat16 from_bits(uint16_t bits) {
    BFloat16 b;
    b.x = bits;
    return b;
  }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit storage types");

inline std::ostream& operator<<(std::ostream& os, Half h) { return os << static_cast<float>(h); }
inline std::ostream& operator<<(std::ostream& os, BFloat16 b) { return os << static_cast<float>(b); }

}  // namespace ember
