// _adamw_step_: one fused AdamW update, in place on param, exp_avg and exp_avg_sq (one pass
// over the four tensors instead of a dozen elementwise ops). `step` holds the number of updates
// taken before this one (an int64 tensor of one element on the param's device, read when the
// update runs, so an optimizer can keep it on the device); this update is number t = step + 1.
// That is CANN's convention: aclnnApplyAdamWV2's kernel adds 1 to the step it is given
// (hicann/ops-nn:optim/apply_adam_w_v2/tests/assets/golden.py, "step is incremented by 1
// internally before bias correction"), so the NPU passes `step` through unchanged and the
// optimizer increments its counter after the update. PyTorch's update rule (g negated when maximize):
//   p *= 1 - lr wd;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// The .amsgrad overload also keeps max_v = max(max_v, v) and divides by sqrt(max_v) instead.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/nn.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(_adamw_step__amsgrad, Keep,
                 "ember::_adamw_step_.amsgrad(Tensor(a!) param, Tensor(b!) exp_avg, "
                 "Tensor(c!) exp_avg_sq, Tensor(d!) max_exp_avg_sq, Tensor grad, Tensor step, float lr, float beta1, "
                 "float beta2, float weight_decay, float eps, bool maximize=False) -> Tensor(a!)",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                        double, double, double, double, double, bool));
EMBER_DECLARE_OP(_adamw_step_, Keep,
                 "ember::_adamw_step_(Tensor(a!) param, Tensor(b!) exp_avg, "
                 "Tensor(c!) exp_avg_sq, Tensor grad, Tensor step, float lr, float beta1, float beta2, "
                 "float weight_decay, float eps, bool maximize=False) -> Tensor(a!)",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, double, double,
                        double, double, double, bool));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

void check_adamw(const Tensor& p, const Tensor& m, const Tensor& v, const Tensor& mx, const Tensor& g, const Tensor& step,
                 double lr, double beta1, double beta2, double wd, double eps) {
  const char* op = mx.defined() ? "_adamw_step_.amsgrad" : op::_adamw_step_::op_name();
  if (mx.defined()) {
    common_device(op, {&p, &m, &v, &mx, &g, &step});
    EMBER_CHECK_DTYPE(mx.dtype() == p.dtype(), op, ": max_exp_avg_sq (", mx.dtype(), ") must have the param's dtype ",
                      p.dtype());
    EMBER_CHECK_SHAPE(mx.sizes() == p.sizes(), op, ": max_exp_avg_sq ", mx.sizes(), " must have the param's shape ",
                      p.sizes());
    EMBER_CHECK_VALUE(mx.is_contiguous(), op, ": max_exp_avg_sq must be contiguous");
  } else {
    common_device(op, {&p, &m, &v, &g, &step});
  }
  EMBER_CHECK_DTYPE(p.is_floating_point() && g.is_floating_point(), op, ": param and grad must be floating, got ",
                    p.dtype(), " and ", g.dtype());
  EMBER_CHECK_DTYPE(m.dtype() == p.dtype() && v.dtype() == p.dtype(), op, ": exp_avg (", m.dtype(), ") and exp_avg_sq (",
                    v.dtype(), ") must have the param's dtype ", p.dtype());
  EMBER_CHECK_SHAPE(m.sizes() == p.sizes() && v.sizes() == p.sizes() && g.sizes() == p.sizes(), op,
                    ": param ", p.sizes(), ", exp_avg ", m.sizes(), ", exp_avg_sq ", v.sizes(), " and grad ", g.sizes(),
                    " must have one shape");
  EMBER_CHECK_VALUE(p.is_contiguous() && m.is_contiguous() && v.is_contiguous(), op,
                    ": param, exp_avg and exp_avg_sq must be contiguous");
  EMBER_CHECK_DTYPE(step.dtype() == DType::Int64 && step.numel() == 1, op, ": step must be one int64 element, got ",
                    step.dtype(), " of shape ", step.sizes());
  EMBER_CHECK_VALUE(lr >= 0 && beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1 && eps >= 0 && wd >= 0, op,
                    ": needs lr >= 0, 0 <= betas < 1, eps >= 0, weight_decay >= 0; got lr ", lr, ", betas (", beta1,
                    ", ", beta2, "), eps ", eps, ", weight_decay ", wd);
}

Tensor adamw_cpu(const Tensor& p, const Tensor& m, const Tensor& v, const Tensor& mx, const Tensor& g,
                 const Tensor& step, double lr, double beta1, double beta2, double wd, double eps, bool maximize) {
  check_adamw(p, m, v, mx, g, step, lr, beta1, beta2, wd, eps);
  const int64_t taken = step.item<int64_t>();
  EMBER_CHECK_VALUE(taken >= 0 && taken < std::numeric_limits<int64_t>::max(), op::_adamw_step_::op_name(),
                    ": step (the updates taken before this one) must be in [0, 2^63 - 1), got ", taken);
  const int64_t t = taken + 1;
  cpu::AdamWConfig cfg;
  cfg.lr = lr;
  cfg.beta1 = beta1;
  cfg.beta2 = beta2;
  cfg.weight_decay = wd;
  cfg.eps = eps;
  cfg.amsgrad = mx.defined();
  cfg.maximize = maximize;
  cpu::adamw_step(strided(p), strided(m), strided(v), mx.defined() ? strided(mx) : cpu::Strided(),
                  strided(g.contiguous()), t, cfg);
  for (const Tensor* s : {&p, &m, &v, &mx})
    if (s->defined()) bump_version(*s);
  return p;
}

Tensor adamw_npu(const Tensor& p, const Tensor& m, const Tensor& v, const Tensor& mx, const Tensor& g,
                 const Tensor& step, double lr, double beta1, double beta2, double wd, double eps, bool maximize) {
  check_adamw(p, m, v, mx, g, step, lr, beta1, beta2, wd, eps);
  EXEC_NPU_CMD(npu::aclnnApplyAdamWV2, p, m, v, mx, g, step, static_cast<float>(lr), static_cast<float>(beta1),
               static_cast<float>(beta2), static_cast<float>(wd), static_cast<float>(eps), mx.defined(), maximize);
  for (const Tensor* s : {&p, &m, &v, &mx})
    if (s->defined()) bump_version(*s);
  return p;
}

Tensor adamw_step_cpu(const Tensor& p, const Tensor& m, const Tensor& v, const Tensor& g, const Tensor& step, double lr,
                      double beta1, double beta2, double wd, double eps, bool maximize) {
  return adamw_cpu(p, m, v, Tensor(), g, step, lr, beta1, beta2, wd, eps, maximize);
}
Tensor adamw_step_npu(const Tensor& p, const Tensor& m, const Tensor& v, const Tensor& g, const Tensor& step, double lr,
                      double beta1, double beta2, double wd, double eps, bool maximize) {
  return adamw_npu(p, m, v, Tensor(), g, step, lr, beta1, beta2, wd, eps, maximize);
}
Tensor adamw_step_amsgrad_cpu(const Tensor& p, const Tensor& m, const Tensor& v, const Tensor& mx, const Tensor& g,
                              const Tensor& step, double lr, double beta1, double beta2, double wd, double eps,
                              bool maximize) {
  EMBER_CHECK_VALUE(mx.defined(), "_adamw_step_.amsgrad: max_exp_avg_sq is undefined");
  return adamw_cpu(p, m, v, mx, g, step, lr, beta1, beta2, wd, eps, maximize);
}
Tensor adamw_step_amsgrad_npu(const Tensor& p, const Tensor& m, const Tensor& v, const Tensor& mx, const Tensor& g,
                              const Tensor& step, double lr, double beta1, double beta2, double wd, double eps,
                              bool maximize) {
  EMBER_CHECK_VALUE(mx.defined(), "_adamw_step_.amsgrad: max_exp_avg_sq is undefined");
  return adamw_npu(p, m, v, mx, g, step, lr, beta1, beta2, wd, eps, maximize);
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::_adamw_step_());
  m.def(op::_adamw_step__amsgrad());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::_adamw_step_(), &adamw_step_cpu);
  m.impl(op::_adamw_step__amsgrad(), &adamw_step_amsgrad_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::_adamw_step_(), &adamw_step_npu);
  m.impl(op::_adamw_step__amsgrad(), &adamw_step_amsgrad_npu);
}
EMBER_LIBRARY_IMPL(ember, Autograd, m) {  // optimizer updates
  m.impl_not_differentiable(op::_adamw_step_());
  m.impl_not_differentiable(op::_adamw_step__amsgrad());
}

Tensor& _adamw_step_(Tensor& param, Tensor& exp_avg, Tensor& exp_avg_sq, const Tensor& grad, const Tensor& step,
                     double lr, double beta1, double beta2, double weight_decay, double eps, bool maximize) {
  op::_adamw_step_::call(param, exp_avg, exp_avg_sq, grad, step, lr, beta1, beta2, weight_decay, eps, maximize);
  return param;
}

Tensor& _adamw_step_amsgrad_(Tensor& param, Tensor& exp_avg, Tensor& exp_avg_sq, Tensor& max_exp_avg_sq,
                             const Tensor& grad, const Tensor& step, double lr, double beta1, double beta2,
                             double weight_decay, double eps, bool maximize) {
  op::_adamw_step__amsgrad::call(param, exp_avg, exp_avg_sq, max_exp_avg_sq, grad, step, lr, beta1, beta2, weight_decay, eps, maximize);
  return param;
}

}  // namespace ember
