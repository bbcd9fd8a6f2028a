// group_norm's op, native_group_norm(input [N, C, ...], weight?, bias?, N, C, HxW, group, eps)
// -> (output, mean, rstd) with libtorch's name and arguments: each sample's groups of C / group
// channels normalized by their mean and 1 / sqrt(biased variance + eps) (mean, rstd [N, group],
// float32; float64 for float64 input), then weight / bias per channel.
//
// On the CPU the kernel is made of reductions and elementwise ops; on the NPU it is CANN's
// aclnnGroupNorm. Its node NativeGroupNormBackward0 runs native_group_norm_backward
// (aclnnGroupNormBackward on the NPU), or with create_graph the same formula from differentiable
// ops with the statistics recomputed from the input.
#include "ember/autograd/op_spec.h"
#include "ember/dispatch/library.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"

namespace ember::op {
EMBER_DECLARE_OP(native_group_norm_backward, Keep,
                 "ember::native_group_norm_backward(Tensor grad_out, Tensor input, "
                 "Tensor mean, Tensor rstd, Tensor? weight, int N, int C, int HxW, int group, bool input_grad=True, "
                 "bool weight_grad=True, bool bias_grad=True) -> (Tensor, Tensor, Tensor)",
                 std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                                    const std::optional<Tensor>&, int64_t, int64_t, int64_t, int64_t,
                                                    bool, bool, bool));
EMBER_DECLARE_OP(native_group_norm, Float32,
                 "ember::native_group_norm(Tensor input, Tensor? weight, Tensor? bias, "
                 "int N, int C, int HxW, int group, float eps) -> (Tensor, Tensor, Tensor)",
                 std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const std::optional<Tensor>&,
                                                    const std::optional<Tensor>&, int64_t, int64_t, int64_t, int64_t,
                                                    double));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;


void check_gn(const char* op, const Tensor& x, std::initializer_list<const Tensor*> channel, int64_t N, int64_t C,
              int64_t HxW, int64_t group) {
  EMBER_CHECK_SHAPE(x.dim() >= 2, op, ": expects [N, C, ...], got ", x.sizes());
  EMBER_CHECK_DTYPE(x.is_floating_point(), op, ": expects a floating tensor, got ", x.dtype());
  EMBER_CHECK_VALUE(group >= 1 && C >= 1 && C % group == 0, op, ": ", C, " channels cannot be split into ", group,
                    " groups");
  // (divided one at a time: N C may overflow for an empty input with huge dims)
  EMBER_CHECK_SHAPE(x.size(0) == N && x.size(1) == C && (N == 0 || x.numel() / N / C == HxW), op, ": input of shape ",
                    x.sizes(), " is not [N, C, ...] with N ", N, ", C ", C, " and HxW ", HxW);
  for (const Tensor* t : channel) {
    if (!t->defined()) continue;
    common_device(op, {&x, t});
    EMBER_CHECK_DTYPE(t->is_floating_point(), op, ": weight and bias must be floating, got ", t->dtype());
    EMBER_CHECK_SHAPE(t->dim() == 1 && t->size(0) == C, op, ": weight and bias must have shape [", C, "], got ",
                      t->sizes());
  }
}

// [N, group] mean and rstd of x (differentiable ops).
std::pair<Tensor, Tensor> group_stats(const Tensor& x, int64_t group, double eps) {
  Tensor g = x.to(stat_dtype(x)).reshape({x.size(0), group, -1});
  Tensor mean = g.mean({2}, true);
  Tensor var = (g - mean).square().mean({2}, true);
  return {mean.reshape({x.size(0), group}), (var + eps).rsqrt().reshape({x.size(0), group})};
}
// x as [N, group, D] minus the mean, times rstd.
Tensor normalized(const Tensor& x, const Tensor& mean, const Tensor& rstd, int64_t group) {
  const int64_t N = x.size(0);
  Tensor g = x.to(stat_dtype(x)).reshape({N, group, -1});
  return (g - mean.view({N, group, 1})) * rstd.view({N, group, 1});
}

std::tuple<Tensor, Tensor, Tensor> group_norm_kernel(const Tensor& x, const std::optional<Tensor>& w,
                                                     const std::optional<Tensor>& b, int64_t N, int64_t C, int64_t HxW,
                                                     int64_t group, double eps) {
  const char* op = "group_norm";
  check_gn(op, x, {&opt(w), &opt(b)}, N, C, HxW, group);
  EMBER_CHECK_VALUE(eps >= 0, op, ": eps must be non-negative, got ", eps);
  if (x.is_cpu()) {
    auto [mean, rstd] = group_stats(x, group, eps);
    Tensor y = normalized(x, mean, rstd, group).reshape(x.sizes());
    Shape cs = channel_shape(x);
    if (opt(w).defined()) y = y * opt(w).view(cs);
    if (opt(b).defined()) y = y + opt(b).view(cs);
    return {y.to(x.dtype()), mean, rstd};
  }
  Tensor out = empty_on(x.sizes(), x.dtype(), x.device());
  Tensor mean = empty_on({N, group}, stat_dtype(x), x.device()), rstd = empty_on({N, group}, stat_dtype(x), x.device());
  EXEC_NPU_CMD(npu::aclnnGroupNorm, x, opt(w), opt(b), N, C, HxW, group, eps, out, mean, rstd);
  return {out, mean, rstd};
}

// The gradients from g given the statistics used (differentiable ops).
std::tuple<Tensor, Tensor, Tensor> group_norm_backward_math(const Tensor& g, const Tensor& x, const Tensor& mean,
                                                            const Tensor& rstd, const Tensor& w, int64_t group,
                                                            bool nx, bool nw, bool nb) {
  const int64_t N = x.size(0);
  const DType sd = stat_dtype(x);
  Tensor xhat = normalized(x, mean, rstd, group).reshape(x.sizes());
  Tensor gf = g.to(sd);
  Shape dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  Tensor gw = nw ? (gf * xhat).sum(dims) : Tensor(), gb = nb ? gf.sum(dims) : Tensor();
  Tensor gx;
  if (nx) {
    Tensor gg = w.defined() ? gf * w.to(sd).view(channel_shape(x)) : gf;
    Tensor g3 = gg.reshape({N, group, -1}), x3 = xhat.reshape({N, group, -1});
    gx = (rstd.view({N, group, 1}) * (g3 - g3.mean({2}, true) - x3 * (g3 * x3).mean({2}, true)))
             .reshape(x.sizes())
             .to(x.dtype());
  }
  return {gx, gw, gb};
}

std::tuple<Tensor, Tensor, Tensor> group_norm_backward_kernel(const Tensor& g, const Tensor& x, const Tensor& mean,
                                                              const Tensor& rstd, const std::optional<Tensor>& w,
                                                              int64_t N, int64_t C, int64_t HxW, int64_t group, bool nx,
                                                              bool nw, bool nb) {
  const char* op = ::ember::op::native_group_norm_backward::op_name();
  check_gn(op, x, {&opt(w)}, N, C, HxW, group);
  common_device(op, {&g, &x, &mean, &rstd});
  EMBER_CHECK_DTYPE(g.is_floating_point() && mean.is_floating_point() && rstd.is_floating_point(), op,
                    ": grad, mean and rstd must be floating");
  EMBER_CHECK_SHAPE(g.sizes() == x.sizes(), op, ": grad of shape ", g.sizes(), " does not match input ", x.sizes());
  EMBER_CHECK_SHAPE(mean.sizes() == IntArrayRef({N, group}) && rstd.sizes() == IntArrayRef({N, group}), op,
                    ": mean and rstd must have shape [", N, ", ", group, "], got ", mean.sizes(), " and ", rstd.sizes());
  if (x.is_cpu())
    return group_norm_backward_math(g, x, mean.to(stat_dtype(x)), rstd.to(stat_dtype(x)), opt(w), group, nx, nw, nb);
  Tensor gx = nx ? empty_on(x.sizes(), x.dtype(), x.device()) : Tensor();
  Tensor gw = nw ? empty_on({C}, stat_dtype(x), x.device()) : Tensor();
  Tensor gb = nb ? empty_on({C}, stat_dtype(x), x.device()) : Tensor();
  EXEC_NPU_CMD(npu::aclnnGroupNormBackward, g, x, mean, rstd, opt(w), N, C, HxW, group, std::array<bool, 3>{nx, nw, nb},
               gx, gw, gb);
  return {gx, gw, gb};
}
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::native_group_norm());
  m.def(op::native_group_norm_backward());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::native_group_norm(), &group_norm_kernel);
  m.impl(op::native_group_norm_backward(), &group_norm_backward_kernel);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::native_group_norm(), &group_norm_kernel);
  m.impl(op::native_group_norm_backward(), &group_norm_backward_kernel);
}

using GnSig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const std::optional<Tensor>&,
                                                 const std::optional<Tensor>&, int64_t, int64_t, int64_t, int64_t,
                                                 double);
using GnBackSig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                                     const std::optional<Tensor>&, int64_t, int64_t, int64_t, int64_t,
                                                     bool, bool, bool);
std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, int64_t N, int64_t C,
                                                     int64_t HxW, int64_t group, double eps) {
  return op::native_group_norm::call(input, weight, bias, N, C, HxW, group, eps);
}
std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& mean, const Tensor& rstd,
                                                              const std::optional<Tensor>& weight, int64_t N, int64_t C,
                                                              int64_t HxW, int64_t group, bool input_grad,
                                                              bool weight_grad, bool bias_grad) {
  return op::native_group_norm_backward::call(grad_out, input, mean, rstd, weight, N, C, HxW, group, input_grad, weight_grad, bias_grad);
}

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
// mean's and rstd's own gradients (for a caller that uses them) are added to the input's:
// d mean / dx = 1 / D, d rstd / dx = -rstd^3 (x - mean) / D over each group of D elements.
std::vector<Tensor> group_norm_bw(const BackwardCtx<GnSig>& c) {
  Tensor x = c.arg<0>(), w = c.arg<1>(), g = c.grad(0);
  const int64_t N = c.arg<3>(), C = c.arg<4>(), HxW = c.arg<5>(), group = c.arg<6>();
  const double eps = c.arg<7>();
  const bool nx = c.needs(0), nw = c.needs(1), nb = c.needs(2), stats_grads = c.has_grad(1) || c.has_grad(2);
  Tensor gx, gw, gb;
  if (is_grad_enabled() || stats_grads) {
    auto [mean, rstd] = group_stats(x, group, eps);
    std::tie(gx, gw, gb) = group_norm_backward_math(g, x, mean, rstd, w, group, nx || stats_grads, nw, nb);
    if (stats_grads) {
      const double D = static_cast<double>(C / group * HxW);
      Tensor gm = c.has_grad(1) ? c.grad(1).to(mean.dtype()) : zeros({N, group}, mean.options());
      Tensor gr = c.has_grad(2) ? c.grad(2).to(mean.dtype()) : zeros({N, group}, mean.options());
      Tensor xc = x.to(mean.dtype()).reshape({N, group, -1}) - mean.view({N, group, 1});
      Tensor extra = gm.view({N, group, 1}) / D - gr.view({N, group, 1}) * rstd.pow(3).view({N, group, 1}) * xc / D;
      gx = gx + extra.reshape(x.sizes()).to(x.dtype());
    }
  } else {
    std::tie(gx, gw, gb) = native_group_norm_backward(g, x, c.output(1), c.output(2),
                                                      w.defined() ? std::optional<Tensor>(w) : std::nullopt, N, C, HxW,
                                                      group, nx, nw, nb);
  }
  return {nx ? gx : Tensor(), gw, gb};
}
const auto kGroupNorm = spec_of<op::native_group_norm>("NativeGroupNormBackward0", &group_norm_bw)
                            .saving(saves(0, 1))
                            .saving_outputs(0b110);
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::native_group_norm(), autograd_kernel<&kGroupNorm>());
  autograd::impl_no_double_backward(m, op::native_group_norm_backward());
}

}  // namespace ember
