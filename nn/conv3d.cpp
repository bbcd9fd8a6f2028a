// F::conv3d and F::conv_transpose3d as compositions of the 2-D ops: the depth dim is folded into
// the batch, and each depth tap kd of the kernel is one 2-D convolution of the input planes it
// reads (conv3d) or writes (conv_transpose3d, whose planes are then added at their depths by
// index_add). They differentiate and run wherever conv2d / conv_transpose2d do.
#include <cmath>

#include "ember/nn/functional_forms.h"
#include "ember/nn/internal/host_index.h"
#include "ember/ops/composite.h"

namespace ember {
namespace nn {
namespace functional {
namespace {

// [N, C, D, H, W] (a 4-D input gets a batch of one; unbatched says to drop it again).
Tensor batched(const char* op, const Tensor& x, const Tensor& w, bool& unbatched) {
  EMBER_CHECK_SHAPE(x.dim() == 4 || x.dim() == 5, op,
                    ": expected a 4-D [C, D, H, W] or 5-D [N, C, D, H, W] input, got ", "shape ", x.sizes());
  EMBER_CHECK_SHAPE(w.dim() == 5, op, ": weight must be 5-D, got shape ", w.sizes());
  unbatched = x.dim() == 4;
  return unbatched ? x.unsqueeze(0) : x;
}
Tensor add_bias(const Tensor& y, const Tensor& bias) {
  if (!bias.defined()) return y;
  EMBER_CHECK_SHAPE(bias.dim() == 1 && bias.size(0) == y.size(1), "conv3d: bias must be [", y.size(1), "], got shape ",
                    bias.sizes());
  return y + bias.view({1, -1, 1, 1, 1});
}
}  // namespace

Tensor conv3d(const Tensor& input, const Tensor& weight, const Conv3dFuncOptions& o) {
  const char* op = "conv3d";
  bool unbatched = false;
  Tensor x = batched(op, input, weight, unbatched);
  const int64_t N = x.size(0), C = x.size(1), kD = weight.size(2);
  const int64_t sD = o.stride()[0], pD = o.padding()[0], dD = o.dilation()[0];
  EMBER_CHECK_VALUE(sD > 0 && dD > 0 && pD >= 0, op, ": stride and dilation must be positive and padding non-negative");
  EMBER_CHECK_SHAPE(weight.size(1) * o.groups() == C, op, ": input has ", C, " channels, weight of shape ",
                    weight.sizes(), " with groups ", o.groups(), " expects ", weight.size(1) * o.groups());
  if (pD > 0) x = constant_pad_nd(x, {0, 0, 0, 0, pD, pD});
  const int64_t span = x.size(2) - dD * (kD - 1) - 1;
  EMBER_CHECK_SHAPE(span >= 0, op, ": input depth ", input.size(input.dim() - 3), " (padded ", x.size(2),
                    ") is smaller than the kernel's ", dD * (kD - 1) + 1);
  const int64_t Do = span / sD + 1;
  Tensor y;
  for (int64_t kd = 0; kd < kD; ++kd) {
    std::vector<int64_t> pos;
    for (int64_t od = 0; od < Do; ++od) pos.push_back(od * sD + kd * dD);
    Tensor planes =
        x.index_select(2, detail::host_index(pos, x)).transpose(1, 2).reshape({N * Do, C, x.size(3), x.size(4)});
    Tensor part = ember::conv2d(planes, weight.select(2, kd), std::nullopt, {o.stride()[1], o.stride()[2]},
                                {o.padding()[1], o.padding()[2]}, {o.dilation()[1], o.dilation()[2]}, o.groups());
    y = y.defined() ? y + part : part;
  }
  y = y.view({N, Do, y.size(1), y.size(2), y.size(3)}).transpose(1, 2);
  y = add_bias(y, o.bias());
  return unbatched ? y.squeeze(0) : y;
}

Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const ConvTranspose3dFuncOptions& o) {
  const char* op = "conv_transpose3d";
  bool unbatched = false;
  Tensor x = batched(op, input, weight, unbatched);
  const int64_t N = x.size(0), C = x.size(1), Di = x.size(2), kD = weight.size(2);
  const int64_t sD = o.stride()[0], pD = o.padding()[0], dD = o.dilation()[0], opD = o.output_padding()[0];
  EMBER_CHECK_VALUE(sD > 0 && dD > 0 && pD >= 0, op, ": stride and dilation must be positive and padding non-negative");
  EMBER_CHECK_VALUE(opD >= 0 && (opD < sD || opD < dD), op, ": output_padding ", opD,
                    " must be smaller than the stride or the dilation");
  EMBER_CHECK_SHAPE(weight.size(0) == C, op, ": input has ", C, " channels, weight of shape ", weight.sizes(),
                    " expects ", weight.size(0));
  const int64_t full = (Di - 1) * sD + dD * (kD - 1) + 1 + opD;
  const int64_t Do = full - 2 * pD;
  EMBER_CHECK_SHAPE(Do > 0, op, ": the output depth ", Do, " is not positive (input depth ", Di, ", padding ", pD, ")");
  Tensor planes = x.transpose(1, 2).reshape({N * Di, C, x.size(3), x.size(4)});
  Tensor acc;
  for (int64_t kd = 0; kd < kD; ++kd) {
    Tensor part = ember::conv_transpose2d(
        planes, weight.select(2, kd), std::nullopt, {o.stride()[1], o.stride()[2]}, {o.padding()[1], o.padding()[2]},
        {o.output_padding()[1], o.output_padding()[2]}, o.groups(), {o.dilation()[1], o.dilation()[2]});
    part = part.view({N, Di, part.size(1), part.size(2), part.size(3)});
    if (!acc.defined()) acc = zeros({N, full, part.size(2), part.size(3), part.size(4)}, part.options());
    std::vector<int64_t> pos;
    for (int64_t id = 0; id < Di; ++id) pos.push_back(id * sD + kd * dD);
    acc = acc.index_add(1, detail::host_index(pos, x), part);
  }
  Tensor y = acc.narrow(1, pD, Do).transpose(1, 2);
  y = add_bias(y, o.bias());
  return unbatched ? y.squeeze(0) : y;
}

}  // namespace functional
}  // namespace nn
}  // namespace ember
