// ember::optim: SGD, AdamW, Adam, RMSprop and Adagrad with PyTorch's update rules and defaults, a cosine learning-rate
// schedule with linear warmup, and clip_grad_norm_. Updates run on the parameters' device (the
// AdamW update is one fused kernel per parameter: _adamw_step_ / aclnnApplyAdamWV2).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/tensor/tensor.h"

namespace ember {
namespace optim {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params, double lr);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Applies one update to every parameter that has a gradient (under NoGradGuard).
  virtual void step() = 0;
  // Clears the gradients (set_to_none: drop them, PyTorch's default; else fill with zeros).
  void zero_grad(bool set_to_none = true);

  const std::vector<Tensor>& params() const { return params_; }
  double lr() const { return lr_; }
  void set_lr(double lr);
  // The state kept for a parameter (e.g. "exp_avg", "exp_avg_sq", "step"; "momentum_buffer").
  // Empty until the first step that updates it.
  const std::map<std::string, Tensor>& state(const Tensor& param) const;
  // Number of step() calls so far.
  int64_t steps() const { return steps_; }

  // The optimizer's state as named tensors, for checkpoints (e.g.
  // save_safetensors(opt.state_dict(), path)): "state.<i>.<name>" for parameter i's state
  // (on the parameter's device), "lr" (float64, one element) and "steps" (int64, one element).
  std::map<std::string, Tensor> state_dict() const;
  // Restores a state_dict of an optimizer of the same kind and options over parameters of the
  // same shapes and dtypes (state tensors are copied to the parameters' devices). Everything is
  // checked first: an unknown or malformed key, a parameter index out of range, a state name this
  // optimizer does not keep, a parameter with only part of its state, a shape or dtype mismatch
  // all throw ValueError listing every problem, and then nothing is loaded.
  void load_state_dict(const std::map<std::string, Tensor>& state_dict);

 protected:
  // The names of the state a parameter holds once it has been updated ("step" is an int64 of one
  // element, the rest have the parameter's shape and dtype). nullopt (the default, for
  // optimizers defined elsewhere): any names, each checked by that rule.
  virtual std::optional<std::vector<std::string>> state_names() const { return std::nullopt; }
  virtual const char* kind() const { return "optimizer"; }
  std::map<std::string, Tensor>& mutable_state(size_t i) { return state_[i]; }
  std::vector<Tensor> params_;
  std::vector<std::map<std::string, Tensor>> state_;
  double lr_;
  int64_t steps_ = 0;
};

struct SGDOptions {
  double lr = 1e-2;
  double momentum = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  double dampening = 0.0;
};

// g = grad + weight_decay p;  with momentum: buf = momentum buf + (1 - dampening) g (buf = g at
// the first step), g = nesterov ? g + momentum buf : buf;  p -= lr g.
class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options = {});
  void step() override;
  const SGDOptions& options() const { return opt_; }

 protected:
  std::optional<std::vector<std::string>> state_names() const override;
  const char* kind() const override { return "SGD"; }

 protected:
  SGDOptions opt_;  // (torch::optim's param group writes it before a step)
};

struct AdamWOptions {
  double lr = 1e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;   // divide by sqrt of the running max of exp_avg_sq
  bool maximize = false;  // ascend the objective (the gradient is negated)
};

// PyTorch's AdamW: p *= 1 - lr wd; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
// p -= lr / (1 - b1^t) m / (sqrt(v) / sqrt(1 - b2^t) + eps). State per parameter: exp_avg,
// exp_avg_sq (and max_exp_avg_sq with amsgrad; param's dtype and device) and step (an int64
// tensor on the device).
class AdamW : public Optimizer {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions options = {});
  void step() override;
  const AdamWOptions& options() const { return opt_; }

 protected:
  std::optional<std::vector<std::string>> state_names() const override;
  const char* kind() const override { return "AdamW"; }

 protected:
  AdamWOptions opt_;  // (torch::optim's param group writes it before a step)
};

struct AdamOptions {
  double lr = 1e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 0.0;  // L2: added to the gradient (AdamW decays the weights instead)
  bool amsgrad = false;
  bool maximize = false;
};

// PyTorch's Adam: g = (maximize ? -grad : grad) + weight_decay p, then AdamW's update without
// its decay (the same fused kernel). State as AdamW's.
class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions options = {});
  void step() override;
  const AdamOptions& options() const { return opt_; }

 protected:
  std::optional<std::vector<std::string>> state_names() const override;
  const char* kind() const override { return "Adam"; }

 protected:
  AdamOptions opt_;  // (torch::optim's param group writes it before a step)
};

struct RMSpropOptions {
  double lr = 1e-2;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double momentum = 0.0;
  bool centered = false;
  bool maximize = false;
};

// PyTorch's RMSprop: g = (maximize ? -grad : grad) + weight_decay p; v = alpha v + (1 - alpha) g^2;
// centered: m = alpha m + (1 - alpha) g, avg = sqrt(v - m^2) + eps, else avg = sqrt(v) + eps;
// momentum: buf = momentum buf + g / avg, p -= lr buf; else p -= lr g / avg. State: step,
// square_avg (and grad_avg when centered, momentum_buffer with momentum).
class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, RMSpropOptions options = {});
  void step() override;
  const RMSpropOptions& options() const { return opt_; }

 protected:
  std::optional<std::vector<std::string>> state_names() const override;
  const char* kind() const override { return "RMSprop"; }

 protected:
  RMSpropOptions opt_;  // (torch::optim's param group writes it before a step)
};

struct AdagradOptions {
  double lr = 1e-2;
  double lr_decay = 0.0;
  double weight_decay = 0.0;
  double initial_accumulator_value = 0.0;
  double eps = 1e-10;
  bool maximize = false;
};

// PyTorch's Adagrad: g = (maximize ? -grad : grad) + weight_decay p; clr = lr / (1 + (t - 1)
// lr_decay); sum += g^2; p -= clr g / (sqrt(sum) + eps). State: step, sum.
class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, AdagradOptions options = {});
  void step() override;
  const AdagradOptions& options() const { return opt_; }

 protected:
  std::optional<std::vector<std::string>> state_names() const override;
  const char* kind() const override { return "Adagrad"; }

 protected:
  AdagradOptions opt_;  // (torch::optim's param group writes it before a step)
};

// Linear warmup to the optimizer's initial lr over warmup_steps, then a cosine decay to min_lr
// at total_steps (held there after). Call step() after each optimizer.step().
class CosineSchedule {
 public:
  CosineSchedule(Optimizer& optimizer, int64_t warmup_steps, int64_t total_steps, double min_lr = 0.0);
  void step();
  // The lr for step t (0-based: the lr the optimizer's t-th update uses).
  double lr_at(int64_t t) const;
  double get_lr() const { return lr_at(t_); }
  // Re-plans the decay for a new total (e.g. once a time-budgeted run knows its step rate).
  void set_total_steps(int64_t total_steps);
  int64_t last_step() const { return t_; }
  // Resumes at step t (e.g. opt.steps() after Optimizer::load_state_dict): sets the lr for it.
  void set_step(int64_t t);

 private:
  Optimizer& opt_;
  double base_lr_, min_lr_;
  int64_t warmup_, total_, t_ = 0;
};

}  // namespace optim

namespace nn {
// Scales the gradients so their global 2-norm is at most max_norm (coefficient max_norm /
// (norm + 1e-6), applied only when below 1); returns the norm before clipping. Non-finite
// norms are returned as is and leave the gradients untouched.
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm);
}  // namespace nn

}  // namespace ember
