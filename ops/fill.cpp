// fill_(value), zero_, and the device-side fillers behind the factories: arange_fill_
// (self[i] = start + i * step over the flattened tensor) and the counter-based random fills
// uniform_, normal_, random_ (element i drawn from Philox(seed, offset + i)), and randperm_fill_
// (self = a permutation of 0 .. numel - 1, cpu::randperm's on both devices).
#include <cmath>
#include <vector>

#include "ember/device/cpu/elementwise.h"
#include "ember/device/cpu/random.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

#include "ember/ops/internal/fill_decls.h"

namespace ember::op {
// They write one value to every element, so an expanded self is allowed (Note [Write checks]).
struct fill_ : OpDecl<fill_, Tensor(const Tensor&, const Scalar&)> {
  static constexpr std::string_view ident = "fill_";
  static constexpr std::string_view schema = "ember::fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)";
  static constexpr AmpPolicy amp = AmpPolicy::Keep;
  static constexpr bool writes_idempotent = true;
};
struct zero_ : OpDecl<zero_, Tensor(const Tensor&)> {
  static constexpr std::string_view ident = "zero_";
  static constexpr std::string_view schema = "ember::zero_(Tensor(a!) self) -> Tensor(a!)";
  static constexpr AmpPolicy amp = AmpPolicy::Keep;
  static constexpr bool writes_idempotent = true;
};
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

Tensor fill__cpu(const Tensor& self, const Scalar& v) {
  if (v.is_floating_point()) {
    cpu::fill(strided(self), v.to_double());
  } else {
    cpu::fill_int(strided(self), v.to_int());
  }
  bump_version(self);
  return self;
}

Tensor zero__any(const Tensor& self) {
  Tensor s = self;
  return fill_(s, 0);
}

void check_contiguous_fill(const char* op, const Tensor& self) {
  EMBER_CHECK_SHAPE(self.is_contiguous(), op, ": expects a contiguous tensor, got sizes ", self.sizes_ref(),
                    " strides ", self.strides_ref());
}

// An integer sequence start, start + step, ... of n elements must fit int64 (checked at its last
// element; the sequence is monotonic).
int64_t checked_last_element(const char* op, int64_t start, int64_t step, int64_t n) {
  int64_t span = 0, last = start;
  bool bad = n > 0 && (__builtin_mul_overflow(step, n - 1, &span) || __builtin_add_overflow(start, span, &last));
  EMBER_CHECK_VALUE(!bad, op, ": start ", start, " + ", n - 1, " steps of ", step, " overflows int64");
  return last;
}

Tensor arange_fill__cpu(const Tensor& self, const Scalar& start, const Scalar& step) {
  check_contiguous_fill(op::arange_fill_::op_name(), self);
  if (!start.is_floating_point() && !step.is_floating_point())
    checked_last_element(op::arange_fill_::op_name(), start.to_int(), step.to_int(), self.numel());
  int64_t n = self.numel();
  cpu::Strided idx;
  if (is_integral(self.dtype(), true) && !start.is_floating_point() && !step.is_floating_point()) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start.to_int() + i * step.to_int();
    cpu::convert(v.data(), kInt64, 1, self.impl()->data(), self.dtype(), 1, n);
  } else {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start.to_double() + static_cast<double>(i) * step.to_double();
    cpu::convert(v.data(), kFloat64, 1, self.impl()->data(), self.dtype(), 1, n);
  }
  bump_version(self);
  return self;
}

Tensor random_fill(const Tensor& self, cpu::Distribution d, double a, double b, int64_t seed, int64_t offset,
                   int64_t lo = 0, int64_t hi = 1) {
  cpu::RandomSpec spec;
  spec.dist = d;
  spec.a = a;
  spec.b = b;
  spec.lo = lo;
  spec.hi = hi;
  spec.seed = static_cast<uint64_t>(seed);
  spec.offset = static_cast<uint64_t>(offset);
  cpu::fill_random(strided(self), spec);
  bump_version(self);
  return self;
}
Tensor uniform__cpu(const Tensor& self, double from, double to, int64_t seed, int64_t offset) {
  EMBER_CHECK_VALUE(from <= to, op::uniform_::op_name(), ": expects from <= to, got from=", from, " to=", to);
  return random_fill(self, cpu::Distribution::Uniform, from, to, seed, offset);
}
Tensor normal__cpu(const Tensor& self, double mean, double std, int64_t seed, int64_t offset) {
  EMBER_CHECK_VALUE(std >= 0, op::normal_::op_name(), ": expects std >= 0, got ", std);
  return random_fill(self, cpu::Distribution::Normal, mean, std, seed, offset);
}
Tensor random__cpu(const Tensor& self, int64_t low, int64_t high, int64_t seed, int64_t offset) {
  EMBER_CHECK_VALUE(low < high, op::random_::op_name(), ": expects low < high, got low=", low, " high=", high);
  return random_fill(self, cpu::Distribution::Integer, 0, 0, seed, offset, low, high);
}

// randperm_fill_: a 1-d tensor of a dtype that holds 0 .. n - 1 exactly.
void check_randperm(const Tensor& self) {
  const char* op = ::ember::op::randperm_fill_::op_name();
  EMBER_CHECK_SHAPE(self.dim() == 1, op, ": expects a 1-d tensor, got sizes ", self.sizes_ref());
  const DType dt = self.dtype();
  EMBER_CHECK_DTYPE(dt != kBool, op, ": expects an integer or floating tensor, got bool");
  const int64_t n = self.numel();
  const int64_t exact = cpu::randperm_limit(dt);
  EMBER_CHECK_VALUE(n <= exact, op, ": a permutation of ", n, " elements does not fit ", dt, " (at most ", exact,
                    ")");
}
Tensor randperm_fill__cpu(const Tensor& self, int64_t seed, int64_t offset) {
  check_randperm(self);
  std::vector<int64_t> perm(static_cast<size_t>(self.numel()));
  const uint64_t key = static_cast<uint64_t>(seed), counter = static_cast<uint64_t>(offset);
  cpu::randperm(perm.data(), static_cast<int64_t>(perm.size()), key, counter);
  const int64_t n = self.numel();
  cpu::copy(strided(self), cpu::Strided(perm.data(), kInt64, DimVector{n}, DimVector{1}));
  bump_version(self);
  return self;
}

// ---------------------------------------------------------------- NPU
Tensor fill__npu(const Tensor& self, const Scalar& v) {
  EXEC_NPU_CMD(npu::aclnnInplaceFillScalar, self, v);
  bump_version(self);
  return self;
}
Tensor arange_fill__npu(const Tensor& self, const Scalar& start, const Scalar& step) {
  check_contiguous_fill(op::arange_fill_::op_name(), self);
  // aclnnArange takes an end: halfway past the last element, so ceil((end - start) / step) is
  // numel() whatever the rounding of a fractional step.
  double end = start.to_double() + step.to_double() * (static_cast<double>(self.numel()) - 0.5);
  bool integral = !start.is_floating_point() && !step.is_floating_point();
  Scalar e = end;
  if (integral && self.numel() > 0) {  // one past the last element, in the step's direction
    int64_t last = checked_last_element(op::arange_fill_::op_name(), start.to_int(), step.to_int(), self.numel()),
            past = 0;
    EMBER_CHECK_VALUE(!__builtin_add_overflow(last, step.to_int() > 0 ? 1 : -1, &past), op::arange_fill_::op_name(),
                      ": on npu the ", "last element ", last, " must not be the end of the int64 range");
    e = Scalar(past);
  }
  if (self.numel() == 0) e = start;
  EXEC_NPU_CMD(npu::aclnnArange, start, e, step, self);
  bump_version(self);
  return self;
}
Tensor uniform__npu(const Tensor& self, double from, double to, int64_t seed, int64_t offset) {
  EMBER_CHECK_VALUE(from <= to, op::uniform_::op_name(), ": expects from <= to, got from=", from, " to=", to);
  EXEC_NPU_CMD(npu::aclnnInplaceUniform, self, from, to, static_cast<uint64_t>(seed), static_cast<uint64_t>(offset));
  bump_version(self);
  return self;
}
Tensor normal__npu(const Tensor& self, double mean, double std, int64_t seed, int64_t offset) {
  EMBER_CHECK_VALUE(std >= 0, op::normal_::op_name(), ": expects std >= 0, got ", std);
  EXEC_NPU_CMD(npu::aclnnInplaceNormal, self, static_cast<float>(mean), static_cast<float>(std), seed, offset);
  bump_version(self);
  return self;
}
Tensor randperm_fill__npu(const Tensor& self, int64_t seed, int64_t offset) {
  check_randperm(self);
  EXEC_NPU_CMD(npu::aclnnRandperm, self.numel(), seed, offset, self);
  bump_version(self);
  return self;
}
Tensor random__npu(const Tensor& self, int64_t low, int64_t high, int64_t seed, int64_t offset) {
  EMBER_CHECK_VALUE(low < high, op::random_::op_name(), ": expects low < high, got low=", low, " high=", high);
  EXEC_NPU_CMD(npu::aclnnInplaceRandom, self, low, high, seed, offset);
  bump_version(self);
  return self;
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  // One value to every element: an expanded self is allowed (Note [Write checks]).
  m.def(op::fill_());
  m.def(op::zero_());
  m.impl(op::zero_(), DispatchKey::CompositeImplicit, &zero__any);
  m.def(op::arange_fill_());
  m.def(op::uniform_());
  m.def(op::normal_());
  m.def(op::random_());
  m.def(op::randperm_fill_());
}

EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::fill_(), &fill__npu);
  m.impl(op::arange_fill_(), &arange_fill__npu);
  m.impl(op::uniform_(), &uniform__npu);
  m.impl(op::normal_(), &normal__npu);
  m.impl(op::random_(), &random__npu);
  m.impl(op::randperm_fill_(), &randperm_fill__npu);
}

EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::fill_(), &fill__cpu);
  m.impl(op::arange_fill_(), &arange_fill__cpu);
  m.impl(op::uniform_(), &uniform__cpu);
  m.impl(op::normal_(), &normal__cpu);
  m.impl(op::random_(), &random__cpu);
  m.impl(op::randperm_fill_(), &randperm_fill__cpu);
}

Tensor& fill_(Tensor& self, const Scalar& value) {
  op::fill_::call(self, value);
  return self;
}
Tensor& zero_(Tensor& self) {
  op::zero_::call(self);
  return self;
}
Tensor& Tensor::fill_(const Scalar& v) { return ember::fill_(*this, v); }
Tensor& Tensor::zero_() { return ember::zero_(*this); }

// ---------------------------------------------------------------- backward
// The fills overwrite self with values that do not depend on it: self's old history gets no
// gradient, and self becomes a non-leaf whose backward passes nothing.
namespace {
using namespace autograd;
template <class Sig>
std::vector<Tensor> overwrite_bw(const BackwardCtx<Sig>&) {
  return {Tensor()};
}
using FillSig = Tensor(const Tensor&, const Scalar&);
using ArangeSig = Tensor(const Tensor&, const Scalar&, const Scalar&);
using RandSig = Tensor(const Tensor&, double, double, int64_t, int64_t);
using RandIntSig = Tensor(const Tensor&, int64_t, int64_t, int64_t, int64_t);
const auto kFill = spec_of<op::fill_>("FillBackward", &overwrite_bw<FillSig>).in_place();
const auto kArange = spec_of<op::arange_fill_>("ArangeFillBackward", &overwrite_bw<ArangeSig>).in_place();
const auto kUniform = spec_of<op::uniform_>("UniformBackward", &overwrite_bw<RandSig>).in_place();
const auto kNormal = spec_of<op::normal_>("NormalBackward", &overwrite_bw<RandSig>).in_place();
const auto kRandom = spec_of<op::random_>("RandomBackward", &overwrite_bw<RandIntSig>).in_place();
using PermSig = Tensor(const Tensor&, int64_t, int64_t);
const auto kRandperm =
    spec_of<op::randperm_fill_>("RandpermFillBackward", &overwrite_bw<PermSig>).in_place();
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::fill_(), autograd_kernel<&kFill>());
  m.impl(op::arange_fill_(), autograd_kernel<&kArange>());
  m.impl(op::uniform_(), autograd_kernel<&kUniform>());
  m.impl(op::normal_(), autograd_kernel<&kNormal>());
  m.impl(op::random_(), autograd_kernel<&kRandom>());
  m.impl(op::randperm_fill_(), autograd_kernel<&kRandperm>());
}

}  // namespace ember
