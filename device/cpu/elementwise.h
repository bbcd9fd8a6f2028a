// ember: CPU elementwise kernels over strided, broadcast operands of any dtype.
//
// Every operand has out's sizes (broadcast inputs carry stride 0). Inputs are loaded in blocks,
// converted to the compute dtype (float for f32/f16/bf16, double, or int64), computed with
// Eigen's vectorised array expressions, and stored back with round-to-nearest-even narrowing.
#pragma once

#include "ember/device/cpu/strided.h"
#include "ember/core/tables/binary_ops.def"
#include "ember/core/tables/unary_ops.def"

namespace ember {
namespace cpu {

// out[i] = f(in[0][i], ..., in[nin-1][i]) on contiguous buffers of the compute dtype.
using ComputeFn = void (*)(void* out, const void* const* in, int64_t n, const void* ctx);

// The engine: runs fn over all elements of out, in parallel, with dtype conversion on load/store.
void elementwise(const Strided& out, const Strided* const* ins, int nin, DType compute, ComputeFn fn,
                 const void* ctx);

// What the op tables' result kinds (core/tables/unary_ops.def, binary_ops.def) mean for kernels: P
// keeps integer inputs' dtype (an int64 kernel exists), F computes in floating point only.
constexpr bool kKeepsInts_P = true, kKeepsInts_F = false;

// ---- unary: out = f(in); out and in may differ in dtype (e.g. int in, float out) ----
// The ops of the unary table (core/tables/unary_ops.def), and the others.
#define EMBER_CPU_UNARY_LIST(_) \
  _(neg) _(relu) _(gelu) _(gelu_tanh)
#define EMBER_DECLARE_UNARY(name) void name(const Strided& out, const Strided& in);
#define EMBER_DECLARE_TABLE_UNARY(name, ...) EMBER_DECLARE_UNARY(name)
EMBER_CPU_UNARY_LIST(EMBER_DECLARE_UNARY)
EMBER_UNARY_OPS(EMBER_DECLARE_TABLE_UNARY)
#undef EMBER_DECLARE_TABLE_UNARY
#undef EMBER_DECLARE_UNARY

// out = clamp(in, lo, hi); has_lo/has_hi select the bounds. NaN propagates.
void clamp(const Strided& out, const Strided& in, bool has_lo, double lo, bool has_hi, double hi);
// out = in ^ exponent (scalar exponent).
void pow_scalar(const Strided& out, const Strided& in, double exponent);
// out = in * scale + shift
void affine(const Strided& out, const Strided& in, double scale, double shift);

// ---- binary: out = f(a, b); compute in `compute` (promoted type); comparisons write 0/1 ----
void add(const Strided& out, const Strided& a, const Strided& b, double alpha, DType compute);
void sub(const Strided& out, const Strided& a, const Strided& b, double alpha, DType compute);
// The ops of the binary table (core/tables/binary_ops.def), and the others.
#define EMBER_CPU_BINARY_LIST(_) \
  _(mul) _(div) _(pow) _(eq) _(ne) _(lt) _(le) _(gt) _(ge) \
  _(logical_and) _(logical_or) _(silu_mul) \
  _(gelu_backward) _(gelu_tanh_backward) _(silu_backward)
#define EMBER_DECLARE_BINARY(name) void name(const Strided& out, const Strided& a, const Strided& b, DType compute);
#define EMBER_DECLARE_TABLE_BINARY(name, ...) EMBER_DECLARE_BINARY(name)
EMBER_CPU_BINARY_LIST(EMBER_DECLARE_BINARY)
EMBER_BINARY_OPS(EMBER_DECLARE_TABLE_BINARY)
#undef EMBER_DECLARE_TABLE_BINARY
#undef EMBER_DECLARE_BINARY

// out = g * d(silu(a) * b)/da (SwiGLU backward for the gate input)
void silu_mul_grad_a(const Strided& out, const Strided& g, const Strided& a, const Strided& b, DType compute);

// out = cond ? a : b
void where(const Strided& out, const Strided& cond, const Strided& a, const Strided& b, DType compute);

}  // namespace cpu
}  // namespace ember
