// The backward of the fused losses (ops/loss.cpp): mse_loss, l1_loss, smooth_l1_loss, binary_cross_entropy
// (with logits) and nll_loss. Each node calls its backward op (CANN's kernel on the NPU, the
// formula's ops on the CPU), or with create_graph the formula's differentiable ops.
#include <cmath>

#include "ember/autograd/op_spec.h"
#include "ember/dispatch/library.h"
#include "ember/ops/internal/loss.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"

#include "ember/ops/internal/loss_decls.h"

namespace ember::op {
EMBER_DECLARE_OP(binary_cross_entropy_backward, Keep,
                 "ember::binary_cross_entropy_backward(Tensor grad, "
                 "Tensor input, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t));
EMBER_DECLARE_OP(binary_cross_entropy_with_logits_backward, Keep,
                 "ember::binary_cross_entropy_with_logits_backward(Tensor grad, "
                 "Tensor input, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, "
                 "int reduction=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&,
                        const std::optional<Tensor>&, int64_t));
EMBER_DECLARE_OP(smooth_l1_loss_backward, Keep,
                 "ember::smooth_l1_loss_backward(Tensor grad, Tensor input, "
                 "Tensor target, int reduction=1, float beta=1.0) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t, double));
EMBER_DECLARE_OP(mse_loss_backward, Keep,
                 "ember::mse_loss_backward(Tensor grad, Tensor input, Tensor target, "
                 "int reduction=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t));
EMBER_DECLARE_OP(l1_loss_backward, Keep,
                 "ember::l1_loss_backward(Tensor grad, Tensor input, Tensor target, "
                 "int reduction=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t));
EMBER_DECLARE_OP(nll_loss_backward, Keep,
                 "ember::nll_loss_backward(Tensor grad, Tensor input, Tensor target, "
                 "Tensor? weight, int reduction, int ignore_index, Tensor total_weight) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t, int64_t,
                        const Tensor&));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;
using namespace ops::loss;
using namespace autograd;
}  // namespace

// ---------------------------------------------------------------- fused losses' backward
// Each formula gives the input's gradient from differentiable ops: the CPU's backward kernel,
// and the create_graph path on every device. The NPU's backward kernel is CANN's.
namespace {
// The output's gradient as it reaches each of n elements (Mean spreads it).
Tensor per_element(const Tensor& g, int64_t reduction, int64_t n) {
  return reduction == Reduction::Mean ? g / static_cast<double>(n) : g;
}
int64_t count(std::initializer_list<const Tensor*> ts) { return numel_of(loss_shape(ts)); }
Tensor times_weight(const Tensor& v, const Tensor& w) { return w.defined() ? v * w : v; }

Tensor mse_grad(const Tensor& g, const Tensor& x, const Tensor& t, int64_t r) {
  return (x - t) * 2 * per_element(g, r, count({&x, &t}));
}
Tensor l1_grad(const Tensor& g, const Tensor& x, const Tensor& t, int64_t r) {
  return (x - t).sign() * per_element(g, r, count({&x, &t}));
}
Tensor smooth_l1_grad(const Tensor& g, const Tensor& x, const Tensor& t, int64_t r, double beta) {
  Tensor d = x - t;
  Tensor slope = beta == 0 ? d.sign() : where(d.abs().lt(beta), d / beta, d.sign());
  return slope * per_element(g, r, count({&x, &t}));
}
Tensor bce_grad(const Tensor& g, const Tensor& x, const Tensor& t, const Tensor& w, int64_t r) {
  Tensor v = (x - t) / (x * (1 - x)).clamp_min(1e-12);
  return times_weight(v, w) * per_element(g, r, count({&x, &t, &w}));
}
Tensor bce_target_grad(const Tensor& g, const Tensor& x, const Tensor& t, const Tensor& w, int64_t r) {
  Tensor v = (1 - x).log().clamp_min(-100) - x.log().clamp_min(-100);
  return times_weight(v, w) * per_element(g, r, count({&x, &t, &w}));
}
Tensor bce_logits_grad(const Tensor& g, const Tensor& x, const Tensor& t, const Tensor& w, const Tensor& pw,
                       int64_t r) {
  Tensor v = pw.defined() ? ((pw - 1) * t + 1) * x.sigmoid() - pw * t : x.sigmoid() - t;
  return times_weight(v, w) * per_element(g, r, count({&x, &t, &w, &pw}));
}
Tensor bce_logits_target_grad(const Tensor& g, const Tensor& x, const Tensor& t, const Tensor& w, const Tensor& pw,
                              int64_t r) {
  Tensor v = -x;
  if (pw.defined()) v = v + (pw - 1) * ((-x.abs()).exp().log1p() + (-x).clamp_min(0));  // (pw - 1) log(1 + e^-x)
  return times_weight(v, w) * per_element(g, r, count({&x, &t, &w, &pw}));
}
// -w[t_i] g_i at (i, t_i), divided by the total weight for Mean; input's shape.
Tensor nll_grad(const Tensor& g, const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                int64_t r, int64_t ignore_index, const Tensor& total_weight) {
  auto [x, t] = ce_rows(op::nll_loss_backward::op_name(), input, target);
  const int64_t C = x.size(1);
  Tensor pick = nll_pick(x, t, ignore_index);
  Tensor w = weight && weight->defined() ? weight->to(x.dtype()).view({1, C}) : ones({1, C}, x.options());
  Tensor gr = r == Reduction::None && input.dim() == 2 ? g.view({-1, 1}) : g.reshape({1, 1});
  if (r == Reduction::Mean) gr = gr / total_weight;
  return where(pick, -(w * gr), zeros({}, x.options())).view(input.sizes());
}

// The class weight's gradient, from both outputs' gradients (g1, total weight's, may be undefined).
Tensor nll_weight_grad(const Tensor& g0, const Tensor& g1, const Tensor& input, const Tensor& target,
                       const std::optional<Tensor>& weight, int64_t r, int64_t ignore_index, const Tensor& total) {
  auto [x, t] = ce_rows(op::nll_loss_backward::op_name(), input, target);
  Tensor pf = nll_pick(x, t, ignore_index).to(x.dtype());  // [N, C]
  Tensor counts = pf.sum({0});                             // rows of each class
  Tensor gw;
  if (r == Reduction::Mean) {  // d(S / W): (dS - loss dW) / W
    Tensor loss = nll_rows(x, t, weight, ignore_index).first.sum() / total;
    gw = ((-x * pf).sum({0}) - loss * counts) * (g0.reshape({}) / total);
  } else {
    Tensor gr = r == Reduction::None && input.dim() == 2 ? g0.view({-1, 1}) : g0.reshape({1, 1});
    gw = (-x * pf * gr).sum({0});
  }
  return g1.defined() ? gw + g1 * counts : gw;
}

// The backward ops' arguments, checked alike on both devices: grad floating, on the input's
// device, of the loss's shape (Reduction::None; broadcastable to it) or one element.
void check_backward(const char* op, const Tensor& g, const Tensor& x, const Tensor& t, bool same_shape, int64_t r,
                    std::initializer_list<const std::optional<Tensor>*> weights = {}) {
  common_device(op, {&g, &x});
  EMBER_CHECK_DTYPE(g.is_floating_point(), op, ": grad must be floating, got ", g.dtype());
  if (same_shape) {
    check_same_shape(op, x, t);
  } else {
    check_pair(op, x, t);
  }
  check_reduction(op, r);
  for (const std::optional<Tensor>* w : weights) check_weight(op, x, *w);
  Shape loss = loss_shape({&x, &t});
  if (r == Reduction::None) {
    EMBER_CHECK_SHAPE(broadcast_shapes(g.sizes(), loss) == loss, op, ": grad of shape ", g.sizes(),
                      " does not broadcast to the loss's shape ", IntArrayRef(loss));
  } else {
    EMBER_CHECK_SHAPE(g.numel() == 1, op, ": grad of a reduced loss must hold one element, got shape ", g.sizes());
  }
}

Tensor mse_loss_backward_cpu(const Tensor& g, const Tensor& x, const Tensor& t, int64_t r) {
  check_backward(op::mse_loss_backward::op_name(), g, x, t, false, r);
  return mse_grad(g, x, t, r);
}
Tensor mse_loss_backward_npu(const Tensor& g, const Tensor& x, const Tensor& t, int64_t r) {
  check_backward(op::mse_loss_backward::op_name(), g, x, t, false, r);
  Tensor out = empty_on(loss_shape({&g, &x, &t}), loss_dtype({&x, &t}), x.device());
  EXEC_NPU_CMD(npu::aclnnMseLossBackward, g, x, t, r, out);
  return out;
}
Tensor l1_loss_backward_cpu(const Tensor& g, const Tensor& x, const Tensor& t, int64_t r) {
  check_backward(op::l1_loss_backward::op_name(), g, x, t, false, r);
  return l1_grad(g, x, t, r);
}
Tensor l1_loss_backward_npu(const Tensor& g, const Tensor& x, const Tensor& t, int64_t r) {
  check_backward(op::l1_loss_backward::op_name(), g, x, t, false, r);
  Tensor out = empty_on(loss_shape({&g, &x, &t}), loss_dtype({&x, &t}), x.device());
  EXEC_NPU_CMD(npu::aclnnL1LossBackward, g, x, t, r, out);
  return out;
}
Tensor smooth_l1_loss_backward_cpu(const Tensor& g, const Tensor& x, const Tensor& t, int64_t r, double beta) {
  check_backward(op::smooth_l1_loss_backward::op_name(), g, x, t, false, r);
  EMBER_CHECK_VALUE(beta >= 0, op::smooth_l1_loss_backward::op_name(), ": beta must be non-negative, got ", beta);
  return smooth_l1_grad(g, x, t, r, beta);
}
Tensor smooth_l1_loss_backward_npu(const Tensor& g, const Tensor& x, const Tensor& t, int64_t r, double beta) {
  check_backward(op::smooth_l1_loss_backward::op_name(), g, x, t, false, r);
  EMBER_CHECK_VALUE(beta >= 0, op::smooth_l1_loss_backward::op_name(), ": beta must be non-negative, got ", beta);
  Tensor out = empty_on(loss_shape({&g, &x, &t}), loss_dtype({&x, &t}), x.device());
  EXEC_NPU_CMD(npu::aclnnSmoothL1LossBackward, g, x, t, r, static_cast<float>(beta), out);
  return out;
}
Tensor bce_backward_cpu(const Tensor& g, const Tensor& x, const Tensor& t, const std::optional<Tensor>& w, int64_t r) {
  check_backward(op::binary_cross_entropy_backward::op_name(), g, x, t, true, r, {&w});
  return bce_grad(g, x, t, opt(w), r);
}
Tensor bce_backward_npu(const Tensor& g, const Tensor& x, const Tensor& t, const std::optional<Tensor>& w, int64_t r) {
  check_backward(op::binary_cross_entropy_backward::op_name(), g, x, t, true, r, {&w});
  Tensor out = empty_on(loss_shape({&g, &x, &t, &opt(w)}), loss_dtype({&x, &t, &opt(w)}), x.device());
  EXEC_NPU_CMD(npu::aclnnBinaryCrossEntropyBackward, g, x, t, opt(w), r, out);
  return out;
}
Tensor bce_logits_backward_cpu(const Tensor& g, const Tensor& x, const Tensor& t, const std::optional<Tensor>& w,
                               const std::optional<Tensor>& pw, int64_t r) {
  check_backward(op::binary_cross_entropy_with_logits_backward::op_name(), g, x, t, true, r, {&w, &pw});
  return bce_logits_grad(g, x, t, opt(w), opt(pw), r);
}
Tensor bce_logits_backward_npu(const Tensor& g, const Tensor& x, const Tensor& t, const std::optional<Tensor>& w,
                               const std::optional<Tensor>& pw, int64_t r) {
  check_backward(op::binary_cross_entropy_with_logits_backward::op_name(), g, x, t, true, r, {&w, &pw});
  Tensor out = empty_on(loss_shape({&g, &x, &t, &opt(w), &opt(pw)}), loss_dtype({&x, &t, &opt(w), &opt(pw)}),
                        x.device());
  EXEC_NPU_CMD(npu::aclnnBinaryCrossEntropyWithLogitsBackward, g, x, t, opt(w), opt(pw), r, out);
  return out;
}
// grad: [N] for Reduction::None of [N, C], else one element; total_weight: one element.
void check_nll_backward(const Tensor& g, const Tensor& x, const Tensor& t, const std::optional<Tensor>& w, int64_t r,
                        int64_t ignore_index, const Tensor& total_weight) {
  const char* op = ::ember::op::nll_loss_backward::op_name();
  check_reduction(op, r);
  nll_check(op, x, t, w, ignore_index);
  common_device(op, {&g, &x, &total_weight});
  EMBER_CHECK_DTYPE(g.is_floating_point() && total_weight.is_floating_point(), op,
                    ": grad and total_weight must be floating, got ", g.dtype(), " and ", total_weight.dtype());
  const bool rows = r == Reduction::None && x.dim() == 2;
  EMBER_CHECK_SHAPE(rows ? g.sizes() == IntArrayRef({x.size(0)}) : g.numel() == 1, op, ": grad of shape ", g.sizes(),
                    " does not fit reduction ", r, " of input ", x.sizes());
  EMBER_CHECK_SHAPE(total_weight.numel() == 1, op, ": total_weight must hold one element, got shape ",
                    total_weight.sizes());
}
Tensor nll_loss_backward_cpu(const Tensor& g, const Tensor& x, const Tensor& t, const std::optional<Tensor>& w,
                             int64_t r, int64_t ignore_index, const Tensor& total_weight) {
  check_nll_backward(g, x, t, w, r, ignore_index, total_weight);
  return nll_grad(g, x, t, w, r, ignore_index, total_weight.reshape({})).to(x.dtype());  // (the input's, as the NPU's)
}
Tensor nll_loss_backward_npu(const Tensor& g, const Tensor& x, const Tensor& t, const std::optional<Tensor>& w,
                             int64_t r, int64_t ignore_index, const Tensor& total_weight) {
  check_nll_backward(g, x, t, w, r, ignore_index, total_weight);
  Tensor out = empty_on(x.sizes(), x.dtype(), x.device());
  EXEC_NPU_CMD(npu::aclnnNLLLossBackward, g, x, t, nll_weight(x, w), r, ignore_index, total_weight, out);
  return out;
}

using MseSig = Tensor(const Tensor&, const Tensor&, int64_t);
using SmoothL1Sig = Tensor(const Tensor&, const Tensor&, int64_t, double);
using BceSig = Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t);
using BceLogitsSig =
    Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&, int64_t);
using NllSig = std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t, int64_t);
using NllBackSig = Tensor(const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t, int64_t,
                          const Tensor&);

// Each node's input gradient: the backward op (CANN's kernel on the NPU), or with create_graph
// the formula's differentiable ops.
std::vector<Tensor> mse_bw(const BackwardCtx<MseSig>& c) {
  Tensor x = c.arg<0>(), t = c.arg<1>();
  Tensor gx = is_grad_enabled() ? mse_grad(c.grad(), x, t, c.arg<2>()) : mse_loss_backward(c.grad(), x, t, c.arg<2>());
  return {gx, c.needs(1) ? -gx : Tensor()};
}
std::vector<Tensor> l1_bw(const BackwardCtx<MseSig>& c) {
  Tensor x = c.arg<0>(), t = c.arg<1>();
  Tensor gx = is_grad_enabled() ? l1_grad(c.grad(), x, t, c.arg<2>()) : l1_loss_backward(c.grad(), x, t, c.arg<2>());
  return {gx, c.needs(1) ? -gx : Tensor()};
}
std::vector<Tensor> smooth_l1_bw(const BackwardCtx<SmoothL1Sig>& c) {
  Tensor x = c.arg<0>(), t = c.arg<1>();
  Tensor gx = is_grad_enabled() ? smooth_l1_grad(c.grad(), x, t, c.arg<2>(), c.arg<3>())
                                : smooth_l1_loss_backward(c.grad(), x, t, c.arg<2>(), c.arg<3>());
  return {gx, c.needs(1) ? -gx : Tensor()};
}
std::vector<Tensor> bce_bw(const BackwardCtx<BceSig>& c) {
  Tensor x = c.arg<0>(), t = c.arg<1>(), w = c.arg<2>(), g = c.grad();
  int64_t r = c.arg<3>();
  Tensor gx = is_grad_enabled() ? bce_grad(g, x, t, w, r)
                                : binary_cross_entropy_backward(g, x, t, w.defined() ? std::optional<Tensor>(w)
                                                                                     : std::nullopt, r);
  return {gx, c.needs(1) ? bce_target_grad(g, x, t, w, r) : Tensor(), Tensor()};
}
std::vector<Tensor> bce_logits_bw(const BackwardCtx<BceLogitsSig>& c) {
  Tensor x = c.arg<0>(), t = c.arg<1>(), w = c.arg<2>(), pw = c.arg<3>(), g = c.grad();
  int64_t r = c.arg<4>();
  auto o = [](const Tensor& v) { return v.defined() ? std::optional<Tensor>(v) : std::nullopt; };
  Tensor gx = is_grad_enabled() ? bce_logits_grad(g, x, t, w, pw, r)
                                : binary_cross_entropy_with_logits_backward(g, x, t, o(w), o(pw), r);
  return {gx, c.needs(1) ? bce_logits_target_grad(g, x, t, w, pw, r) : Tensor(), Tensor(), Tensor()};
}
std::vector<Tensor> nll_bw(const BackwardCtx<NllSig>& c) {
  Tensor x = c.arg<0>(), t = c.arg<1>(), w = c.arg<2>(), total = c.output(), g = c.grad(0);
  std::optional<Tensor> ow = w.defined() ? std::optional<Tensor>(w) : std::nullopt;
  const int64_t r = c.arg<3>(), ignore = c.arg<4>();
  Tensor gx;
  if (c.needs(0)) gx = is_grad_enabled() ? nll_grad(g, x, t, ow, r, ignore, total) : nll_loss_backward(g, x, t, ow, r, ignore, total);
  Tensor gw = c.needs(2) ? nll_weight_grad(g, c.has_grad(1) ? c.grad(1) : Tensor(), x, t, ow, r, ignore, total) : Tensor();
  return {gx, Tensor(), gw};
}
const auto kMse = spec_of<op::mse_loss>("MseLossBackward0", &mse_bw).saving(saves(0, 1));
const auto kL1 = spec_of<op::l1_loss>("L1LossBackward0", &l1_bw).saving(saves(0, 1));
const auto kSmoothL1 =
    spec_of<op::smooth_l1_loss>("SmoothL1LossBackward0", &smooth_l1_bw).saving(saves(0, 1));
const auto kBce =
    spec_of<op::binary_cross_entropy>("BinaryCrossEntropyBackward0", &bce_bw).saving(saves(0, 1, 2));
const auto kBceLogits = spec_of<op::binary_cross_entropy_with_logits>("BinaryCrossEntropyWithLogitsBackward0", &bce_logits_bw)
                            .saving(saves(0, 1, 2, 3));
const auto kNll =
    spec_of<op::nll_loss_forward>("NllLossBackward0", &nll_bw).saving(saves(0, 1, 2)).saving_output(1);

bool wants_grad(const std::optional<Tensor>& t) { return is_grad_enabled() && t && t->defined() && t->requires_grad(); }
// A weight that requires grad: the composite, which differentiates it too.
Tensor bce_autograd(const Tensor& x, const Tensor& t, const std::optional<Tensor>& w, int64_t r) {
  if (wants_grad(w)) return binary_cross_entropy_composite(x, t, w, r);
  return autograd_kernel<&kBce>()(x, t, w, r);
}
Tensor bce_logits_autograd(const Tensor& x, const Tensor& t, const std::optional<Tensor>& w,
                           const std::optional<Tensor>& pw, int64_t r) {
  if (wants_grad(w) || wants_grad(pw)) return binary_cross_entropy_with_logits_composite(x, t, w, pw, r);
  return autograd_kernel<&kBceLogits>()(x, t, w, pw, r);
}
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::mse_loss_backward());
  m.def(op::l1_loss_backward());
  m.def(op::smooth_l1_loss_backward());
  m.def(op::binary_cross_entropy_backward());
  m.def(op::binary_cross_entropy_with_logits_backward());
  m.def(op::nll_loss_backward());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::mse_loss_backward(), &mse_loss_backward_cpu);
  m.impl(op::l1_loss_backward(), &l1_loss_backward_cpu);
  m.impl(op::smooth_l1_loss_backward(), &smooth_l1_loss_backward_cpu);
  m.impl(op::binary_cross_entropy_backward(), &bce_backward_cpu);
  m.impl(op::binary_cross_entropy_with_logits_backward(), &bce_logits_backward_cpu);
  m.impl(op::nll_loss_backward(), &nll_loss_backward_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::mse_loss_backward(), &mse_loss_backward_npu);
  m.impl(op::l1_loss_backward(), &l1_loss_backward_npu);
  m.impl(op::smooth_l1_loss_backward(), &smooth_l1_loss_backward_npu);
  m.impl(op::binary_cross_entropy_backward(), &bce_backward_npu);
  m.impl(op::binary_cross_entropy_with_logits_backward(), &bce_logits_backward_npu);
  m.impl(op::nll_loss_backward(), &nll_loss_backward_npu);
}
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::mse_loss(), autograd_kernel<&kMse>());
  m.impl(op::l1_loss(), autograd_kernel<&kL1>());
  m.impl(op::smooth_l1_loss(), autograd_kernel<&kSmoothL1>());
  m.impl(op::binary_cross_entropy(), &bce_autograd);
  m.impl(op::binary_cross_entropy_with_logits(), &bce_logits_autograd);
  m.impl(op::nll_loss_forward(), autograd_kernel<&kNll>());
  for (const char* op : {op::mse_loss_backward::op_name(), op::l1_loss_backward::op_name(),
                         op::smooth_l1_loss_backward::op_name(), op::binary_cross_entropy_backward::op_name(),
                         op::binary_cross_entropy_with_logits_backward::op_name(), op::nll_loss_backward::op_name()})
    autograd::impl_no_double_backward(m, op);
}

Tensor mse_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target, int64_t reduction) {
  return op::mse_loss_backward::call(grad, input, target, reduction);
}
Tensor l1_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target, int64_t reduction) {
  return op::l1_loss_backward::call(grad, input, target, reduction);
}
Tensor smooth_l1_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target, int64_t reduction,
                               double beta) {
  return op::smooth_l1_loss_backward::call(grad, input, target, reduction, beta);
}
Tensor binary_cross_entropy_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                                     const std::optional<Tensor>& weight, int64_t reduction) {
  return op::binary_cross_entropy_backward::call(grad, input, target, weight, reduction);
}
Tensor binary_cross_entropy_with_logits_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                                                 const std::optional<Tensor>& weight,
                                                 const std::optional<Tensor>& pos_weight, int64_t reduction) {
  return op::binary_cross_entropy_with_logits_backward::call(grad, input, target, weight, pos_weight, reduction);
}
Tensor nll_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                         const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                         const Tensor& total_weight) {
  return op::nll_loss_backward::call(grad, input, target, weight, reduction, ignore_index,
                                                               total_weight);
}

}  // namespace ember
