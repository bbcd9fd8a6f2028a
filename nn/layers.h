// ember's vision and regularisation layers, with libtorch's option builders: Conv2d,
// ConvTranspose2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, BatchNorm1d/2d, LayerNorm, GroupNorm,
// Dropout, Dropout2d. Parameters, buffers, defaults and initialisation follow PyTorch.
//
//   nn::Conv2d conv(nn::Conv2dOptions(1, 10, /*kernel_size=*/5).stride(2).padding(1).bias(false));
//   nn::BatchNorm2d bn(10);          // running_mean / running_var buffers, updated in training
#pragma once

#include <array>
#include <initializer_list>
#include <string>
#include <vector>

#include "ember/core/error.h"
#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember {

// N sizes from one value (repeated) or N values (libtorch's ExpandingArray): kernel_size(3),
// kernel_size({3, 5}).
template <size_t N>
class ExpandingArray {
 public:
  ExpandingArray(int64_t v) { v_.fill(v); }  // NOLINT: implicit, as libtorch's
  ExpandingArray(std::initializer_list<int64_t> l) : ExpandingArray(IntArrayRef(l)) {}  // NOLINT
  ExpandingArray(IntArrayRef a) {  // NOLINT
    EMBER_CHECK_VALUE(a.size() == N, "ExpandingArray: expected ", N, " values, got ", a.size());
    for (size_t i = 0; i < N; ++i) v_[i] = a[i];
  }
  operator IntArrayRef() const { return IntArrayRef(v_.data(), N); }  // NOLINT
  int64_t operator[](size_t i) const { return v_[i]; }
  static constexpr size_t size() { return N; }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(v_.begin(), v_.end()); }

 private:
  std::array<int64_t, N> v_;
};

namespace nn {

#define EMBER_NN_ARG(Self, T, name)   \
  Self& name(const T& v) {            \
    name##_ = v;                      \
    return *this;                     \
  }                                   \
  const T& name() const { return name##_; }

// The convolutions' options (libtorch's ConvOptions<D>): Conv2dOptions(1, 10, 5).stride(2).
// padding_mode: kZeros, or kReflect / kReplicate / kCircular (the input padded by F::pad first).
template <size_t D>
class ConvOptions {
 public:
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  EMBER_NN_ARG(ConvOptions, int64_t, in_channels)
  EMBER_NN_ARG(ConvOptions, int64_t, out_channels)
  EMBER_NN_ARG(ConvOptions, ExpandingArray<D>, kernel_size)
  EMBER_NN_ARG(ConvOptions, ExpandingArray<D>, stride)
  EMBER_NN_ARG(ConvOptions, ExpandingArray<D>, padding)
  EMBER_NN_ARG(ConvOptions, ExpandingArray<D>, dilation)
  EMBER_NN_ARG(ConvOptions, int64_t, groups)
  EMBER_NN_ARG(ConvOptions, bool, bias)
  EMBER_NN_ARG(ConvOptions, Mode, padding_mode)

 private:
  int64_t in_channels_, out_channels_;
  ExpandingArray<D> kernel_size_, stride_ = 1, padding_ = 0, dilation_ = 1;
  int64_t groups_ = 1;
  bool bias_ = true;
  Mode padding_mode_ = Mode::kZeros;
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using Conv3dOptions = ConvOptions<3>;

// The transposed convolutions' options (padding_mode kZeros only, as libtorch).
template <size_t D>
class ConvTransposeOptions {
 public:
  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  EMBER_NN_ARG(ConvTransposeOptions, int64_t, in_channels)
  EMBER_NN_ARG(ConvTransposeOptions, int64_t, out_channels)
  EMBER_NN_ARG(ConvTransposeOptions, ExpandingArray<D>, kernel_size)
  EMBER_NN_ARG(ConvTransposeOptions, ExpandingArray<D>, stride)
  EMBER_NN_ARG(ConvTransposeOptions, ExpandingArray<D>, padding)
  EMBER_NN_ARG(ConvTransposeOptions, ExpandingArray<D>, output_padding)
  EMBER_NN_ARG(ConvTransposeOptions, ExpandingArray<D>, dilation)
  EMBER_NN_ARG(ConvTransposeOptions, int64_t, groups)
  EMBER_NN_ARG(ConvTransposeOptions, bool, bias)
  EMBER_NN_ARG(ConvTransposeOptions, Mode, padding_mode)

 private:
  int64_t in_channels_, out_channels_;
  ExpandingArray<D> kernel_size_, stride_ = 1, padding_ = 0, output_padding_ = 0, dilation_ = 1;
  int64_t groups_ = 1;
  bool bias_ = true;
  Mode padding_mode_ = Mode::kZeros;
};
using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;
using ConvTranspose3dOptions = ConvTransposeOptions<3>;

// weight [out, in / groups, *kernel_size] (transposed: [in, out / groups, *kernel_size], fan_in
// from its dim 1, as PyTorch) and bias [out], from kaiming_uniform_(a = sqrt(5)) and
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)). Inputs [N, C, *spatial] or [C, *spatial]. Conv3d and
// ConvTranspose3d are compositions of the 2-D ops over the depth taps.
#define EMBER_CONV_MODULE(Name, D)                                     \
  class Name : public Module {                                         \
   public:                                                             \
    explicit Name(const Name##Options& options);                       \
    Name(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size) \
        : Name(Name##Options(in_channels, out_channels, kernel_size)) {} \
    Tensor forward(const Tensor& x) override;                          \
    std::string extra_repr() const override;                           \
    void reset_parameters();                                           \
    Name##Options options;                                             \
    Tensor weight, bias;                                               \
  };
EMBER_CONV_MODULE(Conv1d, 1)
EMBER_CONV_MODULE(Conv2d, 2)
EMBER_CONV_MODULE(Conv3d, 3)
EMBER_CONV_MODULE(ConvTranspose1d, 1)
EMBER_CONV_MODULE(ConvTranspose2d, 2)
EMBER_CONV_MODULE(ConvTranspose3d, 3)
#undef EMBER_CONV_MODULE

class MaxPool2dOptions {
 public:
  MaxPool2dOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  EMBER_NN_ARG(MaxPool2dOptions, ExpandingArray<2>, kernel_size)
  EMBER_NN_ARG(MaxPool2dOptions, ExpandingArray<2>, stride)
  EMBER_NN_ARG(MaxPool2dOptions, ExpandingArray<2>, padding)
  EMBER_NN_ARG(MaxPool2dOptions, ExpandingArray<2>, dilation)
  EMBER_NN_ARG(MaxPool2dOptions, bool, ceil_mode)

 private:
  ExpandingArray<2> kernel_size_, stride_, padding_ = 0, dilation_ = 1;
  bool ceil_mode_ = false;
};
class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(const MaxPool2dOptions& options) : options(options) {}
  Tensor forward(const Tensor& x) override;
  MaxPool2dOptions options;
};

class AvgPool2dOptions {
 public:
  AvgPool2dOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  EMBER_NN_ARG(AvgPool2dOptions, ExpandingArray<2>, kernel_size)
  EMBER_NN_ARG(AvgPool2dOptions, ExpandingArray<2>, stride)
  EMBER_NN_ARG(AvgPool2dOptions, ExpandingArray<2>, padding)
  EMBER_NN_ARG(AvgPool2dOptions, bool, ceil_mode)
  EMBER_NN_ARG(AvgPool2dOptions, bool, count_include_pad)

 private:
  ExpandingArray<2> kernel_size_, stride_, padding_ = 0;
  bool ceil_mode_ = false, count_include_pad_ = true;
};
class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(const AvgPool2dOptions& options) : options(options) {}
  Tensor forward(const Tensor& x) override;
  AvgPool2dOptions options;
};

class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(ExpandingArray<2> output_size) : output_size(output_size) {}
  Tensor forward(const Tensor& x) override;
  ExpandingArray<2> output_size;
};

namespace detail {
// The affine weight (1) and bias (0), and the running statistics, of BatchNorm and InstanceNorm
// (libtorch's NormImplBase), registered on m.
void init_norm(Module& m, const char* name, int64_t num_features, bool affine, bool track_running_stats,
               Tensor& weight, Tensor& bias, Tensor& running_mean, Tensor& running_var, Tensor& num_batches_tracked);
void reset_norm_stats(Tensor& running_mean, Tensor& running_var, Tensor& num_batches_tracked);
}  // namespace detail

class BatchNormOptions {
 public:
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  EMBER_NN_ARG(BatchNormOptions, int64_t, num_features)
  EMBER_NN_ARG(BatchNormOptions, double, eps)
  EMBER_NN_ARG(BatchNormOptions, double, momentum)
  EMBER_NN_ARG(BatchNormOptions, bool, affine)
  EMBER_NN_ARG(BatchNormOptions, bool, track_running_stats)

 private:
  int64_t num_features_;
  double eps_ = 1e-5, momentum_ = 0.1;
  bool affine_ = true, track_running_stats_ = true;
};

// Normalises each channel (dim 1) over the batch and the other dims: batch statistics in
// training (the running ones updated with momentum, the variance unbiased), running statistics
// in eval. weight (1) and bias (0) per channel; buffers running_mean (0), running_var (1),
// num_batches_tracked.
class BatchNorm : public Module {
 public:
  BatchNorm(const BatchNormOptions& options, int64_t input_dims_lo, int64_t input_dims_hi, const char* name);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  void reset_running_stats();
  BatchNormOptions options;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  int64_t lo_, hi_;
  const char* name_;
};
// [N, C] or [N, C, L].
class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(const BatchNormOptions& options) : BatchNorm(options, 2, 3, "BatchNorm1d") {}
};
// [N, C, H, W].
class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(const BatchNormOptions& options) : BatchNorm(options, 4, 4, "BatchNorm2d") {}
};

class LayerNormOptions {
 public:
  LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  EMBER_NN_ARG(LayerNormOptions, std::vector<int64_t>, normalized_shape)
  EMBER_NN_ARG(LayerNormOptions, double, eps)
  EMBER_NN_ARG(LayerNormOptions, bool, elementwise_affine)

 private:
  std::vector<int64_t> normalized_shape_;
  double eps_ = 1e-5;
  bool elementwise_affine_ = true;
};
// Normalises over the trailing normalized_shape dims; weight (1) and bias (0) of that shape.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(const LayerNormOptions& options);
  Tensor forward(const Tensor& x) override;
  LayerNormOptions options;
  Tensor weight, bias;
};

class GroupNormOptions {
 public:
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  EMBER_NN_ARG(GroupNormOptions, int64_t, num_groups)
  EMBER_NN_ARG(GroupNormOptions, int64_t, num_channels)
  EMBER_NN_ARG(GroupNormOptions, double, eps)
  EMBER_NN_ARG(GroupNormOptions, bool, affine)

 private:
  int64_t num_groups_, num_channels_;
  double eps_ = 1e-5;
  bool affine_ = true;
};
// Normalises each group of channels of each example; weight (1) and bias (0) per channel.
class GroupNorm : public Module {
 public:
  explicit GroupNorm(const GroupNormOptions& options);
  Tensor forward(const Tensor& x) override;
  GroupNormOptions options;
  Tensor weight, bias;
};

class DropoutOptions {
 public:
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT: implicit, as libtorch's
  EMBER_NN_ARG(DropoutOptions, double, p)
  EMBER_NN_ARG(DropoutOptions, bool, inplace)  // the result written into the input too

 private:
  double p_;
  bool inplace_ = false;
};
// Training: each element zeroed with probability p, the rest scaled by 1 / (1 - p); eval: x.
class Dropout : public Module {
 public:
  explicit Dropout(const DropoutOptions& options = {});
  Tensor forward(const Tensor& x) override;
  DropoutOptions options;
};
// The same per channel (whole feature maps of [N, C, H, W] or [C, H, W]).
class Dropout2d : public Module {
 public:
  explicit Dropout2d(const DropoutOptions& options = {});
  Tensor forward(const Tensor& x) override;
  DropoutOptions options;
};

#undef EMBER_NN_ARG

}  // namespace nn
}  // namespace ember
