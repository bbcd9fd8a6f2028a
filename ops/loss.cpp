// Losses. cross_entropy(logits [N, C] or [C], int64 target [N] or []) = mean over rows whose
// target is not ignore_index of logsumexp(logits[i]) - logits[i, target[i]]: log-softmax fused
// in, fp32 math, a 0-d result in the logits' dtype.
//
// mse_loss, l1_loss, smooth_l1_loss, nll_loss, binary_cross_entropy(_with_logits), each with
// PyTorch's reduction (Reduction::None / Mean / Sum). l1_loss is a composite of differentiable
// public ops (PyTorch's CompositeImplicitAutograd). The others are ops of their own: on the CPU
// their kernel is that same composite; on the NPU, CANN's fused kernel (aclnnMseLoss, ...). Their
// node (MseLossBackward0, ...) calls the backward op (mse_loss_backward: aclnnMseLossBackward on
// the NPU, the formula's ops on the CPU), or with create_graph the formula's differentiable ops,
// so second derivatives work. A binary_cross_entropy weight or pos_weight that requires grad runs
// the composite instead, which differentiates every argument; nll_loss's node differentiates its
// class weight itself.
#include <cmath>

#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/nn.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

namespace ember {
namespace {
using namespace ops;

// logits and target as [N, C] and [N].
std::pair<Tensor, Tensor> ce_rows(const char* op, const Tensor& logits, const Tensor& target) {
  common_device(op, {&logits, &target});
  EMBER_CHECK_DTYPE(logits.is_floating_point(), op, ": logits must be floating, got ", logits.dtype());
  EMBER_CHECK_DTYPE(target.dtype() == DType::Int64, op, ": target must hold int64 class indices, got ", target.dtype());
  bool batched = logits.dim() == 2 && target.dim() == 1 && target.size(0) == logits.size(0);
  bool single = logits.dim() == 1 && target.dim() == 0;
  EMBER_CHECK_SHAPE(batched || single, op, ": expects logits [N, C] with target [N] (or [C] with a 0-d target), got ",
                    logits.sizes(), " and ", target.sizes());
  if (single) return {logits.unsqueeze(0), target.reshape({1})};
  return {logits, target};
}

Tensor cross_entropy_cpu(const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  auto [l, t] = ce_rows("cross_entropy", logits, target);
  Tensor out = empty_on({}, logits.dtype(), logits.device());
  cpu::cross_entropy(strided(out), strided(l.contiguous()), strided(t.contiguous()), ignore_index, "cross_entropy");
  return out;
}

Tensor cross_entropy_npu(const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  auto [l, t] = ce_rows("cross_entropy", logits, target);
  Tensor out = empty_on({}, logits.dtype(), logits.device());
  EXEC_NPU_CMD(npu::aclnnEmberCrossEntropy, l, t, ignore_index, out);
  return out;
}

// Applies a loss's reduction to its per-element values.
Tensor reduced(const char* op, const Tensor& l, int64_t reduction) {
  switch (reduction) {
    case Reduction::None: return l;
    case Reduction::Mean: return l.mean();
    case Reduction::Sum: return l.sum();
    default: break;
  }
  EMBER_THROW(ValueError, op, ": reduction must be Reduction::None (0), Mean (1) or Sum (2), got ", reduction);
}

// input and target of an elementwise loss: floating, one device, broadcastable.
void check_pair(const char* op, const Tensor& input, const Tensor& target) {
  common_device(op, {&input, &target});
  EMBER_CHECK_DTYPE(input.is_floating_point() && target.is_floating_point(), op,
                    ": input and target must be floating, got ", input.dtype(), " and ", target.dtype());
  broadcast_shapes(input.sizes(), target.sizes());
}

// The binary losses' input and target: floating, one device, one shape.
void check_same_shape(const char* op, const Tensor& input, const Tensor& target) {
  common_device(op, {&input, &target});
  EMBER_CHECK_DTYPE(input.is_floating_point() && target.is_floating_point(), op,
                    ": input and target must be floating, got ", input.dtype(), " and ", target.dtype());
  EMBER_CHECK_SHAPE(input.sizes() == target.sizes(), op, ": target of shape ", target.sizes(),
                    " must have the input's shape ", input.sizes());
}

// weight, if given, must broadcast against the loss's elements l.
void check_weight(const char* op, const Tensor& l, const std::optional<Tensor>& weight) {
  if (!weight || !weight->defined()) return;
  common_device(op, {&l, &*weight});
  EMBER_CHECK_DTYPE(weight->is_floating_point(), op, ": weight must be floating, got ", weight->dtype());
  EMBER_CHECK_SHAPE(broadcast_shapes(l.sizes(), weight->sizes()) == Shape(l.sizes().begin(), l.sizes().end()), op,
                    ": weight of shape ", weight->sizes(), " does not broadcast to the loss's shape ", l.sizes());
}
Tensor weighted(const char* op, const Tensor& l, const std::optional<Tensor>& weight) {
  if (!weight || !weight->defined()) return l;
  check_weight(op, l, weight);
  return l * *weight;
}

// bce's input must lie in [0, 1]: checked when it costs no graph (a logit passed for a
// probability is a misuse, as PyTorch reports it).
void check_probabilities(const char* op, const Tensor& input) {
  if (input.numel() == 0 || input.requires_grad()) return;
  Tensor outside = logical_or(input.lt(0), input.gt(1));
  EMBER_CHECK_VALUE(!outside.any().item<bool>(), op, ": all elements of input should be between 0 and 1");
}

Tensor mse_loss_composite(const Tensor& input, const Tensor& target, int64_t reduction) {
  check_pair("mse_loss", input, target);
  return reduced("mse_loss", (input - target).square(), reduction);
}

Tensor l1_loss_composite(const Tensor& input, const Tensor& target, int64_t reduction) {
  check_pair("l1_loss", input, target);
  return reduced("l1_loss", (input - target).abs(), reduction);
}

// |d| < beta: 0.5 d^2 / beta; else |d| - 0.5 beta (beta = 0 is l1_loss).
Tensor smooth_l1_loss_composite(const Tensor& input, const Tensor& target, int64_t reduction, double beta) {
  check_pair("smooth_l1_loss", input, target);
  EMBER_CHECK_VALUE(beta >= 0, "smooth_l1_loss: beta must be non-negative, got ", beta);
  Tensor d = input - target;
  Tensor a = d.abs();
  if (beta == 0) return reduced("smooth_l1_loss", a, reduction);
  Tensor l = where(a.lt(beta), d.square().mul(0.5 / beta), a.sub(0.5 * beta));
  return reduced("smooth_l1_loss", l, reduction);
}

// [N, C] of whether column j is row i's class (never for a row whose target is ignore_index).
Tensor nll_pick(const Tensor& x, const Tensor& t, int64_t ignore_index) {
  int64_t C = x.size(1);
  Tensor cls = arange(C, TensorOptions(kInt64).device(x.device())).view({1, C}).eq(t.unsqueeze(1));
  return logical_and(cls, t.ne(ignore_index).unsqueeze(1));
}
// Per row of x [N, C]: -w[t_i] x[i, t_i] and w[t_i] (both 0 for ignored rows).
std::pair<Tensor, Tensor> nll_rows(const Tensor& x, const Tensor& t, const std::optional<Tensor>& weight,
                                   int64_t ignore_index) {
  const int64_t C = x.size(1);
  Tensor pick = nll_pick(x, t, ignore_index);
  Tensor zero = zeros({}, x.options());
  Tensor picked = where(pick, x, zero).sum({1});  // input[i, t_i] (0 for ignored rows)
  Tensor w = weight && weight->defined() ? where(pick, weight->to(x.dtype()).view({1, C}), zero).sum({1})
                                         : pick.any({1}).to(x.dtype());
  return {-(picked * w), w};
}

// input: log-probabilities [N, C] (or [C]); target: int64 classes [N] (or 0-d). Per row i,
// l_i = -w[t_i] input[i, t_i] (0 when t_i == ignore_index); Mean divides by the sum of w[t_i].
// The checked [N, C] / [N] rows of nll_loss's input and target. The targets' values are checked
// here on both devices (one synchronizing reduction; CANN's kernel checks them again as it runs).
std::pair<Tensor, Tensor> nll_check(const char* op, const Tensor& input, const Tensor& target,
                                    const std::optional<Tensor>& weight, int64_t ignore_index) {
  auto [x, t] = ce_rows(op, input, target);
  int64_t C = x.size(1);
  if (weight && weight->defined()) {
    common_device(op, {&input, &*weight});
    EMBER_CHECK_DTYPE(weight->is_floating_point(), op, ": weight must be floating, got ", weight->dtype());
    EMBER_CHECK_SHAPE(weight->dim() == 1 && weight->size(0) == C, op, ": weight must have shape [", C,
                      "] (one per class), got ", weight->sizes());
  }
  if (x.size(0) > 0) {
    // Out-of-range targets are an error, as in PyTorch (never a silently zero row).
    Tensor bad = logical_and(t.ne(ignore_index), logical_or(t.lt(0), t.ge(C)));
    EMBER_CHECK_T(IndexError, !bad.any().item<bool>(), op, ": a target is outside [0, ", C,
                  ") and is not ignore_index (", ignore_index, ")");
  }
  return {x, t};
}

// nll_loss's value and its total weight (the sum of w[t_i] over the rows not ignored).
std::pair<Tensor, Tensor> nll_loss_math(const char* op, const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index) {
  auto [x, t] = nll_check(op, input, target, weight, ignore_index);
  auto [l, w] = nll_rows(x, t, weight, ignore_index);
  Tensor total = w.sum();
  if (reduction == Reduction::Mean) return {l.sum() / total, total};
  l = reduced(op, l, reduction);
  return {reduction == Reduction::None && input.dim() == 1 ? l.reshape({}) : l, total};
}

// -w (y log(x) + (1 - y) log(1 - x)), each log clamped at -100 (PyTorch's rule, so x = 0 or 1
// gives a finite loss).
Tensor binary_cross_entropy_composite(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                                      int64_t reduction) {
  const char* op = "binary_cross_entropy";
  check_same_shape(op, input, target);
  check_probabilities(op, input);
  Tensor l = -(target * input.log().clamp_min(-100) + (1 - target) * (1 - input).log().clamp_min(-100));
  return reduced(op, weighted(op, l, weight), reduction);
}

// The stable form: (1 - y) x + (1 + (pos_weight - 1) y) (log(1 + exp(-|x|)) + max(-x, 0)).
Tensor binary_cross_entropy_with_logits_composite(const Tensor& input, const Tensor& target,
                                                  const std::optional<Tensor>& weight,
                                                  const std::optional<Tensor>& pos_weight, int64_t reduction) {
  const char* op = "binary_cross_entropy_with_logits";
  check_same_shape(op, input, target);
  Tensor softplus_neg = (-input.abs()).exp().log1p() + (-input).clamp_min(0);  // log(1 + exp(-x))
  Tensor l;
  if (pos_weight && pos_weight->defined()) {
    common_device(op, {&input, &*pos_weight});
    Tensor lw = (*pos_weight - 1) * target + 1;
    l = (1 - target) * input + lw * softplus_neg;
  } else {
    l = (1 - target) * input + softplus_neg;
  }
  return reduced(op, weighted(op, l, weight), reduction);
}


// ---------------------------------------------------------------- fused kernels
// The dtype of a loss over these tensors (the floating ones defined).
DType loss_dtype(std::initializer_list<const Tensor*> ts) {
  DType d = DType::Bool;
  bool first = true;
  for (const Tensor* t : ts) {
    if (!t->defined()) continue;
    d = first ? t->dtype() : promote_types(d, t->dtype());
    first = false;
  }
  return d;
}
Shape loss_shape(std::initializer_list<const Tensor*> ts) {
  Shape s;
  for (const Tensor* t : ts)
    if (t->defined()) s = broadcast_shapes(s, t->sizes());
  return s;
}
void check_reduction(const char* op, int64_t reduction) {
  EMBER_CHECK_VALUE(reduction >= Reduction::None && reduction <= Reduction::Sum, op,
                    ": reduction must be Reduction::None (0), Mean (1) or Sum (2), got ", reduction);
}
// The output of an elementwise loss over ts: the broadcast shape for Reduction::None, else 0-d.
Tensor loss_out(std::initializer_list<const Tensor*> ts, int64_t reduction, const Tensor& like) {
  return empty_on(reduction == Reduction::None ? loss_shape(ts) : Shape{}, loss_dtype(ts), like.device());
}

Tensor mse_loss_npu(const Tensor& input, const Tensor& target, int64_t reduction) {
  check_pair("mse_loss", input, target);
  check_reduction("mse_loss", reduction);
  Tensor out = loss_out({&input, &target}, reduction, input);
  EXEC_NPU_CMD(npu::aclnnMseLoss, input, target, reduction, out);
  return out;
}
Tensor smooth_l1_loss_npu(const Tensor& input, const Tensor& target, int64_t reduction, double beta) {
  check_pair("smooth_l1_loss", input, target);
  check_reduction("smooth_l1_loss", reduction);
  EMBER_CHECK_VALUE(beta >= 0, "smooth_l1_loss: beta must be non-negative, got ", beta);
  Tensor out = loss_out({&input, &target}, reduction, input);
  EXEC_NPU_CMD(npu::aclnnSmoothL1Loss, input, target, reduction, static_cast<float>(beta), out);
  return out;
}
Tensor binary_cross_entropy_npu(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                                int64_t reduction) {
  const char* op = "binary_cross_entropy";
  check_same_shape(op, input, target);
  check_reduction(op, reduction);
  check_weight(op, input, weight);
  check_probabilities(op, input);
  Tensor out = loss_out({&input, &target, &opt(weight)}, reduction, input);
  EXEC_NPU_CMD(npu::aclnnBinaryCrossEntropy, input, target, opt(weight), reduction, out);
  return out;
}
Tensor binary_cross_entropy_with_logits_npu(const Tensor& input, const Tensor& target,
                                            const std::optional<Tensor>& weight,
                                            const std::optional<Tensor>& pos_weight, int64_t reduction) {
  const char* op = "binary_cross_entropy_with_logits";
  check_same_shape(op, input, target);
  check_reduction(op, reduction);
  check_weight(op, input, weight);
  check_weight(op, input, pos_weight);
  Tensor out = loss_out({&input, &target, &opt(weight), &opt(pos_weight)}, reduction, input);
  EXEC_NPU_CMD(npu::aclnnBinaryCrossEntropyWithLogits, input, target, opt(weight), opt(pos_weight), reduction, out);
  return out;
}

std::tuple<Tensor, Tensor> nll_loss_forward_cpu(const Tensor& input, const Tensor& target,
                                                const std::optional<Tensor>& weight, int64_t reduction,
                                                int64_t ignore_index) {
  check_reduction("nll_loss", reduction);
  auto [out, total] = nll_loss_math("nll_loss", input, target, weight, reduction, ignore_index);
  return {out, total};
}
// CANN's weight is required: all ones when the caller gives none.
Tensor nll_weight(const Tensor& input, const std::optional<Tensor>& weight) {
  return weight && weight->defined() ? weight->to(input.dtype()).contiguous()
                                     : ones({input.size(-1)}, input.options());
}
std::tuple<Tensor, Tensor> nll_loss_forward_npu(const Tensor& input, const Tensor& target,
                                                const std::optional<Tensor>& weight, int64_t reduction,
                                                int64_t ignore_index) {
  check_reduction("nll_loss", reduction);
  nll_check("nll_loss", input, target, weight, ignore_index);
  Shape shape = reduction == Reduction::None && input.dim() == 2 ? Shape{input.size(0)} : Shape{};
  Tensor out = empty_on(shape, input.dtype(), input.device());
  Tensor total = empty_on({}, input.dtype(), input.device());
  EXEC_NPU_CMD(npu::aclnnNLLLoss, input, target, nll_weight(input, weight), reduction, ignore_index, out, total);
  return {out, total};
}

// nll_loss: the first output of nll_loss_forward (the NPU's aclnnNLLLoss), whose node is
// NllLossBackward0.
Tensor nll_loss_entry(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                      int64_t reduction, int64_t ignore_index) {
  return std::get<0>(nll_loss_forward(input, target, weight, reduction, ignore_index));
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("cross_entropy(Tensor logits, Tensor target, int ignore_index=-100) -> Tensor");
  m.def("mse_loss(Tensor input, Tensor target, int reduction=1) -> Tensor");
  m.def("l1_loss(Tensor input, Tensor target, int reduction=1) -> Tensor", &l1_loss_composite);
  m.def("smooth_l1_loss(Tensor input, Tensor target, int reduction=1, float beta=1.0) -> Tensor");
  m.def("nll_loss(Tensor input, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100) -> Tensor",
        &nll_loss_entry);
  m.def("nll_loss_forward(Tensor input, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100) "
        "-> (Tensor, Tensor)");
  m.def("binary_cross_entropy(Tensor input, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor");
  m.def("binary_cross_entropy_with_logits(Tensor input, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, "
        "int reduction=1) -> Tensor");
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl("cross_entropy", &cross_entropy_cpu);
  m.impl("mse_loss", &mse_loss_composite);
  m.impl("smooth_l1_loss", &smooth_l1_loss_composite);
  m.impl("nll_loss_forward", &nll_loss_forward_cpu);
  m.impl("binary_cross_entropy", &binary_cross_entropy_composite);
  m.impl("binary_cross_entropy_with_logits", &binary_cross_entropy_with_logits_composite);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl("cross_entropy", &cross_entropy_npu);
  m.impl("mse_loss", &mse_loss_npu);
  m.impl("smooth_l1_loss", &smooth_l1_loss_npu);
  m.impl("nll_loss_forward", &nll_loss_forward_npu);
  m.impl("binary_cross_entropy", &binary_cross_entropy_npu);
  m.impl("binary_cross_entropy_with_logits", &binary_cross_entropy_with_logits_npu);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  return EMBER_OP("ember::cross_entropy", Tensor(const Tensor&, const Tensor&, int64_t)).call(logits, target, ignore_index);
}
Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  return EMBER_OP("ember::mse_loss", Tensor(const Tensor&, const Tensor&, int64_t)).call(input, target, reduction);
}
Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  return EMBER_OP("ember::l1_loss", Tensor(const Tensor&, const Tensor&, int64_t)).call(input, target, reduction);
}
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, int64_t reduction, double beta) {
  return EMBER_OP("ember::smooth_l1_loss", Tensor(const Tensor&, const Tensor&, int64_t, double))
      .call(input, target, reduction, beta);
}
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction,
                int64_t ignore_index) {
  return EMBER_OP("ember::nll_loss",
                  Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t, int64_t))
      .call(input, target, weight, reduction, ignore_index);
}
std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& input, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction,
                                            int64_t ignore_index) {
  return EMBER_OP("ember::nll_loss_forward", std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&,
                                                                         const std::optional<Tensor>&, int64_t, int64_t))
      .call(input, target, weight, reduction, ignore_index);
}
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                            int64_t reduction) {
  return EMBER_OP("ember::binary_cross_entropy",
                  Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t))
      .call(input, target, weight, reduction);
}
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight, int64_t reduction) {
  return EMBER_OP("ember::binary_cross_entropy_with_logits",
                  Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&,
                         int64_t))
      .call(input, target, weight, pos_weight, reduction);
}

// ---------------------------------------------------------------- backward
// d loss / d logits[i] = grad / n (softmax(logits[i]) - onehot(target[i])), n = rows counted;
// zero for ignored rows. One fused pass (softmax recomputed from the saved logits).
namespace {
using namespace autograd;

Tensor cross_entropy_backward_cpu(const Tensor& grad, const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  auto [l, t] = ce_rows("cross_entropy_backward", logits, target);
  common_device("cross_entropy_backward", {&grad, &logits});
  EMBER_CHECK_SHAPE(grad.numel() == 1, "cross_entropy_backward: grad must hold one element, got shape ", grad.sizes());
  Tensor out = empty_on(logits.sizes(), logits.dtype(), logits.device());
  cpu::cross_entropy_backward(strided(out.view(l.sizes())), strided(grad.contiguous()), strided(l.contiguous()),
                              strided(t.contiguous()), ignore_index, "cross_entropy_backward");
  return out;
}

Tensor cross_entropy_backward_npu(const Tensor& grad, const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  auto [l, t] = ce_rows("cross_entropy_backward", logits, target);
  common_device("cross_entropy_backward", {&grad, &logits});
  EMBER_CHECK_SHAPE(grad.numel() == 1, "cross_entropy_backward: grad must hold one element, got shape ", grad.sizes());
  Tensor out = empty_on(logits.sizes(), logits.dtype(), logits.device());
  EXEC_NPU_CMD(npu::aclnnEmberCrossEntropyGrad, grad.reshape({}), l, t, ignore_index, out.view(l.sizes()));
  return out;
}

using CESig = Tensor(const Tensor&, const Tensor&, int64_t);
std::vector<Tensor> cross_entropy_bw(const BackwardCtx<CESig>& c) {
  return {EMBER_OP("ember::cross_entropy_backward", Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t))
              .call(c.grad(), c.arg<0>(), c.arg<1>(), c.arg<2>()),
          Tensor()};
}
const auto kCrossEntropy =
    OpSpec<CESig>{"CrossEntropyBackward", "ember::cross_entropy", &cross_entropy_bw}.saving(saves(0, 1));
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("cross_entropy_backward(Tensor grad, Tensor logits, Tensor target, int ignore_index=-100) -> Tensor");
}
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl("cross_entropy_backward", &cross_entropy_backward_cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl("cross_entropy_backward", &cross_entropy_backward_npu); }
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl("cross_entropy", autograd_kernel<&kCrossEntropy>());
  autograd::impl_no_double_backward(m, "cross_entropy_backward");
}

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
  auto [x, t] = ce_rows("nll_loss_backward", input, target);
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
  auto [x, t] = ce_rows("nll_loss_backward", input, target);
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
  check_backward("mse_loss_backward", g, x, t, false, r);
  return mse_grad(g, x, t, r);
}
Tensor mse_loss_backward_npu(const Tensor& g, const Tensor& x, const Tensor& t, int64_t r) {
  check_backward("mse_loss_backward", g, x, t, false, r);
  Tensor out = empty_on(loss_shape({&g, &x, &t}), loss_dtype({&x, &t}), x.device());
  EXEC_NPU_CMD(npu::aclnnMseLossBackward, g, x, t, r, out);
  return out;
}
Tensor smooth_l1_loss_backward_cpu(const Tensor& g, const Tensor& x, const Tensor& t, int64_t r, double beta) {
  check_backward("smooth_l1_loss_backward", g, x, t, false, r);
  EMBER_CHECK_VALUE(beta >= 0, "smooth_l1_loss_backward: beta must be non-negative, got ", beta);
  return smooth_l1_grad(g, x, t, r, beta);
}
Tensor smooth_l1_loss_backward_npu(const Tensor& g, const Tensor& x, const Tensor& t, int64_t r, double beta) {
  check_backward("smooth_l1_loss_backward", g, x, t, false, r);
  EMBER_CHECK_VALUE(beta >= 0, "smooth_l1_loss_backward: beta must be non-negative, got ", beta);
  Tensor out = empty_on(loss_shape({&g, &x, &t}), loss_dtype({&x, &t}), x.device());
  EXEC_NPU_CMD(npu::aclnnSmoothL1LossBackward, g, x, t, r, static_cast<float>(beta), out);
  return out;
}
Tensor bce_backward_cpu(const Tensor& g, const Tensor& x, const Tensor& t, const std::optional<Tensor>& w, int64_t r) {
  check_backward("binary_cross_entropy_backward", g, x, t, true, r, {&w});
  return bce_grad(g, x, t, opt(w), r);
}
Tensor bce_backward_npu(const Tensor& g, const Tensor& x, const Tensor& t, const std::optional<Tensor>& w, int64_t r) {
  check_backward("binary_cross_entropy_backward", g, x, t, true, r, {&w});
  Tensor out = empty_on(loss_shape({&g, &x, &t, &opt(w)}), loss_dtype({&x, &t, &opt(w)}), x.device());
  EXEC_NPU_CMD(npu::aclnnBinaryCrossEntropyBackward, g, x, t, opt(w), r, out);
  return out;
}
Tensor bce_logits_backward_cpu(const Tensor& g, const Tensor& x, const Tensor& t, const std::optional<Tensor>& w,
                               const std::optional<Tensor>& pw, int64_t r) {
  check_backward("binary_cross_entropy_with_logits_backward", g, x, t, true, r, {&w, &pw});
  return bce_logits_grad(g, x, t, opt(w), opt(pw), r);
}
Tensor bce_logits_backward_npu(const Tensor& g, const Tensor& x, const Tensor& t, const std::optional<Tensor>& w,
                               const std::optional<Tensor>& pw, int64_t r) {
  check_backward("binary_cross_entropy_with_logits_backward", g, x, t, true, r, {&w, &pw});
  Tensor out = empty_on(loss_shape({&g, &x, &t, &opt(w), &opt(pw)}), loss_dtype({&x, &t, &opt(w), &opt(pw)}),
                        x.device());
  EXEC_NPU_CMD(npu::aclnnBinaryCrossEntropyWithLogitsBackward, g, x, t, opt(w), opt(pw), r, out);
  return out;
}
// grad: [N] for Reduction::None of [N, C], else one element; total_weight: one element.
void check_nll_backward(const Tensor& g, const Tensor& x, const Tensor& t, const std::optional<Tensor>& w, int64_t r,
                        int64_t ignore_index, const Tensor& total_weight) {
  const char* op = "nll_loss_backward";
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
const auto kMse = OpSpec<MseSig>{"MseLossBackward0", "ember::mse_loss", &mse_bw}.saving(saves(0, 1));
const auto kSmoothL1 =
    OpSpec<SmoothL1Sig>{"SmoothL1LossBackward0", "ember::smooth_l1_loss", &smooth_l1_bw}.saving(saves(0, 1));
const auto kBce =
    OpSpec<BceSig>{"BinaryCrossEntropyBackward0", "ember::binary_cross_entropy", &bce_bw}.saving(saves(0, 1, 2));
const auto kBceLogits = OpSpec<BceLogitsSig>{"BinaryCrossEntropyWithLogitsBackward0",
                                             "ember::binary_cross_entropy_with_logits", &bce_logits_bw}
                            .saving(saves(0, 1, 2, 3));
const auto kNll =
    OpSpec<NllSig>{"NllLossBackward0", "ember::nll_loss_forward", &nll_bw}.saving(saves(0, 1, 2)).saving_output(1);

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
  m.def("mse_loss_backward(Tensor grad, Tensor input, Tensor target, int reduction=1) -> Tensor");
  m.def("smooth_l1_loss_backward(Tensor grad, Tensor input, Tensor target, int reduction=1, float beta=1.0) -> Tensor");
  m.def("binary_cross_entropy_backward(Tensor grad, Tensor input, Tensor target, Tensor? weight=None, "
        "int reduction=1) -> Tensor");
  m.def("binary_cross_entropy_with_logits_backward(Tensor grad, Tensor input, Tensor target, Tensor? weight=None, "
        "Tensor? pos_weight=None, int reduction=1) -> Tensor");
  m.def("nll_loss_backward(Tensor grad, Tensor input, Tensor target, Tensor? weight, int reduction, int ignore_index, "
        "Tensor total_weight) -> Tensor");
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl("mse_loss_backward", &mse_loss_backward_cpu);
  m.impl("smooth_l1_loss_backward", &smooth_l1_loss_backward_cpu);
  m.impl("binary_cross_entropy_backward", &bce_backward_cpu);
  m.impl("binary_cross_entropy_with_logits_backward", &bce_logits_backward_cpu);
  m.impl("nll_loss_backward", &nll_loss_backward_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl("mse_loss_backward", &mse_loss_backward_npu);
  m.impl("smooth_l1_loss_backward", &smooth_l1_loss_backward_npu);
  m.impl("binary_cross_entropy_backward", &bce_backward_npu);
  m.impl("binary_cross_entropy_with_logits_backward", &bce_logits_backward_npu);
  m.impl("nll_loss_backward", &nll_loss_backward_npu);
}
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl("mse_loss", autograd_kernel<&kMse>());
  m.impl("smooth_l1_loss", autograd_kernel<&kSmoothL1>());
  m.impl("binary_cross_entropy", &bce_autograd);
  m.impl("binary_cross_entropy_with_logits", &bce_logits_autograd);
  m.impl("nll_loss_forward", autograd_kernel<&kNll>());
  for (const char* op : {"mse_loss_backward", "smooth_l1_loss_backward", "binary_cross_entropy_backward",
                         "binary_cross_entropy_with_logits_backward", "nll_loss_backward"})
    autograd::impl_no_double_backward(m, op);
}

Tensor mse_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target, int64_t reduction) {
  return EMBER_OP("ember::mse_loss_backward", Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t))
      .call(grad, input, target, reduction);
}
Tensor smooth_l1_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target, int64_t reduction,
                               double beta) {
  return EMBER_OP("ember::smooth_l1_loss_backward",
                  Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t, double))
      .call(grad, input, target, reduction, beta);
}
Tensor binary_cross_entropy_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                                     const std::optional<Tensor>& weight, int64_t reduction) {
  return EMBER_OP("ember::binary_cross_entropy_backward",
                  Tensor(const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t))
      .call(grad, input, target, weight, reduction);
}
Tensor binary_cross_entropy_with_logits_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                                                 const std::optional<Tensor>& weight,
                                                 const std::optional<Tensor>& pos_weight, int64_t reduction) {
  return EMBER_OP("ember::binary_cross_entropy_with_logits_backward",
                  Tensor(const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&,
                         const std::optional<Tensor>&, int64_t))
      .call(grad, input, target, weight, pos_weight, reduction);
}
Tensor nll_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                         const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                         const Tensor& total_weight) {
  return EMBER_OP("ember::nll_loss_backward", NllBackSig).call(grad, input, target, weight, reduction, ignore_index,
                                                               total_weight);
}

}  // namespace ember
