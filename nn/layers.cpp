#include "ember/nn/layers.h"

#include <cmath>
#include <sstream>

#include "ember/autograd/grad_mode.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/ops/ops.h"

namespace ember {
namespace nn {
namespace F = functional;

namespace {
void check_channels(const char* module, int64_t in, int64_t out, int64_t groups) {
  EMBER_CHECK_VALUE(in > 0 && out > 0, module, ": in_channels and out_channels must be positive, got ", in, " and ",
                    out);
  EMBER_CHECK_VALUE(groups > 0 && in % groups == 0 && out % groups == 0, module, ": in_channels (", in,
                    ") and out_channels (", out, ") must be divisible by groups (", groups, ")");
}
// PyTorch's reset for convolutions: kaiming_uniform_(a = sqrt(5)), bias from U(-1/sqrt(fan_in), ...).
void reset_conv(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    double bound = 1.0 / std::sqrt(static_cast<double>(init::fan_in_and_out(weight).first));
    init::uniform_(bias, -bound, bound);
  }
}
}  // namespace

Conv2d::Conv2d(const Conv2dOptions& o) : options(o) {
  check_channels("Conv2d", o.in_channels(), o.out_channels(), o.groups());
  IntArrayRef k = o.kernel_size();
  weight = register_parameter("weight", empty({o.out_channels(), o.in_channels() / o.groups(), k[0], k[1]}));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_channels()}));
  reset_parameters();
}
void Conv2d::reset_parameters() { reset_conv(weight, bias); }
Tensor Conv2d::forward(const Tensor& x) {
  return ember::conv2d(x, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt, options.stride(),
                       options.padding(), options.dilation(), options.groups());
}
std::string Conv2d::extra_repr() const {
  std::ostringstream os;
  os << options.in_channels() << ", " << options.out_channels() << ", kernel_size=" << to_string(options.kernel_size())
     << ", stride=" << to_string(options.stride()) << ", padding=" << to_string(options.padding());
  if (options.groups() != 1) os << ", groups=" << options.groups();
  if (!bias.defined()) os << ", bias=false";
  return os.str();
}

Conv1d::Conv1d(const Conv1dOptions& o) : options(o) {
  check_channels("Conv1d", o.in_channels(), o.out_channels(), o.groups());
  weight = register_parameter("weight", empty({o.out_channels(), o.in_channels() / o.groups(), o.kernel_size()[0]}));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_channels()}));
  reset_parameters();
}
void Conv1d::reset_parameters() { reset_conv(weight, bias); }
Tensor Conv1d::forward(const Tensor& x) {
  return ember::conv1d(x, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt, options.stride(),
                       options.padding(), options.dilation(), options.groups());
}
std::string Conv1d::extra_repr() const {
  std::ostringstream os;
  os << options.in_channels() << ", " << options.out_channels() << ", kernel_size=" << options.kernel_size()[0]
     << ", stride=" << options.stride()[0] << ", padding=" << options.padding()[0];
  if (options.groups() != 1) os << ", groups=" << options.groups();
  if (!bias.defined()) os << ", bias=false";
  return os.str();
}

ConvTranspose2d::ConvTranspose2d(const ConvTranspose2dOptions& o) : options(o) {
  check_channels("ConvTranspose2d", o.in_channels(), o.out_channels(), o.groups());
  IntArrayRef k = o.kernel_size();
  weight = register_parameter("weight", empty({o.in_channels(), o.out_channels() / o.groups(), k[0], k[1]}));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_channels()}));
  reset_parameters();
}
void ConvTranspose2d::reset_parameters() { reset_conv(weight, bias); }
Tensor ConvTranspose2d::forward(const Tensor& x) {
  return ember::conv_transpose2d(x, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt,
                                 options.stride(), options.padding(), options.output_padding(), options.groups(),
                                 options.dilation());
}
std::string ConvTranspose2d::extra_repr() const {
  std::ostringstream os;
  os << options.in_channels() << ", " << options.out_channels() << ", kernel_size=" << to_string(options.kernel_size())
     << ", stride=" << to_string(options.stride()) << ", padding=" << to_string(options.padding());
  if (!bias.defined()) os << ", bias=false";
  return os.str();
}

Tensor MaxPool2d::forward(const Tensor& x) {
  return ember::max_pool2d(x, options.kernel_size(), options.stride(), options.padding(), options.dilation(),
                           options.ceil_mode());
}
Tensor AvgPool2d::forward(const Tensor& x) {
  return ember::avg_pool2d(x, options.kernel_size(), options.stride(), options.padding(), options.ceil_mode(),
                           options.count_include_pad());
}
Tensor AdaptiveAvgPool2d::forward(const Tensor& x) { return ember::adaptive_avg_pool2d(x, output_size); }

BatchNorm::BatchNorm(const BatchNormOptions& o, int64_t lo, int64_t hi, const char* name)
    : options(o), lo_(lo), hi_(hi), name_(name) {
  EMBER_CHECK_VALUE(o.num_features() > 0, name, ": num_features must be positive, got ", o.num_features());
  const int64_t C = o.num_features();
  if (o.affine()) {
    weight = register_parameter("weight", ones({C}));
    bias = register_parameter("bias", zeros({C}));
  }
  if (o.track_running_stats()) {
    running_mean = register_buffer("running_mean", zeros({C}));
    running_var = register_buffer("running_var", ones({C}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
}
void BatchNorm::reset_running_stats() {
  if (!running_mean.defined()) return;
  running_mean.fill_(0);
  running_var.fill_(1);
  num_batches_tracked.fill_(0);
}
Tensor BatchNorm::forward(const Tensor& x) {
  EMBER_CHECK_SHAPE(x.dim() >= lo_ && x.dim() <= hi_ && x.size(1) == options.num_features(), name_, ": expected input ",
                    lo_ == hi_ ? std::to_string(lo_) + "-D" : std::to_string(lo_) + "-D or " + std::to_string(hi_) + "-D",
                    " with ", options.num_features(), " channels in dim 1, got ", x.sizes());
  bool use_batch = is_training() || !running_mean.defined();
  if (is_training() && num_batches_tracked.defined()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
  }
  return F::batch_norm(x, running_mean, running_var, weight, bias, use_batch,
                       options.momentum(), options.eps());
}
std::string BatchNorm::extra_repr() const {
  std::ostringstream os;
  os << options.num_features() << ", eps=" << options.eps() << ", momentum=" << options.momentum()
     << ", affine=" << (options.affine() ? "true" : "false");
  return os.str();
}

LayerNorm::LayerNorm(const LayerNormOptions& o) : options(o) {
  EMBER_CHECK_VALUE(!o.normalized_shape().empty(), "LayerNorm: normalized_shape must not be empty");
  if (o.elementwise_affine()) {
    weight = register_parameter("weight", ones(o.normalized_shape()));
    bias = register_parameter("bias", zeros(o.normalized_shape()));
  }
}
Tensor LayerNorm::forward(const Tensor& x) {
  return F::layer_norm(x, options.normalized_shape(), weight, bias, options.eps());
}

GroupNorm::GroupNorm(const GroupNormOptions& o) : options(o) {
  EMBER_CHECK_VALUE(o.num_groups() > 0 && o.num_channels() % o.num_groups() == 0, "GroupNorm: ", o.num_channels(),
                    " channels cannot be split into ", o.num_groups(), " groups");
  if (o.affine()) {
    weight = register_parameter("weight", ones({o.num_channels()}));
    bias = register_parameter("bias", zeros({o.num_channels()}));
  }
}
Tensor GroupNorm::forward(const Tensor& x) {
  return F::group_norm(x, options.num_groups(), weight, bias, options.eps());
}

Dropout::Dropout(const DropoutOptions& o) : options(o) {
  EMBER_CHECK_VALUE(o.p() >= 0 && o.p() <= 1, "Dropout: p must be between 0 and 1, got ", o.p());
}
Tensor Dropout::forward(const Tensor& x) { return F::dropout(x, options.p(), is_training()); }
Dropout2d::Dropout2d(const DropoutOptions& o) : options(o) {
  EMBER_CHECK_VALUE(o.p() >= 0 && o.p() <= 1, "Dropout2d: p must be between 0 and 1, got ", o.p());
}
Tensor Dropout2d::forward(const Tensor& x) { return F::dropout2d(x, options.p(), is_training()); }

}  // namespace nn
}  // namespace ember
