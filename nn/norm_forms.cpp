#include "ember/nn/norm_forms.h"

#include <cmath>
#include <sstream>

#include "ember/autograd/grad_mode.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/nn/internal/repr.h"

namespace ember {
namespace nn {
using detail::repr_ints;
using detail::repr_number;
namespace functional {
namespace {
// libtorch's inplace: the result written into input too.
Tensor maybe_inplace(Tensor& input, const Tensor& y, bool inplace) {
  if (!inplace || y.is_same(input)) return y;
  input.copy_(y);
  return input;
}
// x [N, C, *] -> sum over channels j of M[c][j] x[:, j] (M: a [C, C] host matrix of weights).
Tensor mix_channels(const Tensor& x, const std::vector<double>& m, int64_t C) {
  Tensor mt = tensor(m, {C, C}).to(x.dtype()).to(x.device());
  return matmul(mt, x.reshape({x.size(0), C, -1})).reshape(x.sizes());
}
}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& o) {
  EMBER_CHECK_VALUE(o.momentum().has_value(), "batch_norm: momentum None (a cumulative average) is not supported");
  return batch_norm(x, running_mean, running_var, o.weight(), o.bias(), o.training(), *o.momentum(), o.eps());
}
Tensor layer_norm(const Tensor& x, const LayerNormFuncOptions& o) {
  return layer_norm(x, o.normalized_shape(), o.weight(), o.bias(), o.eps());
}
Tensor group_norm(const Tensor& x, const GroupNormFuncOptions& o) {
  return group_norm(x, o.num_groups(), o.weight(), o.bias(), o.eps());
}

// PyTorch's instance_norm: [N, C, *] seen as one batch of N C channels.
Tensor instance_norm(const Tensor& x, const InstanceNormFuncOptions& o) {
  EMBER_CHECK_SHAPE(x.dim() >= 3, "instance_norm: expected [N, C, *spatial] (3-D or more), got shape ", x.sizes());
  const int64_t N = x.size(0), C = x.size(1);
  auto rep = [N](const Tensor& t) { return t.defined() ? t.repeat({N}) : t; };
  Tensor rm = rep(o.running_mean()), rv = rep(o.running_var());
  std::vector<int64_t> shape{1, N * C};
  for (int64_t d = 2; d < x.dim(); ++d) shape.push_back(x.size(d));
  Tensor y =
      batch_norm(x.reshape(shape), rm, rv, rep(o.weight()), rep(o.bias()), o.use_input_stats(), o.momentum(), o.eps());
  if (o.use_input_stats() && o.running_mean().defined() && o.running_var().defined()) {
    NoGradGuard g;
    Tensor m = o.running_mean(), v = o.running_var();
    m.copy_(rm.view({N, C}).mean({0}));
    v.copy_(rv.view({N, C}).mean({0}));
  }
  return y.view(x.sizes());
}

// PyTorch's window: channels [c - size / 2, c + (size - 1) / 2], zeros outside, divided by size.
Tensor local_response_norm(const Tensor& x, const LocalResponseNormFuncOptions& o) {
  EMBER_CHECK_SHAPE(x.dim() >= 3, "local_response_norm: expected [N, C, *] (3-D or more), got shape ", x.sizes());
  EMBER_CHECK_VALUE(o.size() > 0, "local_response_norm: size must be positive, got ", o.size());
  const int64_t C = x.size(1), lo = o.size() / 2, hi = (o.size() - 1) / 2;
  std::vector<double> m(static_cast<size_t>(C * C), 0.0);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t j = std::max<int64_t>(0, c - lo); j <= std::min(C - 1, c + hi); ++j)
      m[static_cast<size_t>(c * C + j)] = 1.0 / static_cast<double>(o.size());
  Tensor div = (mix_channels(x * x, m, C) * o.alpha() + o.k()).pow(o.beta());
  return x / div;
}

Tensor dropout(Tensor input, const DropoutFuncOptions& o) {
  return maybe_inplace(input, dropout(input, o.p(), o.training()), o.inplace());
}
Tensor dropout2d(Tensor input, const Dropout2dFuncOptions& o) {
  return maybe_inplace(input, feature_dropout(input, o.p(), o.training()), o.inplace());
}
Tensor dropout3d(Tensor input, const Dropout3dFuncOptions& o) {
  EMBER_CHECK_SHAPE(input.dim() == 4 || input.dim() == 5, "dropout3d: expected a 4-D or 5-D input, got shape ",
                    input.sizes());
  // An unbatched [C, D, H, W] input drops channels: give it a batch of one.
  Tensor x = input.dim() == 4 ? input.unsqueeze(0) : input;
  Tensor y = feature_dropout(x, o.p(), o.training());
  return maybe_inplace(input, input.dim() == 4 ? y.squeeze(0) : y, o.inplace());
}
namespace {
Tensor alpha_dropout_impl(const char* op, Tensor input, double p, bool training, bool feature, bool inplace) {
  EMBER_CHECK_VALUE(p >= 0 && p <= 1, op, ": p must be between 0 and 1, got ", p);
  EMBER_CHECK_DTYPE(input.is_floating_point(), op, ": expects a floating tensor, got ", input.dtype());
  if (p == 0 || !training || input.numel() == 0) return input;
  if (p == 1) return maybe_inplace(input, input * 0.0, inplace);
  Shape noise_shape = input.sizes();
  if (feature) {
    EMBER_CHECK_SHAPE(input.dim() >= 2, op, ": expects [N, C, *], got shape ", input.sizes());
    for (size_t d = 2; d < noise_shape.size(); ++d) noise_shape[d] = 1;
  }
  Tensor keep = (rand(noise_shape, input.options()) >= p).to(input.dtype());
  const double alpha = 1.7580993408473766;  // SELU's -scale * alpha
  const double a = 1.0 / std::sqrt((alpha * alpha * p + 1) * (1 - p));
  const double b = alpha * a * p;
  Tensor y = input * (keep * a) + ((keep - 1.0) * (alpha * a) + b);
  return maybe_inplace(input, y, inplace);
}
}  // namespace
Tensor alpha_dropout(Tensor input, const AlphaDropoutFuncOptions& o) {
  return alpha_dropout_impl("alpha_dropout", input, o.p(), o.training(), false, o.inplace());
}
Tensor feature_alpha_dropout(Tensor input, const FeatureAlphaDropoutFuncOptions& o) {
  return alpha_dropout_impl("feature_alpha_dropout", input, o.p(), o.training(), true, o.inplace());
}

Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& w, const Tensor& bias) {
  EMBER_CHECK_SHAPE(
      w.dim() == 3 && x1.dim() >= 1 && x2.dim() >= 1 && x1.size(-1) == w.size(1) && x2.size(-1) == w.size(2),
      "bilinear: expected input1 [..., in1], input2 [..., in2] and weight [out, in1, in2], got shapes ", x1.sizes(),
      ", ", x2.sizes(), " and ", w.sizes());
  EMBER_CHECK_SHAPE(x1.sizes().slice(0, x1.dim() - 1) == x2.sizes().slice(0, x2.dim() - 1),
                    "bilinear: input1 and input2 must have the same leading dims, got shapes ", x1.sizes(), " and ",
                    x2.sizes());
  const int64_t out = w.size(0), in1 = w.size(1), in2 = w.size(2);
  Tensor a = x1.reshape({-1, in1}), b = x2.reshape({-1, in2});
  Tensor t = matmul(a, w.permute({1, 0, 2}).reshape({in1, out * in2})).view({a.size(0), out, in2});
  Tensor y = (t * b.unsqueeze(1)).sum({2});
  if (bias.defined()) y = y + bias;
  Shape shape(x1.sizes().begin(), x1.sizes().end() - 1);
  shape.push_back(out);
  return y.reshape(shape);
}

Tensor fold(const Tensor& input, const FoldFuncOptions& o) {
  return col2im(input, o.output_size(), o.kernel_size(), o.dilation(), o.padding(), o.stride());
}
Tensor unfold(const Tensor& input, const UnfoldFuncOptions& o) {
  return im2col(input, o.kernel_size(), o.dilation(), o.padding(), o.stride());
}
}  // namespace functional

namespace F = functional;

InstanceNorm::InstanceNorm(const InstanceNormOptions& o, int64_t spatial, const char* name)
    : options(o), spatial_(spatial), name_(name) {
  detail::init_norm(*this, name, o.num_features(), o.affine(), o.track_running_stats(), weight, bias, running_mean,
                    running_var, num_batches_tracked);
}
void InstanceNorm::reset_running_stats() { detail::reset_norm_stats(running_mean, running_var, num_batches_tracked); }
Tensor InstanceNorm::forward(const Tensor& x) {
  EMBER_CHECK_SHAPE(x.dim() == spatial_ + 1 || x.dim() == spatial_ + 2, name_, ": expected a ", spatial_ + 1, "-D or ",
                    spatial_ + 2, "-D input, got shape ", x.sizes());
  const bool unbatched = x.dim() == spatial_ + 1;
  Tensor in = unbatched ? x.unsqueeze(0) : x;
  EMBER_CHECK_SHAPE(!options.affine() || in.size(1) == options.num_features(), name_, ": expected ",
                    options.num_features(), " channels, got shape ", x.sizes());
  if (is_training() && num_batches_tracked.defined()) {
    NoGradGuard g;
    num_batches_tracked.add_(1);
  }
  Tensor y = F::instance_norm(in, F::InstanceNormFuncOptions()
                                      .running_mean(running_mean)
                                      .running_var(running_var)
                                      .weight(weight)
                                      .bias(bias)
                                      .use_input_stats(is_training() || !options.track_running_stats())
                                      .momentum(options.momentum())
                                      .eps(options.eps()));
  return unbatched ? y.squeeze(0) : y;
}
std::string InstanceNorm::extra_repr() const {
  return std::to_string(options.num_features()) + ", eps=" + repr_number(options.eps()) +
         ", momentum=" + repr_number(options.momentum()) + ", affine=" + (options.affine() ? "true" : "false") +
         ", track_running_stats=" + (options.track_running_stats() ? "true" : "false");
}

LocalResponseNorm::LocalResponseNorm(const LocalResponseNormOptions& o) : options(o) {}
Tensor LocalResponseNorm::forward(const Tensor& x) { return F::local_response_norm(x, options); }
std::string LocalResponseNorm::extra_repr() const {
  return std::to_string(options.size()) + ", alpha=" + repr_number(options.alpha()) +
         ", beta=" + repr_number(options.beta()) + ", k=" + repr_number(options.k());
}
CrossMapLRN2d::CrossMapLRN2d(const CrossMapLRN2dOptions& o) : options(o) {}
// libtorch's CrossMapLRN2d sums x^2 over a channel window by a running update (add the next
// channel, drop the one pre_pad back from channel pre_pad + 1 on), which also keeps channel 0 in
// every window that starts past it; the same weights here, as a [C, C] matrix.
Tensor CrossMapLRN2d::forward(const Tensor& x) {
  EMBER_CHECK_SHAPE(x.dim() == 4, "CrossMapLRN2d: expected a 4-D input [N, C, H, W], got shape ", x.sizes());
  EMBER_CHECK_VALUE(options.size() > 0, "CrossMapLRN2d: size must be positive, got ", options.size());
  const int64_t C = x.size(1), pre = (options.size() - 1) / 2 + 1;
  std::vector<double> m(static_cast<size_t>(C * C), 0.0);
  for (int64_t j = 0; j < std::min(pre, C); ++j) m[static_cast<size_t>(j)] = 1.0;
  for (int64_t c = 1; c < C; ++c) {
    for (int64_t j = 0; j < C; ++j) m[static_cast<size_t>(c * C + j)] = m[static_cast<size_t>((c - 1) * C + j)];
    if (c < C - pre + 1) m[static_cast<size_t>(c * C + c + pre - 1)] += 1.0;
    if (c > pre) m[static_cast<size_t>(c * C + c - pre)] -= 1.0;
  }
  Tensor scale = F::mix_channels(x * x, m, C) * (options.alpha() / static_cast<double>(options.size())) +
                 static_cast<double>(options.k());
  return x * scale.pow(-options.beta());
}
std::string CrossMapLRN2d::extra_repr() const {
  return std::to_string(options.size()) + ", alpha=" + repr_number(options.alpha()) +
         ", beta=" + repr_number(options.beta()) + ", k=" + std::to_string(options.k());
}

Fold::Fold(const FoldOptions& o) : options(o) {}
Tensor Fold::forward(const Tensor& x) { return F::fold(x, options); }
std::string Fold::extra_repr() const {
  return "output_size=" + repr_ints(options.output_size()) + ", kernel_size=" + repr_ints(options.kernel_size()) +
         ", dilation=" + repr_ints(options.dilation()) + ", padding=" + repr_ints(options.padding()) +
         ", stride=" + repr_ints(options.stride());
}
Unfold::Unfold(const UnfoldOptions& o) : options(o) {}
Tensor Unfold::forward(const Tensor& x) { return F::unfold(x, options); }
std::string Unfold::extra_repr() const {
  return "kernel_size=" + repr_ints(options.kernel_size()) + ", dilation=" + repr_ints(options.dilation()) +
         ", padding=" + repr_ints(options.padding()) + ", stride=" + repr_ints(options.stride());
}

Bilinear::Bilinear(const BilinearOptions& o) : options(o) {
  EMBER_CHECK_VALUE(o.in1_features() > 0 && o.in2_features() > 0 && o.out_features() > 0,
                    "Bilinear: in1_features, in2_features and out_features must be positive");
  weight = register_parameter("weight", empty({o.out_features(), o.in1_features(), o.in2_features()}));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_features()}));
  reset_parameters();
}
void Bilinear::reset_parameters() {
  const double bound = 1.0 / std::sqrt(static_cast<double>(options.in1_features()));
  init::uniform_(weight, -bound, bound);
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}
Tensor Bilinear::forward(const Tensor& a, const Tensor& b) { return F::bilinear(a, b, weight, bias); }
std::string Bilinear::extra_repr() const {
  return "in1_features=" + std::to_string(options.in1_features()) +
         ", in2_features=" + std::to_string(options.in2_features()) +
         ", out_features=" + std::to_string(options.out_features()) + ", bias=" + (bias.defined() ? "true" : "false");
}

#define EMBER_DEFINE_DROPOUT(Name, call)                                                            \
  Name::Name(const DropoutOptions& o) : options(o) {                                                \
    EMBER_CHECK_VALUE(o.p() >= 0 && o.p() <= 1, #Name ": p must be between 0 and 1, got ", o.p());  \
  }                                                                                                 \
  Tensor Name::forward(const Tensor& x) { return call; }                                            \
  std::string Name::extra_repr() const {                                                            \
    return "p=" + repr_number(options.p()) + ", inplace=" + (options.inplace() ? "true" : "false"); \
  }
EMBER_DEFINE_DROPOUT(
    Dropout3d,
    F::dropout3d(x, F::Dropout3dFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace())))
EMBER_DEFINE_DROPOUT(
    AlphaDropout,
    F::alpha_dropout(x, F::AlphaDropoutFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace())))
EMBER_DEFINE_DROPOUT(
    FeatureAlphaDropout,
    F::feature_alpha_dropout(
        x, F::FeatureAlphaDropoutFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace())))
#undef EMBER_DEFINE_DROPOUT

}  // namespace nn
}  // namespace ember
