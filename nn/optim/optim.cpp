// The optimizers (SGD, AdamW, Adam, RMSprop, Adagrad), CosineSchedule and clip_grad_norm_
// (the base class: optimizer.cpp).
#include "ember/nn/optim/optim.h"

#include <algorithm>
#include <cmath>

#include "ember/autograd/grad_mode.h"
#include "ember/device/profiler.h"
#include "ember/nn/module.h"
#include "ember/ops/ops.h"

namespace ember {
namespace optim {

namespace {
// The gradient PyTorch's Adam, RMSprop and Adagrad use: in the parameter's dtype, negated to
// maximize, plus weight_decay p (L2).
Tensor l2_grad(const Tensor& p, Tensor g, double weight_decay, bool maximize) {
  if (g.dtype() != p.dtype()) g = g.to(p.dtype());
  if (maximize) g = -g;
  if (weight_decay != 0) g = g + p * weight_decay;
  return g;
}

// A parameter's state, made on its first update with a step counter and zeroed (or filled)
// tensors; moved along when the parameter moved device since.
std::map<std::string, Tensor>& state_for(std::map<std::string, Tensor>& st, const Tensor& p,
                                         const std::vector<std::string>& names, double fill = 0.0) {
  if (st.empty()) {
    st["step"] = zeros({1}, TensorOptions(kInt64).device(p.device()));
    for (const std::string& n : names) st[n] = fill == 0.0 ? zeros_like(p) : full_like(p, fill);
  }
  if (st["step"].device() != p.device())
    for (auto& kv : st) kv.second = kv.second.to(p.device());
  return st;
}

// Adam's and AdamW's option checks and state names.
void check_adam_options(const char* name, std::pair<double, double> betas, double eps, double weight_decay) {
  EMBER_CHECK_VALUE(betas.first >= 0 && betas.first < 1 && betas.second >= 0 && betas.second < 1, name,
                    ": betas must be in [0, 1), got (", betas.first, ", ", betas.second, ")");
  EMBER_CHECK_VALUE(eps >= 0, name, ": invalid eps ", eps);
  EMBER_CHECK_VALUE(weight_decay >= 0, name, ": invalid weight_decay ", weight_decay);
}
std::vector<std::string> adam_state(bool amsgrad) {
  std::vector<std::string> n{"exp_avg", "exp_avg_sq"};
  if (amsgrad) n.push_back("max_exp_avg_sq");
  return n;
}
// One Adam(W) update of p with gradient g through the fused kernel (state as adam_state's).
void adam_update(Tensor& p, std::map<std::string, Tensor>& st, const Tensor& g, double lr,
                 std::pair<double, double> betas, double weight_decay, double eps, bool maximize, bool amsgrad) {
  // The kernel takes the updates made before this one (CANN's ApplyAdamWV2 convention, see
  // ops/optim.cpp); the counter then holds torch's state["step"], the updates made so far.
  Tensor& step = st["step"];
  if (amsgrad) {
    _adamw_step_amsgrad_(p, st["exp_avg"], st["exp_avg_sq"], st["max_exp_avg_sq"], g, step, lr, betas.first,
                         betas.second, weight_decay, eps, maximize);
  } else {
    _adamw_step_(p, st["exp_avg"], st["exp_avg_sq"], g, step, lr, betas.first, betas.second, weight_decay, eps,
                 maximize);
  }
  step.add_(1);
}
}  // namespace

SGD::SGD(std::vector<Tensor> params, SGDOptions o) : Optimizer(std::move(params), o.lr), opt_(o) {
  EMBER_CHECK_VALUE(o.momentum >= 0, "SGD: invalid momentum ", o.momentum);
  EMBER_CHECK_VALUE(o.weight_decay >= 0, "SGD: invalid weight_decay ", o.weight_decay);
  EMBER_CHECK_VALUE(!o.nesterov || (o.momentum > 0 && o.dampening == 0),
                    "SGD: nesterov momentum requires a momentum and zero dampening");
}

std::optional<std::vector<std::string>> SGD::state_names() const {
  if (opt_.momentum == 0) return std::vector<std::string>{};
  return std::vector<std::string>{"momentum_buffer"};
}

void SGD::step() {
  profiler::detail::Scope scope("optimizer", "Optimizer.step#SGD");
  NoGradGuard ng;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (g.dtype() != p.dtype()) g = g.to(p.dtype());
    if (opt_.weight_decay != 0) g = g + p * opt_.weight_decay;
    if (opt_.momentum != 0) {
      auto& st = mutable_state(i);
      auto it = st.find("momentum_buffer");
      if (it == st.end()) {
        it = st.emplace("momentum_buffer", g.clone()).first;
      } else {
        it->second.mul_(opt_.momentum).add_(g, 1 - opt_.dampening);
      }
      g = opt_.nesterov ? g + it->second * opt_.momentum : it->second;
    }
    p.sub_(g, lr_);
  }
  ++steps_;
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions o) : Optimizer(std::move(params), o.lr), opt_(o) {
  check_adam_options("AdamW", o.betas, o.eps, o.weight_decay);
}

std::optional<std::vector<std::string>> AdamW::state_names() const {
  std::vector<std::string> n = adam_state(opt_.amsgrad);
  n.insert(n.begin(), "step");
  return n;
}

void AdamW::step() {
  profiler::detail::Scope scope("optimizer", "Optimizer.step#AdamW");
  NoGradGuard ng;
  const std::vector<std::string> names = adam_state(opt_.amsgrad);
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    Tensor g = p.grad();
    if (!g.defined()) continue;
    auto& st = state_for(mutable_state(i), p, names);
    adam_update(p, st, g, lr_, opt_.betas, opt_.weight_decay, opt_.eps, opt_.maximize, opt_.amsgrad);
  }
  ++steps_;
}

Adam::Adam(std::vector<Tensor> params, AdamOptions o) : Optimizer(std::move(params), o.lr), opt_(o) {
  EMBER_CHECK_VALUE(o.lr >= 0, "Adam: invalid lr ", o.lr);
  check_adam_options("Adam", o.betas, o.eps, o.weight_decay);
}

std::optional<std::vector<std::string>> Adam::state_names() const {
  std::vector<std::string> n = adam_state(opt_.amsgrad);
  n.insert(n.begin(), "step");
  return n;
}

void Adam::step() {
  profiler::detail::Scope scope("optimizer", "Optimizer.step#Adam");
  NoGradGuard ng;
  const std::vector<std::string> names = adam_state(opt_.amsgrad);
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    if (!p.grad().defined()) continue;
    Tensor g = l2_grad(p, p.grad(), opt_.weight_decay, opt_.maximize);
    auto& st = state_for(mutable_state(i), p, names);
    adam_update(p, st, g, lr_, opt_.betas, 0.0, opt_.eps, false, opt_.amsgrad);  // (g has the decay and sign)
  }
  ++steps_;
}

RMSprop::RMSprop(std::vector<Tensor> params, RMSpropOptions o) : Optimizer(std::move(params), o.lr), opt_(o) {
  EMBER_CHECK_VALUE(o.lr >= 0, "RMSprop: invalid lr ", o.lr);
  EMBER_CHECK_VALUE(o.alpha >= 0 && o.alpha <= 1, "RMSprop: alpha must be in [0, 1], got ", o.alpha);
  EMBER_CHECK_VALUE(o.eps >= 0, "RMSprop: invalid eps ", o.eps);
  EMBER_CHECK_VALUE(o.weight_decay >= 0, "RMSprop: invalid weight_decay ", o.weight_decay);
  EMBER_CHECK_VALUE(o.momentum >= 0, "RMSprop: invalid momentum ", o.momentum);
}

std::optional<std::vector<std::string>> RMSprop::state_names() const {
  std::vector<std::string> n{"step", "square_avg"};
  if (opt_.momentum > 0) n.push_back("momentum_buffer");
  if (opt_.centered) n.push_back("grad_avg");
  return n;
}

void RMSprop::step() {
  profiler::detail::Scope scope("optimizer", "Optimizer.step#RMSprop");
  NoGradGuard ng;
  std::vector<std::string> names{"square_avg"};
  if (opt_.momentum > 0) names.push_back("momentum_buffer");
  if (opt_.centered) names.push_back("grad_avg");
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    if (!p.grad().defined()) continue;
    Tensor g = l2_grad(p, p.grad(), opt_.weight_decay, opt_.maximize);
    auto& st = state_for(mutable_state(i), p, names);
    st["step"].add_(1);
    Tensor& v = st["square_avg"];
    v.mul_(opt_.alpha).add_(g.square(), 1 - opt_.alpha);
    Tensor avg;
    if (opt_.centered) {
      Tensor& m = st["grad_avg"];
      m.mul_(opt_.alpha).add_(g, 1 - opt_.alpha);
      avg = (v - m.square()).sqrt() + opt_.eps;
    } else {
      avg = v.sqrt() + opt_.eps;
    }
    if (opt_.momentum > 0) {
      Tensor& buf = st["momentum_buffer"];
      buf.mul_(opt_.momentum).add_(g / avg);
      p.sub_(buf, lr_);
    } else {
      p.sub_(g / avg, lr_);
    }
  }
  ++steps_;
}

Adagrad::Adagrad(std::vector<Tensor> params, AdagradOptions o) : Optimizer(std::move(params), o.lr), opt_(o) {
  EMBER_CHECK_VALUE(o.lr >= 0, "Adagrad: invalid lr ", o.lr);
  EMBER_CHECK_VALUE(o.lr_decay >= 0, "Adagrad: invalid lr_decay ", o.lr_decay);
  EMBER_CHECK_VALUE(o.weight_decay >= 0, "Adagrad: invalid weight_decay ", o.weight_decay);
  EMBER_CHECK_VALUE(o.initial_accumulator_value >= 0, "Adagrad: invalid initial_accumulator_value ",
                    o.initial_accumulator_value);
  EMBER_CHECK_VALUE(o.eps >= 0, "Adagrad: invalid eps ", o.eps);
}

std::optional<std::vector<std::string>> Adagrad::state_names() const {
  return std::vector<std::string>{"step", "sum"};
}

void Adagrad::step() {
  profiler::detail::Scope scope("optimizer", "Optimizer.step#Adagrad");
  NoGradGuard ng;
  const std::vector<std::string> names{"sum"};
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    if (!p.grad().defined()) continue;
    Tensor g = l2_grad(p, p.grad(), opt_.weight_decay, opt_.maximize);
    auto& st = state_for(mutable_state(i), p, names, opt_.initial_accumulator_value);
    st["step"].add_(1);
    double clr = lr_;
    if (opt_.lr_decay != 0) {  // (reads the step: a synchronisation on npu, only with lr_decay)
      clr = lr_ / (1 + static_cast<double>(st["step"].item<int64_t>() - 1) * opt_.lr_decay);
    }
    Tensor& sum = st["sum"];
    sum.add_(g.square());
    p.sub_(g / (sum.sqrt() + opt_.eps), clr);
  }
  ++steps_;
}

CosineSchedule::CosineSchedule(Optimizer& optimizer, int64_t warmup, int64_t total, double min_lr)
    : opt_(optimizer), base_lr_(optimizer.lr()), min_lr_(min_lr), warmup_(warmup), total_(total) {
  EMBER_CHECK_VALUE(warmup >= 0 && total > 0 && warmup <= total, "CosineSchedule: needs 0 <= warmup_steps <= total_steps and total_steps > 0, got ",
                    warmup, " and ", total);
  EMBER_CHECK_VALUE(min_lr >= 0 && min_lr <= base_lr_, "CosineSchedule: min_lr must be in [0, the optimizer's lr ",
                    base_lr_, "], got ", min_lr);
  opt_.set_lr(lr_at(0));
}

double CosineSchedule::lr_at(int64_t t) const {
  if (t < warmup_) return base_lr_ * static_cast<double>(t + 1) / static_cast<double>(warmup_);
  double span = static_cast<double>(std::max<int64_t>(1, total_ - warmup_));
  double progress = std::min(1.0, static_cast<double>(t - warmup_) / span);
  return min_lr_ + (base_lr_ - min_lr_) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

void CosineSchedule::set_total_steps(int64_t total) {
  EMBER_CHECK_VALUE(total > 0 && warmup_ <= total, "CosineSchedule.set_total_steps: needs total_steps >= warmup_steps ",
                    warmup_, ", got ", total);
  total_ = total;
  opt_.set_lr(lr_at(t_));
}

void CosineSchedule::set_step(int64_t t) {
  EMBER_CHECK_VALUE(t >= 0, "CosineSchedule.set_step: step must be >= 0, got ", t);
  t_ = t;
  opt_.set_lr(lr_at(t_));
}

void CosineSchedule::step() {
  ++t_;
  opt_.set_lr(lr_at(t_));
}

}  // namespace optim

namespace nn {
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm) {
  EMBER_CHECK_VALUE(max_norm > 0, "clip_grad_norm_: max_norm must be positive, got ", max_norm);
  NoGradGuard ng;
  std::vector<Tensor> grads;
  for (const Tensor& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return 0.0;
  Device dev = grads.front().device();
  Tensor total;
  for (const Tensor& g : grads) {
    Tensor sq = (g.dtype() == kFloat64 ? g : g.to(kFloat32)).square().sum().to(dev);
    total = total.defined() ? total + sq : sq;
  }
  double norm = std::sqrt(total.item<double>());
  if (!std::isfinite(norm)) return norm;
  double coef = max_norm / (norm + 1e-6);
  if (coef < 1.0)
    for (Tensor& g : grads) g.mul_(coef);
  return norm;
}
}  // namespace nn

}  // namespace ember
