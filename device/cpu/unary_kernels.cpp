// CPU unary kernels: out = f(in), computed in float (f32/f16/bf16), double, or int64.
#include "ember/device/cpu/eigen_util.h"  // first: see the note there

#include <cmath>
#include <type_traits>

#include "ember/device/cpu/elementwise.h"
#include "ember/gen/cpu_kernels.h"
#include "ember/core/dtype.h"
#include "ember/core/error.h"

namespace ember {
namespace cpu {
namespace {

// exp(x) and expm1(x) over the whole float range. Eigen's vectorized float exp (and expm1, through
// it) scales by 2^n and overflows from x = 88.3763, where n reaches 128, although exp(x) stays below
// FLT_MAX up to 88.7228 (the scalar path, for a row's tail, does not): long tensors got inf there.
// Lanes above 88 are computed as f(x - 64) exp(64): x - 64 is exact there (Sterbenz), so exp stays
// within 2 ulps, and expm1(x - 64) = exp(x - 64) - 1 differs from exp(x - 64) by 4e-11 relative.
// h (1 above 88, else 0) is blended arithmetically: a comparison mask would not vectorize in Eigen.
template <class X>
auto above_88(const X& x) {
  using C = typename X::Scalar;
  // (x - 88) 2^30, clamped to [0, 1]: the next float after 88 is 88 + 2^-17, so h is 0 or 1 exactly.
  return (x * C(1073741824) - C(94489280512)).max(C(0)).min(C(1));
}
template <class X>
auto exp_full_range(const X& x) {
  using C = typename X::Scalar;
  if constexpr (std::is_same_v<C, float>) {
    const auto h = above_88(x);
    return (x - h * C(64)).exp() * (h * C(6.235149080811617e27) + C(1));  // (exp(64) + 1 == exp(64) in float)
  } else {
    return x.exp();
  }
}
template <class X>
auto expm1_full_range(const X& x) {
  using C = typename X::Scalar;
  if constexpr (std::is_same_v<C, float>) {
    const auto h = above_88(x);
    return (x - h * C(64)).expm1() * (h * C(6.235149080811617e27) + C(1));
  } else {
    return x.expm1();
  }
}

// Each functor: `template <class C> static void run(ArrOut<C> o, ArrIn<C> x, const double* ctx)`
// and `kInt` saying whether integer compute is allowed.
#define EMBER_UNARY_FUNCTOR(Name, allow_int, ...)                                  \
  struct Name {                                                                     \
    static constexpr bool kInt = allow_int;                                         \
    template <class C>                                                              \
    static void run(ArrOut<C> o, ArrIn<C> x, const double* ctx) {                   \
      (void)ctx;                                                                    \
      __VA_ARGS__;                                                                  \
    }                                                                               \
  };

EMBER_UNARY_FUNCTOR(NegOp, true, o = -x)
EMBER_UNARY_FUNCTOR(ReluOp, true, o = (x > C(0)).select(x, (x != x).select(x, C(0))))
// gelu(x) = x/2 * (1 + erf(x / sqrt(2)))
EMBER_UNARY_FUNCTOR(GeluOp, false, o = x * C(0.5) * (C(1) + (x * C(M_SQRT1_2)).erf()))
// gelu_tanh(x) = x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
EMBER_UNARY_FUNCTOR(GeluTanhOp, false,
                    o = x * C(0.5) * (C(1) + (C(0.7978845608028654) * (x + C(0.044715) * x * x * x)).tanh()))
// floor, ceil, round and trunc of an integer compute type (kind P) are the identity.
template <class C, class F>
C round_int_or(C v, F f) {
  if constexpr (std::is_integral<C>::value) {
    (void)f;
    return v;
  } else {
    return f(v);
  }
}
// The ops of the unary table (core/tables/unary_ops.def): P keeps integers, F computes in float.
#define EMBER_TABLE_FUNCTOR(name, Acl, kind, cpu, ...) EMBER_UNARY_FUNCTOR(name##_op, kKeepsInts_##kind, cpu)
EMBER_UNARY_OPS(EMBER_TABLE_FUNCTOR)
#undef EMBER_TABLE_FUNCTOR
// A bound in the compute type: integer compute saturates (a bound of 2^63 or NaN is defined).
template <class C>
C bound_as(double v) {
  if constexpr (std::is_integral<C>::value) {
    return static_cast<C>(saturating_int64(v));
  } else {
    return C(v);
  }
}
// clamp: ctx = {has_lo, lo, has_hi, hi}; NaN stays NaN (x != x).
EMBER_UNARY_FUNCTOR(ClampOp, true, {
  o = x;
  if (ctx[0] != 0) o = (o < bound_as<C>(ctx[1])).select(bound_as<C>(ctx[1]), o);
  if (ctx[2] != 0) o = (o > bound_as<C>(ctx[3])).select(bound_as<C>(ctx[3]), o);
})
EMBER_UNARY_FUNCTOR(PowScalarOp, false, {
  if (ctx[0] == 2.0) {
    o = x * x;
  } else if (ctx[0] == 0.5) {
    o = x.sqrt();
  } else if (ctx[0] == 1.0) {
    o = x;
  } else {
    o = x.pow(C(ctx[0]));
  }
})
EMBER_UNARY_FUNCTOR(AffineOp, true, o = x * C(ctx[0]) + C(ctx[1]))
// softplus: ctx = {beta, threshold}: x where beta x > threshold, else log1p(exp(beta x)) / beta
EMBER_UNARY_FUNCTOR(SoftplusOp, false, o = (x * C(ctx[0]) > C(ctx[1])).select(x, (x * C(ctx[0])).exp().log1p() / C(ctx[0])))
// elu: ctx = {alpha, scale, input_scale}: scale x where x > 0, else alpha scale expm1(input_scale x)
EMBER_UNARY_FUNCTOR(EluOp, false,
                    o = (x > C(0)).select(x * C(ctx[1]), (x * C(ctx[2])).expm1() * C(ctx[0] * ctx[1])))
// threshold: ctx = {threshold, value}: value where x <= threshold, else x (NaN stays NaN)
EMBER_UNARY_FUNCTOR(ThresholdOp, true, o = (x <= bound_as<C>(ctx[0])).select(bound_as<C>(ctx[1]), x))
#undef EMBER_UNARY_FUNCTOR

// Integer neg, abs and square wrap around as two's complement (neg(INT64_MIN) is INT64_MIN, as
// in PyTorch), computed in the unsigned type instead of overflowing a signed one.
template <class Op, class C>
void compute(void* out, const void* const* in, int64_t n, const void* ctx) {
  constexpr bool neg = std::is_same<Op, NegOp>::value, abs = std::is_same<Op, abs_op>::value,
                 square = std::is_same<Op, square_op>::value;
  if constexpr (std::is_integral<C>::value && std::is_signed<C>::value && (neg || abs || square)) {
    using U = std::make_unsigned_t<C>;
    const C* x = static_cast<const C*>(in[0]);
    U* o = static_cast<U*>(out);
    for (int64_t i = 0; i < n; ++i) {
      const U u = static_cast<U>(x[i]);
      o[i] = square ? U(u * u) : (neg || x[i] < 0) ? U(U(0) - u) : u;
    }
  } else {
    Op::template run<C>(out_arr<C>(out, n), in_arr<C>(in[0], n), static_cast<const double*>(ctx));
  }
}

template <class Op>
void run_unary(const char* name, const Strided& out, const Strided& in, const double* ctx = nullptr) {
  DType C = compute_dtype(out.dtype);
  const Strided* ins[1] = {&in};
  switch (C) {
    case DType::Float32: elementwise(out, ins, 1, C, &compute<Op, float>, ctx); return;
    case DType::Float64: elementwise(out, ins, 1, C, &compute<Op, double>, ctx); return;
    default:
      if constexpr (Op::kInt) {
        elementwise(out, ins, 1, C, &compute<Op, int64_t>, ctx);
        return;
      } else {
        EMBER_THROW(DTypeError, name, ": not implemented for integer output dtype ", out.dtype);
      }
  }
}

}  // namespace

#define EMBER_DEFINE_UNARY(name, Op) \
  void name(const Strided& out, const Strided& in) { run_unary<Op>(#name, out, in); }
EMBER_DEFINE_UNARY(neg, NegOp)
EMBER_DEFINE_UNARY(relu, ReluOp)
EMBER_DEFINE_UNARY(gelu, GeluOp)
EMBER_DEFINE_UNARY(gelu_tanh, GeluTanhOp)
#define EMBER_TABLE_DEFINE(name, ...) EMBER_DEFINE_UNARY(name, name##_op)
EMBER_UNARY_OPS(EMBER_TABLE_DEFINE)
#undef EMBER_TABLE_DEFINE
#undef EMBER_DEFINE_UNARY

void clamp(const Strided& out, const Strided& in, bool has_lo, double lo, bool has_hi, double hi) {
  double ctx[4] = {has_lo ? 1.0 : 0.0, lo, has_hi ? 1.0 : 0.0, hi};
  run_unary<ClampOp>(__func__, out, in, ctx);
}

// CPU kernel: out = softplus(in) = log1p(exp(beta in)) / beta, or in where beta in > threshold
// (torch.nn.functional.softplus); floating out.
void softplus(const Strided& out, const Strided& in, double beta, double threshold) {
  const double ctx[2] = {beta, threshold};
  run_unary<SoftplusOp>(__func__, out, in, ctx);
}

// CPU kernel: out = elu(in): scale in where in > 0, else alpha scale (exp(input_scale in) - 1)
// (torch.nn.functional.elu with scale and input_scale, CANN's aclnnElu); floating out.
void elu(const Strided& out, const Strided& in, double alpha, double scale, double input_scale) {
  const double ctx[3] = {alpha, scale, input_scale};
  run_unary<EluOp>(__func__, out, in, ctx);
}

// CPU kernel: out = value where in <= threshold, else in (torch.threshold); integers too.
void threshold(const Strided& out, const Strided& in, double threshold, double value) {
  const double ctx[2] = {threshold, value};
  run_unary<ThresholdOp>(__func__, out, in, ctx);
}

void pow_scalar(const Strided& out, const Strided& in, double exponent) {
  run_unary<PowScalarOp>(__func__, out, in, &exponent);
}

void affine(const Strided& out, const Strided& in, double scale, double shift) {
  double ctx[2] = {scale, shift};
  run_unary<AffineOp>("affine", out, in, ctx);
}

}  // namespace cpu
}  // namespace ember
