#include "ember/nn/resample.h"

#include <cmath>

#include "ember/nn/internal/host_index.h"
#include "ember/nn/internal/repr.h"
#include "ember/nn/pooling_nd.h"
#include "ember/ops/composite.h"

namespace ember {
namespace nn {

const char* mode_name(Mode m) {
  static const char* const names[] = {"constant", "reflect",    "replicate", "circular",  "nearest", "nearest-exact",
                                      "linear",   "bilinear",   "bicubic",   "trilinear", "area",    "zeros",
                                      "border",   "reflection", "max",       "GELU"};
  return names[static_cast<int>(m)];
}

namespace functional {
namespace {

// The input positions of padded positions -left .. in + right - 1 along one dim.
std::vector<int64_t> pad_positions(const char* op, Mode mode, int64_t in, int64_t left, int64_t right) {
  const int64_t out = in + left + right;
  EMBER_CHECK_SHAPE(out > 0, op, ": padding (", left, ", ", right, ") leaves nothing of a dim of size ", in);
  if (mode == Mode::kReflect)
    EMBER_CHECK_VALUE(left < in && right < in, op, ": reflect padding (", left, ", ", right,
                      ") must be smaller than the dim it pads, of size ", in);
  if (mode == Mode::kCircular)
    EMBER_CHECK_VALUE(left <= in && right <= in, op, ": circular padding (", left, ", ", right,
                      ") must be at most the dim it pads, of size ", in);
  std::vector<int64_t> idx(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    int64_t i = o - left;
    if (mode == Mode::kReflect) {
      if (in == 1)
        i = 0;
      else if (i < 0)
        i = -i;
      else if (i >= in)
        i = 2 * (in - 1) - i;
    } else if (mode == Mode::kReplicate) {
      i = std::min(std::max<int64_t>(i, 0), in - 1);
    } else {
      i = ((i % in) + in) % in;
    }
    idx[static_cast<size_t>(o)] = i;
  }
  return idx;
}
}  // namespace

Tensor pad(const Tensor& input, const PadFuncOptions& o) {
  const char* op = "pad";
  const auto& p = o.pad();
  EMBER_CHECK_VALUE(p.size() % 2 == 0, op, ": pad must have an even number of values (left, right per dim), got ",
                    p.size());
  const int64_t n = static_cast<int64_t>(p.size() / 2);
  EMBER_CHECK_SHAPE(n <= input.dim(), op, ": pad of ", p.size(), " values pads ", n, " dims, but the input of shape ",
                    input.sizes(), " has ", input.dim());
  if (o.mode() == Mode::kConstant) return constant_pad_nd(input, p, o.value());
  EMBER_CHECK_VALUE(o.mode() == Mode::kReflect || o.mode() == Mode::kReplicate || o.mode() == Mode::kCircular, op,
                    ": mode must be torch::kConstant, kReflect, kReplicate or kCircular, got ", mode_name(o.mode()));
  EMBER_CHECK_VALUE(o.value() == 0, op, ": a padding value is only for mode kConstant, got mode ", mode_name(o.mode()));
  EMBER_CHECK_SHAPE(n >= 1 && n <= 3 && (input.dim() == n + 1 || input.dim() == n + 2), op, ": ", mode_name(o.mode()),
                    " padding of ", n, " dims takes a ", n + 1, "-D or ", n + 2, "-D input, got shape ", input.sizes());
  Tensor y = input;
  for (int64_t d = 0; d < n; ++d) {
    const int64_t dim = input.dim() - 1 - d;
    const auto idx =
        pad_positions(op, o.mode(), input.size(dim), p[static_cast<size_t>(2 * d)], p[static_cast<size_t>(2 * d + 1)]);
    y = y.index_select(dim, detail::host_index(idx, input));
  }
  return y;
}

namespace {
// One spatial dim's resampling: out positions, each a weighted sum of taps input positions.
struct Taps {
  int64_t out = 0;
  std::vector<std::vector<int64_t>> idx;  // [tap][out]
  std::vector<std::vector<double>> w;     // [tap][out]; empty: weight 1 (nearest)
};
double cubic1(double x, double A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
double cubic2(double x, double A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

// PyTorch's area_pixel_compute_scale / compute_scales_value.
double pixel_scale(int64_t in, int64_t out, bool align, std::optional<double> scale) {
  if (align) return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  return scale && *scale > 0 ? 1.0 / *scale : static_cast<double>(in) / static_cast<double>(out);
}

Taps taps_of(Mode mode, int64_t in, int64_t out, bool align, std::optional<double> scale) {
  Taps t;
  t.out = out;
  if (mode == Mode::kNearest || mode == Mode::kNearestExact) {
    // PyTorch computes the nearest scale in float.
    const float s =
        static_cast<float>(scale && *scale > 0 ? 1.0 / *scale : static_cast<double>(in) / static_cast<double>(out));
    t.idx.resize(1);
    for (int64_t o = 0; o < out; ++o) {
      const float src = mode == Mode::kNearest ? static_cast<float>(o) * s : (static_cast<float>(o) + 0.5f) * s;
      t.idx[0].push_back(std::min(static_cast<int64_t>(std::floor(src)), in - 1));
    }
    return t;
  }
  const double s = pixel_scale(in, out, align, scale);
  const bool cubic = mode == Mode::kBicubic;
  t.idx.resize(cubic ? 4 : 2);
  t.w.resize(cubic ? 4 : 2);
  for (int64_t o = 0; o < out; ++o) {
    double src = align ? s * static_cast<double>(o) : s * (static_cast<double>(o) + 0.5) - 0.5;
    if (!cubic) {
      if (src < 0) src = 0;
      const int64_t i0 = std::min(static_cast<int64_t>(src), in - 1);
      const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
      const double l1 = src - static_cast<double>(i0);
      t.idx[0].push_back(i0);
      t.idx[1].push_back(i1);
      t.w[0].push_back(1.0 - l1);
      t.w[1].push_back(l1);
    } else {
      const double f = std::floor(src), x = src - f;
      const double A = -0.75;
      const double c[4] = {cubic2(x + 1, A), cubic1(x, A), cubic1(1 - x, A), cubic2(2 - x, A)};
      for (int k = 0; k < 4; ++k) {
        const int64_t i = static_cast<int64_t>(f) - 1 + k;
        t.idx[static_cast<size_t>(k)].push_back(std::min(std::max<int64_t>(i, 0), in - 1));
        t.w[static_cast<size_t>(k)].push_back(c[k]);
      }
    }
  }
  return t;
}

Tensor resample_dim(const Tensor& x, int64_t dim, const Taps& t) {
  if (t.w.empty()) return x.index_select(dim, detail::host_index(t.idx[0], x));
  std::vector<int64_t> wshape(static_cast<size_t>(x.dim()), 1);
  wshape[static_cast<size_t>(dim)] = t.out;
  Tensor y;
  for (size_t k = 0; k < t.idx.size(); ++k) {
    Tensor w = tensor(t.w[k]).to(x.dtype()).to(x.device()).view(wshape);
    Tensor term = x.index_select(dim, detail::host_index(t.idx[k], x)) * w;
    y = y.defined() ? y + term : term;
  }
  return y;
}
}  // namespace

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& o) {
  const char* op = "interpolate";
  const Mode mode = o.mode();
  const int64_t D = input.dim() - 2;
  EMBER_CHECK_SHAPE(D >= 1 && D <= 3, op, ": expected a 3-D, 4-D or 5-D input [N, C, *spatial], got shape ",
                    input.sizes());
  EMBER_CHECK_DTYPE(is_floating_point(input.dtype()), op, ": expected a floating-point input, got ", input.dtype());
  const bool linear_mode =
      mode == Mode::kLinear || mode == Mode::kBilinear || mode == Mode::kBicubic || mode == Mode::kTrilinear;
  EMBER_CHECK_VALUE(linear_mode || mode == Mode::kNearest || mode == Mode::kNearestExact || mode == Mode::kArea, op,
                    ": mode must be kNearest, kNearestExact, kLinear, kBilinear, kBicubic, kTrilinear or kArea, got ",
                    mode_name(mode));
  const int64_t needs = mode == Mode::kLinear ? 1 : mode == Mode::kTrilinear ? 3 : linear_mode ? 2 : D;
  EMBER_CHECK_SHAPE(needs == D, op, ": mode ", mode_name(mode), " takes a ", needs + 2, "-D input, got shape ",
                    input.sizes());
  EMBER_CHECK_VALUE(linear_mode || !o.align_corners(), op,
                    ": align_corners can only be set with the interpolating modes (linear, bilinear, bicubic, "
                    "trilinear), not ",
                    mode_name(mode));
  EMBER_CHECK_VALUE(!o.antialias(), op,
                    ": antialias is not supported (libtorch 1.13 has it for bilinear and bicubic "
                    "downsampling only)");
  EMBER_CHECK_VALUE(o.size().has_value() != o.scale_factor().has_value(), op,
                    ": exactly one of size and scale_factor must be given");
  std::vector<int64_t> out(static_cast<size_t>(D));
  std::vector<std::optional<double>> scales(static_cast<size_t>(D));
  if (o.size()) {
    const auto& s = *o.size();
    EMBER_CHECK_SHAPE(s.size() == 1 || static_cast<int64_t>(s.size()) == D, op, ": size must have 1 or ", D,
                      " values, got ", s.size());
    for (int64_t d = 0; d < D; ++d) out[static_cast<size_t>(d)] = s[s.size() == 1 ? 0 : static_cast<size_t>(d)];
  } else {
    const auto& f = *o.scale_factor();
    EMBER_CHECK_SHAPE(f.size() == 1 || static_cast<int64_t>(f.size()) == D, op, ": scale_factor must have 1 or ", D,
                      " values, got ", f.size());
    for (int64_t d = 0; d < D; ++d) {
      const double sf = f[f.size() == 1 ? 0 : static_cast<size_t>(d)];
      EMBER_CHECK_VALUE(sf > 0 && std::isfinite(sf), op, ": scale_factor must be positive, got ", sf);
      const double o_d = std::floor(static_cast<double>(input.size(2 + d)) * sf);
      EMBER_CHECK_SHAPE(o_d < 9.2e18, op, ": scale_factor ", sf, " makes an output too large");
      out[static_cast<size_t>(d)] = static_cast<int64_t>(o_d);
      if (!o.recompute_scale_factor().value_or(false)) scales[static_cast<size_t>(d)] = sf;
    }
  }
  for (int64_t d = 0; d < D; ++d)
    EMBER_CHECK_SHAPE(out[static_cast<size_t>(d)] > 0, op, ": the output size must be positive, got ", IntArrayRef(out),
                      " for input of shape ", input.sizes());
  if (mode == Mode::kArea) {
    if (D == 1) return adaptive_avg_pool1d(input, AdaptiveAvgPool1dFuncOptions(out[0]));
    if (D == 2) return adaptive_avg_pool2d(input, AdaptiveAvgPool2dFuncOptions(IntArrayRef(out)));
    return adaptive_avg_pool3d(input, AdaptiveAvgPool3dFuncOptions(IntArrayRef(out)));
  }
  Tensor y = input;
  for (int64_t d = 0; d < D; ++d)
    y = resample_dim(y, 2 + d,
                     taps_of(mode, input.size(2 + d), out[static_cast<size_t>(d)], o.align_corners().value_or(false),
                             scales[static_cast<size_t>(d)]));
  return y;
}

namespace {
// PyTorch's grid_sampler_unnormalize / reflect_coordinates / clip_coordinates, on tensors.
Tensor source_coords(const Tensor& g, int64_t size, bool align, Mode padding) {
  const double n = static_cast<double>(size);
  Tensor x = align ? (g + 1.0) * ((n - 1) / 2) : ((g + 1.0) * n - 1.0) / 2;
  if (padding == Mode::kBorder) return x.clamp(0.0, n - 1);
  if (padding != Mode::kReflection) return x;
  const double lo = align ? 0.0 : -0.5, span = align ? n - 1 : n;
  if (span <= 0) return zeros_like(x);
  Tensor d = (x - lo).abs();
  Tensor flips = (d / span).floor();
  Tensor extra = d - flips * span;
  Tensor even = remainder(flips, 2.0) == 0.0;
  return where(even, extra + lo, (extra * -1.0) + (span + lo)).clamp(0.0, n - 1);
}
// input's values at integer positions (yi, xi) [N, Ho, Wo] (0 outside the input).
Tensor read_at(const Tensor& flat, const Tensor& yi, const Tensor& xi, int64_t H, int64_t W) {
  Tensor inside = (yi >= 0.0)
                      .logical_and(yi <= static_cast<double>(H - 1))
                      .logical_and(xi >= 0.0)
                      .logical_and(xi <= static_cast<double>(W - 1));
  Tensor idx =
      (yi.clamp(0.0, static_cast<double>(H - 1)) * static_cast<double>(W) + xi.clamp(0.0, static_cast<double>(W - 1)))
          .to(kInt64);
  const int64_t N = flat.size(0), C = flat.size(1);
  Tensor v = flat.gather(2, idx.reshape({N, 1, -1}).expand({N, C, idx.numel() / N}));
  return v * inside.reshape({N, 1, -1}).to(flat.dtype());
}
}  // namespace

Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& o) {
  const char* op = "grid_sample";
  EMBER_CHECK_SHAPE(input.dim() == 4 && grid.dim() == 4 && grid.size(0) == input.size(0) && grid.size(3) == 2, op,
                    ": expected input [N, C, H, W] and grid [N, Ho, Wo, 2], got shapes ", input.sizes(), " and ",
                    grid.sizes(), " (5-D sampling is not supported)");
  EMBER_CHECK_VALUE(o.mode() == Mode::kBilinear || o.mode() == Mode::kNearest, op,
                    ": mode must be kBilinear or kNearest, got ", mode_name(o.mode()));
  EMBER_CHECK_VALUE(
      o.padding_mode() == Mode::kZeros || o.padding_mode() == Mode::kBorder || o.padding_mode() == Mode::kReflection,
      op, ": padding_mode must be kZeros, kBorder or kReflection, got ", mode_name(o.padding_mode()));
  const int64_t N = input.size(0), C = input.size(1), H = input.size(2), W = input.size(3);
  const bool align = o.align_corners().value_or(false);
  Tensor ix = source_coords(grid.select(3, 0), W, align, o.padding_mode());
  Tensor iy = source_coords(grid.select(3, 1), H, align, o.padding_mode());
  Tensor flat = input.reshape({N, C, H * W});
  Tensor out;
  if (o.mode() == Mode::kNearest) {
    out = read_at(flat, iy.detach().round(), ix.detach().round(), H, W);
  } else {
    Tensor x0 = ix.detach().floor(), y0 = iy.detach().floor();
    Tensor wx1 = (ix - x0).reshape({N, 1, -1}), wy1 = (iy - y0).reshape({N, 1, -1});
    Tensor wx0 = 1.0 - wx1, wy0 = 1.0 - wy1;
    out = read_at(flat, y0, x0, H, W) * wy0 * wx0 + read_at(flat, y0, x0 + 1.0, H, W) * wy0 * wx1 +
          read_at(flat, y0 + 1.0, x0, H, W) * wy1 * wx0 + read_at(flat, y0 + 1.0, x0 + 1.0, H, W) * wy1 * wx1;
  }
  return out.reshape({N, C, grid.size(1), grid.size(2)});
}

Tensor affine_grid(const Tensor& theta, const IntArrayRef& size, bool align_corners) {
  const char* op = "affine_grid";
  const bool is3d = size.size() == 5;
  EMBER_CHECK_SHAPE((size.size() == 4 || is3d) && theta.dim() == 3 && theta.size(0) == size[0] &&
                        theta.size(1) == (is3d ? 3 : 2) && theta.size(2) == (is3d ? 4 : 3),
                    op, ": expected theta [N, 2, 3] with size [N, C, H, W] (or [N, 3, 4] with [N, C, D, H, W]), got ",
                    theta.sizes(), " and ", size);
  auto axis = [&](int64_t n) {
    Tensor l = linspace(-1.0, 1.0, n, theta.options());
    return align_corners || n <= 1 ? l : l * (static_cast<double>(n - 1) / static_cast<double>(n));
  };
  std::vector<Tensor> coords;  // x, y (, z) over the output grid, then the ones
  if (!is3d) {
    const int64_t H = size[2], W = size[3];
    coords = {axis(W).view({1, W}).expand({H, W}), axis(H).view({H, 1}).expand({H, W})};
  } else {
    const int64_t D = size[2], H = size[3], W = size[4];
    coords = {axis(W).view({1, 1, W}).expand({D, H, W}), axis(H).view({1, H, 1}).expand({D, H, W}),
              axis(D).view({D, 1, 1}).expand({D, H, W})};
  }
  coords.push_back(ones_like(coords[0]));
  Tensor base = stack(coords, -1).reshape({1, -1, static_cast<int64_t>(coords.size())});
  Tensor g = matmul(base.expand({size[0], base.size(1), base.size(2)}), theta.transpose(1, 2));
  std::vector<int64_t> shape{size[0]};
  for (size_t d = 2; d < size.size(); ++d) shape.push_back(size[d]);
  shape.push_back(is3d ? 3 : 2);
  return g.reshape(shape);
}

Tensor pdist(const Tensor& input, double p) {
  EMBER_CHECK_SHAPE(input.dim() == 2, "pdist: expected a 2-D input [N, M], got shape ", input.sizes());
  EMBER_CHECK_VALUE(p >= 0, "pdist: p must be non-negative, got ", p);
  const int64_t N = input.size(0);
  Tensor pairs = triu_indices(N, N, 1).to(input.device());
  Tensor d = input.index_select(0, pairs.select(0, 0)) - input.index_select(0, pairs.select(0, 1));
  return d.norm(p, {1});
}
}  // namespace functional

namespace F = functional;
using detail::repr_ints;
using detail::repr_number;
namespace {
template <size_t N>
Tensor pad_with(const Tensor& x, const ExpandingArray<N>& p, Mode mode, double value = 0) {
  return F::pad(x, F::PadFuncOptions(p.vec()).mode(mode).value(value));
}
}  // namespace

#define EMBER_DEFINE_PAD_MODULE(Name, body, repr)        \
  Name::Name(const Name##Options& o) : options(o) {}     \
  Tensor Name::forward(const Tensor& x) { return body; } \
  std::string Name::extra_repr() const { return repr; }
#define EMBER_PAD_REPR "padding=" + repr_ints(options.padding())
#define EMBER_CPAD_REPR "padding=" + repr_ints(options.padding()) + ", value=" + repr_number(options.value())
EMBER_DEFINE_PAD_MODULE(ReflectionPad1d, pad_with(x, options.padding(), Mode::kReflect), EMBER_PAD_REPR)
EMBER_DEFINE_PAD_MODULE(ReflectionPad2d, pad_with(x, options.padding(), Mode::kReflect), EMBER_PAD_REPR)
EMBER_DEFINE_PAD_MODULE(ReflectionPad3d, pad_with(x, options.padding(), Mode::kReflect), EMBER_PAD_REPR)
EMBER_DEFINE_PAD_MODULE(ReplicationPad1d, pad_with(x, options.padding(), Mode::kReplicate), EMBER_PAD_REPR)
EMBER_DEFINE_PAD_MODULE(ReplicationPad2d, pad_with(x, options.padding(), Mode::kReplicate), EMBER_PAD_REPR)
EMBER_DEFINE_PAD_MODULE(ReplicationPad3d, pad_with(x, options.padding(), Mode::kReplicate), EMBER_PAD_REPR)
EMBER_DEFINE_PAD_MODULE(ZeroPad2d, pad_with(x, options.padding(), Mode::kConstant), EMBER_PAD_REPR)
EMBER_DEFINE_PAD_MODULE(ConstantPad1d, pad_with(x, options.padding(), Mode::kConstant, options.value()),
                        EMBER_CPAD_REPR)
EMBER_DEFINE_PAD_MODULE(ConstantPad2d, pad_with(x, options.padding(), Mode::kConstant, options.value()),
                        EMBER_CPAD_REPR)
EMBER_DEFINE_PAD_MODULE(ConstantPad3d, pad_with(x, options.padding(), Mode::kConstant, options.value()),
                        EMBER_CPAD_REPR)
#undef EMBER_PAD_REPR
#undef EMBER_CPAD_REPR
#undef EMBER_DEFINE_PAD_MODULE

Upsample::Upsample(const UpsampleOptions& o) : options(o) {}
Tensor Upsample::forward(const Tensor& x) {
  return F::interpolate(x, F::InterpolateFuncOptions()
                               .size(options.size())
                               .scale_factor(options.scale_factor())
                               .mode(options.mode())
                               .align_corners(options.align_corners())
                               .recompute_scale_factor(false));
}
std::string Upsample::extra_repr() const {
  std::string s;
  if (options.scale_factor()) {
    std::string f;
    for (double v : *options.scale_factor()) f += (f.empty() ? "" : ", ") + repr_number(v);
    s = "scale_factor=" + (options.scale_factor()->size() == 1 ? f : "[" + f + "]");
  } else if (options.size()) {
    s = "size=" + repr_ints(*options.size());
  }
  return s + ", mode=" + mode_name(options.mode());
}

}  // namespace nn
}  // namespace ember
