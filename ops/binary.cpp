// add, sub, mul, div: out = a (op) b with broadcasting and type promotion; Scalar overloads and
// in-place forms. add/sub take alpha: a + alpha * b. div is true division (integers -> float).
// And the binary table (device/binary_ops.def: maximum, minimum, ...), whose rows give each op's
// schema, kernels, functions and backward here.
#include "ember/device/cpu/elementwise.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/elementwise_util.h"
#include "ember/ops/npu_exec.h"
#include "ember/dispatch/library.h"

namespace ember {
namespace {
using namespace ops;

// ---------------------------------------------------------------- shape/dtype rules
void check_alpha(const char* op, DType result, const Scalar& alpha) {
  EMBER_CHECK_DTYPE(!is_integral(result, true) || !alpha.is_floating_point(), op,
                    ": for integral input tensors, argument alpha must not be a floating point number (got alpha=",
                    alpha, " for a ", result, " result)");
}

// out = run(out, meta), out allocated with the broadcast shape and the result dtype.
template <class Run>
Tensor binary_out(const char* op, const Tensor& a, const Tensor& b, ResultKind kind, const Scalar& alpha, Run run) {
  ElementwiseMeta m = binary_meta(op, a, b, kind);
  check_alpha(op, m.dtype, alpha);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  run(out, m);
  return out;
}
template <class Run>
Tensor scalar_out(const char* op, const Tensor& a, const Scalar& b, ResultKind kind, const Scalar& alpha, Run run) {
  ElementwiseMeta m = scalar_meta(op, a, b, kind);
  check_alpha(op, m.dtype, alpha);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  run(out, m);
  return out;
}
// In place: the result keeps self's shape and must be castable to self's dtype.
template <class Run>
Tensor binary_inplace(const char* op, const Tensor& self, const Tensor& b, ResultKind kind, const Scalar& alpha, Run run) {
  ElementwiseMeta m = binary_meta(op, self, b, kind);
  check_inplace(op, self, m);
  check_alpha(op, m.dtype, alpha);
  run(m);
  bump_version(self);
  return self;
}
template <class Run>
Tensor scalar_inplace(const char* op, const Tensor& self, const Scalar& b, ResultKind kind, const Scalar& alpha, Run run) {
  ElementwiseMeta m = scalar_meta(op, self, b, kind);
  check_inplace(op, self, m);
  check_alpha(op, m.dtype, alpha);
  run(m);
  bump_version(self);
  return self;
}

constexpr ResultKind P = ResultKind::Promote;
constexpr ResultKind F = ResultKind::PromoteFloat;
using M = ElementwiseMeta;

// ---------------------------------------------------------------- CPU
// K(out, a, b, compute, alpha) serves the four forms of each op.
void k_add(const cpu::Strided& o, const cpu::Strided& a, const cpu::Strided& b, DType c, double al) { cpu::add(o, a, b, al, c); }
void k_sub(const cpu::Strided& o, const cpu::Strided& a, const cpu::Strided& b, DType c, double al) { cpu::sub(o, a, b, al, c); }
void k_mul(const cpu::Strided& o, const cpu::Strided& a, const cpu::Strided& b, DType c, double) { cpu::mul(o, a, b, c); }
void k_div(const cpu::Strided& o, const cpu::Strided& a, const cpu::Strided& b, DType c, double) { cpu::div(o, a, b, c); }
#define EMBER_BINARY_CPU(name, kind, K)                                                         \
  Tensor name##_cpu(const Tensor& a, const Tensor& b, const Scalar& al) {                       \
    return binary_out(#name, a, b, kind, al, [&](const Tensor& o, const M& m) {                 \
      K(strided(o), strided_as(a, m.shape), strided_as(b, m.shape), m.compute, al.to_double()); \
    });                                                                                         \
  }                                                                                             \
  Tensor name##_s_cpu(const Tensor& a, const Scalar& b, const Scalar& al) {                     \
    return scalar_out(#name, a, b, kind, al, [&](const Tensor& o, const M& m) {                 \
      ScalarHolder h;                                                                           \
      K(strided(o), strided(a), h.view(b, a.dim()), m.compute, al.to_double());                 \
    });                                                                                         \
  }                                                                                             \
  Tensor name##__cpu(const Tensor& a, const Tensor& b, const Scalar& al) {                      \
    return binary_inplace(#name "_", a, b, kind, al, [&](const M& m) {                          \
      K(strided(a), strided(a), strided_as(b, m.shape), m.compute, al.to_double());             \
    });                                                                                         \
  }                                                                                             \
  Tensor name##__s_cpu(const Tensor& a, const Scalar& b, const Scalar& al) {                    \
    return scalar_inplace(#name "_", a, b, kind, al, [&](const M& m) {                          \
      ScalarHolder h;                                                                           \
      K(strided(a), strided(a), h.view(b, a.dim()), m.compute, al.to_double());                 \
    });                                                                                         \
  }
EMBER_BINARY_CPU(add, P, k_add)
EMBER_BINARY_CPU(sub, P, k_sub)
EMBER_BINARY_CPU(mul, P, k_mul)
EMBER_BINARY_CPU(div, F, k_div)
#undef EMBER_BINARY_CPU

// ---------------------------------------------------------------- NPU
// aclnnAdd/Adds/InplaceAdd/InplaceAdds take alpha; aclnnMul/Muls/InplaceMul/InplaceMuls do not.
#define EMBER_BINARY_NPU_ALPHA(name, kind, Op)                                                                         \
  Tensor name##_npu(const Tensor& a, const Tensor& b, const Scalar& al) {                                              \
    return binary_out(#name, a, b, kind, al, [&](const Tensor& o, const M&) { EXEC_NPU_CMD(npu::aclnn##Op, a, b, al, o); }); \
  }                                                                                                                    \
  Tensor name##_s_npu(const Tensor& a, const Scalar& b, const Scalar& al) {                                            \
    return scalar_out(#name, a, b, kind, al, [&](const Tensor& o, const M&) { EXEC_NPU_CMD(npu::aclnn##Op##s, a, b, al, o); }); \
  }                                                                                                                    \
  Tensor name##__npu(const Tensor& a, const Tensor& b, const Scalar& al) {                                             \
    return binary_inplace(#name "_", a, b, kind, al, [&](const M&) { EXEC_NPU_CMD(npu::aclnnInplace##Op, a, b, al); }); \
  }                                                                                                                    \
  Tensor name##__s_npu(const Tensor& a, const Scalar& b, const Scalar& al) {                                           \
    return scalar_inplace(#name "_", a, b, kind, al, [&](const M&) { EXEC_NPU_CMD(npu::aclnnInplace##Op##s, a, b, al); }); \
  }
#define EMBER_BINARY_NPU(name, kind, Op)                                                                               \
  Tensor name##_npu(const Tensor& a, const Tensor& b) {                                                                \
    return binary_out(#name, a, b, kind, 1, [&](const Tensor& o, const M&) { EXEC_NPU_CMD(npu::aclnn##Op, a, b, o); }); \
  }                                                                                                                    \
  Tensor name##_s_npu(const Tensor& a, const Scalar& b) {                                                              \
    return scalar_out(#name, a, b, kind, 1, [&](const Tensor& o, const M&) { EXEC_NPU_CMD(npu::aclnn##Op##s, a, b, o); }); \
  }                                                                                                                    \
  Tensor name##__npu(const Tensor& a, const Tensor& b) {                                                               \
    return binary_inplace(#name "_", a, b, kind, 1, [&](const M&) { EXEC_NPU_CMD(npu::aclnnInplace##Op, a, b); });     \
  }                                                                                                                    \
  Tensor name##__s_npu(const Tensor& a, const Scalar& b) {                                                             \
    return scalar_inplace(#name "_", a, b, kind, 1, [&](const M&) { EXEC_NPU_CMD(npu::aclnnInplace##Op##s, a, b); });  \
  }
EMBER_BINARY_NPU_ALPHA(add, P, Add)
EMBER_BINARY_NPU_ALPHA(sub, P, Sub)
EMBER_BINARY_NPU(mul, P, Mul)
EMBER_BINARY_NPU(div, F, Div)
#undef EMBER_BINARY_NPU_ALPHA
#undef EMBER_BINARY_NPU

// The binary table's ops: out = f(a, b), broadcast and promoted.
#define EMBER_TABLE_KERNELS(name, Acl, kind, ...)                                                                      \
  Tensor name##_cpu(const Tensor& a, const Tensor& b) {                                                                \
    return binary_out(#name, a, b, kind, 1, [&](const Tensor& o, const M& m) {                                         \
      cpu::name(strided(o), strided_as(a, m.shape), strided_as(b, m.shape), m.compute);                                \
    });                                                                                                                \
  }                                                                                                                    \
  Tensor name##_npu(const Tensor& a, const Tensor& b) {                                                                \
    return binary_out(#name, a, b, kind, 1, [&](const Tensor& o, const M&) { EXEC_NPU_CMD(npu::aclnn##Acl, a, b, o); }); \
  }
EMBER_BINARY_OPS(EMBER_TABLE_KERNELS)
#undef EMBER_TABLE_KERNELS

// mul/div have no alpha in their schema: adapt the CPU forms.
Tensor mul2_cpu(const Tensor& a, const Tensor& b) { return mul_cpu(a, b, 1); }
Tensor mul2_s_cpu(const Tensor& a, const Scalar& b) { return mul_s_cpu(a, b, 1); }
Tensor mul2__cpu(const Tensor& a, const Tensor& b) { return mul__cpu(a, b, 1); }
Tensor mul2__s_cpu(const Tensor& a, const Scalar& b) { return mul__s_cpu(a, b, 1); }
Tensor div2_cpu(const Tensor& a, const Tensor& b) { return div_cpu(a, b, 1); }
Tensor div2_s_cpu(const Tensor& a, const Scalar& b) { return div_s_cpu(a, b, 1); }
Tensor div2__cpu(const Tensor& a, const Tensor& b) { return div__cpu(a, b, 1); }
Tensor div2__s_cpu(const Tensor& a, const Scalar& b) { return div__s_cpu(a, b, 1); }

}  // namespace

// ---------------------------------------------------------------- schema
EMBER_LIBRARY(ember, m) {
  for (const char* op : {"add", "sub"}) {
    std::string o(op);
    m.def(o + "(Tensor self, Tensor other, Scalar alpha=1) -> Tensor");
    m.def(o + ".Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor");
    m.def(o + "_(Tensor(a!) self, Tensor other, Scalar alpha=1) -> Tensor(a!)");
    m.def(o + "_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)");
  }
  for (const char* op : {"mul", "div"}) {
    std::string o(op);
    m.def(o + "(Tensor self, Tensor other) -> Tensor");
    m.def(o + ".Scalar(Tensor self, Scalar other) -> Tensor");
    m.def(o + "_(Tensor(a!) self, Tensor other) -> Tensor(a!)");
    m.def(o + "_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)");
  }
#define EMBER_DEF(name, ...) m.def(#name "(Tensor self, Tensor other) -> Tensor");
  EMBER_BINARY_OPS(EMBER_DEF)
#undef EMBER_DEF
}

// ---------------------------------------------------------------- CPU
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl("add", &add_cpu);
  m.impl("add.Scalar", &add_s_cpu);
  m.impl("add_", &add__cpu);
  m.impl("add_.Scalar", &add__s_cpu);
  m.impl("sub", &sub_cpu);
  m.impl("sub.Scalar", &sub_s_cpu);
  m.impl("sub_", &sub__cpu);
  m.impl("sub_.Scalar", &sub__s_cpu);
  m.impl("mul", &mul2_cpu);
  m.impl("mul.Scalar", &mul2_s_cpu);
  m.impl("mul_", &mul2__cpu);
  m.impl("mul_.Scalar", &mul2__s_cpu);
  m.impl("div", &div2_cpu);
  m.impl("div.Scalar", &div2_s_cpu);
  m.impl("div_", &div2__cpu);
  m.impl("div_.Scalar", &div2__s_cpu);
#define EMBER_IMPL(name, ...) m.impl(#name, &name##_cpu);
  EMBER_BINARY_OPS(EMBER_IMPL)
#undef EMBER_IMPL
}

EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl("add", &add_npu);
  m.impl("add.Scalar", &add_s_npu);
  m.impl("add_", &add__npu);
  m.impl("add_.Scalar", &add__s_npu);
  m.impl("sub", &sub_npu);
  m.impl("sub.Scalar", &sub_s_npu);
  m.impl("sub_", &sub__npu);
  m.impl("sub_.Scalar", &sub__s_npu);
  m.impl("mul", &mul_npu);
  m.impl("mul.Scalar", &mul_s_npu);
  m.impl("mul_", &mul__npu);
  m.impl("mul_.Scalar", &mul__s_npu);
  m.impl("div", &div_npu);
  m.impl("div.Scalar", &div_s_npu);
  m.impl("div_", &div__npu);
  m.impl("div_.Scalar", &div__s_npu);
#define EMBER_IMPL(name, ...) m.impl(#name, &name##_npu);
  EMBER_BINARY_OPS(EMBER_IMPL)
#undef EMBER_IMPL
}

// ---------------------------------------------------------------- public functions
using TT = Tensor(const Tensor&, const Tensor&, const Scalar&);
using TS = Tensor(const Tensor&, const Scalar&, const Scalar&);
using T2 = Tensor(const Tensor&, const Tensor&);
using S2 = Tensor(const Tensor&, const Scalar&);

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) { return EMBER_OP("ember::add", TT).call(a, b, alpha); }
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) { return EMBER_OP("ember::add.Scalar", TS).call(a, b, alpha); }
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) { return EMBER_OP("ember::sub", TT).call(a, b, alpha); }
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) { return EMBER_OP("ember::sub.Scalar", TS).call(a, b, alpha); }
Tensor mul(const Tensor& a, const Tensor& b) { return EMBER_OP("ember::mul", T2).call(a, b); }
Tensor mul(const Tensor& a, const Scalar& b) { return EMBER_OP("ember::mul.Scalar", S2).call(a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return EMBER_OP("ember::div", T2).call(a, b); }
Tensor div(const Tensor& a, const Scalar& b) { return EMBER_OP("ember::div.Scalar", S2).call(a, b); }
Tensor& add_(Tensor& self, const Tensor& other, const Scalar& alpha) {
  EMBER_OP("ember::add_", TT).call(self, other, alpha);
  return self;
}
Tensor& mul_(Tensor& self, const Tensor& other) {
  EMBER_OP("ember::mul_", T2).call(self, other);
  return self;
}

Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) { EMBER_OP("ember::add_", TT).call(*this, o, alpha); return *this; }
Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) { EMBER_OP("ember::add_.Scalar", TS).call(*this, o, alpha); return *this; }
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) { EMBER_OP("ember::sub_", TT).call(*this, o, alpha); return *this; }
Tensor& Tensor::sub_(const Scalar& o, const Scalar& alpha) { EMBER_OP("ember::sub_.Scalar", TS).call(*this, o, alpha); return *this; }
Tensor& Tensor::mul_(const Tensor& o) { EMBER_OP("ember::mul_", T2).call(*this, o); return *this; }
Tensor& Tensor::mul_(const Scalar& o) { EMBER_OP("ember::mul_.Scalar", S2).call(*this, o); return *this; }
Tensor& Tensor::div_(const Tensor& o) { EMBER_OP("ember::div_", T2).call(*this, o); return *this; }
Tensor& Tensor::div_(const Scalar& o) { EMBER_OP("ember::div_.Scalar", S2).call(*this, o); return *this; }
#define EMBER_FN(name, ...)                                                                          \
  Tensor name(const Tensor& a, const Tensor& b) { return EMBER_OP("ember::" #name, T2).call(a, b); } \
  Tensor Tensor::name(const Tensor& o) const { return ember::name(*this, o); }
EMBER_BINARY_OPS(EMBER_FN)
#undef EMBER_FN

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
using TTSig = Tensor(const Tensor&, const Tensor&, const Scalar&);
using TSSig = Tensor(const Tensor&, const Scalar&, const Scalar&);
using T2Sig = Tensor(const Tensor&, const Tensor&);
using S2Sig = Tensor(const Tensor&, const Scalar&);

// d(a + alpha b) = g, alpha g   (the engine reduces broadcast dims)
std::vector<Tensor> add_bw(const BackwardCtx<TTSig>& c) {
  Scalar alpha = c.arg<2>();
  return {c.grad(), c.needs(1) ? (alpha.to_double() == 1.0 ? c.grad() : c.grad() * alpha) : Tensor()};
}
// d(a - alpha b) = g, -alpha g
std::vector<Tensor> sub_bw(const BackwardCtx<TTSig>& c) {
  return {c.grad(), c.needs(1) ? c.grad() * (-c.arg<2>()) : Tensor()};
}
// d(a op s) = g for a scalar s added or subtracted
std::vector<Tensor> pass_scalar_bw(const BackwardCtx<TSSig>& c) { return {c.grad()}; }
// d(a b) = g b, g a
std::vector<Tensor> mul_bw(const BackwardCtx<T2Sig>& c) {
  return {c.needs(0) ? c.grad() * c.arg<1>() : Tensor(), c.needs(1) ? c.grad() * c.arg<0>() : Tensor()};
}
// d(a s) = g s
std::vector<Tensor> mul_scalar_bw(const BackwardCtx<S2Sig>& c) { return {c.grad() * c.arg<1>()}; }
// d(a / b) = g / b, -g a / b^2
std::vector<Tensor> div_bw(const BackwardCtx<T2Sig>& c) {
  Tensor b = c.arg<1>();
  return {c.needs(0) ? c.grad() / b : Tensor(), c.needs(1) ? -c.grad() * c.arg<0>() / (b * b) : Tensor()};
}
// d(a / s) = g / s
std::vector<Tensor> div_scalar_bw(const BackwardCtx<S2Sig>& c) { return {c.grad() / c.arg<1>()}; }

const auto kAdd = OpSpec<TTSig>{"AddBackward", "ember::add", &add_bw};
const auto kAddS = OpSpec<TSSig>{"AddBackward", "ember::add.Scalar", &pass_scalar_bw};
const auto kAdd_ = OpSpec<TTSig>{"AddBackward", "ember::add_", &add_bw}.in_place();
const auto kAddS_ = OpSpec<TSSig>{"AddBackward", "ember::add_.Scalar", &pass_scalar_bw}.in_place();
const auto kSub = OpSpec<TTSig>{"SubBackward", "ember::sub", &sub_bw};
const auto kSubS = OpSpec<TSSig>{"SubBackward", "ember::sub.Scalar", &pass_scalar_bw};
const auto kSub_ = OpSpec<TTSig>{"SubBackward", "ember::sub_", &sub_bw}.in_place();
const auto kSubS_ = OpSpec<TSSig>{"SubBackward", "ember::sub_.Scalar", &pass_scalar_bw}.in_place();
const auto kMul = OpSpec<T2Sig>{"MulBackward", "ember::mul", &mul_bw}.saving(saves(0, 1));
const auto kMulS = OpSpec<S2Sig>{"MulBackward", "ember::mul.Scalar", &mul_scalar_bw};
const auto kMul_ = OpSpec<T2Sig>{"MulBackward", "ember::mul_", &mul_bw}.saving(saves(0, 1)).in_place();
const auto kMulS_ = OpSpec<S2Sig>{"MulBackward", "ember::mul_.Scalar", &mul_scalar_bw}.in_place();
const auto kDiv = OpSpec<T2Sig>{"DivBackward", "ember::div", &div_bw}.saving(saves(0, 1)).upcasting();
const auto kDivS = OpSpec<S2Sig>{"DivBackward", "ember::div.Scalar", &div_scalar_bw};
const auto kDiv_ = OpSpec<T2Sig>{"DivBackward", "ember::div_", &div_bw}.saving(saves(0, 1)).in_place().upcasting();
const auto kDivS_ = OpSpec<S2Sig>{"DivBackward", "ember::div_.Scalar", &div_scalar_bw}.in_place();

// The binary table's backward: a row's formulas see g, a and b.
Tensor loser_gets_none(const Tensor& g, const Tensor& loses, const Tensor& tie) {
  return where(tie, g * 0.5, where(loses, zeros_like(g), g));
}
#define EMBER_BW_SPEC_AB(spec) spec.saving(saves(0, 1))
#define EMBER_BW_SPEC_ABU(spec) spec.saving(saves(0, 1)).upcasting()
#define EMBER_BW(name, Acl, kind, cpu, saves, ga, gb, ...)                           \
  std::vector<Tensor> name##_bw(const BackwardCtx<T2Sig>& c) {                       \
    const Tensor g = c.grad(), a = c.arg<0>(), b = c.arg<1>();                       \
    return {c.needs(0) ? Tensor(ga) : Tensor(), c.needs(1) ? Tensor(gb) : Tensor()}; \
  }                                                                                  \
  const auto k_##name = EMBER_BW_SPEC_##saves((OpSpec<T2Sig>{#Acl "Backward", "ember::" #name, &name##_bw}));
EMBER_BINARY_OPS(EMBER_BW)
#undef EMBER_BW
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl("add", autograd_kernel<&kAdd>());
  m.impl("add.Scalar", autograd_kernel<&kAddS>());
  m.impl("add_", autograd_kernel<&kAdd_>());
  m.impl("add_.Scalar", autograd_kernel<&kAddS_>());
  m.impl("sub", autograd_kernel<&kSub>());
  m.impl("sub.Scalar", autograd_kernel<&kSubS>());
  m.impl("sub_", autograd_kernel<&kSub_>());
  m.impl("sub_.Scalar", autograd_kernel<&kSubS_>());
  m.impl("mul", autograd_kernel<&kMul>());
  m.impl("mul.Scalar", autograd_kernel<&kMulS>());
  m.impl("mul_", autograd_kernel<&kMul_>());
  m.impl("mul_.Scalar", autograd_kernel<&kMulS_>());
  m.impl("div", autograd_kernel<&kDiv>());
  m.impl("div.Scalar", autograd_kernel<&kDivS>());
  m.impl("div_", autograd_kernel<&kDiv_>());
  m.impl("div_.Scalar", autograd_kernel<&kDivS_>());
#define EMBER_BW_IMPL(name, ...) m.impl(#name, autograd_kernel<&k_##name>());
  EMBER_BINARY_OPS(EMBER_BW_IMPL)
#undef EMBER_BW_IMPL
}

}  // namespace ember
