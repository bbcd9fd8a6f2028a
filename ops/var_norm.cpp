// var(x, dims, unbiased, keepdim) = sum((x - mean)^2) / (N - unbiased) (two passes, in fp32 for
// fp16/bf16) and norm(x) = sqrt(sum(x^2)) (the 2-norm of all elements). Both are composites.
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

Tensor norm_any(const Tensor& x) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), "norm: expects a floating tensor, got ", x.dtype());
  Tensor xf = is_reduced_float(x.dtype()) ? x.to(kFloat32) : x;
  Tensor r = ember::sqrt(ember::sum(ember::square(xf)));
  return r.dtype() == x.dtype() ? r : r.to(x.dtype());
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("var(Tensor self, int[] dim=[], bool unbiased=True, bool keepdim=False) -> Tensor", &var_any);
  m.def("norm(Tensor self) -> Tensor", &norm_any);
}

Tensor var(const Tensor& x, IntArrayRef dims, bool unbiased, bool keepdim) {
  return EMBER_OP("ember::var", Tensor(const Tensor&, IntArrayRef, bool, bool)).call(x, dims, unbiased, keepdim);
}
Tensor norm(const Tensor& x) { return EMBER_OP("ember::norm", Tensor(const Tensor&)).call(x); }
Tensor Tensor::var(IntArrayRef dims, bool unbiased, bool keepdim) const { return ember::var(*this, dims, unbiased, keepdim); }
Tensor Tensor::var(bool unbiased) const { return ember::var(*this, {}, unbiased, false); }
Tensor Tensor::norm() const { return ember::norm(*this); }

}  // namespace ember
