// layer_norm's op, native_layer_norm(input, normalized_shape, weight?, bias?, eps) -> (output,
// mean, rstd) with libtorch's name and arguments: each row of the trailing normalized_shape dims
// normalized by its mean and 1 / sqrt(biased variance + eps) (mean, rstd: input's shape with
// those dims as 1; float32, float64 for float64 input), then weight / bias.
//
// On the CPU, device/cpu/norm.h's fused row kernel; on the NPU, CANN's aclnnLayerNorm. Its node
// NativeLayerNormBackward0 runs native_layer_norm_backward (aclnnLayerNormBackward on the NPU;
// differentiable ops on the CPU), or with create_graph the same formula with the statistics
// recomputed from the input.
#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/norm.h"
#include "ember/dispatch/library.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"

namespace ember::op {
EMBER_DECLARE_OP(native_layer_norm_backward, Keep,
                 "ember::native_layer_norm_backward(Tensor grad_out, Tensor input, "
                 "int[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, "
                 "bool input_grad=True, bool weight_grad=True, bool bias_grad=True) -> (Tensor, Tensor, Tensor)",
                 std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, IntArrayRef, const Tensor&,
                                                    const Tensor&, const std::optional<Tensor>&,
                                                    const std::optional<Tensor>&, bool, bool, bool));
EMBER_DECLARE_OP(native_layer_norm, Float32,
                 "ember::native_layer_norm(Tensor input, int[] normalized_shape, "
                 "Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
                 std::tuple<Tensor, Tensor, Tensor>(const Tensor&, IntArrayRef, const std::optional<Tensor>&,
                                                    const std::optional<Tensor>&, double));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;


// The rows: how many leading dims, and D (the normalized elements per row).
struct Rows {
  int64_t lead = 0, D = 1, rows = 0;
  Shape stat_shape, norm_dims;
};
Rows check_ln(const char* op, const Tensor& x, IntArrayRef ns, std::initializer_list<const Tensor*> params) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), op, ": expects a floating tensor, got ", x.dtype());
  const int64_t k = static_cast<int64_t>(ns.size());
  EMBER_CHECK_SHAPE(k >= 1 && x.dim() >= k && x.sizes().slice(static_cast<size_t>(x.dim() - k), ns.size()) == ns, op,
                    ": input of shape ", x.sizes(), " does not end with normalized_shape ", ns);
  for (const Tensor* t : params) {
    if (!t->defined()) continue;
    common_device(op, {&x, t});
    EMBER_CHECK_DTYPE(t->is_floating_point(), op, ": weight and bias must be floating, got ", t->dtype());
    EMBER_CHECK_SHAPE(t->sizes() == ns, op, ": weight and bias must have shape ", ns, ", got ", t->sizes());
  }
  Rows r;
  r.lead = x.dim() - k;
  r.stat_shape = Shape(x.sizes().begin(), x.sizes().end());
  for (int64_t d = r.lead; d < x.dim(); ++d) {
    r.D = checked_mul(r.D, x.size(d), op);
    r.stat_shape[static_cast<size_t>(d)] = 1;
    r.norm_dims.push_back(d);
  }
  r.rows = r.D ? x.numel() / r.D : 0;
  return r;
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_kernel(const Tensor& x, IntArrayRef ns, const std::optional<Tensor>& w,
                                                     const std::optional<Tensor>& b, double eps) {
  const char* op = "layer_norm";
  Rows r = check_ln(op, x, ns, {&opt(w), &opt(b)});
  EMBER_CHECK_VALUE(eps >= 0, op, ": eps must be non-negative, got ", eps);
  Tensor out = empty_on(x.sizes(), x.dtype(), x.device());
  Tensor mean = empty_on(r.stat_shape, stat_dtype(x), x.device()), rstd = empty_on(r.stat_shape, stat_dtype(x), x.device());
  if (x.is_npu()) {
    EXEC_NPU_CMD(npu::aclnnLayerNorm, x, ns, opt(w), opt(b), eps, out, mean, rstd);
  } else {
    cpu::Strided none;
    Tensor wc = opt(w).defined() ? opt(w).contiguous() : Tensor(), bc = opt(b).defined() ? opt(b).contiguous() : Tensor();
    cpu::layer_norm(strided(out), strided(mean), strided(rstd), strided(x.contiguous()), wc.defined() ? strided(wc) : none,
                    bc.defined() ? strided(bc) : none, eps, r.rows, r.D);
  }
  return {out, mean, rstd};
}

// The gradients from g given mean and rstd (differentiable ops).
std::tuple<Tensor, Tensor, Tensor> layer_norm_backward_math(const Tensor& g, const Tensor& x, const Rows& r,
                                                            const Tensor& mean, const Tensor& rstd, const Tensor& w,
                                                            bool nx, bool nw, bool nb) {
  const DType sd = stat_dtype(x);
  Tensor gf = g.to(sd), xhat = (x.to(sd) - mean) * rstd;
  Shape lead_dims;
  for (int64_t d = 0; d < r.lead; ++d) lead_dims.push_back(d);
  Tensor gw, gb;
  if (nw) gw = lead_dims.empty() ? gf * xhat : (gf * xhat).sum(lead_dims);
  if (nb) gb = lead_dims.empty() ? gf.clone() : gf.sum(lead_dims);  // (a new tensor: never the grad itself)
  Tensor gx;
  if (nx) {
    Tensor gg = w.defined() ? gf * w.to(sd) : gf;
    gx = (rstd * (gg - gg.mean(r.norm_dims, true) - xhat * (gg * xhat).mean(r.norm_dims, true))).to(x.dtype());
  }
  return {gx, gw, gb};
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward_kernel(const Tensor& g, const Tensor& x, IntArrayRef ns,
                                                              const Tensor& mean, const Tensor& rstd,
                                                              const std::optional<Tensor>& w,
                                                              const std::optional<Tensor>& b, bool nx, bool nw,
                                                              bool nb) {
  const char* op = ::ember::op::native_layer_norm_backward::op_name();
  Rows r = check_ln(op, x, ns, {&opt(w), &opt(b)});
  common_device(op, {&g, &x, &mean, &rstd});
  EMBER_CHECK_DTYPE(g.is_floating_point() && mean.is_floating_point() && rstd.is_floating_point(), op,
                    ": grad, mean and rstd must be floating");
  EMBER_CHECK_SHAPE(g.sizes() == x.sizes(), op, ": grad of shape ", g.sizes(), " does not match input ", x.sizes());
  EMBER_CHECK_SHAPE(mean.sizes() == IntArrayRef(r.stat_shape) && rstd.sizes() == IntArrayRef(r.stat_shape), op,
                    ": mean and rstd must have shape ", IntArrayRef(r.stat_shape), ", got ", mean.sizes(), " and ",
                    rstd.sizes());
  Tensor gx = nx ? empty_on(x.sizes(), x.dtype(), x.device()) : Tensor();
  Tensor gw = nw ? empty_on(ns, stat_dtype(x), x.device()) : Tensor();
  Tensor gb = nb ? empty_on(ns, stat_dtype(x), x.device()) : Tensor();
  if (x.is_cpu()) {  // the NPU's aclnnLayerNormBackward runs the same kernel
    const cpu::Strided none{};
    Tensor wc = opt(w).defined() ? opt(w).contiguous() : Tensor();
    Tensor gc = g.contiguous(), xc = x.contiguous(), mc = mean.contiguous(), rc = rstd.contiguous();
    cpu::layer_norm_backward(nx ? strided(gx) : none, nw ? strided(gw) : none, nb ? strided(gb) : none, strided(gc),
                             strided(xc), strided(mc), strided(rc), wc.defined() ? strided(wc) : none, r.rows, r.D);
    return {gx, gw, gb};
  }
  EXEC_NPU_CMD(npu::aclnnLayerNormBackward, g, x, ns, mean, rstd, opt(w), opt(b), std::array<bool, 3>{nx, nw, nb}, gx,
               gw, gb);
  return {gx, gw, gb};
}
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::native_layer_norm());
  m.def(op::native_layer_norm_backward());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::native_layer_norm(), &layer_norm_kernel);
  m.impl(op::native_layer_norm_backward(), &layer_norm_backward_kernel);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::native_layer_norm(), &layer_norm_kernel);
  m.impl(op::native_layer_norm_backward(), &layer_norm_backward_kernel);
}

using LnSig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, IntArrayRef, const std::optional<Tensor>&,
                                                 const std::optional<Tensor>&, double);
using LnBackSig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, IntArrayRef, const Tensor&,
                                                     const Tensor&, const std::optional<Tensor>&,
                                                     const std::optional<Tensor>&, bool, bool, bool);
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, double eps) {
  return op::native_layer_norm::call(input, normalized_shape, weight, bias, eps);
}
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              IntArrayRef normalized_shape, const Tensor& mean,
                                                              const Tensor& rstd, const std::optional<Tensor>& weight,
                                                              const std::optional<Tensor>& bias, bool input_grad,
                                                              bool weight_grad, bool bias_grad) {
  return op::native_layer_norm_backward::call(grad_out, input, normalized_shape, mean, rstd, weight, bias, input_grad, weight_grad, bias_grad);
}

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
// mean's and rstd's own gradients (for a caller that uses them) are added to the input's:
// d mean / dx = 1 / D, d rstd / dx = -rstd^3 (x - mean) / D over each row.
std::vector<Tensor> layer_norm_bw(const BackwardCtx<LnSig>& c) {
  Tensor x = c.arg<0>(), w = c.arg<2>(), g = c.grad(0);
  IntArrayRef ns = c.arg<1>();
  const double eps = c.arg<4>();
  Rows r = check_ln(op::native_layer_norm::op_name(), x, ns, {});
  const bool nx = c.needs(0), nw = c.needs(1), nb = c.needs(2), stats_grads = c.has_grad(1) || c.has_grad(2);
  Tensor gx, gw, gb;
  if (is_grad_enabled() || stats_grads) {
    const DType sd = stat_dtype(x);
    Tensor xf = x.to(sd);
    Tensor mean = xf.mean(r.norm_dims, true);
    Tensor rstd = ((xf - mean).square().mean(r.norm_dims, true) + eps).rsqrt();
    std::tie(gx, gw, gb) = layer_norm_backward_math(g, x, r, mean, rstd, w, nx || stats_grads, nw, nb);
    if (stats_grads) {
      const double D = static_cast<double>(r.D);
      Tensor gm = c.has_grad(1) ? c.grad(1).to(sd) : zeros(r.stat_shape, mean.options());
      Tensor gr = c.has_grad(2) ? c.grad(2).to(sd) : zeros(r.stat_shape, mean.options());
      gx = gx + (gm / D - gr * rstd.pow(3) * (xf - mean) / D).to(x.dtype());
    }
  } else {
    std::tie(gx, gw, gb) = native_layer_norm_backward(g, x, ns, c.output(1), c.output(2), some(w), std::nullopt, nx,
                                                      nw, nb);
  }
  return {nx ? gx : Tensor(), gw, gb};
}
const auto kLayerNorm = spec_of<op::native_layer_norm>("NativeLayerNormBackward0", &layer_norm_bw)
                            .saving(saves(0, 2))
                            .saving_outputs(0b110);
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::native_layer_norm(), autograd_kernel<&kLayerNorm>());
  autograd::impl_no_double_backward(m, op::native_layer_norm_backward());
}

}  // namespace ember
