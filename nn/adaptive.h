// libtorch's AdaptiveLogSoftmaxWithLoss (Grave et al., efficient softmax approximation): the
// frequent classes and one entry per cluster in a head, each cluster's classes in a tail of two
// bias-free Linear layers shrunk by div_value per cluster. Built from ember's Linear,
// log_softmax, gather and index_add, so it differentiates and runs on every device.
#pragma once

#include <memory>
#include <vector>

#include "ember/nn/modules.h"
#include "ember/nn/options.h"

namespace ember {
namespace nn {

struct AdaptiveLogSoftmaxWithLossOptions {
  AdaptiveLogSoftmaxWithLossOptions(int64_t in_features, int64_t n_classes, std::vector<int64_t> cutoffs)
      : in_features_(in_features), n_classes_(n_classes), cutoffs_(std::move(cutoffs)) {}
  EMBER_ARG(int64_t, in_features);
  EMBER_ARG(int64_t, n_classes);
  EMBER_ARG(std::vector<int64_t>, cutoffs);  // increasing, within (0, n_classes)
  EMBER_ARG(double, div_value) = 4.;
  EMBER_ARG(bool, head_bias) = false;
};

// output: the log-probability of each target [N]; loss: the mean of -output (a number, as
// libtorch's; backpropagate through output).
struct ASMoutput {
  ASMoutput(Tensor output_, double loss_) : output(std::move(output_)), loss(loss_) {}
  Tensor output;
  double loss;
};

class AdaptiveLogSoftmaxWithLoss : public Module {
 public:
  AdaptiveLogSoftmaxWithLoss(int64_t in_features, int64_t n_classes, std::vector<int64_t> cutoffs)
      : AdaptiveLogSoftmaxWithLoss(AdaptiveLogSoftmaxWithLossOptions(in_features, n_classes, std::move(cutoffs))) {}
  explicit AdaptiveLogSoftmaxWithLoss(const AdaptiveLogSoftmaxWithLossOptions& options);
  using Module::forward;
  ASMoutput forward(const Tensor& input, const Tensor& target);
  // [N, n_classes] log-probabilities of every class.
  Tensor log_prob(const Tensor& input);
  Tensor _get_full_log_prob(const Tensor& input, const Tensor& head_output);
  // The most likely class of each row [N].
  Tensor predict(const Tensor& input);
  void reset_parameters();
  std::string extra_repr() const override;
  AdaptiveLogSoftmaxWithLossOptions options;
  std::vector<int64_t> cutoffs;  // the options' cutoffs and n_classes
  int64_t shortlist_size, n_clusters, head_size;
  std::shared_ptr<Linear> head;
  std::shared_ptr<ModuleList> tail;
};

}  // namespace nn
}  // namespace ember
