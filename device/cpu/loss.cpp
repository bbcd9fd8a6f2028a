// CANN's CrossEntropyLoss in full (weights, label smoothing, reductions, log-probabilities out);
// nn.cpp holds the fused mean cross entropy the framework's cross_entropy runs.
#include "ember/device/cpu/nn.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ember/core/error.h"

namespace ember {
namespace cpu {
namespace {

// A row of logits becomes its log-softmax.
void log_softmax_row(double* row, int64_t C) {
  double mx = row[0];
  for (int64_t c = 1; c < C; ++c) mx = std::max(mx, row[c]);
  double se = 0;
  for (int64_t c = 0; c < C; ++c) se += std::exp(row[c] - mx);
  const double lse = mx + std::log(se);
  for (int64_t c = 0; c < C; ++c) row[c] -= lse;
}

int64_t target_at(const Strided& t, int64_t n) {
  const int64_t at = n * (t.strides.empty() ? 1 : t.strides[0]);
  return t.dtype == DType::Int32 ? static_cast<const int32_t*>(t.data)[at] : static_cast<const int64_t*>(t.data)[at];
}

// Row i's class: t[i], checked against [0, C) unless it is the ignored index.
int64_t nll_class(const char* op, const double* t, int64_t i, int64_t C, int64_t ignore) {
  const double v = t[i];  // (compared before the cast: an int64 extreme does not fit back)
  EMBER_CHECK_INDEX(v == static_cast<double>(ignore) || (v >= 0 && v < static_cast<double>(C)), op, ": target ",
                    static_cast<long double>(v), " of row ", i, " is outside [0, ", C, ") and is not ignoreIndex (",
                    ignore, ")");
  return v == static_cast<double>(ignore) ? ignore : static_cast<int64_t>(v);
}

// One value broadcast over out.
void fill_with(const Strided& out, double v) { copy(out, Strided::broadcast_value(&v, DType::Float64, out.sizes)); }

}  // namespace

void cross_entropy_loss(const Strided& loss, const Strided& logprob, const Strided& logits, const Strided& target,
                        const Strided& weight, const CrossEntropyLossOptions& o, double* scratch, const char* op) {
  const int64_t N = logits.sizes[0], C = logits.sizes[1];
  if (N == 0) {
    if (o.reduction != 0) fill_with(loss, o.reduction == 1 ? 0.0 : std::nan(""));  // sum 0, mean 0 / 0
    return;
  }
  copy(logits.contiguous_at(scratch, DType::Float64), logits);
  std::vector<double> w(static_cast<size_t>(C), 1.0);
  if (weight.data) copy(Strided(w.data(), DType::Float64, DimVector{C}, DimVector{1}), weight);
  std::vector<double> rows(static_cast<size_t>(N), 0.0);
  double total = 0, wsum = 0;
  for (int64_t n = 0; n < N; ++n) {
    double* row = scratch + n * C;
    log_softmax_row(row, C);
    const int64_t y = target_at(target, n);
    if (y == o.ignore_index) continue;
    EMBER_CHECK_INDEX(y >= 0 && y < C, op, ": target ", y, " at position ", n, " is out of range [0, ", C, ")");
    double smooth = 0;
    for (int64_t c = 0; c < C; ++c) smooth -= w[static_cast<size_t>(c)] * row[c];
    const double wy = w[static_cast<size_t>(y)];
    rows[static_cast<size_t>(n)] = (1 - o.label_smoothing) * -wy * row[y] + o.label_smoothing / C * smooth;
    total += rows[static_cast<size_t>(n)];
    wsum += wy;
  }
  copy(logprob, Strided(scratch, DType::Float64, DimVector{N, C}, DimVector{C, 1}));
  if (o.reduction == 0) {
    copy(loss, Strided(rows.data(), DType::Float64, DimVector{N}, DimVector{1}));
  } else {
    fill_with(loss, o.reduction == 1 ? total : total / wsum);
  }
}

double nll_loss_f64(double* l, const double* x, const double* t, const double* w, int64_t N, int64_t C,
                    int64_t ignore_index, const char* op) {
  double total = 0;
  for (int64_t i = 0; i < N; ++i) {
    const int64_t c = nll_class(op, t, i, C, ignore_index);
    l[i] = c == ignore_index ? 0.0 : -w[c] * x[i * C + c];
    total += c == ignore_index ? 0.0 : w[c];
  }
  return total;
}

void nll_loss_backward_f64(double* dx, const double* g, bool per_row, double denom, const double* t, const double* w,
                           int64_t N, int64_t C, int64_t ignore_index, const char* op) {
  std::fill(dx, dx + N * C, 0.0);
  for (int64_t i = 0; i < N; ++i) {
    const int64_t c = nll_class(op, t, i, C, ignore_index);
    if (c != ignore_index) dx[i * C + c] = -w[c] * g[per_row ? i : 0] / denom;
  }
}

}  // namespace cpu
}  // namespace ember
