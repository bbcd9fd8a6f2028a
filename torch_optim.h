// ember/torch_optim.h: libtorch's torch::optim over ember's optimizers (part of <ember/torch.h>,
// which includes it): chainable option builders converting to ember's aggregates, the
// optimizers constructed from them, and the LR schedulers.
#pragma once

#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "ember/torch.h"  // (torch.h includes this header at its end)

namespace torch {
namespace optim {
using ember::optim::ExponentialLR;
using ember::optim::LRScheduler;
using ember::optim::MultiStepLR;
using ember::optim::Optimizer;
using ember::optim::ReduceLROnPlateau;
using ember::optim::ReduceLROnPlateauOptions;
using ember::optim::StepLR;

namespace detail {
// A chainable setter and its getter over field F of ember's options O, as libtorch's
// TORCH_ARG: o.momentum(0.5) sets, o.momentum() reads.
#define EMBER_TORCH_ARG(Self, T, name)  \
  Self& name(T v) {                     \
    o_.name = v;                        \
    return *this;                       \
  }                                     \
  T name() const { return o_.name; }
}  // namespace detail

// libtorch's OptimizerOptions: what a param group's options() is (static_cast it to the
// optimizer's options class, or use get_lr / set_lr).
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
};

// libtorch's OptimizerParamGroup: the parameters and the options they are updated with. ember's
// torch::optim optimizers hold one group (all their parameters); a step uses its options as they
// are then (a new lr, momentum, ...), and an LR scheduler's lr shows in them.
class OptimizerParamGroup {
 public:
  explicit OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  OptimizerParamGroup(const OptimizerParamGroup& o)
      : params_(o.params_), options_(o.options_ ? o.options_->clone() : nullptr) {}
  OptimizerParamGroup& operator=(const OptimizerParamGroup& o) {
    params_ = o.params_;
    options_ = o.options_ ? o.options_->clone() : nullptr;
    return *this;
  }
  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options() {
    EMBER_CHECK(options_ != nullptr, "OptimizerParamGroup: this group has no options");
    return *options_;
  }
  const OptimizerOptions& options() const {
    EMBER_CHECK(options_ != nullptr, "OptimizerParamGroup: this group has no options");
    return *options_;
  }
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

// libtorch's option classes: implicit from the learning rate, chainable, and converting to
// ember's aggregate of the same name.
#define EMBER_TORCH_OPTIONS_BASE(Self)                                              \
  double get_lr() const override { return o_.lr; }                                 \
  void set_lr(double lr) override { o_.lr = lr; }                                  \
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<Self>(*this); }
class SGDOptions : public OptimizerOptions {
 public:
  EMBER_TORCH_OPTIONS_BASE(SGDOptions)
  SGDOptions(double lr) { o_.lr = lr; }  // NOLINT: implicit, as libtorch's (SGD(params, 0.1))
  EMBER_TORCH_ARG(SGDOptions, double, lr)
  EMBER_TORCH_ARG(SGDOptions, double, momentum)
  EMBER_TORCH_ARG(SGDOptions, double, dampening)
  EMBER_TORCH_ARG(SGDOptions, double, weight_decay)
  EMBER_TORCH_ARG(SGDOptions, bool, nesterov)
  operator ember::optim::SGDOptions() const { return o_; }  // NOLINT

 private:
  ember::optim::SGDOptions o_;
};

// The Adam family's betas as libtorch writes them: betas(std::make_tuple(0.5, 0.999)).
#define EMBER_TORCH_BETAS(Self)                                 \
  Self& betas(const std::tuple<double, double>& b) {          \
    o_.betas = {std::get<0>(b), std::get<1>(b)};               \
    return *this;                                              \
  }                                                            \
  std::tuple<double, double> betas() const { return {o_.betas.first, o_.betas.second}; }

class AdamOptions : public OptimizerOptions {
 public:
  EMBER_TORCH_OPTIONS_BASE(AdamOptions)
  AdamOptions(double lr = 1e-3) { o_.lr = lr; }  // NOLINT: implicit, as libtorch's
  EMBER_TORCH_ARG(AdamOptions, double, lr)
  EMBER_TORCH_BETAS(AdamOptions)
  EMBER_TORCH_ARG(AdamOptions, double, eps)
  EMBER_TORCH_ARG(AdamOptions, double, weight_decay)
  EMBER_TORCH_ARG(AdamOptions, bool, amsgrad)
  operator ember::optim::AdamOptions() const { return o_; }  // NOLINT

 private:
  ember::optim::AdamOptions o_;
};

class AdamWOptions : public OptimizerOptions {
 public:
  EMBER_TORCH_OPTIONS_BASE(AdamWOptions)
  AdamWOptions(double lr = 1e-3) { o_.lr = lr; }  // NOLINT: implicit, as libtorch's
  EMBER_TORCH_ARG(AdamWOptions, double, lr)
  EMBER_TORCH_BETAS(AdamWOptions)
  EMBER_TORCH_ARG(AdamWOptions, double, eps)
  EMBER_TORCH_ARG(AdamWOptions, double, weight_decay)
  EMBER_TORCH_ARG(AdamWOptions, bool, amsgrad)
  operator ember::optim::AdamWOptions() const { return o_; }  // NOLINT

 private:
  ember::optim::AdamWOptions o_;
};

class RMSpropOptions : public OptimizerOptions {
 public:
  EMBER_TORCH_OPTIONS_BASE(RMSpropOptions)
  RMSpropOptions(double lr = 1e-2) { o_.lr = lr; }  // NOLINT: implicit, as libtorch's
  EMBER_TORCH_ARG(RMSpropOptions, double, lr)
  EMBER_TORCH_ARG(RMSpropOptions, double, alpha)
  EMBER_TORCH_ARG(RMSpropOptions, double, eps)
  EMBER_TORCH_ARG(RMSpropOptions, double, weight_decay)
  EMBER_TORCH_ARG(RMSpropOptions, double, momentum)
  EMBER_TORCH_ARG(RMSpropOptions, bool, centered)
  operator ember::optim::RMSpropOptions() const { return o_; }  // NOLINT

 private:
  ember::optim::RMSpropOptions o_;
};

class AdagradOptions : public OptimizerOptions {
 public:
  EMBER_TORCH_OPTIONS_BASE(AdagradOptions)
  AdagradOptions(double lr = 1e-2) { o_.lr = lr; }  // NOLINT: implicit, as libtorch's
  EMBER_TORCH_ARG(AdagradOptions, double, lr)
  EMBER_TORCH_ARG(AdagradOptions, double, lr_decay)
  EMBER_TORCH_ARG(AdagradOptions, double, weight_decay)
  EMBER_TORCH_ARG(AdagradOptions, double, initial_accumulator_value)
  EMBER_TORCH_ARG(AdagradOptions, double, eps)
  operator ember::optim::AdagradOptions() const { return o_; }  // NOLINT

 private:
  ember::optim::AdagradOptions o_;
};
#undef EMBER_TORCH_ARG
#undef EMBER_TORCH_BETAS
#undef EMBER_TORCH_OPTIONS_BASE

// The optimizers are ember's, constructed from the builders above, with libtorch's
// param_groups(): one group, whose options a step reads (lr both ways with ember's set_lr, so
// ember's LR schedulers and the group agree).
#define EMBER_TORCH_OPTIMIZER_BODY(Name)                                                                       \
 public:                                                                                                       \
  std::vector<OptimizerParamGroup>& param_groups() {                                                           \
    pull();                                                                                                    \
    return groups_;                                                                                            \
  }                                                                                                            \
  void step() override {                                                                                       \
    pull();                                                                                                    \
    Name##Options& o = static_cast<Name##Options&>(groups_.at(0).options());                                   \
    if (o.lr() != lr()) set_lr(o.lr());                                                                        \
    opt_ = static_cast<ember::optim::Name##Options>(o);                                                        \
    synced_lr_ = lr();                                                                                         \
    ember::optim::Name::step();                                                                                \
  }                                                                                                            \
                                                                                                               \
 private:                                                                                                      \
  /* An lr set on the optimizer (a scheduler) since the last sync shows in the group. */                       \
  void pull() {                                                                                                \
    if (lr() != synced_lr_) static_cast<Name##Options&>(groups_.at(0).options()).lr(lr());                     \
    synced_lr_ = lr();                                                                                         \
  }                                                                                                            \
  std::vector<OptimizerParamGroup> groups_;                                                                    \
  double synced_lr_;
#define EMBER_TORCH_OPTIMIZER(Name)                                                                            \
  class Name : public ember::optim::Name {                                                                     \
   public:                                                                                                     \
    Name(std::vector<Tensor> params, const Name##Options& options = Name##Options())                          \
        : ember::optim::Name(params, static_cast<ember::optim::Name##Options>(options)),                       \
          groups_{OptimizerParamGroup(std::move(params), std::make_unique<Name##Options>(options))},           \
          synced_lr_(lr()) {}                                                                                  \
    EMBER_TORCH_OPTIMIZER_BODY(Name)                                                                           \
  };
class SGD : public ember::optim::SGD {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& options)  // lr has no default, as in libtorch
      : ember::optim::SGD(params, static_cast<ember::optim::SGDOptions>(options)),
        groups_{OptimizerParamGroup(std::move(params), std::make_unique<SGDOptions>(options))},
        synced_lr_(lr()) {}
  EMBER_TORCH_OPTIMIZER_BODY(SGD)
};
EMBER_TORCH_OPTIMIZER(Adam)
EMBER_TORCH_OPTIMIZER(AdamW)
EMBER_TORCH_OPTIMIZER(RMSprop)
EMBER_TORCH_OPTIMIZER(Adagrad)
#undef EMBER_TORCH_OPTIMIZER_BODY
#undef EMBER_TORCH_OPTIMIZER
}  // namespace optim

}  // namespace torch
