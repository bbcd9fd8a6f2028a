// ember (internal to ops/): the losses' shared checks and formulas (ops/loss_util.cpp), used by
// the loss ops (ops/loss.cpp) and their backward (ops/loss_backward.cpp).
#pragma once

#include <initializer_list>
#include <optional>
#include <utility>

#include "ember/ops/ops.h"

namespace ember {
namespace ops {
namespace loss {

// logits and target as [N, C] and [N].
std::pair<Tensor, Tensor> ce_rows(const char* op, const Tensor& logits, const Tensor& target);
// Applies a loss's reduction to its per-element values.
Tensor reduced(const char* op, const Tensor& l, int64_t reduction);
// input and target of an elementwise loss: floating, one device, broadcastable.
void check_pair(const char* op, const Tensor& input, const Tensor& target);
// The binary losses' input and target: floating, one device, one shape.
void check_same_shape(const char* op, const Tensor& input, const Tensor& target);
// weight, if given, must broadcast against the loss's elements l.
void check_weight(const char* op, const Tensor& l, const std::optional<Tensor>& weight);
Tensor weighted(const char* op, const Tensor& l, const std::optional<Tensor>& weight);
// bce's input must lie in [0, 1]: checked when it costs no graph (a logit passed for a
// probability is a misuse, as PyTorch reports it).
void check_probabilities(const char* op, const Tensor& input);
// [N, C] of whether column j is row i's class (never for a row whose target is ignore_index).
Tensor nll_pick(const Tensor& x, const Tensor& t, int64_t ignore_index);
// Per row of x [N, C]: -w[t_i] x[i, t_i] and w[t_i] (both 0 for ignored rows).
std::pair<Tensor, Tensor> nll_rows(const Tensor& x, const Tensor& t, const std::optional<Tensor>& weight,
                                   int64_t ignore_index);
// The checked [N, C] / [N] rows of nll_loss's input and target. The targets' values are checked
// here on both devices (one synchronizing reduction; CANN's kernel checks them again as it runs).
std::pair<Tensor, Tensor> nll_check(const char* op, const Tensor& input, const Tensor& target,
                                    const std::optional<Tensor>& weight, int64_t ignore_index);
// -w (y log(x) + (1 - y) log(1 - x)), each log clamped at -100 (PyTorch's rule, so x = 0 or 1
// gives a finite loss).
Tensor binary_cross_entropy_composite(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                                      int64_t reduction);
// The stable form: (1 - y) x + (1 + (pos_weight - 1) y) (log(1 + exp(-|x|)) + max(-x, 0)).
Tensor binary_cross_entropy_with_logits_composite(const Tensor& input, const Tensor& target,
                                                  const std::optional<Tensor>& weight,
                                                  const std::optional<Tensor>& pos_weight, int64_t reduction);
// The dtype of a loss over these tensors (the floating ones defined), and their broadcast shape.
DType loss_dtype(std::initializer_list<const Tensor*> ts);
Shape loss_shape(std::initializer_list<const Tensor*> ts);
// reduction: Reduction::None, Mean or Sum.
void check_reduction(const char* op, int64_t reduction);
// The output of an elementwise loss over ts: the broadcast shape for Reduction::None, else 0-d.
Tensor loss_out(std::initializer_list<const Tensor*> ts, int64_t reduction, const Tensor& like);
// CANN's weight is required: all ones when the caller gives none.
Tensor nll_weight(const Tensor& input, const std::optional<Tensor>& weight);

}  // namespace loss
}  // namespace ops
}  // namespace ember
