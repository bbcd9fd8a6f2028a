// ember (internal to ops/): the declarations of ops/loss.cpp's ops that other op files call.
#pragma once

#include "ember/dispatch/op_decl.h"

namespace ember::op {
EMBER_DECLARE_OP(binary_cross_entropy, Float32,
                 "ember::binary_cross_entropy(Tensor input, Tensor target, "
                 "Tensor? weight=None, int reduction=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t));
EMBER_DECLARE_OP(binary_cross_entropy_with_logits, Float32,
                 "ember::binary_cross_entropy_with_logits(Tensor input, "
                 "Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&,
                        int64_t));
EMBER_DECLARE_OP(l1_loss, Float32, "ember::l1_loss(Tensor input, Tensor target, int reduction=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, int64_t));
EMBER_DECLARE_OP(mse_loss, Float32, "ember::mse_loss(Tensor input, Tensor target, int reduction=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, int64_t));
EMBER_DECLARE_OP(nll_loss_forward, Keep,
                 "ember::nll_loss_forward(Tensor input, Tensor target, Tensor? weight=None, "
                 "int reduction=1, int ignore_index=-100) -> (Tensor, Tensor)",
                 std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t,
                                            int64_t));
EMBER_DECLARE_OP(smooth_l1_loss, Float32,
                 "ember::smooth_l1_loss(Tensor input, Tensor target, int reduction=1, "
                 "float beta=1.0) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, int64_t, double));
}  // namespace ember::op
