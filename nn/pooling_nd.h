// libtorch's pooling beyond ember's 2-D kernels: 3-D max and average pooling, adaptive max pooling
// (1-3 D), 3-D adaptive average pooling, max unpooling and fractional max pooling, with their
// options, functional forms and modules. They are one composition of ember's ops: the input's
// windows are gathered (index_select by a table of input positions built on the host, padding
// read from an appended -inf or 0) and reduced over the window, so they differentiate and run on
// every device, at the cost of materialising the windows ([N, C, outputs, window]).
//
//   auto y = F::max_pool3d(x, F::MaxPool3dFuncOptions(2).stride(2));
//   auto [v, i] = F::adaptive_max_pool2d_with_indices(x, F::AdaptiveMaxPool2dFuncOptions({3, 3}));
#pragma once

#include <optional>
#include <tuple>
#include <vector>

#include "ember/nn/functional_forms.h"

namespace ember {
namespace nn {

// D doubles from one value or D values (libtorch's ExpandingArray<D, double>).
template <size_t D>
class ExpandingArrayDouble {
 public:
  ExpandingArrayDouble(double v) { v_.fill(v); }  // NOLINT: implicit, as libtorch's
  ExpandingArrayDouble(std::initializer_list<double> l) : ExpandingArrayDouble(std::vector<double>(l)) {}  // NOLINT
  ExpandingArrayDouble(const std::vector<double>& a) {                                                     // NOLINT
    EMBER_CHECK_VALUE(a.size() == D, "ExpandingArray: expected ", D, " values, got ", a.size());
    for (size_t i = 0; i < D; ++i) v_[i] = a[i];
  }
  double operator[](size_t i) const { return v_[i]; }

 private:
  std::array<double, D> v_;
};

template <size_t D>
struct AvgPoolOptions {
  AvgPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride);
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG(bool, ceil_mode) = false;
  EMBER_ARG(bool, count_include_pad) = true;
  EMBER_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};
template <size_t D>
struct MaxPoolOptions {
  MaxPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride);
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(bool, ceil_mode) = false;
};
template <size_t D>
struct AdaptiveMaxPoolOptions {
  AdaptiveMaxPoolOptions(ExpandingArray<D> output_size) : output_size_(output_size) {}  // NOLINT
  EMBER_ARG(ExpandingArray<D>, output_size);
};
template <size_t D>
struct MaxUnpoolOptions {
  MaxUnpoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride);
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
};
// output_size or output_ratio (of the input's size) says the output's size; _random_samples
// [N, C, D] in [0, 1) fixes the windows (drawn from ember's generator when undefined).
template <size_t D>
struct FractionalMaxPoolOptions {
  FractionalMaxPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(std::optional<ExpandingArray<D>>, output_size) = std::nullopt;
  EMBER_ARG(std::optional<ExpandingArrayDouble<D>>, output_ratio) = std::nullopt;
  EMBER_ARG(Tensor, _random_samples) = {};
};
using AvgPool3dOptions = AvgPoolOptions<3>;
using MaxPool3dOptions = MaxPoolOptions<3>;
using AdaptiveMaxPool1dOptions = AdaptiveMaxPoolOptions<1>;
using AdaptiveMaxPool2dOptions = AdaptiveMaxPoolOptions<2>;
using AdaptiveMaxPool3dOptions = AdaptiveMaxPoolOptions<3>;
using AdaptiveAvgPool3dOptions = functional::AdaptiveAvgPoolFuncOptions<3>;
using MaxUnpool1dOptions = MaxUnpoolOptions<1>;
using MaxUnpool2dOptions = MaxUnpoolOptions<2>;
using MaxUnpool3dOptions = MaxUnpoolOptions<3>;
using FractionalMaxPool2dOptions = FractionalMaxPoolOptions<2>;
using FractionalMaxPool3dOptions = FractionalMaxPoolOptions<3>;

namespace functional {
using AvgPool3dFuncOptions = AvgPool3dOptions;
using MaxPool3dFuncOptions = MaxPool3dOptions;
using AdaptiveMaxPool1dFuncOptions = AdaptiveMaxPool1dOptions;
using AdaptiveMaxPool2dFuncOptions = AdaptiveMaxPool2dOptions;
using AdaptiveMaxPool3dFuncOptions = AdaptiveMaxPool3dOptions;
using AdaptiveAvgPool3dFuncOptions = AdaptiveAvgPool3dOptions;
using FractionalMaxPool2dFuncOptions = FractionalMaxPool2dOptions;
using FractionalMaxPool3dFuncOptions = FractionalMaxPool3dOptions;
template <size_t D>
struct MaxUnpoolFuncOptions {
  MaxUnpoolFuncOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride);
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG(std::optional<std::vector<int64_t>>, output_size) = std::nullopt;
};
using MaxUnpool1dFuncOptions = MaxUnpoolFuncOptions<1>;
using MaxUnpool2dFuncOptions = MaxUnpoolFuncOptions<2>;
using MaxUnpool3dFuncOptions = MaxUnpoolFuncOptions<3>;

// Indices: the flat position of each max within its input plane (libtorch's).
Tensor avg_pool3d(const Tensor& x, const AvgPool3dFuncOptions& options);
Tensor max_pool3d(const Tensor& x, const MaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x, const MaxPool1dFuncOptions& options);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& x, const MaxPool3dFuncOptions& options);
Tensor adaptive_avg_pool3d(const Tensor& x, const AdaptiveAvgPool3dFuncOptions& options);
Tensor adaptive_max_pool1d(const Tensor& x, const AdaptiveMaxPool1dFuncOptions& options);
Tensor adaptive_max_pool2d(const Tensor& x, const AdaptiveMaxPool2dFuncOptions& options);
Tensor adaptive_max_pool3d(const Tensor& x, const AdaptiveMaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& x, const AdaptiveMaxPool1dFuncOptions& o);
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& x, const AdaptiveMaxPool2dFuncOptions& o);
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& x, const AdaptiveMaxPool3dFuncOptions& o);
// The size max_unpool gives: output_size's last dims if given (checked against the range the
// pooling could have come from), else (in - 1) stride - 2 padding + kernel_size.
std::vector<int64_t> _unpool_output_size(const Tensor& input, const IntArrayRef& kernel_size, const IntArrayRef& stride,
                                         const IntArrayRef& padding,
                                         const std::optional<std::vector<int64_t>>& output_size);
// Zeros with input's values at indices (max_pool*_with_indices' positions) of each plane.
Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& options);
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& options);
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& options);
Tensor fractional_max_pool2d(const Tensor& x, const FractionalMaxPool2dFuncOptions& options);
Tensor fractional_max_pool3d(const Tensor& x, const FractionalMaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(const Tensor& x,
                                                              const FractionalMaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(const Tensor& x,
                                                              const FractionalMaxPool3dFuncOptions& options);
}  // namespace functional

EMBER_OPTIONS_MODULE(AvgPool3d, AvgPool3dOptions)
EMBER_OPTIONS_MODULE(AdaptiveAvgPool3d, AdaptiveAvgPool3dOptions)
// A pooling module that can also give the indices of its maxima.
#define EMBER_INDEXED_POOL_MODULE(Name, Options)                      \
  class Name : public Module {                                        \
   public:                                                            \
    explicit Name(const Options& options_);                           \
    Tensor forward(const Tensor& x) override;                         \
    std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x); \
    std::string extra_repr() const override;                          \
    Options options;                                                  \
  };
EMBER_INDEXED_POOL_MODULE(MaxPool3d, MaxPool3dOptions)
EMBER_INDEXED_POOL_MODULE(AdaptiveMaxPool1d, AdaptiveMaxPool1dOptions)
EMBER_INDEXED_POOL_MODULE(AdaptiveMaxPool2d, AdaptiveMaxPool2dOptions)
EMBER_INDEXED_POOL_MODULE(AdaptiveMaxPool3d, AdaptiveMaxPool3dOptions)
EMBER_INDEXED_POOL_MODULE(FractionalMaxPool2d, FractionalMaxPool2dOptions)
EMBER_INDEXED_POOL_MODULE(FractionalMaxPool3d, FractionalMaxPool3dOptions)
#undef EMBER_INDEXED_POOL_MODULE
#define EMBER_UNPOOL_MODULE(Name, Options)                                                 \
  class Name : public Module {                                                             \
   public:                                                                                 \
    explicit Name(const Options& options_) : options(options_) {}                          \
    using Module::forward;                                                                 \
    Tensor forward(const Tensor& input, const Tensor& indices,                             \
                   const std::optional<std::vector<int64_t>>& output_size = std::nullopt); \
    std::string extra_repr() const override;                                               \
    Options options;                                                                       \
  };
EMBER_UNPOOL_MODULE(MaxUnpool1d, MaxUnpool1dOptions)
EMBER_UNPOOL_MODULE(MaxUnpool2d, MaxUnpool2dOptions)
EMBER_UNPOOL_MODULE(MaxUnpool3d, MaxUnpool3dOptions)
#undef EMBER_UNPOOL_MODULE

}  // namespace nn
}  // namespace ember
