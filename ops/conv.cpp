// Convolution, lowered to sliding windows (im2col, ops/im2col.cpp) and GEMMs (pooling:
// ops/pool.cpp). As composites of differentiable ops (one definition for every device):
//   conv2d            = weight [O, C/g kh kw] @ im2col(x), per group, + bias; instead, a node
//                       of its own (_convolution, backward conv2d_backward): on the CPU in
//                       float32 (and bfloat16 where the CPU has bf16 dot products) oneDNN's
//                       direct convolution, on the NPU CANN's aclnnConvolution(Backward)
//   conv1d            = conv2d over [N, C, 1, L] with a 1 x k kernel
// (conv_transpose2d: ops/conv_transpose.cpp.)
// A kernel_size, stride, padding or dilation of one value means that value for both dims.
#include <array>
#include <cmath>
#include <limits>

#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/nn.h"
#include "ember/dispatch/library.h"
#include "ember/ops/internal/conv.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"

namespace ember::op {
EMBER_DECLARE_OP(conv2d, Lower,
                 "ember::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=[1], "
                 "int[2] padding=[0], int[2] dilation=[1], int groups=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef,
                        IntArrayRef, int64_t));
EMBER_DECLARE_OP(_convolution, Keep,
                 "ember::_convolution(Tensor input, Tensor weight, Tensor? bias=None, "
                 "int[2] stride=[1], int[2] padding=[0], int[2] dilation=[1], int groups=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef,
                        IntArrayRef, int64_t));
EMBER_DECLARE_OP(conv2d_backward, Keep,
                 "ember::conv2d_backward(Tensor grad, Tensor input, Tensor weight, "
                 "int[2] stride, int[2] padding, int[2] dilation, int groups, bool input_grad=True, "
                 "bool weight_grad=True, bool bias_grad=True) -> (Tensor, Tensor, Tensor)",
                 std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, IntArrayRef,
                                                    IntArrayRef, IntArrayRef, int64_t, bool, bool, bool));
EMBER_DECLARE_OP(conv1d, Lower,
                 "ember::conv1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=[1], "
                 "int[1] padding=[0], int[1] dilation=[1], int groups=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef,
                        IntArrayRef, int64_t));
}  // namespace ember::op

namespace ember {
namespace ops {
namespace conv {

Shape pair_of(const char* op, const char* what, IntArrayRef a) {
  EMBER_CHECK_VALUE(a.size() == 1 || a.size() == 2, op, ": ", what, " needs 1 or 2 values, got ", a);
  return a.size() == 1 ? Shape{a[0], a[0]} : Shape{a[0], a[1]};
}

Geometry geometry(const char* op, int64_t h, int64_t w, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s) {
  Geometry g{{}, pair_of(op, "kernel_size", k), pair_of(op, "dilation", d), pair_of(op, "padding", p),
             pair_of(op, "stride", s)};
  std::string err = cpu::window2d(h, w, g.k, g.d, g.p, g.s, &g.win);
  EMBER_CHECK_VALUE(err.empty(), op, ": ", err, " (input ", h, "x", w, ")");
  return g;
}

ConvShape conv2d_shape(const char* op, const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                       IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  common_device(op, {&input, &weight});
  EMBER_CHECK_SHAPE(input.dim() == 3 || input.dim() == 4, op, ": expects input [N, C, H, W] or [C, H, W], got ",
                    input.sizes());
  EMBER_CHECK_SHAPE(weight.dim() == 4, op, ": expects weight [out_channels, in_channels / groups, kh, kw], got ",
                    weight.sizes());
  EMBER_CHECK_VALUE(groups >= 1, op, ": groups must be positive, got ", groups);
  ConvShape c;
  c.x = input.dim() == 4 ? input : input.unsqueeze(0);
  c.N = c.x.size(0), c.C = c.x.size(1), c.O = weight.size(0), c.kh = weight.size(2), c.kw = weight.size(3);
  c.groups = groups;
  EMBER_CHECK_SHAPE(c.C % groups == 0 && c.O % groups == 0 && weight.size(1) == c.C / groups, op, ": input with ", c.C,
                    " channels and weight of shape ", weight.sizes(), " do not agree for groups=", groups,
                    " (expected weight [", c.O, ", ", c.C / groups, ", kh, kw] and both channel counts divisible by groups)");
  if (bias && bias->defined()) {
    common_device(op, {&input, &*bias});
    EMBER_CHECK_SHAPE(bias->dim() == 1 && bias->size(0) == c.O, op, ": bias must have shape [", c.O, "], got ",
                      bias->sizes());
  }
  c.g = geometry(op, c.x.size(2), c.x.size(3), {c.kh, c.kw}, dilation, padding, stride);
  return c;
}

cpu::ScratchAlloc scratch_into(std::vector<Tensor>& keep) {
  return [&keep](size_t bytes) {
    EMBER_CHECK_VALUE(bytes <= static_cast<size_t>(INT64_MAX), op::conv2d::op_name(), ": a scratch buffer of ", bytes,
                      " bytes");
    keep.push_back(empty({static_cast<int64_t>(bytes)}, kUInt8));
    return keep.back().raw_data_ptr();
  };
}

std::tuple<Tensor, Tensor, Tensor> conv2d_backward_math(const Tensor& grad, const ConvShape& c, const Tensor& weight,
                                                       bool input_grad, bool weight_grad, bool bias_grad) {
  const Geometry& g = c.g;
  const int64_t N = c.N, C = c.C, O = c.O, L = g.win.oh * g.win.ow, groups = c.groups;
  Tensor gx, gw, gb;
  if (input_grad) {
    // The rows and columns the last window does not reach come back as output_padding.
    Shape op{c.x.size(2) + 2 * g.p[0] - g.d[0] * (c.kh - 1) - 1 - (g.win.oh - 1) * g.s[0],
             c.x.size(3) + 2 * g.p[1] - g.d[1] * (c.kw - 1) - 1 - (g.win.ow - 1) * g.s[1]};
    gx = conv_transpose2d(grad, weight, std::nullopt, g.s, g.p, op, groups, g.d);
  }
  if (weight_grad) {
    Tensor cols = im2col(c.x, {c.kh, c.kw}, g.d, g.p, g.s);       // [N, C kh kw, L]
    Tensor gl = grad.reshape({N, O, L}).permute({1, 0, 2});        // [O, N, L]
    Tensor cl = cols.permute({1, 0, 2});                           // [C kh kw, N, L]
    int64_t per = C / groups * c.kh * c.kw, og = O / groups;
    std::vector<Tensor> parts;
    for (int64_t gi = 0; gi < groups; ++gi) {
      Tensor a = (groups == 1 ? gl : gl.narrow(0, gi * og, og)).reshape({og, N * L});
      Tensor b = (groups == 1 ? cl : cl.narrow(0, gi * per, per)).reshape({per, N * L});
      parts.push_back(mm(a, b.t()));
    }
    gw = (groups == 1 ? parts[0] : cat(parts, 0)).reshape(weight.sizes());
  }
  if (bias_grad) gb = grad.sum({0, 2, 3});
  return {gx, gw, gb};
}

}  // namespace conv
}  // namespace ops

namespace {
using namespace ops;
using namespace ops::conv;


// ---------------------------------------------------------------- composites

// oneDNN's convolution applies: CPU, float32 (or bfloat16 on a CPU with bf16 dot products) for
// input, weight and bias alike, and no empty dimension.
bool onednn_applies(const ConvShape& c, const Tensor& weight, const std::optional<Tensor>& bias) {
  if (!c.x.device().is_cpu() || weight.dtype() != c.x.dtype() || !cpu::onednn_conv2d_supported(c.x.dtype()))
    return false;
  if (bias && bias->defined() && bias->dtype() != c.x.dtype()) return false;  // (mixed: the GEMM path promotes)
  return c.N > 0 && c.C > 0 && c.O > 0;
}
// CANN's aclnnConvolution applies on the NPU: floating input, weight and bias of one dtype, no
// empty dimension.
bool aclnn_applies(const ConvShape& c, const Tensor& weight, const std::optional<Tensor>& bias) {
  if (!c.x.is_npu() || weight.dtype() != c.x.dtype() || !c.x.is_floating_point()) return false;
  if (bias && bias->defined() && bias->dtype() != c.x.dtype()) return false;
  return c.N > 0 && c.C > 0 && c.O > 0;
}
// conv2d has a kernel of its own here: oneDNN on the CPU, aclnnConvolution on the NPU.
bool fast_path(const ConvShape& c, const Tensor& weight, const std::optional<Tensor>& bias) {
  return onednn_applies(c, weight, bias) || aclnn_applies(c, weight, bias);
}
cpu::Conv2dProblem onednn_problem(const ConvShape& c, const std::optional<Tensor>& bias) {
  bool b = bias && bias->defined();
  return cpu::Conv2dProblem{c.N, c.C, c.O, c.groups, c.g.win, c.x.dtype(), b ? bias->dtype() : kFloat32, b};
}

// One GEMM over every window of the batch (differentiable ops: conv2d's composite path).
Tensor conv2d_math(const ConvShape& c, const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  const int64_t N = c.N, C = c.C, O = c.O, kh = c.kh, kw = c.kw, groups = c.groups;
  const Geometry& g = c.g;
  Tensor cols = im2col(c.x, {kh, kw}, g.d, g.p, g.s);  // [N, C kh kw, L]
  Tensor out;
  if (groups == 1) {
    // One GEMM over every window of the batch: [O, C kh kw] x [C kh kw, N L].
    int64_t K = C * kh * kw, L = g.win.oh * g.win.ow;
    Tensor flat = cols.permute({1, 0, 2}).reshape({K, N * L});
    out = mm(weight.reshape({O, K}), flat).view({O, N, L}).permute({1, 0, 2});  // [N, O, L]
  } else {
    int64_t per = C / groups * kh * kw, og = O / groups;
    std::vector<Tensor> parts;
    for (int64_t gi = 0; gi < groups; ++gi)
      parts.push_back(matmul(weight.narrow(0, gi * og, og).reshape({og, per}), cols.narrow(1, gi * per, per)));
    out = cat(parts, 1);
  }
  out = out.reshape({N, O, g.win.oh, g.win.ow});
  if (bias && bias->defined()) out = out + bias->view({1, O, 1, 1});
  return input.dim() == 4 ? out : out.squeeze(0);
}

// conv2d: _convolution where oneDNN or aclnnConvolution applies, else the GEMM path.
Tensor conv2d_composite(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  ConvShape c = conv2d_shape(op::conv2d::op_name(), input, weight, bias, stride, padding, dilation, groups);
  if (fast_path(c, weight, bias)) return _convolution(input, weight, bias, stride, padding, dilation, groups);
  return conv2d_math(c, input, weight, bias);
}

// _convolution: oneDNN's forward on the CPU, aclnnConvolution on the NPU (the GEMM path when
// neither applies).
Tensor convolution_kernel(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                          IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  ConvShape c = conv2d_shape(op::_convolution::op_name(), input, weight, bias, stride, padding, dilation, groups);
  if (aclnn_applies(c, weight, bias)) {
    Tensor out = empty_on({c.N, c.O, c.g.win.oh, c.g.win.ow}, c.x.dtype(), c.x.device());
    EXEC_NPU_CMD(npu::aclnnConvolution, c.x, weight, bias, IntArrayRef(c.g.s), IntArrayRef(c.g.p), IntArrayRef(c.g.d),
                 false, Shape{0, 0}, c.groups, out, int8_t(0));
    return input.dim() == 4 ? out : out.squeeze(0);
  }
  if (onednn_applies(c, weight, bias)) {
    Tensor out = empty_on({c.N, c.O, c.g.win.oh, c.g.win.ow}, c.x.dtype(), c.x.device());
    Tensor x = c.x.contiguous(), w = weight.contiguous(), b = bias && bias->defined() ? bias->contiguous() : Tensor();
    std::vector<Tensor> keep;
    if (cpu::onednn_conv2d(onednn_problem(c, bias), out.raw_data_ptr(), x.raw_data_ptr(), w.raw_data_ptr(),
                           b.defined() ? b.raw_data_ptr() : nullptr, scratch_into(keep)))
      return input.dim() == 4 ? out : out.squeeze(0);
  }
  return conv2d_math(c, input, weight, bias).contiguous();
}


// conv2d_backward(grad, input, weight, ...): the three gradients, from oneDNN (CPU) or
// aclnnConvolutionBackward (NPU) where they apply.
std::tuple<Tensor, Tensor, Tensor> conv2d_backward_kernel(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                         IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                         int64_t groups, bool input_grad, bool weight_grad,
                                                         bool bias_grad) {
  const char* op = ::ember::op::conv2d_backward::op_name();
  ConvShape c = conv2d_shape(op, input, weight, std::nullopt, stride, padding, dilation, groups);
  common_device(op, {&grad, &input});
  Shape want{c.N, c.O, c.g.win.oh, c.g.win.ow};
  Tensor g4 = grad.dim() == 3 && input.dim() == 3 ? grad.unsqueeze(0) : grad;
  EMBER_CHECK_SHAPE(grad.dim() == input.dim() && g4.sizes() == IntArrayRef(want), op, ": grad of shape ", grad.sizes(),
                    " does not match conv2d's output for input ", input.sizes(), " and weight ", weight.sizes(),
                    " (expected ", IntArrayRef(want), input.dim() == 3 ? " without the batch dim)" : ")");
  EMBER_CHECK_DTYPE(grad.is_floating_point(), op, ": expects a floating grad, got ", grad.dtype());
  Tensor gx, gw, gb;
  if (aclnn_applies(c, weight, std::nullopt) && grad.dtype() == c.x.dtype()) {
    auto like = [](const Tensor& t, bool want) { return want ? empty_on(t.sizes(), t.dtype(), t.device()) : Tensor(); };
    gx = like(c.x, input_grad);
    gw = like(weight, weight_grad);
    gb = bias_grad ? empty_on({c.O}, c.x.dtype(), c.x.device()) : Tensor();
    EXEC_NPU_CMD(npu::aclnnConvolutionBackward, g4, c.x, weight, Shape{c.O}, IntArrayRef(c.g.s), IntArrayRef(c.g.p),
                 IntArrayRef(c.g.d), false, Shape{0, 0}, static_cast<int>(c.groups),
                 std::array<bool, 3>{input_grad, weight_grad, bias_grad}, int8_t(0), gx, gw, gb);
  } else if (onednn_applies(c, weight, std::nullopt) && grad.dtype() == c.x.dtype()) {
    Tensor x = c.x.contiguous(), w = weight.contiguous(), dy = g4.contiguous();
    if (input_grad) gx = empty_on(x.sizes(), x.dtype(), x.device());
    if (weight_grad) gw = empty_on(w.sizes(), w.dtype(), w.device());
    if (bias_grad) gb = empty_on({c.O}, x.dtype(), x.device());
    cpu::Conv2dProblem p = onednn_problem(c, std::nullopt);
    p.bias = bias_grad;
    p.bias_dtype = x.dtype();
    std::vector<Tensor> keep;
    if (!cpu::onednn_conv2d_backward(p, gx.defined() ? gx.raw_data_ptr() : nullptr,
                                     gw.defined() ? gw.raw_data_ptr() : nullptr, gb.defined() ? gb.raw_data_ptr() : nullptr,
                                     dy.raw_data_ptr(), x.raw_data_ptr(), w.raw_data_ptr(), scratch_into(keep)))
      std::tie(gx, gw, gb) = conv2d_backward_math(g4, c, weight, input_grad, weight_grad, bias_grad);
  } else {
    std::tie(gx, gw, gb) = conv2d_backward_math(g4, c, weight, input_grad, weight_grad, bias_grad);
  }
  if (gx.defined() && input.dim() == 3) gx = gx.squeeze(0);
  return {gx, gw, gb};
}

// conv1d: input [N, C, L] or [C, L], weight [O, C / groups, k]; each parameter is one value.
Tensor conv1d_composite(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  const char* op = ::ember::op::conv1d::op_name();
  EMBER_CHECK_SHAPE(input.dim() == 2 || input.dim() == 3, op, ": expects input [N, C, L] or [C, L], got ",
                    input.sizes());
  EMBER_CHECK_SHAPE(weight.dim() == 3, op, ": expects weight [out_channels, in_channels / groups, k], got ",
                    weight.sizes());
  auto one = [op](const char* what, IntArrayRef a) {
    EMBER_CHECK_VALUE(a.size() == 1, op, ": ", what, " needs 1 value, got ", a);
    return a[0];
  };
  int64_t s = one("stride", stride), p = one("padding", padding), d = one("dilation", dilation);
  return conv2d_composite(input.unsqueeze(-2), weight.unsqueeze(-2), bias, {1, s}, {0, p}, {1, d}, groups)
      .squeeze(-2);
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::conv2d(), &conv2d_composite);
  m.def(op::_convolution());
  m.def(op::conv2d_backward());
  m.def(op::conv1d(), &conv1d_composite);
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::_convolution(), &convolution_kernel);
  m.impl(op::conv2d_backward(), &conv2d_backward_kernel);
}
// On the NPU, _convolution and conv2d_backward are CANN's aclnnConvolution and
// aclnnConvolutionBackward.
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::_convolution(), &convolution_kernel);
  m.impl(op::conv2d_backward(), &conv2d_backward_kernel);
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return op::conv2d::call(input, weight, bias, stride, padding, dilation, groups);
}
Tensor _convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                      IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return op::_convolution::call(input, weight, bias, stride, padding, dilation, groups);
}
std::tuple<Tensor, Tensor, Tensor> conv2d_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                   int64_t groups, bool input_grad, bool weight_grad, bool bias_grad) {
  return op::conv2d_backward::call(grad, input, weight, stride, padding, dilation, groups, input_grad, weight_grad, bias_grad);
}
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return op::conv1d::call(input, weight, bias, stride, padding, dilation, groups);
}
// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
using namespace ops::conv;
// conv2d: oneDNN's (or the GEMM path's) backward kernel, or with create_graph the same
// gradients as differentiable ops.
using Conv2dSig = Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef,
                         IntArrayRef, int64_t);
std::vector<Tensor> conv2d_bw(const BackwardCtx<Conv2dSig>& c) {
  Tensor x = c.arg<0>(), w = c.arg<1>(), g = c.grad();
  IntArrayRef s = c.arg<3>(), p = c.arg<4>(), d = c.arg<5>();
  const int64_t groups = c.arg<6>();
  const bool nx = c.needs(0), nw = c.needs(1), nb = c.needs(2);
  Tensor gx, gw, gb;
  if (is_grad_enabled()) {
    ConvShape cs = conv2d_shape(op::_convolution::op_name(), x, w, std::nullopt, s, p, d, groups);
    std::tie(gx, gw, gb) = conv2d_backward_math(x.dim() == 3 ? g.unsqueeze(0) : g, cs, w, nx, nw, nb);
    if (gx.defined() && x.dim() == 3) gx = gx.squeeze(0);
  } else {
    std::tie(gx, gw, gb) = conv2d_backward(g, x, w, s, p, d, groups, nx, nw, nb);
  }
  return {gx, gw, gb};
}
const auto kConv2d =
    spec_of<op::_convolution>("ConvolutionBackward0", &conv2d_bw).saving(saves(0, 1));
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::_convolution(), autograd_kernel<&kConv2d>());
  autograd::impl_no_double_backward(m, op::conv2d_backward());
}

}  // namespace ember
