// clamp(x, min, max) (either bound optional; NaN stays NaN), clamp_ in place, clamp_min, clamp_max.
#include <algorithm>

#include "ember/device/cpu/elementwise.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/elementwise_util.h"
#include "ember/ops/npu_exec.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(clamp, Keep, "ember::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
                 Tensor(const Tensor&, const std::optional<Scalar>&, const std::optional<Scalar>&));
EMBER_DECLARE_OP(clamp_, Keep, "ember::clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)",
                 Tensor(const Tensor&, const std::optional<Scalar>&, const std::optional<Scalar>&));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

// Result dtype: x's dtype promoted with the bounds (an int tensor clamped to 0.5 becomes float).
DType clamp_dtype(const Tensor& x, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  EMBER_CHECK_VALUE(lo || hi, op::clamp::op_name(), ": at least one of 'min' or 'max' must not be None");
  EMBER_CHECK_DTYPE(x.dtype() != kBool, op::clamp::op_name(), ": not implemented for bool");
  DType t = x.dtype();
  if (lo) t = result_type({TypeOperand(x), TypeOperand(*lo)});
  if (hi) t = promote_types(t, result_type({TypeOperand(x), TypeOperand(*hi)}));
  return t;
}

Tensor clamp_cpu(const Tensor& x, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  Tensor out = empty_on(x.sizes_ref(), clamp_dtype(x, lo, hi), x.device());
  cpu::clamp(strided(out), strided(x), lo.has_value(), lo ? lo->to_double() : 0, hi.has_value(), hi ? hi->to_double() : 0);
  return out;
}

Tensor clamp__cpu(const Tensor& self, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  check_can_cast(op::clamp_::op_name(), clamp_dtype(self, lo, hi), self.dtype());
  cpu::clamp(strided(self), strided(self), lo.has_value(), lo ? lo->to_double() : 0, hi.has_value(),
             hi ? hi->to_double() : 0);
  bump_version(self);
  return self;
}

Tensor clamp_npu(const Tensor& x, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  Tensor out = empty_on(x.sizes(), clamp_dtype(x, lo, hi), x.device());
  EXEC_NPU_CMD(npu::aclnnClamp, x, lo, hi, out);
  return out;
}

Tensor clamp__npu(const Tensor& self, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  check_can_cast(op::clamp_::op_name(), clamp_dtype(self, lo, hi), self.dtype());
  EXEC_NPU_CMD(npu::aclnnClamp, self, lo, hi, self);
  bump_version(self);
  return self;
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::clamp());
  m.def(op::clamp_());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::clamp(), &clamp_cpu);
  m.impl(op::clamp_(), &clamp__cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::clamp(), &clamp_npu);
  m.impl(op::clamp_(), &clamp__npu);
}

using Sig = Tensor(const Tensor&, const std::optional<Scalar>&, const std::optional<Scalar>&);
Tensor clamp(const Tensor& x, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  return op::clamp::call(x, lo, hi);
}
Tensor clamp_min(const Tensor& x, const Scalar& lo) { return ember::clamp(x, lo, std::nullopt); }
Tensor clamp_max(const Tensor& x, const Scalar& hi) { return ember::clamp(x, std::nullopt, hi); }
Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const { return ember::clamp(*this, lo, hi); }
Tensor Tensor::clamp_min(const Scalar& lo) const { return ember::clamp_min(*this, lo); }
Tensor Tensor::clamp_max(const Scalar& hi) const { return ember::clamp_max(*this, hi); }
Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
  op::clamp_::call(*this, lo, hi);
  return *this;
}

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
using ClampSig = Tensor(const Tensor&, const std::optional<Scalar>&, const std::optional<Scalar>&);
// d clamp(x, lo, hi) = g where lo <= x <= hi, else 0 (x saved; clamp_ saves a copy of self)
std::vector<Tensor> clamp_bw(const BackwardCtx<ClampSig>& c) {
  Tensor x = c.arg<0>();
  const auto& lo = c.arg<1>();
  const auto& hi = c.arg<2>();
  Tensor keep = ones_like(x, kBool);
  if (lo) keep = logical_and(keep, x >= *lo);
  if (hi) keep = logical_and(keep, x <= *hi);
  return {c.grad() * keep};
}
const auto kClamp = spec_of<op::clamp>("ClampBackward", &clamp_bw).saving(saves(0));
const auto kClamp_ = spec_of<op::clamp_>("ClampBackward", &clamp_bw).saving(saves(0)).in_place();
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::clamp(), autograd_kernel<&kClamp>());
  m.impl(op::clamp_(), autograd_kernel<&kClamp_>());
}

}  // namespace ember
