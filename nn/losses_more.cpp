#include "ember/nn/losses_more.h"

#include <cmath>
#include <limits>

#include "ember/nn/internal/host_index.h"
#include "ember/ops/composite.h"

namespace ember {
namespace nn {
namespace functional {
using detail::reduce_loss;
namespace {
// [N, C] and [N] (a 1-D input is one sample).
void classes_of(const char* op, const Tensor& input, const Tensor& target, Tensor& x, Tensor& y) {
  EMBER_CHECK_SHAPE(input.dim() == 1 || input.dim() == 2, op, ": expected input [N, C] or [C], got shape ",
                    input.sizes());
  x = input.dim() == 1 ? input.unsqueeze(0) : input;
  EMBER_CHECK_DTYPE(target.dtype() == kInt64, op, ": target must be int64, got ", target.dtype());
  y = target.reshape({-1});
  EMBER_CHECK_SHAPE(y.numel() == x.size(0), op, ": target must have one class per sample (", x.size(0), "), got shape ",
                    target.sizes());
  for (int64_t c : y.to_vector<int64_t>())
    EMBER_CHECK_INDEX(c >= 0 && c < x.size(1), op, ": target class ", c, " is out of range for ", x.size(1),
                      " classes");
}
}  // namespace

Tensor multi_margin_loss(const Tensor& input, const Tensor& target, const MultiMarginLossFuncOptions& o) {
  const char* op = "multi_margin_loss";
  EMBER_CHECK_VALUE(o.p() == 1 || o.p() == 2, op, ": p must be 1 or 2, got ", o.p());
  Tensor x, y;
  classes_of(op, input, target, x, y);
  const int64_t C = x.size(1);
  Tensor xy = x.gather(1, y.unsqueeze(1));
  Tensor m = (x - xy + o.margin()).clamp_min(0.0);
  if (o.p() == 2) m = m * m;
  if (o.weight().defined()) {
    EMBER_CHECK_SHAPE(o.weight().dim() == 1 && o.weight().size(0) == C, op, ": weight must be [", C, "], got shape ",
                      o.weight().sizes());
    m = m * o.weight().index_select(0, y).unsqueeze(1);
  }
  Tensor others = ones_like(x).scatter(1, y.unsqueeze(1), 0.0);
  Tensor loss = (m * others).sum({1}) / static_cast<double>(C);
  if (input.dim() == 1 && o.reduction() == Reduction::None) loss = loss.squeeze(0);
  return reduce_loss(op, loss, o.reduction());
}

Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target, const MultilabelMarginLossFuncOptions& o) {
  const char* op = "multilabel_margin_loss";
  EMBER_CHECK_SHAPE((input.dim() == 1 || input.dim() == 2) && target.sizes() == input.sizes(), op,
                    ": expected input and target of the same shape [N, C] or [C], got ", input.sizes(), " and ",
                    target.sizes());
  EMBER_CHECK_DTYPE(target.dtype() == kInt64, op, ": target must be int64, got ", target.dtype());
  Tensor x = input.dim() == 1 ? input.unsqueeze(0) : input;
  const int64_t N = x.size(0), C = x.size(1);
  const auto t = target.to_vector<int64_t>();
  // slot k of sample n: its k-th target class (valid before the first -1); is_target: the classes.
  std::vector<int64_t> cls(static_cast<size_t>(N * C), 0);
  std::vector<double> valid(static_cast<size_t>(N * C), 0.0), other(static_cast<size_t>(N * C), 1.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < C; ++k) {
      const int64_t c = t[static_cast<size_t>(n * C + k)];
      if (c < 0) break;
      EMBER_CHECK_INDEX(c < C, op, ": target class ", c, " is out of range for ", C, " classes");
      cls[static_cast<size_t>(n * C + k)] = c;
      valid[static_cast<size_t>(n * C + k)] = 1.0;
      other[static_cast<size_t>(n * C + c)] = 0.0;
    }
  auto on = [&](const auto& v) { return tensor(v, {N, C}).to(x.dtype()).to(x.device()); };
  Tensor xj = x.gather(1, tensor(cls, {N, C}).to(x.device()));         // [N, slots]
  Tensor m = (x.unsqueeze(1) - xj.unsqueeze(2) + 1.0).clamp_min(0.0);  // [N, slots, C]
  m = m * on(valid).unsqueeze(2) * on(other).unsqueeze(1);
  Tensor loss = m.sum({1, 2}) / static_cast<double>(C);
  if (input.dim() == 1 && o.reduction() == Reduction::None) loss = loss.squeeze(0);
  return reduce_loss(op, loss, o.reduction());
}

Tensor triplet_margin_with_distance_loss(const Tensor& a, const Tensor& p, const Tensor& n,
                                         const TripletMarginWithDistanceLossFuncOptions& o) {
  auto d = o.distance_function() ? *o.distance_function()
                                 : [](const Tensor& u, const Tensor& v) { return pairwise_distance(u, v); };
  Tensor dp = d(a, p), dn = d(a, n);
  if (o.swap()) dn = min(dn, d(p, n));
  return reduce_loss("triplet_margin_with_distance_loss", (dp - dn + o.margin()).clamp_min(0.0), o.reduction());
}

Tensor _smooth_l1_loss(const Tensor& input, const Tensor& target, double beta) {
  Tensor t = (input - target).abs();
  return where(t < beta, t * t * (0.5 / beta), t - 0.5 * beta);
}

// log alpha over the extended labels (blank, l1, blank, l2, ..., blank), all samples at once;
// unreachable states hold a large negative number, not -inf, so no 0 * inf reaches a gradient.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& o) {
  const char* op = "ctc_loss";
  EMBER_CHECK_SHAPE(log_probs.dim() == 3 || log_probs.dim() == 2, op, ": log_probs must be [T, N, C] or [T, C], got ",
                    log_probs.sizes());
  Tensor lp = log_probs.dim() == 2 ? log_probs.unsqueeze(1) : log_probs;
  const int64_t T = lp.size(0), N = lp.size(1), C = lp.size(2);
  EMBER_CHECK_VALUE(o.blank() >= 0 && o.blank() < C, op, ": blank ", o.blank(), " is out of range for ", C, " classes");
  const auto in_len = input_lengths.to_vector<int64_t>(), tg_len = target_lengths.to_vector<int64_t>();
  EMBER_CHECK_SHAPE(static_cast<int64_t>(in_len.size()) == N && static_cast<int64_t>(tg_len.size()) == N, op,
                    ": input_lengths and target_lengths must have ", N, " values, got ", in_len.size(), " and ",
                    tg_len.size());
  const auto tg = targets.to_vector<int64_t>();
  int64_t S = 0;
  for (int64_t n = 0; n < N; ++n) {
    EMBER_CHECK_VALUE(in_len[static_cast<size_t>(n)] >= 0 && in_len[static_cast<size_t>(n)] <= T, op, ": input length ",
                      in_len[static_cast<size_t>(n)], " of sample ", n, " must be in [0, ", T, "]");
    EMBER_CHECK_VALUE(tg_len[static_cast<size_t>(n)] >= 0, op, ": target lengths must be non-negative");
    S = std::max(S, tg_len[static_cast<size_t>(n)]);
  }
  const bool padded = targets.dim() == 2;
  const int64_t L = 2 * S + 1;
  std::vector<int64_t> ext(static_cast<size_t>(N * L), o.blank()), last(static_cast<size_t>(N * 2));
  std::vector<double> skip(static_cast<size_t>(N * L), 0.0);
  int64_t at = 0;
  for (int64_t n = 0; n < N; ++n) {
    const int64_t sn = tg_len[static_cast<size_t>(n)];
    const int64_t base = padded ? n * targets.size(1) : at;
    EMBER_CHECK_SHAPE(base + sn <= static_cast<int64_t>(tg.size()) && (!padded || sn <= targets.size(1)), op,
                      ": target length ", sn, " of sample ", n, " overruns targets of shape ", targets.sizes());
    for (int64_t s = 0; s < sn; ++s) {
      const int64_t c = tg[static_cast<size_t>(base + s)];
      EMBER_CHECK_INDEX(c >= 0 && c < C && c != o.blank(), op, ": target ", c, " of sample ", n,
                        " must be a class in [0, ", C, ") other than blank");
      ext[static_cast<size_t>(n * L + 2 * s + 1)] = c;
      if (s > 0 && tg[static_cast<size_t>(base + s - 1)] != c) skip[static_cast<size_t>(n * L + 2 * s + 1)] = 1.0;
    }
    at += sn;
    last[static_cast<size_t>(2 * n)] = 2 * sn;
    last[static_cast<size_t>(2 * n + 1)] = sn > 0 ? 2 * sn - 1 : 2 * sn;
  }
  const auto dev = lp.device();
  const double neg = -1e30;
  Tensor ext_t = tensor(ext, {N, L}).to(dev);
  Tensor skip_ok = tensor(skip, {N, L}).to(dev) > 0.5;
  Tensor start = tensor(std::vector<double>(static_cast<size_t>(L), neg), {1, L}).to(lp.dtype()).to(dev);
  auto shifted = [&](const Tensor& a, int64_t k) {
    return cat({full({N, k}, neg, a.options()), a.narrow(1, 0, L - k)}, 1);
  };
  Tensor alpha;
  for (int64_t t = 0; t < T; ++t) {
    Tensor emit = lp.select(0, t).gather(1, ext_t);  // [N, L]
    Tensor next;
    if (t == 0) {
      Tensor first = full({N, L}, neg, lp.options());
      first = first.index_fill(1, tensor(std::vector<int64_t>{0}).to(dev), 0.0);
      if (L > 1) first = first.index_fill(1, tensor(std::vector<int64_t>{1}).to(dev), 0.0);
      next = first + emit;
    } else {
      Tensor a3 = where(skip_ok, L > 2 ? shifted(alpha, 2) : full({N, L}, neg, alpha.options()),
                        full({N, L}, neg, alpha.options()));
      next = logsumexp(stack({alpha, shifted(alpha, 1), a3}, 0), {0}) + emit;
    }
    std::vector<double> live(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) live[static_cast<size_t>(n)] = t < in_len[static_cast<size_t>(n)] ? 1.0 : 0.0;
    Tensor live_t = tensor(live, {N, 1}).to(dev) > 0.5;
    alpha = t == 0 ? where(live_t, next, start.expand({N, L})) : where(live_t, next, alpha);
  }
  Tensor ends = alpha.gather(1, tensor(last, {N, 2}).to(dev));
  Tensor nll = -logsumexp(ends, {1});
  // No frames, or a target the frames cannot hold: the loss is infinite (zero_infinity: 0).
  Tensor inf_mask = nll > 1e29;
  nll = where(inf_mask, full_like(nll, o.zero_infinity() ? 0.0 : std::numeric_limits<double>::infinity()), nll);
  if (log_probs.dim() == 2) nll = nll.squeeze(0);
  if (o.reduction() == Reduction::Mean) {
    std::vector<double> len;
    for (int64_t v : tg_len) len.push_back(static_cast<double>(std::max<int64_t>(v, 1)));
    Tensor lt = tensor(len).to(nll.dtype()).to(dev);
    return (nll.reshape({-1}) / lt).mean();
  }
  return reduce_loss(op, nll, o.reduction());
}
}  // namespace functional

namespace F = functional;
Tensor MultiMarginLoss::forward(const Tensor& input, const Tensor& target) {
  return F::multi_margin_loss(input, target, options);
}
Tensor MultiLabelMarginLoss::forward(const Tensor& input, const Tensor& target) {
  return F::multilabel_margin_loss(input, target, options);
}
Tensor TripletMarginWithDistanceLoss::forward(const Tensor& a, const Tensor& p, const Tensor& n) {
  return F::triplet_margin_with_distance_loss(a, p, n, options);
}
Tensor CTCLoss::forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                        const Tensor& target_lengths) {
  return F::ctc_loss(log_probs, targets, input_lengths, target_lengths, options);
}

}  // namespace nn
}  // namespace ember
