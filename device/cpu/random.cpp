#include "ember/device/cpu/random.h"

#include <cmath>
#include <random>
#include <vector>

#include "ember/core/shuffle.h"
#include "ember/device/parallel.h"
#include "ember/core/error.h"

namespace ember {
namespace cpu {

void philox4x32(uint64_t seed, uint64_t counter, uint32_t out[4]) {
  // Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC'11), Philox4x32-10.
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(0xD2511F53u) * c0;
    uint64_t p1 = uint64_t(0xCD9E8D57u) * c2;
    uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    uint32_t n1 = static_cast<uint32_t>(p1);
    uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    uint32_t n3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

namespace {
// 53-bit uniform in [0, 1) from two 32-bit words.
inline double u01(uint32_t hi, uint32_t lo) {
  return static_cast<double>((static_cast<uint64_t>(hi) << 21) ^ (lo >> 11)) * (1.0 / 9007199254740992.0);
}

inline double sample(const RandomSpec& s, uint64_t i) {
  uint32_t r[4];
  philox4x32(s.seed, s.offset + i, r);
  switch (s.dist) {
    case Distribution::Uniform: return s.a + (s.b - s.a) * u01(r[0], r[1]);
    case Distribution::Normal: {
      // Box-Muller on two independent uniforms; u1 in (0, 1].
      double u1 = 1.0 - u01(r[0], r[1]);
      double u2 = u01(r[2], r[3]);
      return s.a + s.b * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    }
    case Distribution::Integer:
      return 0.0;  // sample_int
  }
  return 0.0;
}

// An integer in [lo, hi): the range and the sum wrap in uint64 (hi - lo may be up to 2^64 - 1).
inline int64_t sample_int(const RandomSpec& s, uint64_t i) {
  uint32_t r[4];
  philox4x32(s.seed, s.offset + i, r);
  const uint64_t range = static_cast<uint64_t>(s.hi) - static_cast<uint64_t>(s.lo);
  const uint64_t bits = (static_cast<uint64_t>(r[0]) << 32) | r[1];
  return static_cast<int64_t>(static_cast<uint64_t>(s.lo) + bits % range);
}
}  // namespace

void fill_random(const Strided& dst, const RandomSpec& spec) {
  int64_t n = dst.numel();
  if (n == 0) return;
  if (spec.dist == Distribution::Integer) {
    EMBER_CHECK_VALUE(spec.hi > spec.lo, "randint: expected low < high, got low=", spec.lo, " high=", spec.hi);
  }
  parallel_for(n, 4096, [&](int64_t begin, int64_t end) {
    constexpr int64_t kBlock = 1024;
    double buf[kBlock];
    int64_t ibuf[kBlock];
    DimVector strides = dst.strides;
    DimVector* sp[1] = {&strides};
    NdCursor cur(dst.sizes, sp, 1, begin);
    int64_t pos = begin;
    while (pos < end) {
      int64_t off;
      int64_t len = cur.next(std::min<int64_t>(kBlock, end - pos), &off);
      int64_t stride = dst.sizes.empty() ? 0 : strides.back();
      size_t esz = element_size(dst.dtype);
      if (spec.dist == Distribution::Integer) {
        for (int64_t j = 0; j < len; ++j) ibuf[j] = sample_int(spec, static_cast<uint64_t>(pos + j));
        convert(ibuf, DType::Int64, 1, dst.bytes() + off * static_cast<int64_t>(esz), dst.dtype, stride, len);
      } else {
        for (int64_t j = 0; j < len; ++j) buf[j] = sample(spec, static_cast<uint64_t>(pos + j));
        convert(buf, DType::Float64, 1, dst.bytes() + off * static_cast<int64_t>(esz), dst.dtype, stride, len);
      }
      pos += len;
    }
  });
}

int64_t dropout_mask_bytes(int64_t n) { return (n + 127) / 128 * 16; }

void dropout_mask(uint8_t* mask, int64_t n, double p, uint64_t seed, uint64_t offset) {
  const int64_t bytes = dropout_mask_bytes(n);
  parallel_for(bytes, 4096, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      uint8_t v = 0;
      for (int64_t j = 0; j < 8 && k * 8 + j < n; ++j) {
        uint32_t r[4];
        philox4x32(seed, offset + static_cast<uint64_t>(k * 8 + j), r);
        if (u01(r[0], r[1]) >= p) v = static_cast<uint8_t>(v | (1u << j));
      }
      mask[k] = v;
    }
  });
}

void dropout_apply(const Strided& out, const Strided& in, const uint8_t* mask, double p) {
  const int64_t n = in.numel();
  std::vector<double> v(static_cast<size_t>(n));
  copy(Strided(v.data(), DType::Float64, in.sizes, contiguous_strides(in.sizes)), in);
  const double scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = (mask[i / 8] >> (i % 8)) & 1u ? v[static_cast<size_t>(i)] * scale : 0.0;
  copy(out, Strided(v.data(), DType::Float64, in.sizes, contiguous_strides(in.sizes)));
}

int64_t randperm_limit(DType dtype) {
  switch (dtype) {
    case DType::Int64: return INT64_MAX;
    case DType::Int32: return int64_t(1) << 31;
    case DType::UInt8: return 256;
    case DType::Int8: return 128;
    case DType::Int16: return 32768;
    case DType::Float16: return 2049;  // 11 significant bits: every integer up to 2^11, n - 1 = 2048
    case DType::BFloat16: return 257;
    case DType::Float32: return (int64_t(1) << 24) + 1;
    case DType::Float64: return (int64_t(1) << 53) + 1;
    case DType::Bool: return 0;
  }
  return 0;
}

void randperm(int64_t* perm, int64_t n, uint64_t seed, uint64_t offset) {
  std::mt19937_64 gen(seed * 0x9E3779B97F4A7C15ull ^ offset);
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  shuffle_in_place(perm, static_cast<size_t>(n), gen);
}

}  // namespace cpu
}  // namespace ember
