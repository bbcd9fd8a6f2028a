// ember::nn::functional: the stateless forms of the modules (torch.nn.functional).
#pragma once

#include "ember/ops/ops.h"
#include "ember/tensor/tensor.h"

namespace ember {
namespace nn {
namespace functional {

// x weight^T + bias (bias may be undefined).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());
Tensor silu(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);
// x split in halves a, b along dim; silu(a) * b (CANN's SwiGlu).
Tensor swiglu(const Tensor& x, int64_t dim = -1);
// x / sqrt(mean(x^2 over the last weight.dim() dims) + eps) * weight
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps = 1e-6);
// DispersionCorrection over the last dim (see nn::DispersionCorrection):
//   c = x - alpha mean(x);  mode 0: y = weight c;  mode 1: y = weight c / sqrt(mean(c^2) + eps)
Tensor dispersion_correction(const Tensor& x, const Tensor& weight, double alpha = 0.8, int64_t mode = 1,
                             double eps = 1e-6);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
// Losses (ops.h has their definitions); reduction is Reduction::None, Mean or Sum.
Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean);
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean,
                      double beta = 1.0);
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                int64_t reduction = Reduction::Mean, int64_t ignore_index = -100);
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const std::optional<Tensor>& weight = std::nullopt, int64_t reduction = Reduction::Mean);
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight = std::nullopt,
                                        const std::optional<Tensor>& pos_weight = std::nullopt,
                                        int64_t reduction = Reduction::Mean);
// Mean cross entropy of logits [N, C] against int64 targets [N] (log-softmax fused in).
Tensor cross_entropy(const Tensor& logits, const Tensor& target, int64_t ignore_index = -100);
// Training: each element zeroed with probability p (ember's global generator), the others
// scaled by 1 / (1 - p); otherwise x unchanged. dropout2d (feature_dropout) zeroes whole
// channels of [N, C, ...] (or [C, ...] when the input has 3 dims).
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);
Tensor dropout2d(const Tensor& x, double p = 0.5, bool training = true);
Tensor feature_dropout(const Tensor& x, double p, bool training);
// Per channel (dim 1) of x: (x - mean) / sqrt(var + eps) * weight + bias. training: the batch's
// statistics (biased variance), and running_mean / running_var (if defined) updated in place as
// (1 - momentum) running + momentum batch (unbiased variance); else the running statistics.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight = {},
                  const Tensor& bias = {}, bool training = false, double momentum = 0.1, double eps = 1e-5);
// Over the trailing normalized_shape dims (biased variance); weight / bias of that shape.
Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
// Over each group of num_groups of the channels (dim 1) of each example; weight / bias per channel.
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
// Rows of weight picked by int64 indices (F.embedding(input, weight)).
Tensor embedding(const Tensor& indices, const Tensor& weight);

}  // namespace functional
}  // namespace nn
}  // namespace ember
