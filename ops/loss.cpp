// Losses. cross_entropy(logits [N, C] or [C], int64 target [N] or []) = mean over rows whose
// target is not ignore_index of logsumexp(logits[i]) - logits[i, target[i]]: log-softmax fused
// in, fp32 math, a 0-d result in the logits' dtype.
//
// The others are composites of differentiable public ops (PyTorch's CompositeImplicitAutograd):
// one definition serves every device, and autograd (and double backward) follows from their
// parts. mse_loss, l1_loss, smooth_l1_loss, nll_loss, binary_cross_entropy(_with_logits), each
// with PyTorch's reduction (Reduction::None / Mean / Sum).
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

// weight, if given, must broadcast against the loss's elements.
Tensor weighted(const char* op, const Tensor& l, const std::optional<Tensor>& weight) {
  if (!weight || !weight->defined()) return l;
  common_device(op, {&l, &*weight});
  EMBER_CHECK_DTYPE(weight->is_floating_point(), op, ": weight must be floating, got ", weight->dtype());
  EMBER_CHECK_SHAPE(broadcast_shapes(l.sizes(), weight->sizes()) == Shape(l.sizes().begin(), l.sizes().end()), op,
                    ": weight of shape ", weight->sizes(), " does not broadcast to the loss's shape ", l.sizes());
  return l * *weight;
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

// input: log-probabilities [N, C] (or [C]); target: int64 classes [N] (or 0-d). Per row i,
// l_i = -w[t_i] input[i, t_i] (0 when t_i == ignore_index); Mean divides by the sum of w[t_i].
Tensor nll_loss_composite(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                          int64_t reduction, int64_t ignore_index) {
  auto [x, t] = ce_rows("nll_loss", input, target);
  int64_t C = x.size(1);
  bool has_w = weight && weight->defined();
  if (has_w) {
    common_device("nll_loss", {&input, &*weight});
    EMBER_CHECK_SHAPE(weight->dim() == 1 && weight->size(0) == C, "nll_loss: weight must have shape [", C,
                      "] (one per class), got ", weight->sizes());
  }
  if (x.size(0) > 0) {
    // Out-of-range targets are an error, as in PyTorch (never a silently zero row).
    Tensor bad = logical_and(t.ne(ignore_index), logical_or(t.lt(0), t.ge(C)));
    EMBER_CHECK_T(IndexError, !bad.any().item<bool>(), "nll_loss: a target is outside [0, ", C,
                  ") and is not ignore_index (", ignore_index, ")");
  }
  Tensor pick = arange(C, TensorOptions(kInt64).device(x.device())).view({1, C}).eq(t.unsqueeze(1));  // [N, C]
  Tensor zero = zeros({}, x.options());
  Tensor picked = where(pick, x, zero).sum({1});  // input[i, t_i] (0 for ignored rows)
  Tensor w = has_w ? where(pick, weight->to(x.dtype()).view({1, C}), zero).sum({1}) : pick.any({1}).to(x.dtype());
  Tensor l = -(picked * w);
  if (reduction == Reduction::Mean) return l.sum() / w.sum();
  l = reduced("nll_loss", l, reduction);
  return reduction == Reduction::None && input.dim() == 1 ? l.reshape({}) : l;
}

// -w (y log(x) + (1 - y) log(1 - x)), each log clamped at -100 (PyTorch's rule, so x = 0 or 1
// gives a finite loss).
Tensor binary_cross_entropy_composite(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                                      int64_t reduction) {
  const char* op = "binary_cross_entropy";
  check_same_shape(op, input, target);
  if (input.numel() > 0 && !input.requires_grad()) {
    // Checked when it costs no graph: an input outside [0, 1] is a misuse (a logit passed for a
    // probability), as PyTorch reports it.
    Tensor outside = logical_or(input.lt(0), input.gt(1));
    EMBER_CHECK_VALUE(!outside.any().item<bool>(), op, ": all elements of input should be between 0 and 1");
  }
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

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("cross_entropy(Tensor logits, Tensor target, int ignore_index=-100) -> Tensor");
  m.def("mse_loss(Tensor input, Tensor target, int reduction=1) -> Tensor", &mse_loss_composite);
  m.def("l1_loss(Tensor input, Tensor target, int reduction=1) -> Tensor", &l1_loss_composite);
  m.def("smooth_l1_loss(Tensor input, Tensor target, int reduction=1, float beta=1.0) -> Tensor",
        &smooth_l1_loss_composite);
  m.def("nll_loss(Tensor input, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100) -> Tensor",
        &nll_loss_composite);
  m.def("binary_cross_entropy(Tensor input, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor",
        &binary_cross_entropy_composite);
  m.def("binary_cross_entropy_with_logits(Tensor input, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, "
        "int reduction=1) -> Tensor",
        &binary_cross_entropy_with_logits_composite);
}
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl("cross_entropy", &cross_entropy_cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl("cross_entropy", &cross_entropy_npu); }

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

}  // namespace ember
