// libtorch's activation modules, their options and their functional forms with FuncOptions
// (torch::nn::ELU, ELUOptions, F::elu(x, F::ELUFuncOptions().alpha(0.5)), ...). Each is a
// composition of ember's ops, so each differentiates and runs on the CPU and the NPU. An
// `inplace` option writes the result into the input (which must not need its gradient).
#pragma once

#include <string>

#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember {
namespace nn {

// The options classes: one per module, each field an EMBER_ARG with libtorch's default.
struct ELUOptions {
  EMBER_ARG(double, alpha) = 1.0;
  EMBER_ARG(bool, inplace) = false;
};
struct SELUOptions {
  SELUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as libtorch's
  EMBER_ARG(bool, inplace);
};
struct CELUOptions {
  EMBER_ARG(double, alpha) = 1.0;
  EMBER_ARG(bool, inplace) = false;
};
struct HardshrinkOptions {
  HardshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT
  EMBER_ARG(double, lambda);
};
using SoftshrinkOptions = HardshrinkOptions;
struct HardtanhOptions {
  EMBER_ARG(double, min_val) = -1.0;
  EMBER_ARG(double, max_val) = 1.0;
  EMBER_ARG(bool, inplace) = false;
};
struct ReLUOptions {
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  EMBER_ARG(bool, inplace);
};
using ReLU6Options = ReLUOptions;
struct RReLUOptions {
  EMBER_ARG(double, lower) = 1.0 / 8.0;
  EMBER_ARG(double, upper) = 1.0 / 3.0;
  EMBER_ARG(bool, inplace) = false;
};
struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  EMBER_ARG(int64_t, dim);
};
using SoftminOptions = SoftmaxOptions;
using LogSoftmaxOptions = SoftmaxOptions;
struct GLUOptions {
  GLUOptions(int64_t dim = -1) : dim_(dim) {}  // NOLINT
  EMBER_ARG(int64_t, dim);
};
struct GELUOptions {
  EMBER_ARG(std::string, approximate) = "none";
};
struct SoftplusOptions {
  EMBER_ARG(double, beta) = 1.0;
  EMBER_ARG(double, threshold) = 20.0;
};
struct ThresholdOptions {
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  EMBER_ARG(double, threshold);
  EMBER_ARG(double, value);
  EMBER_ARG(bool, inplace) = false;
};
struct PReLUOptions {
  EMBER_ARG(int64_t, num_parameters) = 1;
  EMBER_ARG(double, init) = 0.25;
};

namespace functional {
using ELUFuncOptions = ELUOptions;
using SELUFuncOptions = SELUOptions;
using CELUFuncOptions = CELUOptions;
using HardshrinkFuncOptions = HardshrinkOptions;
using SoftshrinkFuncOptions = SoftshrinkOptions;
using HardtanhFuncOptions = HardtanhOptions;
using ReLUFuncOptions = ReLUOptions;
using ReLU6FuncOptions = ReLU6Options;
using GLUFuncOptions = GLUOptions;
using GELUFuncOptions = GELUOptions;
using SoftplusFuncOptions = SoftplusOptions;
using ThresholdFuncOptions = ThresholdOptions;
// libtorch's functional softmax family takes an optional dtype the input is cast to first.
struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  EMBER_ARG(int64_t, dim);
  EMBER_ARG(std::optional<DType>, dtype) = std::nullopt;
};
using SoftminFuncOptions = SoftmaxFuncOptions;
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;
struct RReLUFuncOptions {
  EMBER_ARG(double, lower) = 1.0 / 8.0;
  EMBER_ARG(double, upper) = 1.0 / 3.0;
  EMBER_ARG(bool, training) = false;
  EMBER_ARG(bool, inplace) = false;
};
struct GumbelSoftmaxFuncOptions {
  EMBER_ARG(double, tau) = 1.0;
  EMBER_ARG(bool, hard) = false;
  EMBER_ARG(int, dim) = -1;
};

Tensor elu(const Tensor& x, const ELUFuncOptions& options = {});
Tensor selu(const Tensor& x, const SELUFuncOptions& options = {});
Tensor celu(const Tensor& x, const CELUFuncOptions& options = {});
Tensor hardshrink(const Tensor& x, const HardshrinkFuncOptions& options = {});
Tensor softshrink(const Tensor& x, const SoftshrinkFuncOptions& options = {});
Tensor hardtanh(const Tensor& x, const HardtanhFuncOptions& options = {});
Tensor relu(const Tensor& x, const ReLUFuncOptions& options);
Tensor relu6(const Tensor& x, const ReLU6FuncOptions& options = {});
Tensor rrelu(const Tensor& x, const RReLUFuncOptions& options = {});
Tensor gelu(const Tensor& x, const GELUFuncOptions& options);
Tensor glu(const Tensor& x, const GLUFuncOptions& options = {});
Tensor softplus(const Tensor& x, const SoftplusFuncOptions& options = {});
Tensor threshold(const Tensor& x, const ThresholdFuncOptions& options);
Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& options);
Tensor softmin(const Tensor& x, const SoftminFuncOptions& options);
Tensor log_softmax(const Tensor& x, const LogSoftmaxFuncOptions& options);
Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& options = {});
Tensor logsigmoid(const Tensor& x);
Tensor mish(const Tensor& x);
Tensor softsign(const Tensor& x);
Tensor tanhshrink(const Tensor& x);
// weight: one slope, or one per channel (dim 1 of x).
Tensor prelu(const Tensor& x, const Tensor& weight);
}  // namespace functional

// The modules: options in, F::name(x, options) out (EMBER_OPTIONS_MODULE: ember/nn/options.h).
EMBER_OPTIONS_MODULE(ELU, ELUOptions, = {})
EMBER_OPTIONS_MODULE(SELU, SELUOptions, = {})
EMBER_OPTIONS_MODULE(CELU, CELUOptions, = {})
EMBER_OPTIONS_MODULE(Hardshrink, HardshrinkOptions, = {})
EMBER_OPTIONS_MODULE(Softshrink, SoftshrinkOptions, = {})
EMBER_OPTIONS_MODULE(Hardtanh, HardtanhOptions, = {})
EMBER_OPTIONS_MODULE(ReLU6, ReLU6Options, = {})
EMBER_OPTIONS_MODULE(RReLU, RReLUOptions, = {})
EMBER_OPTIONS_MODULE(GLU, GLUOptions, = {})
EMBER_OPTIONS_MODULE(Softplus, SoftplusOptions, = {})
EMBER_OPTIONS_MODULE(Threshold, ThresholdOptions)
EMBER_OPTIONS_MODULE(Softmax, SoftmaxOptions)
EMBER_OPTIONS_MODULE(Softmin, SoftminOptions)
EMBER_OPTIONS_MODULE(LogSoftmax, LogSoftmaxOptions)

// The modules without options.
#define EMBER_PLAIN_MODULE(Name)                                \
  class Name : public Module {                                  \
   public:                                                      \
    Tensor forward(const Tensor& x) override;                   \
  };
EMBER_PLAIN_MODULE(LogSigmoid)
EMBER_PLAIN_MODULE(Mish)
EMBER_PLAIN_MODULE(Softsign)
EMBER_PLAIN_MODULE(Tanhshrink)
EMBER_PLAIN_MODULE(Softmax2d)  // softmax over the channels (dim -3) of [N, C, H, W] or [C, H, W]
EMBER_PLAIN_MODULE(Identity)
#undef EMBER_PLAIN_MODULE

// Learnable slopes: weight [num_parameters] filled with init.
class PReLU : public Module {
 public:
  explicit PReLU(const PReLUOptions& options_ = {});
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  void reset_parameters();
  PReLUOptions options;
  Tensor weight;
};

}  // namespace nn
}  // namespace ember
