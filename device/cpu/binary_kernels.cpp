// CPU binary kernels: out = f(a, b) in the promoted compute type; comparisons produce 0/1.
#include "ember/device/cpu/eigen_util.h"  // first: see the note there

#include <cmath>
#include <type_traits>

#include "ember/device/cpu/elementwise.h"
#include "ember/core/error.h"

namespace ember {
namespace cpu {
namespace {

#define EMBER_BINARY_FUNCTOR(Name, allow_int, ...)                                  \
  struct Name {                                                                      \
    static constexpr bool kInt = allow_int;                                          \
    template <class C>                                                               \
    static void run(ArrOut<C> o, ArrIn<C> a, ArrIn<C> b, const double* ctx) {        \
      (void)ctx;                                                                     \
      __VA_ARGS__;                                                                   \
    }                                                                                \
  };

// add/sub: ctx[0] = alpha
EMBER_BINARY_FUNCTOR(AddOp, true, {
  if (ctx[0] == 1.0) {
    o = a + b;
  } else {
    o = a + C(ctx[0]) * b;
  }
})
EMBER_BINARY_FUNCTOR(SubOp, true, {
  if (ctx[0] == 1.0) {
    o = a - b;
  } else {
    o = a - C(ctx[0]) * b;
  }
})
EMBER_BINARY_FUNCTOR(MulOp, true, o = a * b)
EMBER_BINARY_FUNCTOR(DivOp, false, o = a / b)
EMBER_BINARY_FUNCTOR(PowOp, false, o = a.pow(b))
// The ops of the binary table (core/tables/binary_ops.def): P keeps integers, F computes in float.
#define EMBER_TABLE_FUNCTOR(name, Acl, kind, cpu, ...) EMBER_BINARY_FUNCTOR(name##_op, kKeepsInts_##kind, cpu)
EMBER_BINARY_OPS(EMBER_TABLE_FUNCTOR)
#undef EMBER_TABLE_FUNCTOR
EMBER_BINARY_FUNCTOR(EqOp, true, o = (a == b).template cast<C>())
EMBER_BINARY_FUNCTOR(NeOp, true, o = (a != b).template cast<C>())
EMBER_BINARY_FUNCTOR(LtOp, true, o = (a < b).template cast<C>())
EMBER_BINARY_FUNCTOR(LeOp, true, o = (a <= b).template cast<C>())
EMBER_BINARY_FUNCTOR(GtOp, true, o = (a > b).template cast<C>())
EMBER_BINARY_FUNCTOR(GeOp, true, o = (a >= b).template cast<C>())
EMBER_BINARY_FUNCTOR(AndOp, true, o = ((a != C(0)) && (b != C(0))).template cast<C>())
EMBER_BINARY_FUNCTOR(OrOp, true, o = ((a != C(0)) || (b != C(0))).template cast<C>())
// silu(a) * b, fused (SwiGLU's gate): one pass, no intermediate.
EMBER_BINARY_FUNCTOR(SiluMulOp, false, o = a * a.logistic() * b)
// gelu'(x) * g: cdf(x) + x * pdf(x) with cdf = (1 + erf(x/sqrt2)) / 2, pdf = exp(-x^2/2) / sqrt(2 pi).
// Here a = g, b = x.
EMBER_BINARY_FUNCTOR(GeluBackwardOp, false,
                     o = a * (C(0.5) * (C(1) + (b * C(M_SQRT1_2)).erf()) +
                              b * (C(-0.5) * b * b).exp() * C(0.3989422804014327)))
// silu'(x) * g = g s (1 + x (1 - s)), s = sigmoid(x). Here a = g, b = x.
EMBER_BINARY_FUNCTOR(SiluBackwardOp, false, {
  auto sg = b.logistic();
  o = a * sg * (C(1) + b * (C(1) - sg));
})
// tanh form: with u = k (x + c x^3), t = tanh(u):
// d/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2)
EMBER_BINARY_FUNCTOR(GeluTanhBackwardOp, false, {
  const C k = C(0.7978845608028654), c = C(0.044715);
  auto t = (k * (b + c * b * b * b)).tanh();
  o = a * (C(0.5) * (C(1) + t) + C(0.5) * b * (C(1) - t * t) * k * (C(1) + C(3) * c * b * b));
})
#undef EMBER_BINARY_FUNCTOR

// Integer add, sub and mul wrap around as two's complement (as in PyTorch): computed in the
// unsigned type, where overflow is defined, instead of signed overflow (undefined behaviour).
template <class Op, class C>
void compute(void* out, const void* const* in, int64_t n, const void* ctx) {
  constexpr bool add = std::is_same<Op, AddOp>::value, sub = std::is_same<Op, SubOp>::value,
                 mul = std::is_same<Op, MulOp>::value;
  if constexpr (std::is_integral<C>::value && !std::is_same<C, bool>::value && (add || sub || mul)) {
    using U = std::make_unsigned_t<C>;
    const U* a = static_cast<const U*>(in[0]);
    const U* b = static_cast<const U*>(in[1]);
    U* o = static_cast<U*>(out);
    const U alpha = mul ? U(1) : static_cast<U>(saturating_int64(static_cast<const double*>(ctx)[0]));
    for (int64_t i = 0; i < n; ++i) o[i] = add ? U(a[i] + alpha * b[i]) : sub ? U(a[i] - alpha * b[i]) : U(a[i] * b[i]);
  } else {
    Op::template run<C>(out_arr<C>(out, n), in_arr<C>(in[0], n), in_arr<C>(in[1], n), static_cast<const double*>(ctx));
  }
}

template <class Op>
void run_binary(const char* name, const Strided& out, const Strided& a, const Strided& b, DType C,
                const double* ctx = nullptr) {
  const Strided* ins[2] = {&a, &b};
  switch (C) {
    case DType::Float32: elementwise(out, ins, 2, C, &compute<Op, float>, ctx); return;
    case DType::Float64: elementwise(out, ins, 2, C, &compute<Op, double>, ctx); return;
    case DType::Int64:
      if constexpr (Op::kInt) {
        elementwise(out, ins, 2, C, &compute<Op, int64_t>, ctx);
        return;
      }
      break;
    default: break;
  }
  EMBER_THROW(DTypeError, name, ": no CPU kernel computing in ", C);
}

// d(silu(a) * b)/da * g = g * b * s * (1 + a (1 - s)), s = sigmoid(a)
template <class C>
void silu_mul_grad_compute(void* out, const void* const* in, int64_t n, const void*) {
  auto g = in_arr<C>(in[0], n), a = in_arr<C>(in[1], n), b = in_arr<C>(in[2], n);
  auto s = a.logistic();
  out_arr<C>(out, n) = g * b * s * (C(1) + a * (C(1) - s));
}

template <class C>
void where_compute(void* out, const void* const* in, int64_t n, const void*) {
  out_arr<C>(out, n) = (in_arr<C>(in[0], n) != C(0)).select(in_arr<C>(in[1], n), in_arr<C>(in[2], n));
}

}  // namespace

void add(const Strided& out, const Strided& a, const Strided& b, double alpha, DType C) {
  run_binary<AddOp>(__func__, out, a, b, C, &alpha);
}
void sub(const Strided& out, const Strided& a, const Strided& b, double alpha, DType C) {
  run_binary<SubOp>(__func__, out, a, b, C, &alpha);
}

#define EMBER_DEFINE_BINARY(name, Op) \
  void name(const Strided& out, const Strided& a, const Strided& b, DType C) { run_binary<Op>(#name, out, a, b, C); }
EMBER_DEFINE_BINARY(mul, MulOp)
EMBER_DEFINE_BINARY(div, DivOp)
EMBER_DEFINE_BINARY(pow, PowOp)
EMBER_DEFINE_BINARY(eq, EqOp)
EMBER_DEFINE_BINARY(ne, NeOp)
EMBER_DEFINE_BINARY(lt, LtOp)
EMBER_DEFINE_BINARY(le, LeOp)
EMBER_DEFINE_BINARY(gt, GtOp)
EMBER_DEFINE_BINARY(ge, GeOp)
EMBER_DEFINE_BINARY(logical_and, AndOp)
EMBER_DEFINE_BINARY(logical_or, OrOp)
EMBER_DEFINE_BINARY(silu_mul, SiluMulOp)
EMBER_DEFINE_BINARY(gelu_backward, GeluBackwardOp)
EMBER_DEFINE_BINARY(gelu_tanh_backward, GeluTanhBackwardOp)
EMBER_DEFINE_BINARY(silu_backward, SiluBackwardOp)
#define EMBER_TABLE_DEFINE(name, ...) EMBER_DEFINE_BINARY(name, name##_op)
EMBER_BINARY_OPS(EMBER_TABLE_DEFINE)
#undef EMBER_TABLE_DEFINE
#undef EMBER_DEFINE_BINARY

void silu_mul_grad_a(const Strided& out, const Strided& g, const Strided& a, const Strided& b, DType C) {
  const Strided* ins[3] = {&g, &a, &b};
  switch (C) {
    case DType::Float32: elementwise(out, ins, 3, C, &silu_mul_grad_compute<float>, nullptr); return;
    case DType::Float64: elementwise(out, ins, 3, C, &silu_mul_grad_compute<double>, nullptr); return;
    default: EMBER_THROW(DTypeError, __func__, ": no CPU kernel computing in ", C);
  }
}

void where(const Strided& out, const Strided& cond, const Strided& a, const Strided& b, DType C) {
  const Strided* ins[3] = {&cond, &a, &b};
  switch (C) {
    case DType::Float32: elementwise(out, ins, 3, C, &where_compute<float>, nullptr); return;
    case DType::Float64: elementwise(out, ins, 3, C, &where_compute<double>, nullptr); return;
    default: elementwise(out, ins, 3, DType::Int64, &where_compute<int64_t>, nullptr); return;
  }
}

}  // namespace cpu
}  // namespace ember
