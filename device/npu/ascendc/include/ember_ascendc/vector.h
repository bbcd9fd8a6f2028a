// ember's Ascend C: vector compute over LocalTensors. The count forms (first n elements) run on
// libember's vectorised kernels; the mask/repeat forms walk the hardware's repeat geometry (256
// bytes a repeat, 8 blocks of 32 bytes, strides in blocks) and run the same kernels per block.
// Element types per op are those CANN documents for Atlas A2 (910B): e.g. Add takes int16_t, half,
// int32_t and float, not bfloat16_t (cast it to float first).
#pragma once

#include "ember_ascendc/tensor.h"

namespace AscendC {

struct BinaryRepeatParams {
  BinaryRepeatParams() = default;
  BinaryRepeatParams(uint8_t dB, uint8_t s0B, uint8_t s1B, uint8_t dR, uint8_t s0R, uint8_t s1R)
      : dstBlkStride(dB), src0BlkStride(s0B), src1BlkStride(s1B), dstRepStride(dR), src0RepStride(s0R),
        src1RepStride(s1R) {}
  uint8_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1;
  uint8_t dstRepStride = 8, src0RepStride = 8, src1RepStride = 8;
};
struct UnaryRepeatParams {
  UnaryRepeatParams() = default;
  UnaryRepeatParams(uint16_t dB, uint16_t sB, uint8_t dR, uint8_t sR)
      : dstBlkStride(dB), srcBlkStride(sB), dstRepStride(dR), srcRepStride(sR) {}
  uint16_t dstBlkStride = 1, srcBlkStride = 1;
  uint8_t dstRepStride = 8, srcRepStride = 8;
};

namespace detail {

// Which element types an op takes (a bit per dtype code).
constexpr uint32_t bit(int code) { return 1u << code; }
constexpr uint32_t kArith = bit(EMBER_ASC_F32) | bit(EMBER_ASC_F16) | bit(EMBER_ASC_I32) | bit(EMBER_ASC_I16);
constexpr uint32_t kFloat = bit(EMBER_ASC_F32) | bit(EMBER_ASC_F16);
constexpr uint32_t kBits = bit(EMBER_ASC_I16) | bit(EMBER_ASC_U16);

template <class T>
void need_type(const char* call, uint32_t allowed, const char* list) {
  if (!(allowed & bit(TypeOf<T>::kCode)))
    fail(call, TypeOf<T>::kName, " is not an element type of this op on Atlas A2 (it takes ", list, ")");
}
// Ascend C's general address-overlap rule: a source and the destination overlap completely or not at all.
inline void need_apart(const char* call, const char* role, const void* d, uint64_t dn, const void* s, uint64_t sn) {
  const char *a = static_cast<const char*>(d), *b = static_cast<const char*>(s);
  if (a == b || a + dn <= b || b + sn <= a) return;
  fail(call, "dst and ", role, " overlap in part (UB offsets ", ub_offset(a), " and ", ub_offset(b),
       "): a source and the destination must overlap completely or not at all");
}
inline void need_count(const char* call, int64_t n) {
  if (n < 0) fail(call, "count ", n, " is negative");
}

template <class T>
void binary(const char* call, int op, uint32_t allowed, const char* list, const LocalTensor<T>& dst,
            const LocalTensor<T>& a, const LocalTensor<T>& b, int64_t n) {
  need_type<T>(call, allowed, list);
  need_count(call, n);
  T* d = dst.checked(call, "dst", n);
  const T* x = a.checked(call, "src0", n);
  const T* y = b.checked(call, "src1", n);
  need_apart(call, "src0", d, n * sizeof(T), x, n * sizeof(T));
  need_apart(call, "src1", d, n * sizeof(T), y, n * sizeof(T));
  ember_ascendc_binary(op, TypeOf<T>::kCode, d, x, y, static_cast<uint64_t>(n));
}
template <class T>
void unary(const char* call, int op, uint32_t allowed, const char* list, const LocalTensor<T>& dst,
           const LocalTensor<T>& a, int64_t n) {
  need_type<T>(call, allowed, list);
  need_count(call, n);
  T* d = dst.checked(call, "dst", n);
  const T* x = a.checked(call, "src", n);
  need_apart(call, "src", d, n * sizeof(T), x, n * sizeof(T));
  ember_ascendc_unary(op, TypeOf<T>::kCode, d, x, static_cast<uint64_t>(n));
}
template <class T>
double scalar_value(T s) {
  if constexpr (std::is_integral<T>::value) return static_cast<double>(s);
  else return static_cast<double>(static_cast<float>(s));
}

// The active elements of one repeat under mask, as runs [begin, end) of element indices.
template <class T, class F>
void for_mask_runs(const uint64_t* mask, bool bitwise, F&& f) {
  constexpr uint32_t per_repeat = kRepeatBytes / sizeof(T);
  if (!bitwise) {
    if (mask[0] == 0 || mask[0] > per_repeat)
      fail("mask", "mask = ", mask[0], " elements: with ", TypeOf<T>::kName, " a repeat has 1 to ", per_repeat);
    f(0u, static_cast<uint32_t>(mask[0]));
    return;
  }
  uint32_t i = 0;
  while (i < per_repeat && i < 128) {
    auto on = [&](uint32_t k) { return ((mask[k / 64] >> (k % 64)) & 1u) != 0; };
    while (i < per_repeat && i < 128 && !on(i)) ++i;
    uint32_t j = i;
    while (j < per_repeat && j < 128 && on(j)) ++j;
    if (j > i) f(i, j);
    i = j;
  }
}
// Runs op over the repeats: element e of repeat r sits at r * repStride blocks + (e / per_block) *
// blkStride blocks + e % per_block, in each operand; fn(dst, srcs..., n) computes one contiguous run.
template <class T, size_t N, class Fn>
void repeat_walk(const char* call, const LocalTensor<T>* ops[N], const char* const names[N], const uint32_t blk[N],
                 const uint32_t rep[N], const uint64_t* mask, bool bitwise, uint8_t repeats, Fn&& fn) {
  constexpr uint32_t per_block = kBlockBytes / sizeof(T);
  T* base[N];
  for (size_t k = 0; k < N; ++k) base[k] = ops[k]->checked(call, names[k], 0);
  for (uint32_t r = 0; r < repeats; ++r) {
    for_mask_runs<T>(mask, bitwise, [&](uint32_t lo, uint32_t hi) {
      for (uint32_t e = lo; e < hi;) {
        const uint32_t block = e / per_block, end = std::min<uint32_t>(hi, (block + 1) * per_block);
        T* p[N];
        for (size_t k = 0; k < N; ++k) {
          const uint64_t at = (uint64_t(r) * rep[k] + uint64_t(block) * blk[k]) * per_block + e % per_block;
          ops[k]->checked(call, names[k], at + (end - e));
          p[k] = base[k] + at;
        }
        fn(p, end - e);
        e = end;
      }
    });
  }
}

}  // namespace detail

// ---- binary: dst = src0 op src1 ----
#define EMBER_ASC_BINARY(Name, code, allowed, list)                                                              \
  template <class T>                                                                                              \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,  \
                              const int32_t& count) {                                                            \
    detail::binary(#Name, code, allowed, list, dst, src0, src1, count);                                           \
  }                                                                                                               \
  template <class T, bool isSetMask = true>                                                                       \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,  \
                              const uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& p) {     \
    detail::binary_repeat(#Name, code, allowed, list, dst, src0, src1, mask, true, repeatTime, p);                \
  }                                                                                                               \
  template <class T, bool isSetMask = true>                                                                       \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,  \
                              uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& p) {             \
    detail::binary_repeat(#Name, code, allowed, list, dst, src0, src1, &mask, false, repeatTime, p);              \
  }

namespace detail {
template <class T>
void binary_repeat(const char* call, int op, uint32_t allowed, const char* list, const LocalTensor<T>& dst,
                   const LocalTensor<T>& a, const LocalTensor<T>& b, const uint64_t* mask, bool bitwise,
                   uint8_t repeats, const BinaryRepeatParams& p) {
  need_type<T>(call, allowed, list);
  const LocalTensor<T>* ops[3] = {&dst, &a, &b};
  const char* const names[3] = {"dst", "src0", "src1"};
  const uint32_t blk[3] = {p.dstBlkStride, p.src0BlkStride, p.src1BlkStride};
  const uint32_t rep[3] = {p.dstRepStride, p.src0RepStride, p.src1RepStride};
  repeat_walk<T, 3>(call, ops, names, blk, rep, mask, bitwise, repeats,
                    [&](T* const* q, uint32_t n) { ember_ascendc_binary(op, TypeOf<T>::kCode, q[0], q[1], q[2], n); });
}
template <class T>
void unary_repeat(const char* call, int op, uint32_t allowed, const char* list, const LocalTensor<T>& dst,
                  const LocalTensor<T>& a, const uint64_t* mask, bool bitwise, uint8_t repeats,
                  const UnaryRepeatParams& p) {
  need_type<T>(call, allowed, list);
  const LocalTensor<T>* ops[2] = {&dst, &a};
  const char* const names[2] = {"dst", "src"};
  const uint32_t blk[2] = {p.dstBlkStride, p.srcBlkStride};
  const uint32_t rep[2] = {p.dstRepStride, p.srcRepStride};
  repeat_walk<T, 2>(call, ops, names, blk, rep, mask, bitwise, repeats,
                    [&](T* const* q, uint32_t n) { ember_ascendc_unary(op, TypeOf<T>::kCode, q[0], q[1], n); });
}
template <class T>
void scalar_repeat(const char* call, int op, uint32_t allowed, const char* list, const LocalTensor<T>& dst,
                   const LocalTensor<T>& a, double s, const uint64_t* mask, bool bitwise, uint8_t repeats,
                   const UnaryRepeatParams& p) {
  need_type<T>(call, allowed, list);
  const LocalTensor<T>* ops[2] = {&dst, &a};
  const char* const names[2] = {"dst", "src"};
  const uint32_t blk[2] = {p.dstBlkStride, p.srcBlkStride};
  const uint32_t rep[2] = {p.dstRepStride, p.srcRepStride};
  repeat_walk<T, 2>(call, ops, names, blk, rep, mask, bitwise, repeats,
                    [&](T* const* q, uint32_t n) { ember_ascendc_scalar(op, TypeOf<T>::kCode, q[0], q[1], s, n); });
}
}  // namespace detail

EMBER_ASC_BINARY(Add, EMBER_ASC_ADD, detail::kArith, "int16_t, half, int32_t, float")
EMBER_ASC_BINARY(Sub, EMBER_ASC_SUB, detail::kArith, "int16_t, half, int32_t, float")
EMBER_ASC_BINARY(Mul, EMBER_ASC_MUL, detail::kArith, "int16_t, half, int32_t, float")
EMBER_ASC_BINARY(Div, EMBER_ASC_DIV, detail::kFloat, "half, float")
EMBER_ASC_BINARY(Max, EMBER_ASC_MAX, detail::kArith, "int16_t, half, int32_t, float")
EMBER_ASC_BINARY(Min, EMBER_ASC_MIN, detail::kArith, "int16_t, half, int32_t, float")
EMBER_ASC_BINARY(And, EMBER_ASC_AND, detail::kBits, "int16_t, uint16_t")
EMBER_ASC_BINARY(Or, EMBER_ASC_OR, detail::kBits, "int16_t, uint16_t")
#undef EMBER_ASC_BINARY

// ---- unary: dst = f(src) ----
#define EMBER_ASC_UNARY(Name, code, allowed, list)                                                                \
  template <class T>                                                                                              \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {       \
    detail::unary(#Name, code, allowed, list, dst, src, count);                                                   \
  }                                                                                                               \
  template <class T, bool isSetMask = true>                                                                       \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],         \
                              const uint8_t repeatTime, const UnaryRepeatParams& p) {                             \
    detail::unary_repeat(#Name, code, allowed, list, dst, src, mask, true, repeatTime, p);                        \
  }                                                                                                               \
  template <class T, bool isSetMask = true>                                                                       \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask,                \
                              const uint8_t repeatTime, const UnaryRepeatParams& p) {                             \
    detail::unary_repeat(#Name, code, allowed, list, dst, src, &mask, false, repeatTime, p);                      \
  }
EMBER_ASC_UNARY(Exp, EMBER_ASC_EXP, detail::kFloat, "half, float")
EMBER_ASC_UNARY(Ln, EMBER_ASC_LN, detail::kFloat, "half, float")
EMBER_ASC_UNARY(Abs, EMBER_ASC_ABS, detail::kFloat, "half, float")
EMBER_ASC_UNARY(Sqrt, EMBER_ASC_SQRT, detail::kFloat, "half, float")
EMBER_ASC_UNARY(Rsqrt, EMBER_ASC_RSQRT, detail::kFloat, "half, float")
EMBER_ASC_UNARY(Reciprocal, EMBER_ASC_RECIPROCAL, detail::kFloat, "half, float")
EMBER_ASC_UNARY(Relu, EMBER_ASC_RELU, detail::kFloat | detail::bit(EMBER_ASC_I32), "half, float, int32_t")
EMBER_ASC_UNARY(Not, EMBER_ASC_NOT, detail::kBits, "int16_t, uint16_t")
#undef EMBER_ASC_UNARY

// The activation functions (CANN's advanced API): count form, with or without a scratch buffer
// (accepted and checked, not needed here).
#define EMBER_ASC_ACTIVATION(Name, code)                                                                          \
  template <class T, bool isReuseSource = false>                                                                  \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {       \
    detail::unary(#Name, code, detail::kFloat, "half, float", dst, src, count);                                   \
  }                                                                                                               \
  template <class T, bool isReuseSource = false>                                                                  \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src,                               \
                              const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t count) {                \
    sharedTmpBuffer.checked(#Name, "sharedTmpBuffer", 0);                                                          \
    detail::unary(#Name, code, detail::kFloat, "half, float", dst, src, count);                                   \
  }
EMBER_ASC_ACTIVATION(Silu, EMBER_ASC_SILU)
EMBER_ASC_ACTIVATION(Sigmoid, EMBER_ASC_SIGMOID)
EMBER_ASC_ACTIVATION(Tanh, EMBER_ASC_TANH)
#undef EMBER_ASC_ACTIVATION
// Gelu: CANN's tanh form, x * sigmoid(1.5957691 * (x + 0.044715 x^3)).
template <class T, bool highPrecision = false, bool highPerformance = false>
__aicore__ inline void Gelu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dataSize) {
  detail::unary("Gelu", EMBER_ASC_GELU, detail::kFloat, "half, float", dst, src, dataSize);
}
template <class T, bool highPrecision = false, bool highPerformance = false>
__aicore__ inline void Gelu(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                            const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t dataSize) {
  sharedTmpBuffer.checked("Gelu", "sharedTmpBuffer", 0);
  detail::unary("Gelu", EMBER_ASC_GELU, detail::kFloat, "half, float", dst, src, dataSize);
}

// ---- with a scalar: dst = src op scalar ----
#define EMBER_ASC_SCALAR(Name, code, allowed, list)                                                               \
  template <class T, class U = T>                                                                                 \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const U& scalarValue,         \
                              const int32_t& count) {                                                            \
    detail::need_type<T>(#Name, allowed, list);                                                                   \
    detail::need_count(#Name, count);                                                                             \
    T* d = dst.checked(#Name, "dst", count);                                                                      \
    const T* x = src.checked(#Name, "src", count);                                                                \
    detail::need_apart(#Name, "src", d, count * sizeof(T), x, count * sizeof(T));                                 \
    ember_ascendc_scalar(code, detail::TypeOf<T>::kCode, d, x, detail::scalar_value(static_cast<T>(scalarValue)), \
                         static_cast<uint64_t>(count));                                                           \
  }                                                                                                               \
  template <class T, class U = T, bool isSetMask = true>                                                          \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const U& scalarValue,         \
                              uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& p) {              \
    detail::scalar_repeat(#Name, code, allowed, list, dst, src, detail::scalar_value(static_cast<T>(scalarValue)), \
                          &mask, false, repeatTime, p);                                                           \
  }                                                                                                               \
  template <class T, class U = T, bool isSetMask = true>                                                          \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const U& scalarValue,         \
                              const uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& p) {      \
    detail::scalar_repeat(#Name, code, allowed, list, dst, src, detail::scalar_value(static_cast<T>(scalarValue)), \
                          mask, true, repeatTime, p);                                                             \
  }
EMBER_ASC_SCALAR(Adds, EMBER_ASC_ADD, detail::kArith, "int16_t, half, int32_t, float")
EMBER_ASC_SCALAR(Muls, EMBER_ASC_MUL, detail::kArith, "int16_t, half, int32_t, float")
EMBER_ASC_SCALAR(Maxs, EMBER_ASC_MAX, detail::kArith, "int16_t, half, int32_t, float")
EMBER_ASC_SCALAR(Mins, EMBER_ASC_MIN, detail::kArith, "int16_t, half, int32_t, float")
#undef EMBER_ASC_SCALAR

// LeakyRelu: dst = src >= 0 ? src : src * slope
template <class T>
__aicore__ inline void LeakyRelu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& slope,
                                 const int32_t& count) {
  detail::need_type<T>("LeakyRelu", detail::kFloat, "half, float");
  T* d = dst.checked("LeakyRelu", "dst", count);
  const T* x = src.checked("LeakyRelu", "src", count);
  const float k = static_cast<float>(slope);
  for (int32_t i = 0; i < count; ++i) {
    const float v = static_cast<float>(x[i]);
    d[i] = static_cast<T>(v >= 0 ? v : v * k);
  }
}

// Duplicate: dst[0, count) = scalar
template <class T>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count) {
  detail::need_count("Duplicate", count);
  T* d = dst.checked("Duplicate", "dst", count);
  for (int32_t i = 0; i < count; ++i) d[i] = scalarValue;
}
template <class T, bool isSetMask = true>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask, const uint8_t repeatTime,
                                 const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
  const LocalTensor<T>* ops[1] = {&dst};
  const char* const names[1] = {"dst"};
  const uint32_t blk[1] = {dstBlockStride};
  const uint32_t rep[1] = {dstRepeatStride};
  detail::repeat_walk<T, 1>("Duplicate", ops, names, blk, rep, &mask, false, repeatTime, [&](T* const* q, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) q[0][i] = scalarValue;
  });
}

}  // namespace AscendC

#include "ember_ascendc/vector_more.h"
