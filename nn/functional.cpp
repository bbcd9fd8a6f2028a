#include "ember/nn/functional.h"

#include "ember/ops/ops.h"

namespace ember {
namespace nn {
namespace functional {

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) { return ember::linear(x, weight, bias); }
Tensor silu(const Tensor& x) { return x.silu(); }
Tensor relu(const Tensor& x) { return x.relu(); }
Tensor gelu(const Tensor& x) { return x.gelu(); }
Tensor swiglu(const Tensor& x, int64_t dim) { return ember::swiglu(x, dim); }
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps) { return ember::rms_norm(x, weight, eps); }
Tensor softmax(const Tensor& x, int64_t dim) { return x.softmax(dim); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return x.log_softmax(dim); }
Tensor sigmoid(const Tensor& x) { return x.sigmoid(); }
Tensor tanh(const Tensor& x) { return x.tanh(); }
Tensor leaky_relu(const Tensor& x, double negative_slope) { return ember::leaky_relu(x, negative_slope); }
Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  return ember::mse_loss(input, target, reduction);
}
Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  return ember::l1_loss(input, target, reduction);
}
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, int64_t reduction, double beta) {
  return ember::smooth_l1_loss(input, target, reduction, beta);
}
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction,
                int64_t ignore_index) {
  return ember::nll_loss(input, target, weight, reduction, ignore_index);
}
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                            int64_t reduction) {
  return ember::binary_cross_entropy(input, target, weight, reduction);
}
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight, int64_t reduction) {
  return ember::binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction);
}
Tensor cross_entropy(const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  return ember::cross_entropy(logits, target, ignore_index);
}
Tensor embedding(const Tensor& indices, const Tensor& weight) { return ember::embedding(weight, indices); }

}  // namespace functional
}  // namespace nn
}  // namespace ember
