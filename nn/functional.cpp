#include "ember/nn/functional.h"

#include <algorithm>

#include "ember/autograd/grad_mode.h"
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
namespace {
void check_p(const char* op, double p) {
  EMBER_CHECK_VALUE(p >= 0 && p <= 1, op, ": dropout probability has to be between 0 and 1, but got ", p);
}
}  // namespace

// The op _dropout (CANN's aclnnDropoutGenMask + aclnnDropoutDoMask on the NPU), its counters
// from the global random stream.
Tensor dropout(const Tensor& x, double p, bool training) {
  check_p("dropout", p);
  EMBER_CHECK_DTYPE(x.is_floating_point(), "dropout: expects a floating tensor, got ", x.dtype());
  if (!training || p == 0) return x;
  auto [seed, offset] = ember::random_counters(x.numel());
  return std::get<0>(ember::_dropout(x, p, seed, offset));
}
// Whole channels: the scaled mask of ones [N, C, 1, ...] (from _dropout) times x.
Tensor feature_dropout(const Tensor& x, double p, bool training) {
  check_p("dropout2d", p);
  EMBER_CHECK_DTYPE(x.is_floating_point(), "dropout2d: expects a floating tensor, got ", x.dtype());
  EMBER_CHECK_SHAPE(x.dim() >= 2, "dropout2d: expects [N, C, ...] or [C, H, W], got ", x.sizes());
  if (!training || p == 0) return x;
  bool batched = x.dim() != 3;  // [C, H, W] has no batch dim (PyTorch's rule for 3-D input)
  Shape mask(static_cast<size_t>(x.dim()), 1);
  mask[0] = x.size(0);
  if (batched) mask[1] = x.size(1);
  Tensor ones_ = ember::ones(mask, TensorOptions(x.dtype()).device(x.device()));
  auto [seed, offset] = ember::random_counters(ones_.numel());
  return x * std::get<0>(ember::_dropout(ones_, p, seed, offset));
}
Tensor dropout2d(const Tensor& x, double p, bool training) { return feature_dropout(x, p, training); }

// The op (_batch_norm: CANN's aclnnBatchNorm on the NPU) normalizes; the running statistics are
// updated here, from the batch statistics it used (the unbiased variance, PyTorch's rule).
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  auto some = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; };
  // (in training the op does not read the running statistics: not handing them over keeps
  // their in-place update below from touching a tensor the backward saved)
  auto [y, mean, invstd] = ember::_batch_norm(x, some(weight), some(bias), training ? std::nullopt : some(running_mean),
                                              training ? std::nullopt : some(running_var), training, eps);
  if (training && running_mean.defined() && running_var.defined()) {
    NoGradGuard no_grad;
    const double n = static_cast<double>(x.numel() / std::max<int64_t>(x.size(1), 1));
    Tensor var = invstd.detach().pow(-2) - eps;  // the biased variance
    Tensor rm = running_mean, rv = running_var;
    rm.mul_(1 - momentum);
    rm.add_(mean.detach().to(rm.dtype()), momentum);
    rv.mul_(1 - momentum);
    rv.add_(var.to(rv.dtype()), momentum * n / (n - 1));
  }
  return y;
}

// The op native_layer_norm (CANN's aclnnLayerNorm on the NPU).
Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias, double eps) {
  auto some = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; };
  return std::get<0>(ember::native_layer_norm(x, normalized_shape, some(weight), some(bias), eps));
}

// The op native_group_norm (CANN's aclnnGroupNorm on the NPU).
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  EMBER_CHECK_SHAPE(x.dim() >= 2, "group_norm: expects [N, C, ...], got ", x.sizes());
  const int64_t N = x.size(0), C = x.size(1);
  EMBER_CHECK_VALUE(num_groups >= 1 && C % num_groups == 0, "group_norm: ", C, " channels cannot be split into ",
                    num_groups, " groups");
  auto some = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; };
  const int64_t HxW = N > 0 && C > 0 ? x.numel() / N / C : 1;
  return std::get<0>(ember::native_group_norm(x, some(weight), some(bias), N, C, HxW, num_groups, eps));
}

Tensor embedding(const Tensor& indices, const Tensor& weight) { return ember::embedding(weight, indices); }

}  // namespace functional
}  // namespace nn
}  // namespace ember
