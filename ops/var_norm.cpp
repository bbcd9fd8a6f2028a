// var(x, dims, unbiased, keepdim) = sum((x - mean)^2) / (N - unbiased) (two passes, in fp32 for
// fp16/bf16) is a composite; norm(x) (the 2-norm of all elements) is norm(x, 2).
// norm(x, p, dims, keepdim) (the p-norm over dims: p = 2, 1, inf, -inf, 0 (count of non-zeros) or
// any other p as sum(|x|^p)^(1/p)) is an op: on the CPU that composite, on the NPU CANN's
// aclnnNorm; its node NormBackward1 applies PyTorch's norm_backward with differentiable ops.
#include <cmath>

#include "ember/autograd/op_spec.h"
#include "ember/dispatch/library.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"

namespace ember::op {
EMBER_DECLARE_OP(var, Float32,
                 "ember::var(Tensor self, int[] dim=[], bool unbiased=True, "
                 "bool keepdim=False) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, bool, bool));
EMBER_DECLARE_OP(norm, Float32, "ember::norm(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_DECLARE_OP(norm_p, Float32, "ember::norm.p(Tensor self, Scalar p, int[] dim=[], bool keepdim=False) -> Tensor",
                 Tensor(const Tensor&, const Scalar&, IntArrayRef, bool));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

Tensor var_any(const Tensor& x, IntArrayRef dims, bool unbiased, bool keepdim) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), op::var::op_name(), ": expects a floating tensor, got ", x.dtype());
  Tensor xf = is_reduced_float(x.dtype()) ? x.to(kFloat32) : x;
  uint64_t mask = reduce_mask(op::var::op_name(), dims, x.dim());
  int64_t n = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if ((mask >> d) & 1) n *= x.size(d);
  Tensor centered = ember::sub(xf, ember::mean(xf, dims, true));
  Tensor ss = ember::sum(ember::square(centered), dims, keepdim);
  double denom = static_cast<double>(n) - (unbiased ? 1.0 : 0.0);
  Tensor v = ember::div(ss, Scalar(denom > 0 ? denom : 0.0));
  return v.dtype() == x.dtype() ? v : v.to(x.dtype());
}

// s^e for a sum of non-negative terms s, with 0 (not inf * 0 = nan) as the derivative where s
// is 0: the masked input keeps the root's derivative finite (PyTorch's norm gives 0 there).
Tensor root_of_sum(const Tensor& s, double e) {
  Tensor pos = s.gt(0);
  Tensor safe = ember::where(pos, s, ember::ones_like(s));
  Tensor r = e == 0.5 ? ember::sqrt(safe) : ember::pow(safe, e);
  return ember::where(pos, r, ember::zeros_like(s));
}

// norm(x): norm(x, 2) over every element (one op: aclnnNorm on the NPU, node NormBackward1).
Tensor norm_any(const Tensor& x) { return ember::norm(x, Scalar(2.0), {}, false); }

void check_norm(const Tensor& x, const Scalar& p) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), op::norm::op_name(), ": expects a floating tensor, got ", x.dtype());
  EMBER_CHECK_VALUE(!std::isnan(p.to_double()), op::norm::op_name(), ": p must be a number, got nan");
}
Tensor norm_p(const Tensor& x, const Scalar& p_, IntArrayRef dims, bool keepdim) {
  check_norm(x, p_);
  const double p = p_.to_double();
  reduce_mask(op::norm::op_name(), dims, x.dim());  // checks the dims
  Tensor xf = is_reduced_float(x.dtype()) ? x.to(kFloat32) : x;
  Tensor r;
  if (p == 2) {
    r = root_of_sum(ember::sum(ember::square(xf), dims, keepdim), 0.5);
  } else if (p == 1) {
    r = ember::sum(ember::abs(xf), dims, keepdim);
  } else if (std::isinf(p)) {
    r = p > 0 ? ember::amax(ember::abs(xf), dims, keepdim) : ember::amin(ember::abs(xf), dims, keepdim);
  } else if (p == 0) {
    r = ember::sum(xf.ne(0), dims, keepdim, xf.dtype());
  } else {
    r = root_of_sum(ember::sum(ember::pow(ember::abs(xf), p), dims, keepdim), 1.0 / p);
  }
  return r.dtype() == x.dtype() ? r : r.to(x.dtype());
}

Tensor norm_p_npu(const Tensor& x, const Scalar& p, IntArrayRef dims, bool keepdim) {
  check_norm(x, p);
  uint64_t mask = reduce_mask(op::norm::op_name(), dims, x.dim());
  Tensor out = empty_on(reduced_shape(x.sizes_ref(), mask, keepdim), x.dtype(), x.device());
  EXEC_NPU_CMD(npu::aclnnNorm, x, p, dims, keepdim, out);
  return out;
}

// ---------------------------------------------------------------- backward
// PyTorch's norm_backward, g and y in the keepdim layout: 0 for p = 0; sign(x) g for p = 1; for
// +-inf, g sign(x) shared among the elements whose |x| is the norm; else
// sign(x) |x|^(p-1) g / y^(p-1), 0 where y is 0 (and, for p < 1, where x is 0).
Tensor norm_grad(const Tensor& g, const Tensor& x0, const Tensor& y0, double p, IntArrayRef dims) {
  const bool reduced = is_reduced_float(x0.dtype());
  Tensor x = reduced ? x0.to(kFloat32) : x0, y = reduced ? y0.to(kFloat32) : y0, gr = reduced ? g.to(kFloat32) : g;
  Tensor r;
  if (p == 0) {  // zeros, recorded (so create_graph has a gradient to differentiate again)
    r = where(ones(x.sizes(), TensorOptions(kBool).device(x.device())), zeros({}, x.options()), x * gr);
  } else if (p == 1) {
    r = x.sign() * gr;
  } else if (std::isinf(p)) {
    Tensor hit = x.abs().eq(y).to(x.dtype());
    r = x.sign() * hit * (gr / hit.sum(dims, true));
  } else {
    Tensor zero = zeros({}, x.options());
    Tensor scaled = p == 2 ? x : x.sign() * x.abs().pow(p - 1);
    if (p < 1) scaled = where(x.eq(0), zero, scaled);
    Tensor pos = y.gt(0);
    Tensor denom = p == 2 ? y : y.pow(p - 1);
    r = scaled * where(pos, gr / where(pos, denom, ones_like(denom)), zero);
  }
  return r.dtype() == x0.dtype() ? r : r.to(x0.dtype());
}
using NormSig = Tensor(const Tensor&, const Scalar&, IntArrayRef, bool);
std::vector<Tensor> norm_bw(const autograd::BackwardCtx<NormSig>& c) {
  const IntArrayRef sizes = c.meta<0>().sizes, dims = c.arg<2>();
  const bool keepdim = c.arg<3>();
  Tensor g = unsqueeze_reduced(c.grad(), sizes, dims, keepdim), y = unsqueeze_reduced(c.output(), sizes, dims, keepdim);
  return {norm_grad(g, c.arg<0>(), y, c.arg<1>().to_double(), dims)};
}
const auto kNorm = autograd::spec_of<op::norm_p>("NormBackward1", &norm_bw)
                       .saving(autograd::saves(0))
                       .saving_output();
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::var(), &var_any);
  m.def(op::norm(), &norm_any);
  m.def(op::norm_p());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl(op::norm_p(), &norm_p); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl(op::norm_p(), &norm_p_npu); }
EMBER_LIBRARY_IMPL(ember, Autograd, m) { m.impl(op::norm_p(), autograd::autograd_kernel<&kNorm>()); }

Tensor var(const Tensor& x, IntArrayRef dims, bool unbiased, bool keepdim) {
  return op::var::call(x, dims, unbiased, keepdim);
}
Tensor norm(const Tensor& x) { return op::norm::call(x); }
Tensor norm(const Tensor& x, const Scalar& p, IntArrayRef dims, bool keepdim) {
  return op::norm_p::call(x, p, dims, keepdim);
}
Tensor Tensor::var(IntArrayRef dims, bool unbiased, bool keepdim) const { return ember::var(*this, dims, unbiased, keepdim); }
Tensor Tensor::var(bool unbiased) const { return ember::var(*this, {}, unbiased, false); }
Tensor Tensor::norm() const { return ember::norm(*this); }
Tensor Tensor::norm(const Scalar& p, IntArrayRef dims, bool keepdim) const { return ember::norm(*this, p, dims, keepdim); }

}  // namespace ember
