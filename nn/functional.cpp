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
Tensor mse_loss(const Tensor& input, const Tensor& target) { return ember::mse_loss(input, target); }
Tensor cross_entropy(const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  return ember::cross_entropy(logits, target, ignore_index);
}
Tensor embedding(const Tensor& indices, const Tensor& weight) { return ember::embedding(weight, indices); }

}  // namespace functional
}  // namespace nn
}  // namespace ember
