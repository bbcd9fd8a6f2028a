// libtorch's padding and resampling: F::pad with its four modes and the padding modules
// (ReflectionPad1-3d, ReplicationPad1-3d, ZeroPad2d, ConstantPad1-3d), F::interpolate and
// nn::Upsample (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area). Each is a
// composition of ember's ops: positions are computed on the host as PyTorch computes them and
// read with index_select (interpolation weights applied per dim, the modes being separable), so
// they differentiate and run on every device.
//
//   F::pad(x, F::PadFuncOptions({1, 1, 2, 0}).mode(torch::kReflect));
//   F::interpolate(x, F::InterpolateFuncOptions().scale_factor({2.0, 2.0}).mode(torch::kBilinear)
//                         .align_corners(false));
#pragma once

#include <optional>
#include <vector>

#include "ember/nn/functional_forms.h"

namespace ember {
namespace nn {

// ---------------------------------------------------------------- padding
namespace functional {
// pad: (left, right) pairs from the last dim backwards; negative values crop. mode kConstant
// (value), kReflect (mirrored without the edge), kReplicate (the edge repeated) or kCircular
// (wrapped); the last three pad the last pad.size() / 2 dims of a batched or unbatched input.
struct PadFuncOptions {
  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}  // NOLINT: implicit, as libtorch's
  EMBER_ARG(std::vector<int64_t>, pad);
  EMBER_ARG(Mode, mode) = Mode::kConstant;
  EMBER_ARG(double, value) = 0;
};
Tensor pad(const Tensor& input, const PadFuncOptions& options);
}  // namespace functional

template <size_t D>
struct ReflectionPadOptions {
  ReflectionPadOptions(ExpandingArray<D * 2> padding) : padding_(padding) {}  // NOLINT
  EMBER_ARG(ExpandingArray<D * 2>, padding);
};
template <size_t D>
struct ReplicationPadOptions {
  ReplicationPadOptions(ExpandingArray<D * 2> padding) : padding_(padding) {}  // NOLINT
  EMBER_ARG(ExpandingArray<D * 2>, padding);
};
struct ZeroPad2dOptions {
  ZeroPad2dOptions(ExpandingArray<4> padding) : padding_(padding) {}  // NOLINT
  EMBER_ARG(ExpandingArray<4>, padding);
};
template <size_t D>
struct ConstantPadOptions {
  ConstantPadOptions(ExpandingArray<D * 2> padding, double value) : padding_(padding), value_(value) {}
  EMBER_ARG(ExpandingArray<D * 2>, padding);
  EMBER_ARG(double, value);
};
using ReflectionPad1dOptions = ReflectionPadOptions<1>;
using ReflectionPad2dOptions = ReflectionPadOptions<2>;
using ReflectionPad3dOptions = ReflectionPadOptions<3>;
using ReplicationPad1dOptions = ReplicationPadOptions<1>;
using ReplicationPad2dOptions = ReplicationPadOptions<2>;
using ReplicationPad3dOptions = ReplicationPadOptions<3>;
using ConstantPad1dOptions = ConstantPadOptions<1>;
using ConstantPad2dOptions = ConstantPadOptions<2>;
using ConstantPad3dOptions = ConstantPadOptions<3>;
EMBER_OPTIONS_MODULE(ReflectionPad1d, ReflectionPad1dOptions)
EMBER_OPTIONS_MODULE(ReflectionPad2d, ReflectionPad2dOptions)
EMBER_OPTIONS_MODULE(ReflectionPad3d, ReflectionPad3dOptions)
EMBER_OPTIONS_MODULE(ReplicationPad1d, ReplicationPad1dOptions)
EMBER_OPTIONS_MODULE(ReplicationPad2d, ReplicationPad2dOptions)
EMBER_OPTIONS_MODULE(ReplicationPad3d, ReplicationPad3dOptions)
EMBER_OPTIONS_MODULE(ZeroPad2d, ZeroPad2dOptions)
EMBER_OPTIONS_MODULE(ConstantPad1d, ConstantPad1dOptions)
EMBER_OPTIONS_MODULE(ConstantPad2d, ConstantPad2dOptions)
EMBER_OPTIONS_MODULE(ConstantPad3d, ConstantPad3dOptions)

// ---------------------------------------------------------------- interpolation
namespace functional {
// size or scale_factor (one value for every spatial dim, or one each) gives the output size;
// mode kNearest (default), kNearestExact, kLinear (3-D input), kBilinear / kBicubic (4-D),
// kTrilinear (5-D) or kArea (adaptive average pooling). align_corners only with the linear and
// cubic modes (default false). recompute_scale_factor: interpolate by the sizes' ratio, not by
// the given scale_factor.
struct InterpolateFuncOptions {
  EMBER_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  EMBER_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  EMBER_ARG(Mode, mode) = Mode::kNearest;
  EMBER_ARG(std::optional<bool>, align_corners) = std::nullopt;
  EMBER_ARG(std::optional<bool>, recompute_scale_factor) = std::nullopt;
  EMBER_ARG(bool, antialias) = false;
};
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options = {});
}  // namespace functional

namespace functional {
// Samples input [N, C, H, W] at grid [N, Ho, Wo, 2] ((x, y) in [-1, 1]): mode kBilinear or
// kNearest, padding_mode kZeros, kBorder or kReflection; differentiable in input and grid.
struct GridSampleFuncOptions {
  EMBER_ARG(Mode, mode) = Mode::kBilinear;
  EMBER_ARG(Mode, padding_mode) = Mode::kZeros;
  EMBER_ARG(std::optional<bool>, align_corners) = std::nullopt;
};
Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options = {});
// The sampling grid [N, H, W, 2] (or [N, D, H, W, 3]) of affine maps theta [N, 2, 3] ([N, 3, 4]).
Tensor affine_grid(const Tensor& theta, const IntArrayRef& size, bool align_corners = false);
// The p-norm distances between the rows i < j of input [N, M]: [N (N - 1) / 2].
Tensor pdist(const Tensor& input, double p = 2);
}  // namespace functional

struct UpsampleOptions {
  EMBER_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  EMBER_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  EMBER_ARG(Mode, mode) = Mode::kNearest;
  EMBER_ARG(std::optional<bool>, align_corners) = std::nullopt;
};
EMBER_OPTIONS_MODULE(Upsample, UpsampleOptions, = {})

}  // namespace nn
}  // namespace ember
