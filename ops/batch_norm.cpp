// batch_norm's op, _batch_norm(input [N, C, ...], weight?, bias?, running_mean?, running_var?,
// training, eps) -> (output, save_mean, save_invstd): per channel, normalized by the batch's
// mean and biased variance (training) or the running statistics; save_mean / save_invstd are the
// statistics used (float32, float64 for float64 input). It never writes the running statistics:
// nn::functional::batch_norm updates them from save_mean / save_invstd.
//
// On the CPU the kernel is made of reductions and elementwise ops; on the NPU it is CANN's
// aclnnBatchNorm. Its node NativeBatchNormBackward0 runs native_batch_norm_backward
// (aclnnBatchNormBackward on the NPU), or with create_graph the same formula from differentiable
// ops, the statistics recomputed from the input so that second derivatives see them move.
#include <cmath>

#include "ember/autograd/op_spec.h"
#include "ember/dispatch/library.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"

namespace ember::op {
EMBER_DECLARE_OP(native_batch_norm_backward, Keep,
                 "ember::native_batch_norm_backward(Tensor grad_out, Tensor input, "
                 "Tensor? weight, Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, "
                 "bool train, float eps, bool input_grad=True, bool weight_grad=True, "
                 "bool bias_grad=True) -> (Tensor, Tensor, Tensor)",
                 std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const std::optional<Tensor>&,
                                                    const std::optional<Tensor>&, const std::optional<Tensor>&,
                                                    const std::optional<Tensor>&, const std::optional<Tensor>&, bool,
                                                    double, bool, bool, bool));
EMBER_DECLARE_OP(_batch_norm, Keep,
                 "ember::_batch_norm(Tensor input, Tensor? weight=None, Tensor? bias=None, "
                 "Tensor? running_mean=None, Tensor? running_var=None, bool training=False, "
                 "float eps=1e-05) -> (Tensor, Tensor, Tensor)",
                 std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const std::optional<Tensor>&,
                                                    const std::optional<Tensor>&, const std::optional<Tensor>&,
                                                    const std::optional<Tensor>&, bool, double));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

Shape reduce_dims(const Tensor& x) {
  Shape dims;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != 1) dims.push_back(d);
  return dims;
}
int64_t per_channel(const Tensor& x) { return x.size(1) > 0 ? x.numel() / x.size(1) : 0; }

void check_bn(const char* op, const Tensor& x, std::initializer_list<const Tensor*> channel, bool training,
              const Tensor& rm, const Tensor& rv) {
  EMBER_CHECK_SHAPE(x.dim() >= 2, op, ": expects [N, C, ...], got ", x.sizes());
  EMBER_CHECK_DTYPE(x.is_floating_point(), op, ": expects a floating tensor, got ", x.dtype());
  const int64_t C = x.size(1);
  for (const Tensor* t : channel) {
    if (!t->defined()) continue;
    common_device(op, {&x, t});
    EMBER_CHECK_DTYPE(t->is_floating_point(), op, ": per-channel tensors must be floating, got ", t->dtype());
    EMBER_CHECK_SHAPE(t->dim() == 1 && t->size(0) == C, op, ": per-channel tensors must have shape [", C, "], got ",
                      t->sizes());
  }
  if (training) {
    EMBER_CHECK_VALUE(per_channel(x) > 1, op, ": expected more than 1 value per channel when training, got input of "
                      "shape ", x.sizes());
  } else {
    EMBER_CHECK_VALUE(rm.defined() && rv.defined(), op, ": evaluation needs running_mean and running_var");
  }
}

// The statistics of x per channel: mean and 1 / sqrt(biased variance + eps), in x's stat dtype
// (differentiable ops: with grad mode on, they carry x's graph).
std::pair<Tensor, Tensor> batch_stats(const Tensor& x, double eps) {
  Tensor xf = x.to(stat_dtype(x));
  Shape dims = reduce_dims(x);
  Tensor mean = xf.mean(dims, true);
  Tensor var = (xf - mean).square().mean(dims, true);
  return {mean.reshape({x.size(1)}), (var + eps).rsqrt().reshape({x.size(1)})};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_math(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& rm,
                                                   const Tensor& rv, bool training, double eps) {
  Tensor mean, invstd;
  if (training) {
    std::tie(mean, invstd) = batch_stats(x, eps);
  } else {
    mean = rm.to(stat_dtype(x)).clone();  // (a new tensor: an output never aliases an input)
    invstd = (rv.to(stat_dtype(x)) + eps).rsqrt();
  }
  Shape cs = channel_shape(x);
  Tensor y = (x.to(stat_dtype(x)) - mean.view(cs)) * invstd.view(cs);
  if (w.defined()) y = y * w.view(cs);
  if (b.defined()) y = y + b.view(cs);
  return {y.to(x.dtype()), mean, invstd};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_kernel(const Tensor& x, const std::optional<Tensor>& w,
                                                     const std::optional<Tensor>& b, const std::optional<Tensor>& rm,
                                                     const std::optional<Tensor>& rv, bool training, double eps) {
  const char* op = "batch_norm";
  check_bn(op, x, {&opt(w), &opt(b), &opt(rm), &opt(rv)}, training, opt(rm), opt(rv));
  EMBER_CHECK_VALUE(eps >= 0, op, ": eps must be non-negative, got ", eps);
  if (x.is_cpu()) return batch_norm_math(x, opt(w), opt(b), opt(rm), opt(rv), training, eps);
  Tensor out = empty_on(x.sizes(), x.dtype(), x.device());
  Tensor mean = empty_on({x.size(1)}, stat_dtype(x), x.device()), invstd = empty_on({x.size(1)}, stat_dtype(x), x.device());
  // Running statistics only normalize in evaluation: in training the caller updates them.
  Tensor none;
  EXEC_NPU_CMD(npu::aclnnBatchNorm, x, opt(w), opt(b), training ? none : opt(rm), training ? none : opt(rv), training,
               0.0, eps, out, mean, invstd);
  return {out, mean, invstd};
}

// The gradients from g (of output), gm (of save_mean) and gi (of save_invstd; both may be
// undefined), given the statistics used: differentiable ops.
std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_math(const Tensor& g, const Tensor& x, const Tensor& w,
                                                            const Tensor& mean, const Tensor& invstd, bool training,
                                                            bool nx, bool nw, bool nb) {
  Shape cs = channel_shape(x), dims = reduce_dims(x);
  const DType sd = stat_dtype(x);
  Tensor gf = g.to(sd), xhat = (x.to(sd) - mean.view(cs)) * invstd.view(cs);
  Tensor gb = gf.sum(dims), gw = (gf * xhat).sum(dims);
  Tensor scale = w.defined() ? invstd * w.to(sd) : invstd;
  Tensor gx;
  if (nx) {
    if (training) {
      const double n = static_cast<double>(per_channel(x));
      gx = scale.view(cs) * (gf - gb.view(cs) / n - xhat * (gw.view(cs) / n));
    } else {
      gx = gf * scale.view(cs);
    }
    gx = gx.to(x.dtype());
  }
  return {gx, nw ? gw : Tensor(), nb ? gb : Tensor()};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_kernel(
    const Tensor& g, const Tensor& x, const std::optional<Tensor>& w, const std::optional<Tensor>& rm,
    const std::optional<Tensor>& rv, const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd,
    bool training, double eps, bool nx, bool nw, bool nb) {
  const char* op = ::ember::op::native_batch_norm_backward::op_name();
  check_bn(op, x, {&opt(w), &opt(rm), &opt(rv), &opt(save_mean), &opt(save_invstd)}, training, opt(rm), opt(rv));
  common_device(op, {&g, &x});
  EMBER_CHECK_DTYPE(g.is_floating_point(), op, ": grad must be floating, got ", g.dtype());
  EMBER_CHECK_SHAPE(g.sizes() == x.sizes(), op, ": grad of shape ", g.sizes(), " does not match input ", x.sizes());
  EMBER_CHECK_VALUE(!training || (opt(save_mean).defined() && opt(save_invstd).defined()), op,
                    ": training needs save_mean and save_invstd");
  if (x.is_cpu()) {
    Tensor mean = training ? opt(save_mean).to(stat_dtype(x)) : opt(rm).to(stat_dtype(x));
    Tensor invstd = training ? opt(save_invstd).to(stat_dtype(x)) : (opt(rv).to(stat_dtype(x)) + eps).rsqrt();
    return batch_norm_backward_math(g, x, opt(w), mean, invstd, training, nx, nw, nb);
  }
  const int64_t C = x.size(1);
  Tensor gx = nx ? empty_on(x.sizes(), x.dtype(), x.device()) : Tensor();
  Tensor gw = nw ? empty_on({C}, stat_dtype(x), x.device()) : Tensor();
  Tensor gb = nb ? empty_on({C}, stat_dtype(x), x.device()) : Tensor();
  EXEC_NPU_CMD(npu::aclnnBatchNormBackward, g, x, opt(w), opt(rm), opt(rv), opt(save_mean), opt(save_invstd), training,
               eps, std::array<bool, 3>{nx, nw, nb}, gx, gw, gb);
  return {gx, gw, gb};
}
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::_batch_norm());
  m.def(op::native_batch_norm_backward());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::_batch_norm(), &batch_norm_kernel);
  m.impl(op::native_batch_norm_backward(), &batch_norm_backward_kernel);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::_batch_norm(), &batch_norm_kernel);
  m.impl(op::native_batch_norm_backward(), &batch_norm_backward_kernel);
}

using BnSig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const std::optional<Tensor>&,
                                                 const std::optional<Tensor>&, const std::optional<Tensor>&,
                                                 const std::optional<Tensor>&, bool, double);
using BnBackSig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const std::optional<Tensor>&,
                                                     const std::optional<Tensor>&, const std::optional<Tensor>&,
                                                     const std::optional<Tensor>&, const std::optional<Tensor>&, bool,
                                                     double, bool, bool, bool);
std::tuple<Tensor, Tensor, Tensor> _batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                                               const std::optional<Tensor>& bias,
                                               const std::optional<Tensor>& running_mean,
                                               const std::optional<Tensor>& running_var, bool training, double eps) {
  return op::_batch_norm::call(input, weight, bias, running_mean, running_var, training, eps);
}
std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(
    const Tensor& grad_out, const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd, bool train, double eps,
    bool input_grad, bool weight_grad, bool bias_grad) {
  return op::native_batch_norm_backward::call(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps, input_grad,
            weight_grad, bias_grad);
}

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;

// The statistics' own gradients (of save_mean and save_invstd, for a caller that uses them),
// added to the input's (training) or the running statistics' (evaluation).
std::vector<Tensor> batch_norm_bw(const BackwardCtx<BnSig>& c) {
  Tensor x = c.arg<0>(), w = c.arg<1>(), rm = c.arg<3>(), rv = c.arg<4>(), g = c.grad(0);
  const bool training = c.arg<5>();
  const double eps = c.arg<6>();
  const bool nx = c.needs(0), nw = c.needs(1), nb = c.needs(2);
  const bool stats_grads = c.has_grad(1) || c.has_grad(2);
  Tensor gx, gw, gb, mean, invstd;
  if (is_grad_enabled() || stats_grads) {
    // differentiable: the statistics recomputed from x (training) so second derivatives see them
    if (training) {
      std::tie(mean, invstd) = batch_stats(x, eps);
    } else {
      mean = rm.to(stat_dtype(x));
      invstd = (rv.to(stat_dtype(x)) + eps).rsqrt();
    }
    std::tie(gx, gw, gb) = batch_norm_backward_math(g, x, w, mean, invstd, training, nx || stats_grads, nw, nb);
  } else {
    std::tie(gx, gw, gb) = native_batch_norm_backward(g, x, some(w), some(rm), some(rv), c.output(1), c.output(2),
                                                      training, eps, nx, nw, nb);
  }
  Tensor grm, grv;
  if (stats_grads) {
    Shape cs = channel_shape(x);
    Tensor gm = c.has_grad(1) ? c.grad(1).to(mean.dtype()) : zeros({x.size(1)}, mean.options());
    Tensor gi = c.has_grad(2) ? c.grad(2).to(mean.dtype()) : zeros({x.size(1)}, mean.options());
    if (training) {  // d mean / dx = 1 / n; d invstd / dx = -invstd^3 (x - mean) / n
      const double n = static_cast<double>(per_channel(x));
      Tensor xc = x.to(mean.dtype()) - mean.view(cs);
      gx = gx + (gm.view(cs) / n - gi.view(cs) * invstd.pow(3).view(cs) * xc / n).to(x.dtype());
    } else {  // save_mean = running_mean; save_invstd = (running_var + eps)^-1/2
      grm = gm;
      grv = gi * invstd.pow(3) * -0.5;
    }
  }
  if (!training && (c.needs(3) || c.needs(4))) {  // the output's own dependence on the running statistics
    Shape cs = channel_shape(x), dims = reduce_dims(x);
    const DType sd = stat_dtype(x);
    if (!invstd.defined()) invstd = (rv.to(sd) + eps).rsqrt();
    Tensor gs = w.defined() ? g.to(sd) * w.to(sd).view(cs) : g.to(sd);
    Tensor dm = -(gs.sum(dims) * invstd);
    Tensor dv = (gs * (x.to(sd) - rm.to(sd).view(cs))).sum(dims) * invstd.pow(3) * -0.5;
    grm = grm.defined() ? grm + dm : dm;
    grv = grv.defined() ? grv + dv : dv;
  }
  return {nx ? gx : Tensor(), gw, gb, c.needs(3) ? grm : Tensor(), c.needs(4) ? grv : Tensor()};
}
const auto kBatchNorm = spec_of<op::_batch_norm>("NativeBatchNormBackward0", &batch_norm_bw)
                            .saving(saves(0, 1, 3, 4))
                            .saving_outputs(0b110);
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::_batch_norm(), autograd_kernel<&kBatchNorm>());
  autograd::impl_no_double_backward(m, op::native_batch_norm_backward());
}

}  // namespace ember
