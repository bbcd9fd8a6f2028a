// var(x, dims, unbiased, keepdim) = sum((x - mean)^2) / (N - unbiased) (two passes, in fp32 for
// fp16/bf16), norm(x) = sqrt(sum(x^2)) (the 2-norm of all elements) and norm(x, p, dims,
// keepdim) (the p-norm over dims: p = 2, 1, inf, -inf, 0 (count of non-zeros) or any other p as
// sum(|x|^p)^(1/p)). All are composites.
#include <cmath>

#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

namespace ember {
namespace {
using namespace ops;

Tensor var_any(const Tensor& x, IntArrayRef dims, bool unbiased, bool keepdim) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), "var: expects a floating tensor, got ", x.dtype());
  Tensor xf = is_reduced_float(x.dtype()) ? x.to(kFloat32) : x;
  uint64_t mask = reduce_mask("var", dims, x.dim());
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

Tensor norm_any(const Tensor& x) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), "norm: expects a floating tensor, got ", x.dtype());
  Tensor xf = is_reduced_float(x.dtype()) ? x.to(kFloat32) : x;
  Tensor r = root_of_sum(ember::sum(ember::square(xf)), 0.5);
  return r.dtype() == x.dtype() ? r : r.to(x.dtype());
}

Tensor norm_p(const Tensor& x, const Scalar& p_, IntArrayRef dims, bool keepdim) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), "norm: expects a floating tensor, got ", x.dtype());
  double p = p_.to_double();
  EMBER_CHECK_VALUE(!std::isnan(p), "norm: p must be a number, got nan");
  reduce_mask("norm", dims, x.dim());  // checks the dims
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

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("var(Tensor self, int[] dim=[], bool unbiased=True, bool keepdim=False) -> Tensor", &var_any);
  m.def("norm(Tensor self) -> Tensor", &norm_any);
  m.def("norm.p(Tensor self, Scalar p, int[] dim=[], bool keepdim=False) -> Tensor", &norm_p);
}

Tensor var(const Tensor& x, IntArrayRef dims, bool unbiased, bool keepdim) {
  return EMBER_OP("ember::var", Tensor(const Tensor&, IntArrayRef, bool, bool)).call(x, dims, unbiased, keepdim);
}
Tensor norm(const Tensor& x) { return EMBER_OP("ember::norm", Tensor(const Tensor&)).call(x); }
Tensor norm(const Tensor& x, const Scalar& p, IntArrayRef dims, bool keepdim) {
  return EMBER_OP("ember::norm.p", Tensor(const Tensor&, const Scalar&, IntArrayRef, bool)).call(x, p, dims, keepdim);
}
Tensor Tensor::var(IntArrayRef dims, bool unbiased, bool keepdim) const { return ember::var(*this, dims, unbiased, keepdim); }
Tensor Tensor::var(bool unbiased) const { return ember::var(*this, {}, unbiased, false); }
Tensor Tensor::norm() const { return ember::norm(*this); }
Tensor Tensor::norm(const Scalar& p, IntArrayRef dims, bool keepdim) const { return ember::norm(*this, p, dims, keepdim); }

}  // namespace ember
