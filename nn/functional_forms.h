// libtorch's functional forms with FuncOptions for ember's layers and losses
// (F::conv2d(x, w, F::Conv2dFuncOptions().stride(2)), F::max_pool2d(x, F::MaxPool2dFuncOptions(3)),
// F::mse_loss(x, t, F::MSELossFuncOptions(torch::kSum)), ...), the losses libtorch has beyond
// ember's kernels as compositions of ember's ops (KL divergence, Huber, margin and embedding
// losses, Poisson NLL), distances, normalize, one_hot, pad and pixel shuffle, with the modules
// of each. Reductions are ember's (Reduction::None / Mean / Sum; torch::kNone / kMean / kSum).
#pragma once

#include <string>

#include "ember/nn/layers.h"
#include "ember/nn/modules.h"
#include "ember/nn/options.h"
#include "ember/ops/ops.h"

namespace ember {
namespace nn {

// ---------------------------------------------------------------- losses' options
struct HuberLossOptions {
  HuberLossOptions(int64_t reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  EMBER_ARG(int64_t, reduction);
  EMBER_ARG(double, delta) = 1.0;
};
// reduction: Reduction::None / Mean / Sum, or kBatchMean (the sum over the batch's size, the
// KL divergence's true mean).
constexpr int64_t kBatchMean = 3;
struct KLDivLossOptions {
  KLDivLossOptions(int64_t reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  EMBER_ARG(int64_t, reduction);
  EMBER_ARG(bool, log_target) = false;
};
using SoftMarginLossOptions = LossOptions;
struct MarginRankingLossOptions {
  EMBER_ARG(double, margin) = 0.0;
  EMBER_ARG(int64_t, reduction) = Reduction::Mean;
};
struct HingeEmbeddingLossOptions {
  EMBER_ARG(double, margin) = 1.0;
  EMBER_ARG(int64_t, reduction) = Reduction::Mean;
};
using CosineEmbeddingLossOptions = MarginRankingLossOptions;
struct PoissonNLLLossOptions {
  EMBER_ARG(bool, log_input) = true;
  EMBER_ARG(bool, full) = false;
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(int64_t, reduction) = Reduction::Mean;
};
struct TripletMarginLossOptions {
  EMBER_ARG(double, margin) = 1.0;
  EMBER_ARG(double, p) = 2.0;
  EMBER_ARG(double, eps) = 1e-6;
  EMBER_ARG(bool, swap) = false;
  EMBER_ARG(int64_t, reduction) = Reduction::Mean;
};
struct MultiLabelSoftMarginLossOptions {
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(int64_t, reduction) = Reduction::Mean;
};

// ---------------------------------------------------------------- other options
struct CosineSimilarityOptions {
  EMBER_ARG(int64_t, dim) = 1;
  EMBER_ARG(double, eps) = 1e-8;
};
struct PairwiseDistanceOptions {
  EMBER_ARG(double, p) = 2.0;
  EMBER_ARG(double, eps) = 1e-6;
  EMBER_ARG(bool, keepdim) = false;
};
struct FlattenOptions {
  EMBER_ARG(int64_t, start_dim) = 1;
  EMBER_ARG(int64_t, end_dim) = -1;
};
struct UnflattenOptions {
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  EMBER_ARG(int64_t, dim);
  EMBER_ARG(std::vector<int64_t>, sizes);
};
struct PixelShuffleOptions {
  PixelShuffleOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}  // NOLINT
  EMBER_ARG(int64_t, upscale_factor);
};
struct PixelUnshuffleOptions {
  PixelUnshuffleOptions(int64_t downscale_factor) : downscale_factor_(downscale_factor) {}  // NOLINT
  EMBER_ARG(int64_t, downscale_factor);
};

namespace detail {
// A loss's per-element values reduced: Reduction::None, Mean or Sum (anything else: ValueError).
Tensor reduce_loss(const char* op, const Tensor& loss, int64_t reduction);
}  // namespace detail

namespace functional {
// ---------------------------------------------------------------- conv and pooling
template <size_t D>
struct ConvFuncOptions {
  EMBER_ARG(Tensor, bias) = {};
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(int64_t, groups) = 1;
};
using Conv1dFuncOptions = ConvFuncOptions<1>;
using Conv2dFuncOptions = ConvFuncOptions<2>;
template <size_t D>
struct ConvTransposeFuncOptions {
  EMBER_ARG(Tensor, bias) = {};
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG(ExpandingArray<D>, output_padding) = 0;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
};
using Conv3dFuncOptions = ConvFuncOptions<3>;
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<3>;
Tensor conv1d(const Tensor& x, const Tensor& weight, const Conv1dFuncOptions& options = {});
Tensor conv2d(const Tensor& x, const Tensor& weight, const Conv2dFuncOptions& options = {});
Tensor conv_transpose1d(const Tensor& x, const Tensor& weight, const ConvTranspose1dFuncOptions& options = {});
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const ConvTranspose2dFuncOptions& options = {});
// 3-D convolutions ([N, C, D, H, W] or unbatched): the 2-D ops summed over the depth taps.
Tensor conv3d(const Tensor& x, const Tensor& weight, const Conv3dFuncOptions& options = {});
Tensor conv_transpose3d(const Tensor& x, const Tensor& weight, const ConvTranspose3dFuncOptions& options = {});

using MaxPool2dFuncOptions = MaxPool2dOptions;
using AvgPool2dFuncOptions = AvgPool2dOptions;
struct MaxPool1dFuncOptions {
  MaxPool1dFuncOptions(ExpandingArray<1> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  EMBER_ARG(ExpandingArray<1>, kernel_size);
  EMBER_ARG(ExpandingArray<1>, stride);
  EMBER_ARG(ExpandingArray<1>, padding) = 0;
  EMBER_ARG(ExpandingArray<1>, dilation) = 1;
  EMBER_ARG(bool, ceil_mode) = false;
};
struct AvgPool1dFuncOptions {
  AvgPool1dFuncOptions(ExpandingArray<1> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  EMBER_ARG(ExpandingArray<1>, kernel_size);
  EMBER_ARG(ExpandingArray<1>, stride);
  EMBER_ARG(ExpandingArray<1>, padding) = 0;
  EMBER_ARG(bool, ceil_mode) = false;
  EMBER_ARG(bool, count_include_pad) = true;
};
template <size_t D>
struct AdaptiveAvgPoolFuncOptions {
  AdaptiveAvgPoolFuncOptions(ExpandingArray<D> output_size) : output_size_(output_size) {}  // NOLINT
  EMBER_ARG(ExpandingArray<D>, output_size);
};
using AdaptiveAvgPool1dFuncOptions = AdaptiveAvgPoolFuncOptions<1>;
using AdaptiveAvgPool2dFuncOptions = AdaptiveAvgPoolFuncOptions<2>;
template <size_t D>
struct LPPoolFuncOptions {
  LPPoolFuncOptions(double norm_type, ExpandingArray<D> kernel_size)
      : norm_type_(norm_type), kernel_size_(kernel_size), stride_(kernel_size) {}
  EMBER_ARG(double, norm_type);
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride);
  EMBER_ARG(bool, ceil_mode) = false;
};
using LPPool1dFuncOptions = LPPoolFuncOptions<1>;
using LPPool2dFuncOptions = LPPoolFuncOptions<2>;
Tensor max_pool1d(const Tensor& x, const MaxPool1dFuncOptions& options);
Tensor max_pool2d(const Tensor& x, const MaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const MaxPool2dFuncOptions& options);
Tensor avg_pool1d(const Tensor& x, const AvgPool1dFuncOptions& options);
Tensor avg_pool2d(const Tensor& x, const AvgPool2dFuncOptions& options);
Tensor adaptive_avg_pool1d(const Tensor& x, const AdaptiveAvgPool1dFuncOptions& options);
Tensor adaptive_avg_pool2d(const Tensor& x, const AdaptiveAvgPool2dFuncOptions& options);
Tensor lp_pool1d(const Tensor& x, const LPPool1dFuncOptions& options);
Tensor lp_pool2d(const Tensor& x, const LPPool2dFuncOptions& options);

// ---------------------------------------------------------------- losses
using MSELossFuncOptions = LossOptions;
using L1LossFuncOptions = LossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using KLDivFuncOptions = KLDivLossOptions;
using SoftMarginLossFuncOptions = SoftMarginLossOptions;
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
using HingeEmbeddingLossFuncOptions = HingeEmbeddingLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using PoissonNLLLossFuncOptions = PoissonNLLLossOptions;
using TripletMarginLossFuncOptions = TripletMarginLossOptions;
using MultiLabelSoftMarginLossFuncOptions = MultiLabelSoftMarginLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options);
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options);
// beta: the options' unless given here. (libtorch 1.13 takes only this argument and ignores
// options.beta(), a bug later releases fixed.)
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options,
                      std::optional<double> beta = std::nullopt);
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options = {});
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options);
// Log-softmax over dim 1 and nll_loss, with the options' weight, ignore_index and reduction.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options);
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const BinaryCrossEntropyFuncOptions& options);
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options);
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options = {});
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, const SoftMarginLossFuncOptions& options = {});
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options = {});
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, const HingeEmbeddingLossFuncOptions& options = {});
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options = {});
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, const PoissonNLLLossFuncOptions& options = {});
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& options = {});
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultiLabelSoftMarginLossFuncOptions& options = {});

// ---------------------------------------------------------------- distances and the rest
using CosineSimilarityFuncOptions = CosineSimilarityOptions;
using PairwiseDistanceFuncOptions = PairwiseDistanceOptions;
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& options = {});
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& options = {});
struct NormalizeFuncOptions {
  EMBER_ARG(double, p) = 2.0;
  EMBER_ARG(int64_t, dim) = 1;
  EMBER_ARG(double, eps) = 1e-12;
};
// x / max(||x||_p over dim, eps)
Tensor normalize(const Tensor& x, const NormalizeFuncOptions& options = {});
// int64 indices -> [..., num_classes] int64 one-hot rows (num_classes -1: max index + 1).
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);
using PixelShuffleFuncOptions = PixelShuffleOptions;
using PixelUnshuffleFuncOptions = PixelUnshuffleOptions;
Tensor pixel_shuffle(const Tensor& x, const PixelShuffleFuncOptions& options);
Tensor pixel_unshuffle(const Tensor& x, const PixelUnshuffleFuncOptions& options);
}  // namespace functional

// ---------------------------------------------------------------- modules
#define EMBER_LOSS2_MODULE(Name, Options)                                   \
  class Name : public Module {                                             \
   public:                                                                 \
    explicit Name(const Options& options_ = {}) : options(options_) {}     \
    using Module::forward;                                                 \
    Tensor forward(const Tensor& input, const Tensor& target);             \
    Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); } \
    Options options;                                                       \
  };
#define EMBER_LOSS3_MODULE(Name, Options)                                   \
  class Name : public Module {                                             \
   public:                                                                 \
    explicit Name(const Options& options_ = {}) : options(options_) {}     \
    using Module::forward;                                                 \
    Tensor forward(const Tensor& a, const Tensor& b, const Tensor& c);     \
    Tensor operator()(const Tensor& a, const Tensor& b, const Tensor& c) { return forward(a, b, c); } \
    Options options;                                                       \
  };
EMBER_LOSS2_MODULE(HuberLoss, HuberLossOptions)
EMBER_LOSS2_MODULE(KLDivLoss, KLDivLossOptions)
EMBER_LOSS2_MODULE(SoftMarginLoss, SoftMarginLossOptions)
EMBER_LOSS2_MODULE(HingeEmbeddingLoss, HingeEmbeddingLossOptions)
EMBER_LOSS2_MODULE(PoissonNLLLoss, PoissonNLLLossOptions)
EMBER_LOSS2_MODULE(MultiLabelSoftMarginLoss, MultiLabelSoftMarginLossOptions)
EMBER_LOSS2_MODULE(CosineSimilarity, CosineSimilarityOptions)
EMBER_LOSS2_MODULE(PairwiseDistance, PairwiseDistanceOptions)
EMBER_LOSS3_MODULE(MarginRankingLoss, MarginRankingLossOptions)
EMBER_LOSS3_MODULE(CosineEmbeddingLoss, CosineEmbeddingLossOptions)
EMBER_LOSS3_MODULE(TripletMarginLoss, TripletMarginLossOptions)
#undef EMBER_LOSS2_MODULE
#undef EMBER_LOSS3_MODULE

EMBER_OPTIONS_MODULE(Flatten, FlattenOptions, = {})
EMBER_OPTIONS_MODULE(Unflatten, UnflattenOptions)
EMBER_OPTIONS_MODULE(PixelShuffle, PixelShuffleOptions)
EMBER_OPTIONS_MODULE(PixelUnshuffle, PixelUnshuffleOptions)
using MaxPool1dOptions = functional::MaxPool1dFuncOptions;
using AvgPool1dOptions = functional::AvgPool1dFuncOptions;
using AdaptiveAvgPool1dOptions = functional::AdaptiveAvgPool1dFuncOptions;
using AdaptiveAvgPool2dOptions = functional::AdaptiveAvgPool2dFuncOptions;
using LPPool1dOptions = functional::LPPool1dFuncOptions;
using LPPool2dOptions = functional::LPPool2dFuncOptions;
EMBER_OPTIONS_MODULE(MaxPool1d, MaxPool1dOptions)
EMBER_OPTIONS_MODULE(AvgPool1d, AvgPool1dOptions)
EMBER_OPTIONS_MODULE(AdaptiveAvgPool1d, AdaptiveAvgPool1dOptions)
EMBER_OPTIONS_MODULE(LPPool1d, LPPool1dOptions)
EMBER_OPTIONS_MODULE(LPPool2d, LPPool2dOptions)

}  // namespace nn
}  // namespace ember
