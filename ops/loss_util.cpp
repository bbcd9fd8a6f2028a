// The losses' shared checks and formulas (declared in ops/internal/loss.h).
#include "ember/ops/internal/loss.h"

#include "ember/ops/op_util.h"

namespace ember {
namespace ops {
namespace loss {

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

// CANN's weight is required: all ones when the caller gives none.
Tensor nll_weight(const Tensor& input, const std::optional<Tensor>& weight) {
  return weight && weight->defined() ? weight->to(input.dtype()).contiguous()
                                     : ones({input.size(-1)}, input.options());
}

}  // namespace loss
}  // namespace ops
}  // namespace ember
