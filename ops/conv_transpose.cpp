// conv_transpose2d: input [N, Cin, H, W] (or [C, H, W]), weight [Cin, Cout / groups, kh, kw],
// bias [Cout]: the adjoint of conv2d with the same weight. As composites of differentiable ops,
// col2im(weight^T @ x) per group, + bias; instead, a node of its own (_conv_transpose2d, backward
// conv_transpose2d_backward, node ConvolutionBackward0): on the CPU oneDNN's convolution
// primitives where conv2d uses them (its backward-data for the forward, its forward and weight
// gradient for the gradients), on the NPU CANN's aclnnConvolution(Backward) with transposed.
#include <algorithm>
#include <array>

#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/nn.h"
#include "ember/dispatch/library.h"
#include "ember/ops/internal/conv.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"

namespace ember::op {
EMBER_DECLARE_OP(conv_transpose2d_backward, Keep,
                 "ember::conv_transpose2d_backward(Tensor grad, Tensor input, "
                 "Tensor weight, int[2] stride, int[2] padding, int[2] output_padding, int groups, int[2] dilation, "
                 "bool input_grad=True, bool weight_grad=True, bool bias_grad=True) -> (Tensor, Tensor, Tensor)",
                 std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, IntArrayRef,
                                                    IntArrayRef, IntArrayRef, int64_t, IntArrayRef, bool, bool, bool));
EMBER_DECLARE_OP(conv_transpose2d, Lower,
                 "ember::conv_transpose2d(Tensor input, Tensor weight, Tensor? bias=None, "
                 "int[2] stride=[1], int[2] padding=[0], int[2] output_padding=[0], int groups=1, "
                 "int[2] dilation=[1]) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef,
                        IntArrayRef, int64_t, IntArrayRef));
EMBER_DECLARE_OP(_conv_transpose2d, Keep,
                 "ember::_conv_transpose2d(Tensor input, Tensor weight, Tensor? bias=None, "
                 "int[2] stride=[1], int[2] padding=[0], int[2] output_padding=[0], int groups=1, "
                 "int[2] dilation=[1]) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef,
                        IntArrayRef, int64_t, IntArrayRef));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;
using namespace ops::conv;

// conv_transpose2d: input [N, Cin, H, W], weight [Cin, Cout / groups, kh, kw]; the output is
// (H - 1) stride - 2 padding + dilation (kh - 1) + output_padding + 1 high (and so wide).
struct TransposeShape {
  Tensor x;  // [N, Cin, H, W]
  int64_t N, Cin, H, W, og, Cout, kh, kw, OH, OW, groups;
  Shape s, p, d, opad;
};
TransposeShape transpose_shape(const char* op, const Tensor& input, const Tensor& weight,
                               const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                               IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  common_device(op, {&input, &weight});
  EMBER_CHECK_SHAPE(input.dim() == 3 || input.dim() == 4, op, ": expects input [N, C, H, W] or [C, H, W], got ",
                    input.sizes());
  EMBER_CHECK_SHAPE(weight.dim() == 4, op, ": expects weight [in_channels, out_channels / groups, kh, kw], got ",
                    weight.sizes());
  EMBER_CHECK_VALUE(groups >= 1, op, ": groups must be positive, got ", groups);
  Tensor x = input.dim() == 4 ? input : input.unsqueeze(0);
  int64_t N = x.size(0), Cin = x.size(1), H = x.size(2), W = x.size(3);
  int64_t og = weight.size(1), Cout = checked_mul(og, groups, op), kh = weight.size(2), kw = weight.size(3);
  EMBER_CHECK_SHAPE(weight.size(0) == Cin && Cin % groups == 0, op, ": input with ", Cin, " channels and weight of shape ",
                    weight.sizes(), " do not agree for groups=", groups, " (expected weight [", Cin,
                    ", out_channels / groups, kh, kw])");
  Shape s = pair_of(op, "stride", stride), p = pair_of(op, "padding", padding), d = pair_of(op, "dilation", dilation),
        opad = pair_of(op, "output_padding", output_padding);
  EMBER_CHECK_VALUE(opad[0] >= 0 && opad[1] >= 0 && (opad[0] < s[0] || opad[0] < d[0]) &&
                        (opad[1] < s[1] || opad[1] < d[1]),
                    op, ": output_padding ", IntArrayRef(opad), " must be smaller than stride ", IntArrayRef(s), " or dilation ",
                    IntArrayRef(d));
  if (bias && bias->defined()) {
    common_device(op, {&input, &*bias});
    EMBER_CHECK_SHAPE(bias->dim() == 1 && bias->size(0) == Cout, op, ": bias must have shape [", Cout, "], got ",
                      bias->sizes());
  }
  EMBER_CHECK_VALUE(s[0] > 0 && s[1] > 0 && d[0] > 0 && d[1] > 0 && p[0] >= 0 && p[1] >= 0, op,
                    ": stride and dilation must be positive and padding non-negative, got stride ", IntArrayRef(s),
                    ", dilation ", IntArrayRef(d), ", padding ", IntArrayRef(p));
  // (in - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1, every step checked.
  auto out_size = [&](int64_t in, int64_t st, int64_t pad, int64_t dil, int64_t k, int64_t extra) {
    int64_t grown = checked_add(checked_mul(in - 1, st, op), checked_mul(dil, k - 1, op), op);
    return checked_add(grown, extra + 1, op) - checked_mul(pad, 2, op);
  };
  int64_t OH = out_size(H, s[0], p[0], d[0], kh, opad[0]);
  int64_t OW = out_size(W, s[1], p[1], d[1], kw, opad[1]);
  EMBER_CHECK_VALUE(OH > 0 && OW > 0, op, ": the output would be ", OH, "x", OW, " (input ", H, "x", W, ")");
  return TransposeShape{x, N, Cin, H, W, og, Cout, kh, kw, OH, OW, groups, s, p, d, opad};
}

// col2im of weight^T @ x, per group (differentiable ops).
Tensor conv_transpose2d_math(const TransposeShape& t, const Tensor& input, const Tensor& weight,
                             const std::optional<Tensor>& bias) {
  const Tensor& x = t.x;
  const int64_t N = t.N, Cin = t.Cin, H = t.H, W = t.W, og = t.og, Cout = t.Cout, kh = t.kh, kw = t.kw, OH = t.OH,
                OW = t.OW, groups = t.groups;
  const Shape &s = t.s, &p = t.p, &d = t.d;
  Tensor xf = x.reshape({N, Cin, H * W});
  Tensor cols;
  if (groups == 1) {
    cols = matmul(weight.reshape({Cin, Cout * kh * kw}).t(), xf);  // [N, Cout kh kw, H W]
  } else {
    int64_t cg = Cin / groups;
    std::vector<Tensor> parts;
    for (int64_t gi = 0; gi < groups; ++gi)
      parts.push_back(
          matmul(weight.narrow(0, gi * cg, cg).reshape({cg, og * kh * kw}).t(), xf.narrow(1, gi * cg, cg)));
    cols = cat(parts, 1);
  }
  // col2im over every row the windows reach, (H - 1) stride + dilation (kh - 1) + 1 (and so
  // columns), unpadded; the output is rows [padding, padding + OH) of that, zeros past its end
  // (output_padding may reach beyond the last window: col2im, which counts its windows from the
  // output size, cannot take that output size directly when output_padding is not below stride).
  const int64_t FH = (H - 1) * s[0] + d[0] * (kh - 1) + 1, FW = (W - 1) * s[1] + d[1] * (kw - 1) + 1;
  const int64_t RH = std::max<int64_t>(0, std::min(OH, FH - p[0])), RW = std::max<int64_t>(0, std::min(OW, FW - p[1]));
  Tensor out;
  if (RH > 0 && RW > 0) {
    out = col2im(cols, {FH, FW}, {kh, kw}, d, {0, 0}, s).narrow(2, p[0], RH).narrow(3, p[1], RW);
    if (RW < OW) out = cat({out, zeros({N, Cout, RH, OW - RW}, out.options())}, 3);
    if (RH < OH) out = cat({out, zeros({N, Cout, OH - RH, OW}, out.options())}, 2);
  } else {  // every output element lies past the windows: zeros (still a function of cols)
    out = zeros({N, Cout, OH, OW}, cols.options()) + cols.sum().mul(0);
  }
  if (bias && bias->defined()) out = out + bias->view({1, Cout, 1, 1});
  return input.dim() == 4 ? out : out.squeeze(0);
}

// CANN's aclnnConvolution (transposed) applies on the NPU: floating input, weight and bias of one
// dtype, no empty dimension.
bool transpose_on_aclnn(const TransposeShape& t, const Tensor& weight, const std::optional<Tensor>& bias) {
  if (!t.x.is_npu() || weight.dtype() != t.x.dtype() || !t.x.is_floating_point()) return false;
  if (bias && bias->defined() && bias->dtype() != t.x.dtype()) return false;
  return t.N > 0 && t.Cin > 0 && t.Cout > 0;
}

// oneDNN applies on the CPU as for conv2d (float32, or bfloat16 with bf16 dot products; one dtype
// for input, weight and bias; no empty dimension), through the convolution whose input gradient
// this transposed convolution is: input [N, Cout, OH, OW], weight [Cin, Cout / groups, kh, kw]
// read as conv2d's [O = Cin, C / groups, kh, kw], output [N, Cin, H, W]. Its windows must give
// back H x W (an output_padding of at least the stride does not: the GEMM path then).
bool transpose_on_onednn(const TransposeShape& t, const Tensor& weight, const std::optional<Tensor>& bias,
                         cpu::Conv2dProblem* prob) {
  if (!t.x.device().is_cpu() || weight.dtype() != t.x.dtype() || !cpu::onednn_conv2d_supported(t.x.dtype()))
    return false;
  if (bias && bias->defined() && bias->dtype() != t.x.dtype()) return false;
  if (t.N == 0 || t.Cin == 0 || t.Cout == 0) return false;
  cpu::Window2d w;
  if (!cpu::window2d(t.OH, t.OW, {t.kh, t.kw}, t.d, t.p, t.s, &w).empty() || w.oh != t.H || w.ow != t.W) return false;
  *prob = cpu::Conv2dProblem{t.N, t.Cout, t.Cin, t.groups, w, t.x.dtype(), t.x.dtype(), false};
  return true;
}
// The forward on oneDNN: conv2d's backward data with x as the output gradient, then the bias.
// Undefined when oneDNN has no primitive for the problem.
Tensor transpose_forward_onednn(const TransposeShape& t, const cpu::Conv2dProblem& prob, const Tensor& weight,
                                const std::optional<Tensor>& bias) {
  Tensor out = empty({t.N, t.Cout, t.OH, t.OW}, t.x.dtype());
  Tensor x = t.x.contiguous(), w = weight.contiguous();
  std::vector<Tensor> keep;
  if (!cpu::onednn_conv2d_backward(prob, out.raw_data_ptr(), nullptr, nullptr, x.raw_data_ptr(), nullptr,
                                   w.raw_data_ptr(), scratch_into(keep)))
    return Tensor();
  if (bias && bias->defined()) out.add_(bias->view({1, t.Cout, 1, 1}));
  return out;
}

// conv_transpose2d: the op _conv_transpose2d on the NPU (aclnnConvolution, transposed) and where
// oneDNN applies on the CPU, else the col2im composite.
Tensor conv_transpose2d_composite(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                                  IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                                  IntArrayRef dilation) {
  TransposeShape t = transpose_shape(op::conv_transpose2d::op_name(), input, weight, bias, stride, padding,
                                     output_padding, groups, dilation);
  cpu::Conv2dProblem prob;
  if (transpose_on_aclnn(t, weight, bias) || transpose_on_onednn(t, weight, bias, &prob))
    return _conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation);
  return conv_transpose2d_math(t, input, weight, bias);
}
Tensor conv_transpose_kernel(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                             IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                             IntArrayRef dilation) {
  TransposeShape t = transpose_shape(op::_conv_transpose2d::op_name(), input, weight, bias, stride, padding,
                                     output_padding, groups, dilation);
  cpu::Conv2dProblem prob;
  if (transpose_on_onednn(t, weight, bias, &prob)) {
    Tensor out = transpose_forward_onednn(t, prob, weight, bias);
    if (out.defined()) return input.dim() == 4 ? out : out.squeeze(0);
  }
  if (!transpose_on_aclnn(t, weight, bias)) return conv_transpose2d_math(t, input, weight, bias).contiguous();
  Tensor out = empty_on({t.N, t.Cout, t.OH, t.OW}, t.x.dtype(), t.x.device());
  EXEC_NPU_CMD(npu::aclnnConvolution, t.x, weight, bias, IntArrayRef(t.s), IntArrayRef(t.p), IntArrayRef(t.d), true,
               IntArrayRef(t.opad), t.groups, out, int8_t(0));
  return input.dim() == 4 ? out : out.squeeze(0);
}

// Its gradients as differentiable ops: the input's is conv2d of grad with the same weight; the
// weight's is conv2d's weight gradient with grad as the input and x as the output gradient.
// With output_padding, grad [N, Cout, OH, OW] placed at rows [padding, ...) and the same columns
// of the full extent the windows reach (the forward's col2im buffer), zeros elsewhere: conv2d
// over it, unpadded, has exactly the input's H x W windows (differentiable ops).
Tensor full_extent(const Tensor& g4, const TransposeShape& t) {
  const int64_t FH = (t.H - 1) * t.s[0] + t.d[0] * (t.kh - 1) + 1, FW = (t.W - 1) * t.s[1] + t.d[1] * (t.kw - 1) + 1;
  auto place = [](const Tensor& v, int64_t dim, int64_t before, int64_t full) {
    const int64_t n = std::max<int64_t>(0, std::min(v.size(dim), full - before));
    std::vector<Tensor> parts;
    auto zero_rows = [&](int64_t k) {
      Shape z(v.sizes().begin(), v.sizes().end());
      z[static_cast<size_t>(dim)] = k;
      return zeros(z, v.options());
    };
    if (before > 0) parts.push_back(zero_rows(before));
    if (n > 0) parts.push_back(v.narrow(dim, 0, n));
    if (full - before - n > 0) parts.push_back(zero_rows(full - before - n));
    return parts.size() == 1 ? parts[0] : cat(parts, dim);
  };
  return place(place(g4, 2, t.p[0], FH), 3, t.p[1], FW);
}
std::tuple<Tensor, Tensor, Tensor> conv_transpose2d_backward_math(const Tensor& grad, const TransposeShape& t,
                                                                 const Tensor& weight, bool nx, bool nw, bool nb) {
  Tensor g4 = grad.dim() == 3 ? grad.unsqueeze(0) : grad;
  const bool padded = t.opad[0] > 0 || t.opad[1] > 0;
  Tensor gin = padded ? full_extent(g4, t) : g4;
  const Shape pad = padded ? Shape{0, 0} : t.p;
  Tensor gx, gw, gb;
  if (nx) gx = conv2d(gin, weight, std::nullopt, t.s, pad, t.d, t.groups);
  if (nw) {
    ConvShape c =
        conv2d_shape(op::conv_transpose2d_backward::op_name(), gin, weight, std::nullopt, t.s, pad, t.d, t.groups);
    gw = std::get<1>(conv2d_backward_math(t.x, c, weight, false, true, false));
  }
  if (nb) gb = g4.sum({0, 2, 3});
  return {gx, gw, gb};
}
// The gradients on oneDNN: the input's is conv2d's forward of grad, the weight's conv2d's weight
// gradient with grad as the input and x as the output gradient. False (nothing set) where oneDNN
// does not apply or has no primitive.
bool transpose_backward_onednn(const Tensor& g4, const TransposeShape& t, const Tensor& weight, bool nx, bool nw,
                               bool nb, Tensor* gx, Tensor* gw, Tensor* gb) {
  cpu::Conv2dProblem prob;
  if (!transpose_on_onednn(t, weight, std::nullopt, &prob)) return false;
  Tensor dy = g4.contiguous(), x = t.x.contiguous(), w = weight.contiguous();
  Tensor ix = nx ? empty(x.sizes(), x.dtype()) : Tensor(), iw = nw ? empty(w.sizes(), w.dtype()) : Tensor();
  std::vector<Tensor> keep;
  if (nx && !cpu::onednn_conv2d(prob, ix.raw_data_ptr(), dy.raw_data_ptr(), w.raw_data_ptr(), nullptr,
                                scratch_into(keep)))
    return false;
  if (nw && !cpu::onednn_conv2d_backward(prob, nullptr, iw.raw_data_ptr(), nullptr, x.raw_data_ptr(), dy.raw_data_ptr(),
                                         w.raw_data_ptr(), scratch_into(keep)))
    return false;
  *gx = ix;
  *gw = iw;
  *gb = nb ? dy.sum({0, 2, 3}) : Tensor();
  return true;
}
std::tuple<Tensor, Tensor, Tensor> conv_transpose_backward_kernel(const Tensor& grad, const Tensor& input,
                                                                 const Tensor& weight, IntArrayRef stride,
                                                                 IntArrayRef padding, IntArrayRef output_padding,
                                                                 int64_t groups, IntArrayRef dilation, bool nx,
                                                                 bool nw, bool nb) {
  const char* op = ::ember::op::conv_transpose2d_backward::op_name();
  TransposeShape t = transpose_shape(op, input, weight, std::nullopt, stride, padding, output_padding, groups, dilation);
  common_device(op, {&grad, &input});
  EMBER_CHECK_DTYPE(grad.is_floating_point(), op, ": expects a floating grad, got ", grad.dtype());
  Tensor g4 = grad.dim() == 3 && input.dim() == 3 ? grad.unsqueeze(0) : grad;
  Shape want{t.N, t.Cout, t.OH, t.OW};
  EMBER_CHECK_SHAPE(grad.dim() == input.dim() && g4.sizes() == IntArrayRef(want), op, ": grad of shape ", grad.sizes(),
                    " does not match the transposed convolution's output ", IntArrayRef(want));
  Tensor gx, gw, gb;
  if (transpose_on_aclnn(t, weight, std::nullopt) && grad.dtype() == t.x.dtype()) {
    gx = nx ? empty_on(t.x.sizes(), t.x.dtype(), t.x.device()) : Tensor();
    gw = nw ? empty_on(weight.sizes(), weight.dtype(), weight.device()) : Tensor();
    gb = nb ? empty_on({t.Cout}, t.x.dtype(), t.x.device()) : Tensor();
    EXEC_NPU_CMD(npu::aclnnConvolutionBackward, g4, t.x, weight, Shape{t.Cout}, IntArrayRef(t.s), IntArrayRef(t.p),
                 IntArrayRef(t.d), true, IntArrayRef(t.opad), static_cast<int>(t.groups),
                 std::array<bool, 3>{nx, nw, nb}, int8_t(0), gx, gw, gb);
  } else if (!(grad.dtype() == t.x.dtype() && transpose_backward_onednn(g4, t, weight, nx, nw, nb, &gx, &gw, &gb))) {
    std::tie(gx, gw, gb) = conv_transpose2d_backward_math(g4, t, weight, nx, nw, nb);
  }
  if (gx.defined() && input.dim() == 3) gx = gx.squeeze(0);
  return {gx, gw, gb};
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::conv_transpose2d(),
        &conv_transpose2d_composite);
  m.def(op::_conv_transpose2d());
  m.def(op::conv_transpose2d_backward());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::_conv_transpose2d(), &conv_transpose_kernel);
  m.impl(op::conv_transpose2d_backward(), &conv_transpose_backward_kernel);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::_conv_transpose2d(), &conv_transpose_kernel);
  m.impl(op::conv_transpose2d_backward(), &conv_transpose_backward_kernel);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  return op::conv_transpose2d::call(input, weight, bias, stride, padding, output_padding, groups, dilation);
}
using TransposeSig = Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef,
                            IntArrayRef, int64_t, IntArrayRef);
using TransposeBackSig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, IntArrayRef,
                                                            IntArrayRef, IntArrayRef, int64_t, IntArrayRef, bool, bool,
                                                            bool);
Tensor _conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                         IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                         IntArrayRef dilation) {
  return op::_conv_transpose2d::call(input, weight, bias, stride, padding, output_padding, groups, dilation);
}
std::tuple<Tensor, Tensor, Tensor> conv_transpose2d_backward(const Tensor& grad, const Tensor& input,
                                                             const Tensor& weight, IntArrayRef stride,
                                                             IntArrayRef padding, IntArrayRef output_padding,
                                                             int64_t groups, IntArrayRef dilation, bool input_grad,
                                                             bool weight_grad, bool bias_grad) {
  return op::conv_transpose2d_backward::call(grad, input, weight, stride, padding, output_padding, groups, dilation, input_grad, weight_grad,
            bias_grad);
}

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
// _conv_transpose2d: aclnnConvolutionBackward (transposed), or with create_graph the same
// gradients as differentiable ops.
std::vector<Tensor> conv_transpose_bw(const BackwardCtx<TransposeSig>& c) {
  Tensor x = c.arg<0>(), w = c.arg<1>(), g = c.grad();
  IntArrayRef s = c.arg<3>(), p = c.arg<4>(), op = c.arg<5>(), d = c.arg<7>();
  const int64_t groups = c.arg<6>();
  const bool nx = c.needs(0), nw = c.needs(1), nb = c.needs(2);
  Tensor gx, gw, gb;
  if (is_grad_enabled()) {
    TransposeShape t = transpose_shape(op::_conv_transpose2d::op_name(), x, w, std::nullopt, s, p, op, groups, d);
    std::tie(gx, gw, gb) = conv_transpose2d_backward_math(g, t, w, nx, nw, nb);
    if (gx.defined() && x.dim() == 3) gx = gx.squeeze(0);
  } else {
    std::tie(gx, gw, gb) = conv_transpose2d_backward(g, x, w, s, p, op, groups, d, nx, nw, nb);
  }
  return {gx, gw, gb};
}
const auto kConvTranspose =
    spec_of<op::_conv_transpose2d>("ConvolutionBackward0", &conv_transpose_bw).saving(saves(0, 1));
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::_conv_transpose2d(), autograd_kernel<&kConvTranspose>());
  autograd::impl_no_double_backward(m, op::conv_transpose2d_backward());
}

}  // namespace ember
