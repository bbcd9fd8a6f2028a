#include "ember/nn/layers.h"

#include <cmath>
#include <sstream>

#include "ember/autograd/grad_mode.h"
#include "ember/nn/functional.h"
#include "ember/nn/functional_forms.h"
#include "ember/nn/init.h"
#include "ember/nn/internal/host_index.h"
#include "ember/nn/norm_forms.h"
#include "ember/nn/resample.h"
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

namespace {
using detail::opt;
template <size_t D>
Tensor conv_nd(const Tensor& x, const Tensor& w, const Tensor& b, const ConvOptions<D>& o) {
  // A padding mode other than zeros pads the input first (libtorch's _reversed_padding_repeated_twice).
  Tensor in = x;
  ExpandingArray<D> padding = o.padding();
  if (o.padding_mode() != Mode::kZeros) {
    std::vector<int64_t> pad;
    for (size_t d = D; d-- > 0;) pad.insert(pad.end(), {o.padding()[d], o.padding()[d]});
    in = F::pad(x, F::PadFuncOptions(pad).mode(o.padding_mode()));
    padding = 0;
  }
  if constexpr (D == 1) return ember::conv1d(in, w, opt(b), o.stride(), padding, o.dilation(), o.groups());
  if constexpr (D == 2) return ember::conv2d(in, w, opt(b), o.stride(), padding, o.dilation(), o.groups());
  if constexpr (D == 3)
    return F::conv3d(
        in, w,
        F::Conv3dFuncOptions().bias(b).stride(o.stride()).padding(padding).dilation(o.dilation()).groups(o.groups()));
}
template <size_t D>
Tensor conv_transpose_nd(const Tensor& x, const Tensor& w, const Tensor& b, const ConvTransposeOptions<D>& o) {
  F::ConvTransposeFuncOptions<D> f;
  f.bias(b)
      .stride(o.stride())
      .padding(o.padding())
      .output_padding(o.output_padding())
      .groups(o.groups())
      .dilation(o.dilation());
  if constexpr (D == 1) return F::conv_transpose1d(x, w, f);
  if constexpr (D == 2) return F::conv_transpose2d(x, w, f);
  if constexpr (D == 3) return F::conv_transpose3d(x, w, f);
}
template <size_t D>
std::string arr(const ExpandingArray<D>& a) {
  return D == 1 ? std::to_string(a[0]) : to_string(IntArrayRef(a));
}
template <class Options>
std::string conv_repr(const Options& o, bool bias) {
  std::ostringstream os;
  os << o.in_channels() << ", " << o.out_channels() << ", kernel_size=" << arr(o.kernel_size())
     << ", stride=" << arr(o.stride()) << ", padding=" << arr(o.padding());
  if (o.groups() != 1) os << ", groups=" << o.groups();
  if (!bias) os << ", bias=false";
  if (o.padding_mode() != Mode::kZeros) os << ", padding_mode=" << mode_name(o.padding_mode());
  return os.str();
}
template <size_t D>
Shape conv_weight_shape(const char* name, int64_t in, int64_t out, int64_t groups, const ExpandingArray<D>& k,
                        bool transposed, Mode padding_mode) {
  check_channels(name, in, out, groups);
  EMBER_CHECK_VALUE(padding_mode == Mode::kZeros || padding_mode == Mode::kReflect ||
                        padding_mode == Mode::kReplicate || padding_mode == Mode::kCircular,
                    name, ": padding_mode must be kZeros, kReflect, kReplicate or kCircular, got ",
                    mode_name(padding_mode));
  EMBER_CHECK_VALUE(!transposed || padding_mode == Mode::kZeros, name,
                    ": only the kZeros padding_mode is supported (as in libtorch), got ", mode_name(padding_mode));
  Shape s = transposed ? Shape{in, out / groups} : Shape{out, in / groups};
  for (size_t d = 0; d < D; ++d) s.push_back(k[d]);
  return s;
}
}  // namespace

#define EMBER_DEFINE_CONV(Name, D, transposed, fn)                                                        \
  Name::Name(const Name##Options& o) : options(o) {                                                       \
    weight = register_parameter(                                                                          \
        "weight", ember::empty(conv_weight_shape<D>(#Name, o.in_channels(), o.out_channels(), o.groups(), \
                                                    o.kernel_size(), transposed, o.padding_mode())));     \
    if (o.bias()) bias = register_parameter("bias", empty({o.out_channels()}));                           \
    reset_parameters();                                                                                   \
  }                                                                                                       \
  void Name::reset_parameters() { reset_conv(weight, bias); }                                             \
  Tensor Name::forward(const Tensor& x) { return fn<D>(x, weight, bias, options); }                       \
  std::string Name::extra_repr() const { return conv_repr(options, bias.defined()); }
EMBER_DEFINE_CONV(Conv1d, 1, false, conv_nd)
EMBER_DEFINE_CONV(Conv2d, 2, false, conv_nd)
EMBER_DEFINE_CONV(Conv3d, 3, false, conv_nd)
EMBER_DEFINE_CONV(ConvTranspose1d, 1, true, conv_transpose_nd)
EMBER_DEFINE_CONV(ConvTranspose2d, 2, true, conv_transpose_nd)
EMBER_DEFINE_CONV(ConvTranspose3d, 3, true, conv_transpose_nd)
#undef EMBER_DEFINE_CONV

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
  detail::init_norm(*this, name, o.num_features(), o.affine(), o.track_running_stats(), weight, bias, running_mean,
                    running_var, num_batches_tracked);
}
void BatchNorm::reset_running_stats() { detail::reset_norm_stats(running_mean, running_var, num_batches_tracked); }

void detail::init_norm(Module& m, const char* name, int64_t C, bool affine, bool track, Tensor& weight, Tensor& bias,
                       Tensor& running_mean, Tensor& running_var, Tensor& num_batches_tracked) {
  EMBER_CHECK_VALUE(C > 0, name, ": num_features must be positive, got ", C);
  if (affine) {
    weight = m.register_parameter("weight", ones({C}));
    bias = m.register_parameter("bias", zeros({C}));
  }
  if (track) {
    running_mean = m.register_buffer("running_mean", zeros({C}));
    running_var = m.register_buffer("running_var", ones({C}));
    num_batches_tracked = m.register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
}
void detail::reset_norm_stats(Tensor& running_mean, Tensor& running_var, Tensor& num_batches_tracked) {
  if (!running_mean.defined()) return;
  running_mean.fill_(0);
  running_var.fill_(1);
  num_batches_tracked.fill_(0);
}
Tensor BatchNorm::forward(const Tensor& x) {
  EMBER_CHECK_SHAPE(
      x.dim() >= lo_ && x.dim() <= hi_ && x.size(1) == options.num_features(), name_, ": expected input ",
      lo_ == hi_ ? std::to_string(lo_) + "-D" : std::to_string(lo_) + "-D or " + std::to_string(hi_) + "-D", " with ",
      options.num_features(), " channels in dim 1, got ", x.sizes());
  bool use_batch = is_training() || !running_mean.defined();
  if (is_training() && num_batches_tracked.defined()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
  }
  return F::batch_norm(x, running_mean, running_var, weight, bias, use_batch, options.momentum(), options.eps());
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
Tensor Dropout::forward(const Tensor& x) {
  return F::dropout(x, F::DropoutFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace()));
}
Dropout2d::Dropout2d(const DropoutOptions& o) : options(o) {
  EMBER_CHECK_VALUE(o.p() >= 0 && o.p() <= 1, "Dropout2d: p must be between 0 and 1, got ", o.p());
}
Tensor Dropout2d::forward(const Tensor& x) {
  return F::dropout2d(x, F::Dropout2dFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace()));
}

}  // namespace nn
}  // namespace ember
