// ember/torch_optim.h: libtorch's torch::optim over ember's optimizers (part of <ember/torch.h>,
// which includes it): chainable option builders converting to ember's aggregates, the
// optimizers constructed from them, and the LR schedulers.
#pragma once

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

// libtorch's option classes: implicit from the learning rate, chainable, and converting to
// ember's aggregate of the same name.
class SGDOptions {
 public:
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

class AdamOptions {
 public:
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

class AdamWOptions {
 public:
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

class RMSpropOptions {
 public:
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

class AdagradOptions {
 public:
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

// The optimizers are ember's, constructed from the builders above.
#define EMBER_TORCH_OPTIMIZER(Name)                                                                         \
  class Name : public ember::optim::Name {                                                                  \
   public:                                                                                                  \
    Name(std::vector<Tensor> params, const Name##Options& options = Name##Options())                       \
        : ember::optim::Name(std::move(params), static_cast<ember::optim::Name##Options>(options)) {}      \
  };
class SGD : public ember::optim::SGD {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& options)  // lr has no default, as in libtorch
      : ember::optim::SGD(std::move(params), static_cast<ember::optim::SGDOptions>(options)) {}
};
EMBER_TORCH_OPTIMIZER(Adam)
EMBER_TORCH_OPTIMIZER(AdamW)
EMBER_TORCH_OPTIMIZER(RMSprop)
EMBER_TORCH_OPTIMIZER(Adagrad)
#undef EMBER_TORCH_OPTIMIZER
}  // namespace optim

}  // namespace torch
