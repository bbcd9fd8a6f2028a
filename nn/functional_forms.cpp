#include "ember/nn/functional_forms.h"

#include <cmath>

#include "ember/nn/functional.h"
#include "ember/nn/internal/host_index.h"
#include "ember/nn/internal/repr.h"

namespace ember {
namespace nn {
using detail::repr_number;
namespace detail {
Tensor reduce_loss(const char* op, const Tensor& loss, int64_t reduction) {
  switch (reduction) {
    case Reduction::None:
      return loss;
    case Reduction::Mean:
      return loss.mean();
    case Reduction::Sum:
      return loss.sum();
    default:
      break;
  }
  throw ValueError(std::string(op) +
                   ": reduction must be Reduction::None, Mean or Sum (torch::kNone, kMean, kSum), "
                   "got " +
                   std::to_string(reduction));
}
}  // namespace detail
namespace functional {
using detail::reduce_loss;
namespace {
using detail::opt;
// A 1-D op run as its 2-D form over a dim of size 1 ([N, C, L] -> [N, C, 1, L]).
Tensor as_2d(const Tensor& x) { return x.unsqueeze(-2); }
std::vector<int64_t> pair(int64_t h, int64_t w) { return {h, w}; }
}  // namespace

Tensor conv1d(const Tensor& x, const Tensor& w, const Conv1dFuncOptions& o) {
  return ember::conv1d(x, w, opt(o.bias()), o.stride(), o.padding(), o.dilation(), o.groups());
}
Tensor conv2d(const Tensor& x, const Tensor& w, const Conv2dFuncOptions& o) {
  return ember::conv2d(x, w, opt(o.bias()), o.stride(), o.padding(), o.dilation(), o.groups());
}
Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const ConvTranspose2dFuncOptions& o) {
  return ember::conv_transpose2d(x, w, opt(o.bias()), o.stride(), o.padding(), o.output_padding(), o.groups(),
                                 o.dilation());
}
Tensor conv_transpose1d(const Tensor& x, const Tensor& w, const ConvTranspose1dFuncOptions& o) {
  EMBER_CHECK_SHAPE(w.dim() == 3, "conv_transpose1d: weight must be 3-D [in, out / groups, k], got shape ", w.sizes());
  return ember::conv_transpose2d(as_2d(x), w.unsqueeze(2), opt(o.bias()), pair(1, o.stride()[0]),
                                 pair(0, o.padding()[0]), pair(0, o.output_padding()[0]), o.groups(),
                                 pair(1, o.dilation()[0]))
      .squeeze(-2);
}

Tensor max_pool1d(const Tensor& x, const MaxPool1dFuncOptions& o) {
  return ember::max_pool2d(as_2d(x), pair(1, o.kernel_size()[0]), pair(1, o.stride()[0]), pair(0, o.padding()[0]),
                           pair(1, o.dilation()[0]), o.ceil_mode())
      .squeeze(-2);
}
Tensor max_pool2d(const Tensor& x, const MaxPool2dFuncOptions& o) {
  return ember::max_pool2d(x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const MaxPool2dFuncOptions& o) {
  return ember::max_pool2d_with_indices(x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
Tensor avg_pool1d(const Tensor& x, const AvgPool1dFuncOptions& o) {
  return ember::avg_pool2d(as_2d(x), pair(1, o.kernel_size()[0]), pair(1, o.stride()[0]), pair(0, o.padding()[0]),
                           o.ceil_mode(), o.count_include_pad())
      .squeeze(-2);
}
Tensor avg_pool2d(const Tensor& x, const AvgPool2dFuncOptions& o) {
  return ember::avg_pool2d(x, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad());
}
Tensor adaptive_avg_pool1d(const Tensor& x, const AdaptiveAvgPool1dFuncOptions& o) {
  return ember::adaptive_avg_pool2d(as_2d(x), pair(1, o.output_size()[0])).squeeze(-2);
}
Tensor adaptive_avg_pool2d(const Tensor& x, const AdaptiveAvgPool2dFuncOptions& o) {
  return ember::adaptive_avg_pool2d(x, o.output_size());
}
namespace {
// (avg_pool(x^p) * window)^(1/p), negative averages (odd p) clamped to 0, as PyTorch.
Tensor lp_finish(const Tensor& avg, double p, int64_t window) {
  return (avg.sign() * avg.abs().relu() * static_cast<double>(window)).pow(1.0 / p);
}
}  // namespace
Tensor lp_pool1d(const Tensor& x, const LPPool1dFuncOptions& o) {
  Tensor avg = ember::avg_pool2d(as_2d(x.pow(o.norm_type())), pair(1, o.kernel_size()[0]), pair(1, o.stride()[0]), {0},
                                 o.ceil_mode(), true)
                   .squeeze(-2);
  return lp_finish(avg, o.norm_type(), o.kernel_size()[0]);
}
Tensor lp_pool2d(const Tensor& x, const LPPool2dFuncOptions& o) {
  Tensor avg = ember::avg_pool2d(x.pow(o.norm_type()), o.kernel_size(), o.stride(), {0}, o.ceil_mode(), true);
  return lp_finish(avg, o.norm_type(), o.kernel_size()[0] * o.kernel_size()[1]);
}

// ---------------------------------------------------------------- losses
Tensor mse_loss(const Tensor& in, const Tensor& t, const MSELossFuncOptions& o) {
  return ember::mse_loss(in, t, o.reduction());
}
Tensor l1_loss(const Tensor& in, const Tensor& t, const L1LossFuncOptions& o) {
  return ember::l1_loss(in, t, o.reduction());
}
Tensor smooth_l1_loss(const Tensor& in, const Tensor& t, const SmoothL1LossFuncOptions& o, std::optional<double> beta) {
  return ember::smooth_l1_loss(in, t, o.reduction(), beta.value_or(o.beta()));
}
Tensor huber_loss(const Tensor& in, const Tensor& t, const HuberLossFuncOptions& o) {
  EMBER_CHECK_VALUE(o.delta() > 0, "huber_loss: delta must be positive, got ", o.delta());
  Tensor d = in - t, a = d.abs();
  return reduce_loss("huber_loss", where(a < o.delta(), d * d * 0.5, (a - 0.5 * o.delta()) * o.delta()), o.reduction());
}
Tensor nll_loss(const Tensor& in, const Tensor& t, const NLLLossFuncOptions& o) {
  return ember::nll_loss(in, t, opt(o.weight()), o.reduction(), o.ignore_index());
}
Tensor cross_entropy(const Tensor& in, const Tensor& t, const CrossEntropyFuncOptions& o) {
  if (!o.weight().defined() && o.reduction() == Reduction::Mean && in.dim() == 2)
    return ember::cross_entropy(in, t, o.ignore_index());
  return ember::nll_loss(ember::log_softmax(in, 1), t, opt(o.weight()), o.reduction(), o.ignore_index());
}
Tensor binary_cross_entropy(const Tensor& in, const Tensor& t, const BinaryCrossEntropyFuncOptions& o) {
  return ember::binary_cross_entropy(in, t, opt(o.weight()), o.reduction());
}
Tensor binary_cross_entropy_with_logits(const Tensor& in, const Tensor& t,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& o) {
  return ember::binary_cross_entropy_with_logits(in, t, opt(o.weight()), opt(o.pos_weight()), o.reduction());
}
Tensor kl_div(const Tensor& in, const Tensor& t, const KLDivFuncOptions& o) {
  // Pointwise t (log t - input), 0 where t is 0 (xlogy); with log_target, exp(t) (t - input).
  Tensor loss = o.log_target() ? t.exp() * (t - in) : where(t > 0.0, t * (t.log() - in), zeros({}, in.options()));
  if (o.reduction() == kBatchMean) {
    EMBER_CHECK_SHAPE(in.dim() > 0, "kl_div: batchmean needs a batch dim, got a 0-d input");
    return loss.sum() / static_cast<double>(in.size(0));
  }
  return reduce_loss("kl_div", loss, o.reduction());
}
Tensor soft_margin_loss(const Tensor& in, const Tensor& t, const SoftMarginLossFuncOptions& o) {
  return reduce_loss("soft_margin_loss", ember::softplus(-t * in, 1, 20), o.reduction());
}
Tensor margin_ranking_loss(const Tensor& a, const Tensor& b, const Tensor& t, const MarginRankingLossFuncOptions& o) {
  return reduce_loss("margin_ranking_loss", (-t * (a - b) + o.margin()).clamp_min(0.0), o.reduction());
}
Tensor hinge_embedding_loss(const Tensor& in, const Tensor& t, const HingeEmbeddingLossFuncOptions& o) {
  Tensor zero = zeros({}, in.options());
  Tensor loss = where(t != 1.0, (o.margin() - in).clamp_min(0.0), zero) + where(t != -1.0, in, zero);
  return reduce_loss("hinge_embedding_loss", loss, o.reduction());
}
Tensor cosine_embedding_loss(const Tensor& a, const Tensor& b, const Tensor& t,
                             const CosineEmbeddingLossFuncOptions& o) {
  EMBER_CHECK_SHAPE(a.dim() == 1 || a.dim() == 2, "cosine_embedding_loss: inputs must be 1-D or 2-D, got shape ",
                    a.sizes());
  const int64_t d = a.dim() - 1;
  const double eps = 1e-12;  // PyTorch's EPSILON
  Tensor cos = (a * b).sum({d}) / ((a * a).sum({d}) + eps).mul((b * b).sum({d}) + eps).sqrt();
  Tensor zero = zeros({}, cos.options());
  Tensor loss = where(t == 1.0, 1.0 - cos, zero) + where(t == -1.0, (cos - o.margin()).clamp_min(0.0), zero);
  return reduce_loss("cosine_embedding_loss", loss, o.reduction());
}
Tensor poisson_nll_loss(const Tensor& in, const Tensor& t, const PoissonNLLLossFuncOptions& o) {
  Tensor loss = o.log_input() ? in.exp() - t * in : in - t * (in + o.eps()).log();
  if (o.full()) {
    // Stirling's approximation of log(t!) where t > 1.
    Tensor s = t * t.log() - t + (t * (2 * M_PI)).log() * 0.5;
    loss = loss + where(t > 1.0, s, zeros({}, loss.options()));
  }
  return reduce_loss("poisson_nll_loss", loss, o.reduction());
}
Tensor triplet_margin_loss(const Tensor& anc, const Tensor& pos, const Tensor& neg,
                           const TripletMarginLossFuncOptions& o) {
  auto dist = PairwiseDistanceFuncOptions().p(o.p()).eps(o.eps());
  Tensor dp = pairwise_distance(anc, pos, dist), dn = pairwise_distance(anc, neg, dist);
  if (o.swap()) dn = ember::minimum(dn, pairwise_distance(pos, neg, dist));
  return reduce_loss("triplet_margin_loss", (dp - dn + o.margin()).clamp_min(0.0), o.reduction());
}
Tensor multilabel_soft_margin_loss(const Tensor& in, const Tensor& t, const MultiLabelSoftMarginLossFuncOptions& o) {
  EMBER_CHECK_SHAPE(in.dim() >= 1, "multilabel_soft_margin_loss: input must have a class dim");
  Tensor ls = -ember::softplus(-in, 1, 20), lsn = -ember::softplus(in, 1, 20);  // log sigmoid(x), log sigmoid(-x)
  Tensor loss = -(t * ls + (1.0 - t) * lsn);
  if (o.weight().defined()) loss = loss * o.weight();
  loss = loss.mean({in.dim() - 1});
  return reduce_loss("multilabel_soft_margin_loss", loss, o.reduction());
}

// ---------------------------------------------------------------- distances and the rest
Tensor cosine_similarity(const Tensor& a, const Tensor& b, const CosineSimilarityFuncOptions& o) {
  Tensor na = ember::norm(a, 2, {o.dim()}), nb = ember::norm(b, 2, {o.dim()});
  return (a * b).sum({o.dim()}) / (na * nb).clamp_min(o.eps());
}
Tensor pairwise_distance(const Tensor& a, const Tensor& b, const PairwiseDistanceFuncOptions& o) {
  const int64_t d = std::max<int64_t>(a.dim(), b.dim()) - 1;
  return ember::norm(a - b + o.eps(), o.p(), {std::max<int64_t>(d, 0)}, o.keepdim());
}
Tensor normalize(const Tensor& x, const NormalizeFuncOptions& o) {
  return x / ember::norm(x, o.p(), {o.dim()}, true).clamp_min(o.eps());
}
Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  EMBER_CHECK_DTYPE(indices.dtype() == DType::Int64, "one_hot: indices must be int64, got ", indices.dtype());
  if (num_classes < 0) num_classes = indices.numel() ? indices.max().item<int64_t>() + 1 : 0;
  if (indices.numel()) {
    const int64_t lo = indices.min().item<int64_t>(), hi = indices.max().item<int64_t>();
    EMBER_CHECK_T(IndexError, lo >= 0 && hi < num_classes, "one_hot: class values must be in [0, ", num_classes,
                  "), got ", lo < 0 ? lo : hi);
  }
  Tensor classes = arange(num_classes, TensorOptions(kInt64).device(indices.device()));
  return (indices.unsqueeze(-1) == classes).to(kInt64);
}
namespace {
// x [*, C, H, W] viewed as [*, view...], permuted (lead dims kept), reshaped to [*, out...].
Tensor regroup(const Tensor& x, std::initializer_list<int64_t> view, std::initializer_list<int64_t> perm,
               std::initializer_list<int64_t> out) {
  std::vector<int64_t> lead(x.sizes().begin(), x.sizes().end() - 3);
  const int64_t n = static_cast<int64_t>(lead.size());
  std::vector<int64_t> v = lead, p, o = lead;
  v.insert(v.end(), view);
  for (int64_t i = 0; i < n; ++i) p.push_back(i);
  for (int64_t k : perm) p.push_back(n + k);
  o.insert(o.end(), out);
  return x.reshape(v).permute(p).reshape(o);
}
}  // namespace
Tensor pixel_shuffle(const Tensor& x, const PixelShuffleFuncOptions& o) {
  const int64_t r = o.upscale_factor();
  EMBER_CHECK_SHAPE(x.dim() >= 3 && r > 0 && x.size(-3) % (r * r) == 0,
                    "pixel_shuffle: expects [*, C * r^2, H, W] "
                    "with r = ",
                    r, ", got shape ", x.sizes());
  const int64_t c = x.size(-3) / (r * r), h = x.size(-2), w = x.size(-1);
  return regroup(x, {c, r, r, h, w}, {0, 3, 1, 4, 2}, {c, h * r, w * r});
}
Tensor pixel_unshuffle(const Tensor& x, const PixelUnshuffleFuncOptions& o) {
  const int64_t r = o.downscale_factor();
  EMBER_CHECK_SHAPE(x.dim() >= 3 && r > 0 && x.size(-2) % r == 0 && x.size(-1) % r == 0,
                    "pixel_unshuffle: expects "
                    "[*, C, H, W] with H and W divisible by ",
                    r, ", got shape ", x.sizes());
  const int64_t c = x.size(-3), h = x.size(-2) / r, w = x.size(-1) / r;
  return regroup(x, {c, h, r, w, r}, {0, 2, 4, 1, 3}, {c * r * r, h, w});
}
}  // namespace functional

namespace F = functional;
Tensor HuberLoss::forward(const Tensor& a, const Tensor& b) { return F::huber_loss(a, b, options); }
Tensor KLDivLoss::forward(const Tensor& a, const Tensor& b) { return F::kl_div(a, b, options); }
Tensor SoftMarginLoss::forward(const Tensor& a, const Tensor& b) { return F::soft_margin_loss(a, b, options); }
Tensor HingeEmbeddingLoss::forward(const Tensor& a, const Tensor& b) { return F::hinge_embedding_loss(a, b, options); }
Tensor PoissonNLLLoss::forward(const Tensor& a, const Tensor& b) { return F::poisson_nll_loss(a, b, options); }
Tensor MultiLabelSoftMarginLoss::forward(const Tensor& a, const Tensor& b) {
  return F::multilabel_soft_margin_loss(a, b, options);
}
Tensor CosineSimilarity::forward(const Tensor& a, const Tensor& b) { return F::cosine_similarity(a, b, options); }
Tensor PairwiseDistance::forward(const Tensor& a, const Tensor& b) { return F::pairwise_distance(a, b, options); }
Tensor MarginRankingLoss::forward(const Tensor& a, const Tensor& b, const Tensor& c) {
  return F::margin_ranking_loss(a, b, c, options);
}
Tensor CosineEmbeddingLoss::forward(const Tensor& a, const Tensor& b, const Tensor& c) {
  return F::cosine_embedding_loss(a, b, c, options);
}
Tensor TripletMarginLoss::forward(const Tensor& a, const Tensor& b, const Tensor& c) {
  return F::triplet_margin_loss(a, b, c, options);
}
namespace {
std::string ints(IntArrayRef v) { return detail::repr_ints(v); }
}  // namespace
#define EMBER_DEFINE_FORM_MODULE(Name, body, repr)       \
  Name::Name(const Name##Options& o) : options(o) {}     \
  Tensor Name::forward(const Tensor& x) { return body; } \
  std::string Name::extra_repr() const { return repr; }
EMBER_DEFINE_FORM_MODULE(Flatten, x.flatten(options.start_dim(), options.end_dim()),
                         "start_dim=" + std::to_string(options.start_dim()) +
                             ", end_dim=" + std::to_string(options.end_dim()))
EMBER_DEFINE_FORM_MODULE(Unflatten, x.unflatten(options.dim(), options.sizes()),
                         "dim=" + std::to_string(options.dim()) + ", unflattened_size=" + ints(options.sizes()))
EMBER_DEFINE_FORM_MODULE(PixelShuffle, F::pixel_shuffle(x, options),
                         "upscale_factor=" + std::to_string(options.upscale_factor()))
EMBER_DEFINE_FORM_MODULE(PixelUnshuffle, F::pixel_unshuffle(x, options),
                         "downscale_factor=" + std::to_string(options.downscale_factor()))
EMBER_DEFINE_FORM_MODULE(MaxPool1d, F::max_pool1d(x, options),
                         "kernel_size=" + ints(options.kernel_size()) + ", stride=" + ints(options.stride()))
EMBER_DEFINE_FORM_MODULE(AvgPool1d, F::avg_pool1d(x, options),
                         "kernel_size=" + ints(options.kernel_size()) + ", stride=" + ints(options.stride()))
EMBER_DEFINE_FORM_MODULE(AdaptiveAvgPool1d, F::adaptive_avg_pool1d(x, options),
                         "output_size=" + ints(options.output_size()))
EMBER_DEFINE_FORM_MODULE(LPPool1d, F::lp_pool1d(x, options),
                         "norm_type=" + repr_number(options.norm_type()) +
                             ", kernel_size=" + ints(options.kernel_size()))
EMBER_DEFINE_FORM_MODULE(LPPool2d, F::lp_pool2d(x, options),
                         "norm_type=" + repr_number(options.norm_type()) +
                             ", kernel_size=" + ints(options.kernel_size()))
#undef EMBER_DEFINE_FORM_MODULE

}  // namespace nn
}  // namespace ember
