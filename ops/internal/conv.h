// ember (internal to ops/): the convolutions' shared geometry and gradients (defined in
// ops/conv.cpp), used by conv2d / conv1d (ops/conv.cpp) and conv_transpose2d
// (ops/conv_transpose.cpp).
#pragma once

#include <optional>
#include <tuple>
#include <vector>

#include "ember/device/cpu/nn.h"
#include "ember/ops/ops.h"

namespace ember {
namespace ops {
namespace conv {

// A 2-D parameter from 1 or 2 values.
Shape pair_of(const char* op, const char* what, IntArrayRef a);

// The windows over an h x w input for kernel k, dilation d, padding p and stride s (1 or 2
// values each), checked.
struct Geometry {
  cpu::Window2d win;
  Shape k, d, p, s;
};
Geometry geometry(const char* op, int64_t h, int64_t w, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s);

// conv2d: input [N, C, H, W] (or [C, H, W]), weight [O, C / groups, kh, kw], bias [O].
// The checked geometry of conv2d(input, weight): input as 4-D, channel counts agreeing with groups.
struct ConvShape {
  Tensor x;  // [N, C, H, W] (a 3-D input unsqueezed)
  int64_t N, C, O, kh, kw, groups;
  Geometry g;
};
ConvShape conv2d_shape(const char* op, const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                       IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups);

// oneDNN's scratch as uint8 tensors from ember's caching allocator, alive as long as `keep`.
cpu::ScratchAlloc scratch_into(std::vector<Tensor>& keep);

// The gradients of conv2d from grad [N, O, oh, ow], as differentiable ops (so they have their own
// derivatives): input by conv_transpose2d, weight by a GEMM of grad with the input's windows,
// bias by a sum. Each only when asked (else undefined).
std::tuple<Tensor, Tensor, Tensor> conv2d_backward_math(const Tensor& grad, const ConvShape& c, const Tensor& weight,
                                                       bool input_grad, bool weight_grad, bool bias_grad);

}  // namespace conv
}  // namespace ops
}  // namespace ember
