#include "ember/nn/embedding.h"

#include <map>
#include <set>

#include "ember/autograd/grad_mode.h"
#include "ember/nn/init.h"
#include "ember/nn/internal/host_index.h"
#include "ember/nn/internal/repr.h"
#include "ember/ops/composite.h"
#include "ember/ops/ops.h"

namespace ember {
namespace nn {
namespace functional {
namespace {
std::optional<int64_t> normalized_padding(const char* op, std::optional<int64_t> p, int64_t num) {
  if (!p) return p;
  EMBER_CHECK_INDEX(*p >= -num && *p < num, op, ": padding_idx ", *p, " must be within num_embeddings ", num);
  return *p < 0 ? *p + num : *p;
}
// max_norm: the rows idx reads scaled in place (no gradient) to norm at most max_norm.
void renorm_rows(const Tensor& weight, const std::vector<int64_t>& idx, double max_norm, double p) {
  std::set<int64_t> uniq(idx.begin(), idx.end());
  if (uniq.empty()) return;
  NoGradGuard g;
  Tensor rows = tensor(std::vector<int64_t>(uniq.begin(), uniq.end())).to(weight.device());
  Tensor w = weight.index_select(0, rows);
  Tensor norms = w.norm(p, {1}, true);
  Tensor scale = where(norms > max_norm, max_norm / (norms + 1e-7), ones_like(norms));
  Tensor target = weight;
  target.index_copy_(0, rows, w * scale);
}
// The rows of weight at input, with padding_idx's rows giving no gradient and scale_grad_by_freq
// dividing each row's gradient by its count. The indices are read on the host (a sync) only for
// max_norm and scale_grad_by_freq; the embedding op checks their range.
Tensor lookup(const char* op, const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx,
              std::optional<double> max_norm, double norm_type, bool freq, bool sparse) {
  EMBER_CHECK_VALUE(!sparse, op, ": sparse gradients are not supported (ember has no sparse tensors)");
  EMBER_CHECK_SHAPE(weight.dim() == 2, op, ": weight must be 2-D [num_embeddings, dim], got shape ", weight.sizes());
  std::vector<int64_t> idx;
  if (max_norm || freq) {
    idx = input.to_vector<int64_t>();
    for (int64_t i : idx)
      EMBER_CHECK_INDEX(i >= 0 && i < weight.size(0), op, ": index ", i, " is out of range [0, ", weight.size(0), ")");
  }
  if (max_norm) renorm_rows(weight, idx, *max_norm, norm_type);
  Tensor out = ember::embedding(weight, input);
  if (!out.requires_grad()) return out;
  if (padding_idx) out = where((input == *padding_idx).unsqueeze(-1), out.detach(), out);
  if (freq) {
    std::map<int64_t, int64_t> count;
    for (int64_t i : idx) ++count[i];
    std::vector<double> s;
    for (int64_t i : idx) s.push_back(1.0 / static_cast<double>(count[i]));
    Tensor sc = tensor(s, input.sizes()).to(out.dtype()).to(out.device()).unsqueeze(-1);
    out = out.detach() + (out - out.detach()) * sc;  // the value unchanged, the gradient scaled
  }
  return out;
}
}  // namespace

Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& o) {
  const char* op = "nn::functional::embedding";
  EMBER_CHECK_DTYPE(input.dtype() == kInt64 || input.dtype() == kInt32, op, ": indices must be int64 or int32, got ",
                    input.dtype());
  const auto pad = normalized_padding(op, o.padding_idx(), weight.size(0));
  return lookup(op, input, weight, pad, o.max_norm(), o.norm_type(), o.scale_grad_by_freq(), o.sparse());
}

Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& o) {
  const char* op = "embedding_bag";
  EMBER_CHECK_VALUE(o.mode().valid(), op, ": mode must be torch::kSum, kMean or kMax");
  EMBER_CHECK_DTYPE(input.dtype() == kInt64 || input.dtype() == kInt32, op, ": indices must be int64 or int32, got ",
                    input.dtype());
  EMBER_CHECK_SHAPE(weight.dim() == 2, op, ": weight must be 2-D [num_embeddings, dim], got shape ", weight.sizes());
  const int64_t D = weight.size(1);
  std::vector<int64_t> starts;
  Tensor flat = input;
  if (input.dim() == 2) {
    EMBER_CHECK_VALUE(!o.offsets().defined(), op, ": offsets must be undefined for a 2-D input (each row is a bag)");
    for (int64_t b = 0; b < input.size(0); ++b) starts.push_back(b * input.size(1));
    flat = input.reshape({-1});
  } else {
    EMBER_CHECK_SHAPE(input.dim() == 1, op, ": input must be 1-D (with offsets) or 2-D, got shape ", input.sizes());
    EMBER_CHECK_VALUE(o.offsets().defined() && o.offsets().dim() == 1, op, ": a 1-D input needs 1-D offsets");
    starts = o.offsets().to_vector<int64_t>();
    if (o.include_last_offset()) {
      EMBER_CHECK_SHAPE(!starts.empty(), op, ": include_last_offset needs at least one offset");
      starts.pop_back();
    }
  }
  const int64_t L = flat.numel(), B = static_cast<int64_t>(starts.size());
  for (int64_t b = 0; b < B; ++b) {
    const int64_t s = starts[static_cast<size_t>(b)];
    EMBER_CHECK_VALUE(s >= 0 && s <= L && (b == 0 ? s == 0 : s >= starts[static_cast<size_t>(b - 1)]), op,
                      ": offsets must start at 0, not decrease and stay within the input's ", L,
                      " indices, got offset ", s, " for bag ", b);
  }
  const Tensor& psw = o.per_sample_weights();
  if (psw.defined()) {
    EMBER_CHECK_VALUE(o.mode().is_sum(), op, ": per_sample_weights are only for mode kSum, got ", o.mode().name());
    EMBER_CHECK_SHAPE(psw.sizes() == input.sizes(), op, ": per_sample_weights must have the input's shape ",
                      input.sizes(), ", got ", psw.sizes());
  }
  const auto pad = normalized_padding(op, o.padding_idx(), weight.size(0));
  const auto idx = flat.to_vector<int64_t>();
  // The entries kept (padding_idx's left out) and the bag of each.
  std::vector<int64_t> keep, bag_of, count(static_cast<size_t>(B), 0);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t end = b + 1 < B ? starts[static_cast<size_t>(b + 1)] : L;
    for (int64_t i = starts[static_cast<size_t>(b)]; i < end; ++i) {
      if (pad && idx[static_cast<size_t>(i)] == *pad) continue;
      keep.push_back(i);
      bag_of.push_back(b);
      ++count[static_cast<size_t>(b)];
    }
  }
  const auto dev = weight.device();
  Tensor kept = flat.index_select(0, detail::host_index(keep, weight));
  Tensor rows = lookup(op, kept, weight, std::nullopt, o.max_norm(), o.norm_type(), o.scale_grad_by_freq(), o.sparse());
  if (psw.defined()) rows = rows * psw.reshape({-1}).index_select(0, detail::host_index(keep, weight)).unsqueeze(1);
  if (o.mode().is_max()) {
    std::vector<Tensor> out;
    int64_t at = 0;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t n = count[static_cast<size_t>(b)];
      out.push_back(n ? std::get<0>(max(rows.narrow(0, at, n), 0)) : zeros({D}, weight.options()));
      at += n;
    }
    return B ? stack(out, 0) : zeros({0, D}, weight.options());
  }
  Tensor sums = zeros({B, D}, rows.options()).index_add(0, detail::host_index(bag_of, weight), rows);
  if (o.mode().is_sum()) return sums;
  std::vector<double> div;
  for (int64_t c : count) div.push_back(static_cast<double>(std::max<int64_t>(c, 1)));
  return sums / tensor(div).to(sums.dtype()).to(dev).unsqueeze(1);
}
}  // namespace functional

EmbeddingBag::EmbeddingBag(const EmbeddingBagOptions& o) : options(o) {
  EMBER_CHECK_VALUE(o.num_embeddings() > 0 && o.embedding_dim() > 0,
                    "EmbeddingBag: num_embeddings and embedding_dim must be positive, got ", o.num_embeddings(),
                    " and ", o.embedding_dim());
  EMBER_CHECK_VALUE(!o.sparse(), "EmbeddingBag: sparse gradients are not supported (ember has no sparse tensors)");
  EMBER_CHECK_VALUE(o.mode().valid(), "EmbeddingBag: mode must be torch::kSum, kMean or kMax");
  if (o._weight().defined()) {
    EMBER_CHECK_SHAPE(o._weight().sizes() == IntArrayRef({o.num_embeddings(), o.embedding_dim()}),
                      "EmbeddingBag: _weight must be [", o.num_embeddings(), ", ", o.embedding_dim(), "], got shape ",
                      o._weight().sizes());
    weight = register_parameter("weight", o._weight());
  } else {
    weight = register_parameter("weight", empty({o.num_embeddings(), o.embedding_dim()}));
    reset_parameters();
  }
}
void EmbeddingBag::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard g;
    const int64_t p = *options.padding_idx();
    weight.select(0, p < 0 ? p + options.num_embeddings() : p).fill_(0);
  }
}
Tensor EmbeddingBag::forward(const Tensor& input, const Tensor& offsets, const Tensor& per_sample_weights) {
  return functional::embedding_bag(input, weight,
                                   functional::EmbeddingBagFuncOptions()
                                       .offsets(offsets)
                                       .max_norm(options.max_norm())
                                       .norm_type(options.norm_type())
                                       .scale_grad_by_freq(options.scale_grad_by_freq())
                                       .mode(options.mode())
                                       .per_sample_weights(per_sample_weights)
                                       .include_last_offset(options.include_last_offset())
                                       .padding_idx(options.padding_idx()));
}
std::string EmbeddingBag::extra_repr() const {
  return std::to_string(options.num_embeddings()) + ", " + std::to_string(options.embedding_dim()) +
         ", mode=" + options.mode().name();
}

}  // namespace nn
}  // namespace ember
