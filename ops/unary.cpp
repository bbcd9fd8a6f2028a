// Unary math: neg, abs, sign, exp, log, sqrt, rsqrt, sin, cos, square, reciprocal.
// Floating functions promote integer inputs to the default float; neg/abs/sign/square keep ints.
#include <cmath>

#include "ember/device/cpu/elementwise.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/elementwise_util.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/dispatch/library.h"

namespace ember {
namespace {
using namespace ops;
constexpr ResultKind P = ResultKind::Promote;
constexpr ResultKind F = ResultKind::PromoteFloat;

Tensor neg_cpu(const Tensor& x) {
  EMBER_CHECK_DTYPE(x.dtype() != kBool, "neg: negation, the `-` operator, on a bool tensor is not supported; use "
                    "logical_not instead");
  return unary_cpu<cpu::neg, P>(x);
}

}  // namespace

#include "ember/ops/unary_ops.def"

EMBER_LIBRARY(ember, m) {
  m.def("neg(Tensor self) -> Tensor");
#define EMBER_DEF(name, kind, ref, lo, hi) m.def(#name "(Tensor self) -> Tensor");
  EMBER_UNARY_OPS(EMBER_DEF)
#undef EMBER_DEF
}

// ---------------------------------------------------------------- NPU
namespace {
#define EMBER_UNARY_NPU(name, kind, Op)                                                               \
  Tensor name##_npu(const Tensor& x) {                                                                \
    return unary_out<kind>(x, [&](const Tensor& out) { EXEC_NPU_CMD(npu::aclnn##Op, x, out); });           \
  }
Tensor neg_npu(const Tensor& x) {
  EMBER_CHECK_DTYPE(x.dtype() != kBool, "neg: negation, the `-` operator, on a bool tensor is not supported; use "
                    "logical_not instead");
  return unary_out<P>(x, [&](const Tensor& out) { EXEC_NPU_CMD(npu::aclnnNeg, x, out); });
}
EMBER_UNARY_NPU(abs, P, Abs)
EMBER_UNARY_NPU(sign, P, Sign)
EMBER_UNARY_NPU(exp, F, Exp)
EMBER_UNARY_NPU(log, F, Log)
EMBER_UNARY_NPU(sqrt, F, Sqrt)
EMBER_UNARY_NPU(rsqrt, F, Rsqrt)
EMBER_UNARY_NPU(sin, F, Sin)
EMBER_UNARY_NPU(cos, F, Cos)
EMBER_UNARY_NPU(square, P, Square)
EMBER_UNARY_NPU(reciprocal, F, Reciprocal)
#undef EMBER_UNARY_NPU
}  // namespace

EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl("neg", &neg_npu);
#define EMBER_IMPL(name, kind, ref, lo, hi) m.impl(#name, &name##_npu);
  EMBER_UNARY_OPS(EMBER_IMPL)
#undef EMBER_IMPL
}

EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl("neg", &neg_cpu);
#define EMBER_IMPL(name, kind, ref, lo, hi) m.impl(#name, &ops::unary_cpu<cpu::name, kind>);
  EMBER_UNARY_OPS(EMBER_IMPL)
#undef EMBER_IMPL
}

Tensor neg(const Tensor& x) { return EMBER_OP("ember::neg", Tensor(const Tensor&)).call(x); }
Tensor Tensor::neg() const { return ember::neg(*this); }
#define EMBER_FN(name, kind, ref, lo, hi)                                                           \
  Tensor name(const Tensor& x) { return EMBER_OP("ember::" #name, Tensor(const Tensor&)).call(x); } \
  Tensor Tensor::name() const { return ember::name(*this); }
EMBER_UNARY_OPS(EMBER_FN)
#undef EMBER_FN

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
using U = Tensor(const Tensor&);
using Ctx = BackwardCtx<U>;
// neg: -g            abs: g sign(x)         exp: g exp(x) = g y      log: g / x
// sqrt: g / (2 y)    rsqrt: -g y^3 / 2      sin: g cos(x)            cos: -g sin(x)
// square: 2 g x      reciprocal: -g y^2
std::vector<Tensor> neg_bw(const Ctx& c) { return {-c.grad()}; }
std::vector<Tensor> abs_bw(const Ctx& c) { return {c.grad() * c.arg<0>().sign()}; }
std::vector<Tensor> exp_bw(const Ctx& c) { return {c.grad() * c.output()}; }
std::vector<Tensor> log_bw(const Ctx& c) { return {c.grad() / c.arg<0>()}; }
std::vector<Tensor> sqrt_bw(const Ctx& c) { return {c.grad() / (c.output() * 2)}; }
std::vector<Tensor> rsqrt_bw(const Ctx& c) {
  Tensor y = c.output();
  return {c.grad() * y * y * y * -0.5};
}
std::vector<Tensor> sin_bw(const Ctx& c) { return {c.grad() * c.arg<0>().cos()}; }
std::vector<Tensor> cos_bw(const Ctx& c) { return {-c.grad() * c.arg<0>().sin()}; }
std::vector<Tensor> square_bw(const Ctx& c) { return {c.grad() * c.arg<0>() * 2}; }
std::vector<Tensor> reciprocal_bw(const Ctx& c) {
  Tensor y = c.output();
  return {-c.grad() * y * y};
}
const auto kNeg = OpSpec<U>{"NegBackward", "ember::neg", &neg_bw};
const auto kAbs = OpSpec<U>{"AbsBackward", "ember::abs", &abs_bw}.saving(saves(0));
const auto kExp = OpSpec<U>{"ExpBackward", "ember::exp", &exp_bw}.saving_output();
const auto kLog = OpSpec<U>{"LogBackward", "ember::log", &log_bw}.saving(saves(0));
const auto kSqrt = OpSpec<U>{"SqrtBackward", "ember::sqrt", &sqrt_bw}.saving_output().upcasting();
const auto kRsqrt = OpSpec<U>{"RsqrtBackward", "ember::rsqrt", &rsqrt_bw}.saving_output().upcasting();
const auto kSin = OpSpec<U>{"SinBackward", "ember::sin", &sin_bw}.saving(saves(0)).upcasting();
const auto kCos = OpSpec<U>{"CosBackward", "ember::cos", &cos_bw}.saving(saves(0)).upcasting();
const auto kSquare = OpSpec<U>{"SquareBackward", "ember::square", &square_bw}.saving(saves(0)).upcasting();
const auto kReciprocal = OpSpec<U>{"ReciprocalBackward", "ember::reciprocal", &reciprocal_bw}.saving_output().upcasting();
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl("neg", autograd_kernel<&kNeg>());
  m.impl("abs", autograd_kernel<&kAbs>());
  m.impl_not_differentiable("sign");
  m.impl("exp", autograd_kernel<&kExp>());
  m.impl("log", autograd_kernel<&kLog>());
  m.impl("sqrt", autograd_kernel<&kSqrt>());
  m.impl("rsqrt", autograd_kernel<&kRsqrt>());
  m.impl("sin", autograd_kernel<&kSin>());
  m.impl("cos", autograd_kernel<&kCos>());
  m.impl("square", autograd_kernel<&kSquare>());
  m.impl("reciprocal", autograd_kernel<&kReciprocal>());
}

}  // namespace ember
