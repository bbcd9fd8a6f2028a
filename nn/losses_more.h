// libtorch's remaining losses as compositions of ember's ops: multi-class margin
// (MultiMarginLoss), multi-label margin (MultiLabelMarginLoss), triplet margin with a distance
// function, and CTC (the forward algorithm in log space over the extended label sequence, one
// step per time frame, differentiated by autograd), with their options, functionals and modules.
#pragma once

#include <functional>
#include <optional>

#include "ember/nn/functional_forms.h"

namespace ember {
namespace nn {

// loss = sum over classes i != y of max(0, margin - x[y] + x[i])^p (times weight[y]) / C.
struct MultiMarginLossOptions {
  EMBER_ARG(int64_t, p) = 1;
  EMBER_ARG(double, margin) = 1.0;
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(int64_t, reduction) = Reduction::Mean;
};
// target [N, C]: each row's classes, ended by the first -1; loss = sum over target classes j and
// the other classes i of max(0, 1 - (x[j] - x[i])) / C.
struct MultiLabelMarginLossOptions {
  MultiLabelMarginLossOptions(int64_t reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  EMBER_ARG(int64_t, reduction);
};
// max(0, margin + d(anchor, positive) - d(anchor, negative)); d is pairwise_distance unless given.
struct TripletMarginWithDistanceLossOptions {
  using distance_function_t = std::function<Tensor(const Tensor&, const Tensor&)>;
  EMBER_ARG(std::optional<distance_function_t>, distance_function) = std::nullopt;
  EMBER_ARG(double, margin) = 1.0;
  EMBER_ARG(bool, swap) = false;
  EMBER_ARG(int64_t, reduction) = Reduction::Mean;
};
// log_probs [T, N, C] (or [T, C]), targets [N, S] (or their concatenation), input_lengths and
// target_lengths [N]. Mean divides each loss by its target length, then averages. The gradient
// is the true one with respect to log_probs (libtorch's adds exp(log_probs), which cancels when
// log_probs come from log_softmax, as they should).
struct CTCLossOptions {
  EMBER_ARG(int64_t, blank) = 0;
  EMBER_ARG(int64_t, reduction) = Reduction::Mean;
  EMBER_ARG(bool, zero_infinity) = false;
};

namespace functional {
using MultiMarginLossFuncOptions = MultiMarginLossOptions;
using MultilabelMarginLossFuncOptions = MultiLabelMarginLossOptions;
using MultilabelSoftMarginLossFuncOptions = MultiLabelSoftMarginLossOptions;
using TripletMarginWithDistanceLossFuncOptions = TripletMarginWithDistanceLossOptions;
using CTCLossFuncOptions = CTCLossOptions;
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, const MultiMarginLossFuncOptions& options = {});
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const MultilabelMarginLossFuncOptions& options = {});
Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                                         const TripletMarginWithDistanceLossFuncOptions& options = {});
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& options = {});
// smooth_l1 without reduction: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta.
Tensor _smooth_l1_loss(const Tensor& input, const Tensor& target, double beta = 1.);
}  // namespace functional

#define EMBER_LOSS_MODULE(Name, Options, Params, Args)                                                     \
  class Name : public Module {                                                                             \
   public:                                                                                                 \
    explicit Name(const Options& options_ = {}) : options(options_) {}                                     \
    using Module::forward;                                                                                 \
    Tensor forward Params;                                                                                 \
    Tensor operator() Params { return forward Args; }                                                      \
    std::string extra_repr() const override { return "reduction=" + std::to_string(options.reduction()); } \
    Options options;                                                                                       \
  };
EMBER_LOSS_MODULE(MultiMarginLoss, MultiMarginLossOptions, (const Tensor& input, const Tensor& target), (input, target))
EMBER_LOSS_MODULE(MultiLabelMarginLoss, MultiLabelMarginLossOptions, (const Tensor& input, const Tensor& target),
                  (input, target))
EMBER_LOSS_MODULE(TripletMarginWithDistanceLoss, TripletMarginWithDistanceLossOptions,
                  (const Tensor& anchor, const Tensor& positive, const Tensor& negative), (anchor, positive, negative))
EMBER_LOSS_MODULE(CTCLoss, CTCLossOptions,
                  (const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                   const Tensor& target_lengths),
                  (log_probs, targets, input_lengths, target_lengths))
#undef EMBER_LOSS_MODULE

}  // namespace nn
}  // namespace ember
