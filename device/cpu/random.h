// ember: counter-based random numbers (Philox4x32-10). Element i of a request depends only on
// (seed, offset + i), so values do not depend on thread count or device.
#pragma once

#include <cstdint>

#include "ember/device/cpu/strided.h"

namespace ember {
namespace cpu {

enum class Distribution : uint8_t { Uniform, Normal, Integer };
struct RandomSpec {
  Distribution dist = Distribution::Uniform;
  double a = 0.0, b = 1.0;  // uniform [a, b); normal mean a, std b
  int64_t lo = 0, hi = 1;   // integer [lo, hi), lo < hi: any int64 range, drawn in 64-bit arithmetic
  uint64_t seed = 0;
  uint64_t offset = 0;      // counter of element 0
};

// Fills dst (any dtype, any strides) element i (row-major order) from counter offset + i.
void fill_random(const Strided& dst, const RandomSpec& spec);

// Dropout's bit mask, CANN's layout: bytes(n) = align(n, 128) / 8 bytes; bit j of byte k (least
// significant first) keeps element 8k + j, kept when the uniform u of counter offset + i (the
// value uniform_ draws there) is >= p. Padding bits are 0.
int64_t dropout_mask_bytes(int64_t n);
void dropout_mask(uint8_t* mask, int64_t n, double p, uint64_t seed, uint64_t offset);
// out = in / (1 - p) where the mask keeps an element, else 0 (p = 1: all 0); any dtypes and
// strides, element i in row-major order.
void dropout_apply(const Strided& out, const Strided& in, const uint8_t* mask, double p);

// randperm's permutation of 0 .. n - 1 for (seed, offset): a Fisher-Yates shuffle (core/shuffle.h)
// driven by mt19937_64 seeded with seed * 0x9E3779B97F4A7C15 ^ offset, sequential. perm: n int64.
void randperm(int64_t* perm, int64_t n, uint64_t seed, uint64_t offset);
// The longest permutation a dtype holds exactly (0 .. n - 1 all representable): 256 for uint8,
// 2049 for float16, 2^24 + 1 for float32, ...; 0 for bool.
int64_t randperm_limit(DType dtype);

// The raw generator, exposed for tests: four 32-bit outputs for (seed, counter).
void philox4x32(uint64_t seed, uint64_t counter, uint32_t out[4]);

}  // namespace cpu
}  // namespace ember
