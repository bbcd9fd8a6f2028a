// add, sub, mul, div: out = a (op) b with broadcasting and type promotion; Scalar overloads and
// in-place forms. add/sub take alpha: a + alpha * b. div is true division (integers -> float).
// And the binary table (core/tables/binary_ops.def: maximum, minimum, ...), whose rows give each op's
// schema, kernels, functions and backward here.
#include "ember/device/cpu/elementwise.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/elementwise_util.h"
#include "ember/ops/npu_exec.h"
#include "ember/dispatch/library.h"
#include "ember/core/tables/arith_ops.def"

namespace ember {
namespace {
using namespace ops;

// ---------------------------------------------------------------- shape/dtype rules
void check_alpha(const char* op, DType result, const Scalar& alpha) {
  EMBER_CHECK_DTYPE(!is_integral(result, true) || !alpha.is_floating_point(), op,
                    ": for integral input tensors, argument alpha must not be a floating point number (got alpha=",
                    alpha, " for a ", result, " result)");
}

// out = run(out, m): a new result with m's shape and dtype (m from binary_meta or scalar_meta).
template <class Run>
Tensor result_of(const char* op, const ElementwiseMeta& m, const Scalar& alpha, Run run) {
  check_alpha(op, m.dtype, alpha);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  run(out, m);
  return out;
}
// In place: the result keeps self's shape and must be castable to self's dtype.
template <class Run>
Tensor in_place(const char* op, const Tensor& self, const ElementwiseMeta& m, const Scalar& alpha, Run run) {
  check_inplace(op, self, m);
  check_alpha(op, m.dtype, alpha);
  run(m);
  bump_version(self);
  return self;
}

constexpr ResultKind P = ResultKind::Promote;
constexpr ResultKind F = ResultKind::PromoteFloat;
using M = ElementwiseMeta;

// ---------------------------------------------------------------- the arithmetic table
// (core/tables/arith_ops.def): add, sub, mul, div in their four forms each.
#define EMBER_ALPHA_PARAM_A , const Scalar& al
#define EMBER_ALPHA_PARAM_N
#define EMBER_ALPHA_VALUE_A al
#define EMBER_ALPHA_VALUE_N Scalar(1)
#define EMBER_ALPHA_ARG_A al,  // alpha as an argument before others
#define EMBER_ALPHA_ARG_N
#define EMBER_ALPHA_PARAM_TAIL_A , al  // ... and as the last one
#define EMBER_ALPHA_PARAM_TAIL_N
#define EMBER_ALPHA_SCHEMA_A ", Scalar alpha=1"
#define EMBER_ALPHA_SCHEMA_N ""

// CPU: K(out, a, b, compute, alpha) serves the four forms of each op.
void k_add(const cpu::Strided& o, const cpu::Strided& a, const cpu::Strided& b, DType c, double al) { cpu::add(o, a, b, al, c); }
void k_sub(const cpu::Strided& o, const cpu::Strided& a, const cpu::Strided& b, DType c, double al) { cpu::sub(o, a, b, al, c); }
void k_mul(const cpu::Strided& o, const cpu::Strided& a, const cpu::Strided& b, DType c, double) { cpu::mul(o, a, b, c); }
void k_div(const cpu::Strided& o, const cpu::Strided& a, const cpu::Strided& b, DType c, double) { cpu::div(o, a, b, c); }
#define EMBER_ARITH_CPU(name, Acl, kind, al, ...)                                                         \
  Tensor name##_cpu(const Tensor& a, const Tensor& b EMBER_ALPHA_PARAM_##al) {                            \
    const Scalar alpha = EMBER_ALPHA_VALUE_##al;                                                          \
    return result_of(#name, binary_meta(#name, a, b, kind), alpha, [&](const Tensor& o, const M& m) {     \
      k_##name(strided(o), strided_as(a, m.shape), strided_as(b, m.shape), m.compute, alpha.to_double()); \
    });                                                                                                   \
  }                                                                                                       \
  Tensor name##_s_cpu(const Tensor& a, const Scalar& b EMBER_ALPHA_PARAM_##al) {                          \
    const Scalar alpha = EMBER_ALPHA_VALUE_##al;                                                          \
    return result_of(#name, scalar_meta(#name, a, b, kind), alpha, [&](const Tensor& o, const M& m) {     \
      ScalarHolder h;                                                                                     \
      k_##name(strided(o), strided(a), h.view(b, a.dim()), m.compute, alpha.to_double());                 \
    });                                                                                                   \
  }                                                                                                       \
  Tensor name##__cpu(const Tensor& a, const Tensor& b EMBER_ALPHA_PARAM_##al) {                           \
    const Scalar alpha = EMBER_ALPHA_VALUE_##al;                                                          \
    return in_place(#name "_", a, binary_meta(#name "_", a, b, kind), alpha, [&](const M& m) {            \
      k_##name(strided(a), strided(a), strided_as(b, m.shape), m.compute, alpha.to_double());             \
    });                                                                                                   \
  }                                                                                                       \
  Tensor name##__s_cpu(const Tensor& a, const Scalar& b EMBER_ALPHA_PARAM_##al) {                         \
    const Scalar alpha = EMBER_ALPHA_VALUE_##al;                                                          \
    return in_place(#name "_", a, scalar_meta(#name "_", a, b, kind), alpha, [&](const M& m) {            \
      ScalarHolder h;                                                                                     \
      k_##name(strided(a), strided(a), h.view(b, a.dim()), m.compute, alpha.to_double());                 \
    });                                                                                                   \
  }
EMBER_ARITH_OPS(EMBER_ARITH_CPU)
#undef EMBER_ARITH_CPU

// NPU: the same meta, then aclnn.
#define EMBER_ARITH_NPU(name, Acl, kind, al, ...)                                                                    \
  Tensor name##_npu(const Tensor& a, const Tensor& b EMBER_ALPHA_PARAM_##al) {                                       \
    return result_of(#name, binary_meta(#name, a, b, kind), EMBER_ALPHA_VALUE_##al, [&](const Tensor& o, const M&) { \
      EXEC_NPU_CMD(npu::aclnn##Acl, a, b, EMBER_ALPHA_ARG_##al o);                                                   \
    });                                                                                                              \
  }                                                                                                                  \
  Tensor name##_s_npu(const Tensor& a, const Scalar& b EMBER_ALPHA_PARAM_##al) {                                     \
    return result_of(#name, scalar_meta(#name, a, b, kind), EMBER_ALPHA_VALUE_##al, [&](const Tensor& o, const M&) { \
      EXEC_NPU_CMD(npu::aclnn##Acl##s, a, b, EMBER_ALPHA_ARG_##al o);                                                \
    });                                                                                                              \
  }                                                                                                                  \
  Tensor name##__npu(const Tensor& a, const Tensor& b EMBER_ALPHA_PARAM_##al) {                                      \
    return in_place(#name "_", a, binary_meta(#name "_", a, b, kind), EMBER_ALPHA_VALUE_##al, [&](const M&) {        \
      EXEC_NPU_CMD(npu::aclnnInplace##Acl, a, b EMBER_ALPHA_PARAM_TAIL_##al);                                        \
    });                                                                                                              \
  }                                                                                                                  \
  Tensor name##__s_npu(const Tensor& a, const Scalar& b EMBER_ALPHA_PARAM_##al) {                                    \
    return in_place(#name "_", a, scalar_meta(#name "_", a, b, kind), EMBER_ALPHA_VALUE_##al, [&](const M&) {        \
      EXEC_NPU_CMD(npu::aclnnInplace##Acl##s, a, b EMBER_ALPHA_PARAM_TAIL_##al);                                     \
    });                                                                                                              \
  }
EMBER_ARITH_OPS(EMBER_ARITH_NPU)
#undef EMBER_ARITH_NPU

// The binary table's ops: out = f(a, b), broadcast and promoted.
#define EMBER_TABLE_KERNELS(name, Acl, kind, ...)                                                 \
  Tensor name##_cpu(const Tensor& a, const Tensor& b) {                                           \
    return result_of(#name, binary_meta(#name, a, b, kind), 1, [&](const Tensor& o, const M& m) { \
      cpu::name(strided(o), strided_as(a, m.shape), strided_as(b, m.shape), m.compute);           \
    });                                                                                           \
  }                                                                                               \
  Tensor name##_npu(const Tensor& a, const Tensor& b) {                                           \
    return result_of(#name, binary_meta(#name, a, b, kind), 1,                                    \
                     [&](const Tensor& o, const M&) { EXEC_NPU_CMD(npu::aclnn##Acl, a, b, o); }); \
  }
EMBER_BINARY_OPS(EMBER_TABLE_KERNELS)
#undef EMBER_TABLE_KERNELS
// ... and the in-place forms of the rows that have one (inplace I): self = f(self, b).
#define EMBER_TABLE_INPLACE_N(name, Acl, kind)
#define EMBER_TABLE_INPLACE_I(name, Acl, kind)                                             \
  Tensor name##__cpu(const Tensor& a, const Tensor& b) {                                   \
    return in_place(#name "_", a, binary_meta(#name "_", a, b, kind), 1, [&](const M& m) { \
      cpu::name(strided(a), strided(a), strided_as(b, m.shape), m.compute);                \
    });                                                                                    \
  }                                                                                        \
  Tensor name##__npu(const Tensor& a, const Tensor& b) {                                   \
    return in_place(#name "_", a, binary_meta(#name "_", a, b, kind), 1,                   \
                    [&](const M&) { EXEC_NPU_CMD(npu::aclnnInplace##Acl, a, b); });        \
  }
#define EMBER_TABLE_INPLACE(name, Acl, kind, expr, saves, ga, gb, ref, lo, hi, exact, policy, inplace) \
  EMBER_TABLE_INPLACE_##inplace(name, Acl, kind)
EMBER_BINARY_OPS(EMBER_TABLE_INPLACE)
#undef EMBER_TABLE_INPLACE

}  // namespace

// ---------------------------------------------------------------- declarations
// An arithmetic op's four forms: name, name.Scalar, name_ and name_.Scalar (declared as
// name_Scalar, name__Scalar).
#define EMBER_SIG_A(other) Tensor(const Tensor&, other, const Scalar&)
#define EMBER_SIG_N(other) Tensor(const Tensor&, other)
namespace op {
#define EMBER_DECL(name, Acl, kind, al, ...)                                                                           \
  EMBER_DECLARE_OP(name, Keep, "ember::" #name "(Tensor self, Tensor other" EMBER_ALPHA_SCHEMA_##al ") -> Tensor",     \
                   EMBER_SIG_##al(const Tensor&));                                                                     \
  EMBER_DECLARE_OP(name##_Scalar, Keep,                                                                                \
                   "ember::" #name ".Scalar(Tensor self, Scalar other" EMBER_ALPHA_SCHEMA_##al ") -> Tensor",          \
                   EMBER_SIG_##al(const Scalar&));                                                                     \
  EMBER_DECLARE_OP(name##_, Keep,                                                                                      \
                   "ember::" #name "_(Tensor(a!) self, Tensor other" EMBER_ALPHA_SCHEMA_##al ") -> Tensor(a!)",        \
                   EMBER_SIG_##al(const Tensor&));                                                                     \
  EMBER_DECLARE_OP(name##__Scalar, Keep,                                                                               \
                   "ember::" #name "_.Scalar(Tensor(a!) self, Scalar other" EMBER_ALPHA_SCHEMA_##al ") -> Tensor(a!)", \
                   EMBER_SIG_##al(const Scalar&));
EMBER_ARITH_OPS(EMBER_DECL)
#undef EMBER_DECL
#define EMBER_DECL_INPLACE_N(name)
#define EMBER_DECL_INPLACE_I(name)                                                                 \
  EMBER_DECLARE_OP(name##_, Keep, "ember::" #name "_(Tensor(a!) self, Tensor other) -> Tensor(a!)", \
                   Tensor(const Tensor&, const Tensor&));
#define EMBER_DECL(name, Acl, kind, expr, saves, ga, gb, ref, lo, hi, exact, policy, inplace) \
  EMBER_DECLARE_OP(name, policy, "ember::" #name "(Tensor self, Tensor other) -> Tensor",    \
                   Tensor(const Tensor&, const Tensor&));                                    \
  EMBER_DECL_INPLACE_##inplace(name)
EMBER_BINARY_OPS(EMBER_DECL)
#undef EMBER_DECL
}  // namespace op

EMBER_LIBRARY(ember, m) {
#define EMBER_DEF(name, ...) \
  m.def(op::name());         \
  m.def(op::name##_Scalar()); \
  m.def(op::name##_());      \
  m.def(op::name##__Scalar());
  EMBER_ARITH_OPS(EMBER_DEF)
#undef EMBER_DEF
#define EMBER_DEF_N(name)
#define EMBER_DEF_I(name) m.def(op::name##_());
#define EMBER_DEF(name, Acl, kind, expr, saves, ga, gb, ref, lo, hi, exact, policy, inplace) \
  m.def(op::name());                                                                        \
  EMBER_DEF_##inplace(name)
  EMBER_BINARY_OPS(EMBER_DEF)
#undef EMBER_DEF
}

// ---------------------------------------------------------------- CPU
#define EMBER_IMPL_FORMS(name, dev)              \
  m.impl(op::name(), &name##_##dev);             \
  m.impl(op::name##_Scalar(), &name##_s_##dev);  \
  m.impl(op::name##_(), &name##__##dev);         \
  m.impl(op::name##__Scalar(), &name##__s_##dev);
EMBER_LIBRARY_IMPL(ember, CPU, m) {
#define EMBER_IMPL(name, ...) EMBER_IMPL_FORMS(name, cpu)
  EMBER_ARITH_OPS(EMBER_IMPL)
#undef EMBER_IMPL
#define EMBER_IMPL_N(name, dev)
#define EMBER_IMPL_I(name, dev) m.impl(op::name##_(), &name##__##dev);
#define EMBER_IMPL(name, Acl, kind, expr, saves, ga, gb, ref, lo, hi, exact, policy, inplace) \
  m.impl(op::name(), &name##_cpu);                                                           \
  EMBER_IMPL_##inplace(name, cpu)
  EMBER_BINARY_OPS(EMBER_IMPL)
#undef EMBER_IMPL
}

EMBER_LIBRARY_IMPL(ember, NPU, m) {
#define EMBER_IMPL(name, ...) EMBER_IMPL_FORMS(name, npu)
  EMBER_ARITH_OPS(EMBER_IMPL)
#undef EMBER_IMPL
#define EMBER_IMPL(name, Acl, kind, expr, saves, ga, gb, ref, lo, hi, exact, policy, inplace) \
  m.impl(op::name(), &name##_npu);                                                           \
  EMBER_IMPL_##inplace(name, npu)
  EMBER_BINARY_OPS(EMBER_IMPL)
#undef EMBER_IMPL
}

// ---------------------------------------------------------------- public functions
#define EMBER_FN(name, Acl, kind, al, ...)                                                                            \
  Tensor name(const Tensor& a, const Tensor& b EMBER_ALPHA_PARAM_##al) {                                              \
    return op::name::call(a, b EMBER_ALPHA_PARAM_TAIL_##al);                                                     \
  }                                                                                                                   \
  Tensor name(const Tensor& a, const Scalar& b EMBER_ALPHA_PARAM_##al) {                                              \
    return op::name##_Scalar::call(a, b EMBER_ALPHA_PARAM_TAIL_##al);                                            \
  }                                                                                                                   \
  Tensor Tensor::name(const Tensor& o EMBER_ALPHA_PARAM_##al) const {                                                 \
    return ember::name(*this, o EMBER_ALPHA_PARAM_TAIL_##al);                                                         \
  }                                                                                                                   \
  Tensor Tensor::name(const Scalar& o EMBER_ALPHA_PARAM_##al) const {                                                 \
    return ember::name(*this, o EMBER_ALPHA_PARAM_TAIL_##al);                                                         \
  }                                                                                                                   \
  Tensor& Tensor::name##_(const Tensor& o EMBER_ALPHA_PARAM_##al) {                                                   \
    op::name##_::call(*this, o EMBER_ALPHA_PARAM_TAIL_##al);                                                        \
    return *this;                                                                                                     \
  }                                                                                                                   \
  Tensor& Tensor::name##_(const Scalar& o EMBER_ALPHA_PARAM_##al) {                                                   \
    op::name##__Scalar::call(*this, o EMBER_ALPHA_PARAM_TAIL_##al);                                                 \
    return *this;                                                                                                     \
  }
EMBER_ARITH_OPS(EMBER_FN)
#undef EMBER_FN
Tensor& add_(Tensor& self, const Tensor& other, const Scalar& alpha) { return self.add_(other, alpha); }
Tensor& mul_(Tensor& self, const Tensor& other) { return self.mul_(other); }

using T2 = Tensor(const Tensor&, const Tensor&);
#define EMBER_FN(name, ...)                                                                          \
  Tensor name(const Tensor& a, const Tensor& b) { return op::name::call(a, b); }                     \
  Tensor Tensor::name(const Tensor& o) const { return ember::name(*this, o); }
EMBER_BINARY_OPS(EMBER_FN)
#undef EMBER_FN
#define EMBER_FN_INPLACE_N(name)
#define EMBER_FN_INPLACE_I(name)             \
  Tensor& Tensor::name##_(const Tensor& o) { \
    op::name##_::call(*this, o);             \
    return *this;                            \
  }
#define EMBER_FN(name, Acl, kind, expr, saves, ga, gb, ref, lo, hi, exact, policy, inplace) EMBER_FN_INPLACE_##inplace(name)
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

#define EMBER_ARITH_SPEC_N(spec) spec
#define EMBER_ARITH_SPEC_AB(spec) spec.saving(saves(0, 1))
#define EMBER_ARITH_SPEC_ABU(spec) spec.saving(saves(0, 1)).upcasting()
#define EMBER_ARITH_BW(name, Acl, kind, al, save, scalar_bw)                                                          \
  using name##_sig = EMBER_SIG_##al(const Tensor&);                                                                   \
  using name##_scalar_sig = EMBER_SIG_##al(const Scalar&);                                                            \
  const auto bw_##name = EMBER_ARITH_SPEC_##save((spec_of<op::name>(#Acl "Backward", &name##_bw)));                  \
  const auto bw_##name##_s = spec_of<op::name##_Scalar>(#Acl "Backward", &scalar_bw);                                 \
  const auto bw_##name##_ = EMBER_ARITH_SPEC_##save((spec_of<op::name##_>(#Acl "Backward", &name##_bw))).in_place();  \
  const auto bw_##name##__s = spec_of<op::name##__Scalar>(#Acl "Backward", &scalar_bw).in_place();
EMBER_ARITH_OPS(EMBER_ARITH_BW)
#undef EMBER_ARITH_BW

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
  const auto k_##name = EMBER_BW_SPEC_##saves((spec_of<op::name>(#Acl "Backward", &name##_bw)));
EMBER_BINARY_OPS(EMBER_BW)
#undef EMBER_BW
// In place: the same formula, recorded on self's history (a and b as they were).
#define EMBER_BW_INPLACE_N(name, Acl, saves)
#define EMBER_BW_INPLACE_I(name, Acl, saves) \
  const auto k_##name##_ = EMBER_BW_SPEC_##saves((spec_of<op::name##_>(#Acl "Backward", &name##_bw))).in_place();
#define EMBER_BW(name, Acl, kind, expr, saves, ga, gb, ref, lo, hi, exact, policy, inplace) \
  EMBER_BW_INPLACE_##inplace(name, Acl, saves)
EMBER_BINARY_OPS(EMBER_BW)
#undef EMBER_BW
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
#define EMBER_ARITH_BW_IMPL(name, ...)                        \
  m.impl(op::name(), autograd_kernel<&bw_##name>());                \
  m.impl(op::name##_Scalar(), autograd_kernel<&bw_##name##_s>());   \
  m.impl(op::name##_(), autograd_kernel<&bw_##name##_>());          \
  m.impl(op::name##__Scalar(), autograd_kernel<&bw_##name##__s>());
  EMBER_ARITH_OPS(EMBER_ARITH_BW_IMPL)
#undef EMBER_ARITH_BW_IMPL
#define EMBER_BW_IMPL_N(name)
#define EMBER_BW_IMPL_I(name) m.impl(op::name##_(), autograd_kernel<&k_##name##_>());
#define EMBER_BW_IMPL(name, Acl, kind, expr, saves, ga, gb, ref, lo, hi, exact, policy, inplace) \
  m.impl(op::name(), autograd_kernel<&k_##name>());                                             \
  EMBER_BW_IMPL_##inplace(name)
  EMBER_BINARY_OPS(EMBER_BW_IMPL)
#undef EMBER_BW_IMPL
}

}  // namespace ember
