// libtorch's embedding options and functional forms: Embedding's padding_idx (its row gets no
// gradient), max_norm (the rows looked up renormalized in place), scale_grad_by_freq (each row's
// gradient divided by its count in the batch), and EmbeddingBag's sums, means and maxima over bags
// given by offsets (or the rows of a 2-D input), with per-sample weights. Sparse gradients are
// not supported (ember has no sparse tensors): sparse(true) is refused by name.
#pragma once

#include <optional>

#include "ember/nn/module.h"
#include "ember/nn/options.h"
#include "ember/tensor/tensor.h"

namespace ember {
namespace nn {

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EMBER_ARG(int64_t, num_embeddings);
  EMBER_ARG(int64_t, embedding_dim);
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(bool, sparse) = false;
  EMBER_ARG(Tensor, _weight) = {};  // the initial weight, if given
};
struct EmbeddingFromPretrainedOptions {
  EMBER_ARG(bool, freeze) = true;
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(bool, sparse) = false;
};
// EmbeddingBag's reduction: torch::kSum, torch::kMean (the default) or torch::kMax.
class EmbeddingBagMode {
 public:
  EmbeddingBagMode(int64_t reduction) : v_(reduction == 2 ? 0 : reduction == 1 ? 1 : -1) {}  // NOLINT: kSum, kMean
  EmbeddingBagMode(Mode m) : v_(m == Mode::kMax ? 2 : -1) {}                                 // NOLINT: kMax
  bool is_sum() const { return v_ == 0; }
  bool is_mean() const { return v_ == 1; }
  bool is_max() const { return v_ == 2; }
  bool valid() const { return v_ >= 0; }
  const char* name() const { return v_ == 0 ? "sum" : v_ == 1 ? "mean" : v_ == 2 ? "max" : "invalid"; }

 private:
  int v_;
};
struct EmbeddingBagOptions {
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EMBER_ARG(int64_t, num_embeddings);
  EMBER_ARG(int64_t, embedding_dim);
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode(1);
  EMBER_ARG(bool, sparse) = false;
  EMBER_ARG(Tensor, _weight) = {};
  EMBER_ARG(bool, include_last_offset) = false;
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};
struct EmbeddingBagFromPretrainedOptions {
  EMBER_ARG(bool, freeze) = true;
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode(1);
  EMBER_ARG(bool, sparse) = false;
  EMBER_ARG(bool, include_last_offset) = false;
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

namespace functional {
struct EmbeddingFuncOptions {
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(bool, sparse) = false;
};
struct EmbeddingBagFuncOptions {
  EMBER_ARG(Tensor, offsets) = {};
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode(1);
  EMBER_ARG(bool, sparse) = false;
  EMBER_ARG(Tensor, per_sample_weights) = {};
  EMBER_ARG(bool, include_last_offset) = false;
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};
Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& options);
// [bags, dim]: input 1-D with offsets (bag b holds input[offsets[b] : offsets[b + 1]]) or 2-D
// [bags, n] without; empty bags give zeros; padding_idx entries are left out of every bag.
Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& options = {});
}  // namespace functional

// weight [num_embeddings, embedding_dim] from N(0, 1) (or options._weight); forward(input,
// offsets, per_sample_weights) is F::embedding_bag with the options.
class EmbeddingBag : public Module {
 public:
  explicit EmbeddingBag(const EmbeddingBagOptions& options);
  using Module::forward;
  Tensor forward(const Tensor& input, const Tensor& offsets = {}, const Tensor& per_sample_weights = {});
  Tensor forward(const Tensor& input) override { return forward(input, Tensor(), Tensor()); }
  std::string extra_repr() const override;
  void reset_parameters();
  EmbeddingBagOptions options;
  Tensor weight;
};

}  // namespace nn
}  // namespace ember
