// linear(x, weight[, bias]) = x weight^T (+ bias): weight [out, in]. An op of its own (its
// forward is matmul and add on any device) so that autocast gives it one policy for all its
// operands, and so that its backward computes grad_weight = grad^T x directly in weight's
// [out, in] layout (through matmul's backward it would come out transposed and every later
// pass over it, e.g. autocast's cast back to float32, would walk it with a large stride).
#include "ember/autograd/op_spec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"
#include "ember/ops/internal/gemm_decls.h"


namespace ember {
namespace {
void check_linear(const Tensor& x, const Tensor& w) {
  EMBER_CHECK_SHAPE(w.dim() == 2, op::linear::op_name(), ": weight must be 2-D [out_features, in_features], got shape ",
                    w.sizes());
  EMBER_CHECK_SHAPE(x.dim() >= 1 && x.size(-1) == w.size(1), op::linear::op_name(), ": input of shape ", x.sizes(),
                    " does not end in in_features = ", w.size(1), " (weight ", w.sizes(), ")");
}
Tensor linear_composite(const Tensor& x, const Tensor& w) {
  check_linear(x, w);
  return x.matmul(w.t());
}
Tensor linear_bias_composite(const Tensor& x, const Tensor& w, const Tensor& b) {
  check_linear(x, w);
  EMBER_CHECK_SHAPE(b.dim() == 1 && b.size(0) == w.size(0), op::linear::op_name(), ": bias of shape ", b.sizes(),
                    " for weight ", w.sizes(), " (expected [", w.size(0), "])");
  return x.matmul(w.t()) + b;
}
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::linear());
  m.def(op::linear_bias());
}
EMBER_LIBRARY_IMPL(ember, CompositeExplicit, m) {
  m.impl(op::linear(), &linear_composite);
  m.impl(op::linear_bias(), &linear_bias_composite);
}

// ---------------------------------------------------------------- backward
// y = x w^T + b:  dx = g w,  dw = g2^T x2 (rows of g and x flattened),  db = sum over rows of g
namespace {
using namespace autograd;
std::vector<Tensor> linear_grads(const Tensor& g, const Tensor& x, const Tensor& w, bool want_x, bool want_w, bool bias) {
  Tensor g2 = g.reshape({-1, w.size(0)});
  std::vector<Tensor> out(bias ? 3 : 2);
  if (want_x) out[0] = g.matmul(w);
  if (want_w) out[1] = g2.t().matmul(x.reshape({-1, w.size(1)}));
  if (bias) out[2] = g2.sum({0});
  return out;
}
using LSig = Tensor(const Tensor&, const Tensor&);
using LBSig = Tensor(const Tensor&, const Tensor&, const Tensor&);
std::vector<Tensor> linear_bw(const BackwardCtx<LSig>& c) {
  return linear_grads(c.grad(), c.arg<0>(), c.arg<1>(), c.needs(0), c.needs(1), false);
}
std::vector<Tensor> linear_bias_bw(const BackwardCtx<LBSig>& c) {
  std::vector<Tensor> r = linear_grads(c.grad(), c.arg<0>(), c.arg<1>(), c.needs(0), c.needs(1), true);
  if (!c.needs(2)) r[2] = Tensor();
  return r;
}
const auto kLinear = spec_of<op::linear>("LinearBackward", &linear_bw).saving(saves(0, 1));
const auto kLinearBias = spec_of<op::linear_bias>("LinearBackward", &linear_bias_bw).saving(saves(0, 1));
}  // namespace
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::linear(), autograd_kernel<&kLinear>());
  m.impl(op::linear_bias(), autograd_kernel<&kLinearBias>());
}

Tensor linear(const Tensor& x, const Tensor& weight) {
  return op::linear::call(x, weight);
}
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (!bias.defined()) return linear(x, weight);
  return op::linear_bias::call(x, weight, bias);
}

}  // namespace ember
