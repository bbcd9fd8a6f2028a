#include "ember/nn/adaptive.h"

#include <cmath>

#include "ember/nn/internal/repr.h"
#include "ember/ops/composite.h"

namespace ember {
namespace nn {

AdaptiveLogSoftmaxWithLoss::AdaptiveLogSoftmaxWithLoss(const AdaptiveLogSoftmaxWithLossOptions& o) : options(o) {
  const char* name = "AdaptiveLogSoftmaxWithLoss";
  const auto& c = o.cutoffs();
  EMBER_CHECK_VALUE(o.in_features() > 0 && o.n_classes() > 1, name,
                    ": in_features must be positive and n_classes above 1, got ", o.in_features(), " and ",
                    o.n_classes());
  EMBER_CHECK_VALUE(!c.empty(), name, ": cutoffs must not be empty");
  for (size_t i = 0; i < c.size(); ++i)
    EMBER_CHECK_VALUE(c[i] > 0 && c[i] < o.n_classes() && (i == 0 || c[i] > c[i - 1]), name,
                      ": cutoffs must be increasing integers in (0, n_classes = ", o.n_classes(), "), got ",
                      IntArrayRef(c));
  cutoffs = c;
  cutoffs.push_back(o.n_classes());
  shortlist_size = cutoffs[0];
  n_clusters = static_cast<int64_t>(cutoffs.size()) - 1;
  head_size = shortlist_size + n_clusters;
  head =
      register_module("head", std::make_shared<Linear>(LinearOptions(o.in_features(), head_size).bias(o.head_bias())));
  tail = register_module("tail", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < n_clusters; ++i) {
    const auto hsz = static_cast<int64_t>(
        std::floor(static_cast<double>(o.in_features()) / std::pow(o.div_value(), static_cast<double>(i + 1))));
    EMBER_CHECK_VALUE(hsz > 0, name, ": div_value ", o.div_value(), " leaves cluster ", i, " no hidden units");
    const int64_t osz = cutoffs[static_cast<size_t>(i + 1)] - cutoffs[static_cast<size_t>(i)];
    auto seq = std::make_shared<Sequential>();
    seq->push_back(std::make_shared<Linear>(LinearOptions(o.in_features(), hsz).bias(false)));
    seq->push_back(std::make_shared<Linear>(LinearOptions(hsz, osz).bias(false)));
    tail->push_back(seq);
  }
}

void AdaptiveLogSoftmaxWithLoss::reset_parameters() {
  head->reset_parameters();
  for (const auto& seq : tail->children())
    for (const auto& l : seq->children()) std::static_pointer_cast<Linear>(l)->reset_parameters();
}

ASMoutput AdaptiveLogSoftmaxWithLoss::forward(const Tensor& input, const Tensor& target) {
  const char* name = "AdaptiveLogSoftmaxWithLoss";
  EMBER_CHECK_SHAPE(input.dim() == 2 && input.size(1) == options.in_features() && target.dim() == 1 &&
                        target.size(0) == input.size(0),
                    name, ": expected input [N, ", options.in_features(), "] and target [N], got shapes ",
                    input.sizes(), " and ", target.sizes());
  const int64_t N = input.size(0);
  const std::vector<int64_t> t = target.to_vector<int64_t>();
  std::vector<int64_t> gather(static_cast<size_t>(N));
  Tensor output = zeros({N}, input.options());
  const auto dev = input.device();
  for (int64_t i = 0; i <= n_clusters; ++i) {
    const int64_t lo = i == 0 ? 0 : cutoffs[static_cast<size_t>(i - 1)], hi = cutoffs[static_cast<size_t>(i)];
    std::vector<int64_t> rows, rel;
    for (int64_t r = 0; r < N; ++r) {
      EMBER_CHECK_INDEX(t[static_cast<size_t>(r)] >= 0 && t[static_cast<size_t>(r)] < options.n_classes(), name,
                        ": target ", t[static_cast<size_t>(r)], " is out of range for ", options.n_classes(),
                        " classes");
      if (t[static_cast<size_t>(r)] < lo || t[static_cast<size_t>(r)] >= hi) continue;
      rows.push_back(r);
      rel.push_back(t[static_cast<size_t>(r)] - lo);
      gather[static_cast<size_t>(r)] = i == 0 ? t[static_cast<size_t>(r)] : shortlist_size + i - 1;
    }
    if (i == 0 || rows.empty()) continue;
    Tensor rows_t = tensor(rows).to(dev);
    Tensor cluster = tail->children()[static_cast<size_t>(i - 1)]->forward(input.index_select(0, rows_t));
    Tensor local = log_softmax(cluster, 1).gather(1, tensor(rel).to(dev).unsqueeze(1)).squeeze(1);
    output = output.index_add(0, rows_t, local);
  }
  Tensor head_lp = log_softmax(head->forward(input), 1);
  output = output + head_lp.gather(1, tensor(gather).to(dev).unsqueeze(1)).squeeze(1);
  return ASMoutput(output, (-output).mean().item<double>());
}

Tensor AdaptiveLogSoftmaxWithLoss::_get_full_log_prob(const Tensor& input, const Tensor& head_output) {
  Tensor head_lp = log_softmax(head_output, 1);
  std::vector<Tensor> parts{head_lp.narrow(1, 0, shortlist_size)};
  for (int64_t i = 0; i < n_clusters; ++i) {
    Tensor cluster = log_softmax(tail->children()[static_cast<size_t>(i)]->forward(input), 1);
    parts.push_back(cluster + head_lp.narrow(1, shortlist_size + i, 1));
  }
  return cat(parts, 1);
}
Tensor AdaptiveLogSoftmaxWithLoss::log_prob(const Tensor& input) {
  EMBER_CHECK_SHAPE(input.dim() == 2 && input.size(1) == options.in_features(),
                    "AdaptiveLogSoftmaxWithLoss: expected input [N, ", options.in_features(), "], got shape ",
                    input.sizes());
  return _get_full_log_prob(input, head->forward(input));
}
Tensor AdaptiveLogSoftmaxWithLoss::predict(const Tensor& input) { return argmax(log_prob(input), 1); }
std::string AdaptiveLogSoftmaxWithLoss::extra_repr() const {
  return "in_features=" + std::to_string(options.in_features()) + ", n_classes=" + std::to_string(options.n_classes()) +
         ", cutoffs=" + detail::repr_ints(options.cutoffs());
}

}  // namespace nn
}  // namespace ember
