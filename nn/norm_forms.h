// libtorch's normalization, dropout and other layers beyond nn/layers.h, with their options and
// functional forms: BatchNorm3d, InstanceNorm1d/2d/3d, LocalResponseNorm, CrossMapLRN2d, the
// FuncOptions of batch_norm / layer_norm / group_norm / instance_norm, Dropout3d, AlphaDropout,
// FeatureAlphaDropout and the dropout FuncOptions, Bilinear, Fold and Unfold. Compositions of
// ember's ops: they differentiate and run on every device.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ember/nn/functional_forms.h"

namespace ember {
namespace nn {

using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;
using BatchNorm3dOptions = BatchNormOptions;
// [N, C, D, H, W].
class BatchNorm3d : public BatchNorm {
 public:
  explicit BatchNorm3d(const BatchNormOptions& options) : BatchNorm(options, 5, 5, "BatchNorm3d") {}
};

struct InstanceNormOptions {
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  EMBER_ARG(int64_t, num_features);
  EMBER_ARG(double, eps) = 1e-5;
  EMBER_ARG(double, momentum) = 0.1;
  EMBER_ARG(bool, affine) = false;
  EMBER_ARG(bool, track_running_stats) = false;
};
using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using InstanceNorm3dOptions = InstanceNormOptions;

// The channel window of x^2 each output divides by: (k + alpha / size * sum)^beta.
struct LocalResponseNormOptions {
  LocalResponseNormOptions(int64_t size) : size_(size) {}  // NOLINT
  EMBER_ARG(int64_t, size);
  EMBER_ARG(double, alpha) = 1e-4;
  EMBER_ARG(double, beta) = 0.75;
  EMBER_ARG(double, k) = 1.;
};
struct CrossMapLRN2dOptions {
  CrossMapLRN2dOptions(int64_t size) : size_(size) {}  // NOLINT
  EMBER_ARG(int64_t, size);
  EMBER_ARG(double, alpha) = 1e-4;
  EMBER_ARG(double, beta) = 0.75;
  EMBER_ARG(int64_t, k) = 1;
};

struct BilinearOptions {
  BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  EMBER_ARG(int64_t, in1_features);
  EMBER_ARG(int64_t, in2_features);
  EMBER_ARG(int64_t, out_features);
  EMBER_ARG(bool, bias) = true;
};

struct FoldOptions {
  FoldOptions(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size)
      : output_size_(output_size), kernel_size_(kernel_size) {}
  EMBER_ARG(ExpandingArray<2>, output_size);
  EMBER_ARG(ExpandingArray<2>, kernel_size);
  EMBER_ARG(ExpandingArray<2>, dilation) = 1;
  EMBER_ARG(ExpandingArray<2>, padding) = 0;
  EMBER_ARG(ExpandingArray<2>, stride) = 1;
};
struct UnfoldOptions {
  UnfoldOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  EMBER_ARG(ExpandingArray<2>, kernel_size);
  EMBER_ARG(ExpandingArray<2>, dilation) = 1;
  EMBER_ARG(ExpandingArray<2>, padding) = 0;
  EMBER_ARG(ExpandingArray<2>, stride) = 1;
};

using Dropout2dOptions = DropoutOptions;
using Dropout3dOptions = DropoutOptions;
using AlphaDropoutOptions = DropoutOptions;
using FeatureAlphaDropoutOptions = DropoutOptions;

namespace functional {
struct BatchNormFuncOptions {
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(Tensor, bias) = {};
  EMBER_ARG(bool, training) = false;
  EMBER_ARG(std::optional<double>, momentum) = 0.1;
  EMBER_ARG(double, eps) = 1e-5;
};
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options);
struct LayerNormFuncOptions {
  LayerNormFuncOptions(std::vector<int64_t> normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  EMBER_ARG(std::vector<int64_t>, normalized_shape);
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(Tensor, bias) = {};
  EMBER_ARG(double, eps) = 1e-5;
};
Tensor layer_norm(const Tensor& x, const LayerNormFuncOptions& options);
struct GroupNormFuncOptions {
  GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}  // NOLINT
  EMBER_ARG(int64_t, num_groups);
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(Tensor, bias) = {};
  EMBER_ARG(double, eps) = 1e-5;
};
Tensor group_norm(const Tensor& x, const GroupNormFuncOptions& options);
// Each sample's channels normalized over their own spatial dims (use_input_stats), or by the
// running statistics; the running ones (when given) updated with the mean over the batch.
struct InstanceNormFuncOptions {
  EMBER_ARG(Tensor, running_mean) = {};
  EMBER_ARG(Tensor, running_var) = {};
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(Tensor, bias) = {};
  EMBER_ARG(bool, use_input_stats) = true;
  EMBER_ARG(double, momentum) = 0.1;
  EMBER_ARG(double, eps) = 1e-5;
};
Tensor instance_norm(const Tensor& x, const InstanceNormFuncOptions& options = {});
using LocalResponseNormFuncOptions = LocalResponseNormOptions;
Tensor local_response_norm(const Tensor& x, const LocalResponseNormFuncOptions& options);

struct DropoutFuncOptions {
  EMBER_ARG(double, p) = 0.5;
  EMBER_ARG(bool, training) = true;
  EMBER_ARG(bool, inplace) = false;
};
using Dropout2dFuncOptions = DropoutFuncOptions;
using Dropout3dFuncOptions = DropoutFuncOptions;
struct AlphaDropoutFuncOptions {
  EMBER_ARG(double, p) = 0.5;
  EMBER_ARG(bool, training) = false;
  EMBER_ARG(bool, inplace) = false;
};
using FeatureAlphaDropoutFuncOptions = AlphaDropoutFuncOptions;
// inplace: the result also written into input (which must not be a leaf that requires grad).
Tensor dropout(Tensor input, const DropoutFuncOptions& options);
Tensor dropout2d(Tensor input, const Dropout2dFuncOptions& options);
Tensor dropout3d(Tensor input, const Dropout3dFuncOptions& options = {});
// SELU's dropout: dropped elements set to SELU's negative saturation, then an affine map that
// keeps the mean and variance (PyTorch's constants); feature_alpha_dropout drops whole channels.
Tensor alpha_dropout(Tensor input, const AlphaDropoutFuncOptions& options = {});
Tensor feature_alpha_dropout(Tensor input, const FeatureAlphaDropoutFuncOptions& options = {});

// y[..., o] = x1 W[o] x2 + b[o]: x1 [..., in1], x2 [..., in2], weight [out, in1, in2].
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias = {});
using FoldFuncOptions = FoldOptions;
using UnfoldFuncOptions = UnfoldOptions;
Tensor fold(const Tensor& input, const FoldFuncOptions& options);
Tensor unfold(const Tensor& input, const UnfoldFuncOptions& options);
}  // namespace functional

// weight (1) and bias (0) when affine; running_mean / running_var / num_batches_tracked buffers
// when track_running_stats (used in eval).
class InstanceNorm : public Module {
 public:
  InstanceNorm(const InstanceNormOptions& options, int64_t spatial_dims, const char* name);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  void reset_running_stats();
  InstanceNormOptions options;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  int64_t spatial_;
  const char* name_;
};
#define EMBER_INSTANCE_NORM(D)                                      \
  class InstanceNorm##D##d : public InstanceNorm {                  \
   public:                                                          \
    explicit InstanceNorm##D##d(const InstanceNormOptions& options) \
        : InstanceNorm(options, D, "InstanceNorm" #D "d") {}        \
  };
EMBER_INSTANCE_NORM(1)
EMBER_INSTANCE_NORM(2)
EMBER_INSTANCE_NORM(3)
#undef EMBER_INSTANCE_NORM

EMBER_OPTIONS_MODULE(LocalResponseNorm, LocalResponseNormOptions)
EMBER_OPTIONS_MODULE(CrossMapLRN2d, CrossMapLRN2dOptions)
EMBER_OPTIONS_MODULE(Fold, FoldOptions)
EMBER_OPTIONS_MODULE(Unfold, UnfoldOptions)

// weight [out, in1, in2] and bias [out] from U(-1/sqrt(in1), 1/sqrt(in1)).
class Bilinear : public Module {
 public:
  explicit Bilinear(const BilinearOptions& options);
  using Module::forward;
  Tensor forward(const Tensor& input1, const Tensor& input2);
  Tensor operator()(const Tensor& input1, const Tensor& input2) { return forward(input1, input2); }
  std::string extra_repr() const override;
  void reset_parameters();
  BilinearOptions options;
  Tensor weight, bias;
};

// Dropout3d: whole channels of [N, C, D, H, W] (or [C, D, H, W]); AlphaDropout and
// FeatureAlphaDropout: F::alpha_dropout / feature_alpha_dropout in training.
#define EMBER_DROPOUT_MODULE(Name)                      \
  class Name : public Module {                          \
   public:                                              \
    explicit Name(const DropoutOptions& options_ = {}); \
    Tensor forward(const Tensor& x) override;           \
    std::string extra_repr() const override;            \
    DropoutOptions options;                             \
  };
EMBER_DROPOUT_MODULE(Dropout3d)
EMBER_DROPOUT_MODULE(AlphaDropout)
EMBER_DROPOUT_MODULE(FeatureAlphaDropout)
#undef EMBER_DROPOUT_MODULE

}  // namespace nn
}  // namespace ember
