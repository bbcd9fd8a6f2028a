// Samples and float64 references for the ops of ops/loss.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <algorithm>
#include <cmath>
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
std::vector<testing::Sample> ce_samples(DType dt) {
  using testing::make_int_valued;
  using testing::make_tensor;
  Tensor t3 = make_int_valued({6}, DType::Int64, 0, 4, 3);
  t3.data_ptr<int64_t>()[2] = -100;  // an ignored row
  return {{{make_tensor({5, 4}, dt, -3, 3, 1), make_int_valued({5}, DType::Int64, 0, 3, 2)}, "5 rows of 4 classes"},
          {{make_tensor({6, 5}, dt, -3, 3, 4), t3}, "an ignored row"},
          {{testing::make_noncontig({4, 7}, dt, -3, 3, 5), make_int_valued({4}, DType::Int64, 0, 6, 6), IValue(int64_t(2))},
           "non-contiguous logits, ignore_index 2"},
          {{make_tensor({9}, dt, -3, 3, 7), make_int_valued({}, DType::Int64, 0, 8, 8)}, "one row, 0-d target"},
          {{make_tensor({256, 27}, dt, -3, 3, 9), make_int_valued({256}, DType::Int64, 0, 26, 10)}, "large (parallel)"}};
}
// Per row: (logsumexp - target logit, softmax row); rows with the ignored target flagged.
double ref_ce(const Tensor& logits, const Tensor& target, int64_t ignore, Tensor* dlogits, double g) {
  Tensor l = logits.dim() == 1 ? logits.unsqueeze(0) : logits;
  Tensor t = target.dim() == 0 ? target.reshape({1}) : target;
  int64_t N = l.size(0), C = l.size(1), n = 0;
  for (int64_t i = 0; i < N; ++i) n += testing::at_int(t, {i}) != ignore;
  double sum = 0;
  if (dlogits) *dlogits = zeros(logits.sizes(), kFloat64);
  for (int64_t i = 0; i < N; ++i) {
    int64_t k = testing::at_int(t, {i});
    if (k == ignore) continue;
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < C; ++j) m = std::max(m, testing::at(l, {i, j}));
    for (int64_t j = 0; j < C; ++j) s += std::exp(testing::at(l, {i, j}) - m);
    sum += m + std::log(s) - testing::at(l, {i, k});
    if (dlogits) {
      double* d = dlogits->data_ptr<double>() + i * C;
      for (int64_t j = 0; j < C; ++j) d[j] = g / static_cast<double>(n) * (std::exp(testing::at(l, {i, j}) - m) / s - (j == k));
    }
  }
  return sum / static_cast<double>(n);
}
}  // namespace

EMBER_OP_INFO("ember::cross_entropy", info) {
  info.samples = ce_samples;
  info.reference = [](const Stack& a) -> Stack {
    int64_t ignore = a.size() > 2 ? a[2].to_int() : -100;
    return {full({}, ref_ce(a[0].to_tensor(), a[1].to_tensor(), ignore, nullptr, 0), kFloat64)};
  };
  info.tol_scale = 4;
}
EMBER_OP_INFO("ember::cross_entropy_backward", info) {
  info.samples = [](DType dt) {
    std::vector<testing::Sample> out;
    for (auto& s : ce_samples(dt)) {
      Stack args{testing::make_tensor({}, dt, 0.5, 2, 11)};
      args.insert(args.end(), s.args.begin(), s.args.end());
      out.push_back({args, s.desc});
    }
    return out;
  };
  info.reference = [](const Stack& a) -> Stack {
    int64_t ignore = a.size() > 3 ? a[3].to_int() : -100;
    Tensor d;
    ref_ce(a[1].to_tensor(), a[2].to_tensor(), ignore, &d, testing::at(a[0].to_tensor(), {}));
    return {d};
  };
  info.tol_scale = 4;
}
namespace {
// Per-element losses, reduced as the sample's reduction argument says (Mean when absent).
Tensor ref_reduced(const Tensor& per_element, int64_t reduction, double denom = -1) {
  if (reduction == Reduction::None) return per_element;
  double s = 0;
  for (double x : per_element.to_vector<double>()) s += x;
  if (reduction == Reduction::Mean) s /= denom >= 0 ? denom : static_cast<double>(per_element.numel());
  return full({}, s, kFloat64);
}
int64_t arg_int(const Stack& a, size_t i, int64_t dflt) { return a.size() > i && !a[i].is_none() ? a[i].to_int() : dflt; }
Tensor arg_tensor(const Stack& a, size_t i) { return a.size() > i && !a[i].is_none() ? a[i].to_tensor() : Tensor(); }

// (input, target, [None x nones], reduction) samples of an elementwise loss; lo/hi bound the
// input, tlo/thi the target.
std::vector<testing::Sample> pair_samples(DType dt, double lo, double hi, double tlo, double thi, size_t nones = 0) {
  using testing::make_tensor;
  auto args = [nones](Tensor x, Tensor y, int64_t reduction) {
    Stack st{x, y};
    st.insert(st.end(), nones, IValue());
    st.push_back(IValue(reduction));
    return st;
  };
  return {{{make_tensor({4, 5}, dt, lo, hi, 1), make_tensor({4, 5}, dt, tlo, thi, 2)}, "same shapes, mean"},
          {args(testing::make_noncontig({3, 6}, dt, lo, hi, 3), make_tensor({3, 6}, dt, tlo, thi, 4), 2),
           "non-contiguous, sum"},
          {args(make_tensor({2, 3}, dt, lo, hi, 5), make_tensor({2, 3}, dt, tlo, thi, 6), 0), "none"}};
}
}  // namespace

EMBER_OP_INFO("ember::mse_loss", info) {
  info.samples = [](DType dt) {
    auto s = pair_samples(dt, -2, 2, -2, 2);
    s.push_back({{testing::make_tensor({3, 6}, dt, -2, 2, 7), testing::make_tensor({6}, dt, -2, 2, 8)}, "broadcast"});
    return s;
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor d = testing::ref_map2(a[0].to_tensor(), a[1].to_tensor(), [](double x, double y) { return (x - y) * (x - y); });
    return {ref_reduced(d, arg_int(a, 2, Reduction::Mean))};
  };
}
EMBER_OP_INFO("ember::l1_loss", info) {
  info.samples = [](DType dt) {
    auto s = pair_samples(dt, -2, 2, -2, 2);
    s.push_back({{testing::make_tensor({3, 6}, dt, -2, 2, 13), testing::make_tensor({6}, dt, -2, 2, 14)}, "broadcast"});
    return s;
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor d = testing::ref_map2(a[0].to_tensor(), a[1].to_tensor(), [](double x, double y) { return std::fabs(x - y); });
    return {ref_reduced(d, arg_int(a, 2, Reduction::Mean))};
  };
}
EMBER_OP_INFO("ember::smooth_l1_loss", info) {
  info.samples = [](DType dt) {
    auto s = pair_samples(dt, -2, 2, -2, 2);  // |d| on both sides of beta = 1
    s.push_back({{testing::make_tensor({5, 4}, dt, -2, 2, 9), testing::make_tensor({5, 4}, dt, -2, 2, 10),
                  IValue(int64_t(1)), IValue(0.5)},
                 "beta 0.5"});
    s.push_back({{testing::make_tensor({5, 4}, dt, -2, 2, 11), testing::make_tensor({5, 4}, dt, -2, 2, 12),
                  IValue(int64_t(2)), IValue(0.0)},
                 "beta 0 (l1)"});
    return s;
  };
  info.reference = [](const Stack& a) -> Stack {
    double beta = a.size() > 3 ? a[3].to_double() : 1.0;
    Tensor d = testing::ref_map2(a[0].to_tensor(), a[1].to_tensor(), [beta](double x, double y) {
      double e = std::fabs(x - y);
      return e < beta ? 0.5 * e * e / beta : e - 0.5 * beta;
    });
    return {ref_reduced(d, arg_int(a, 2, Reduction::Mean))};
  };
}
EMBER_OP_INFO("ember::nll_loss", info) {
  info.samples = [](DType dt) {
    using testing::make_int_valued;
    using testing::make_tensor;
    Tensor t = make_int_valued({6}, DType::Int64, 0, 4, 3);
    t.data_ptr<int64_t>()[1] = -100;  // an ignored row
    return std::vector<testing::Sample>{
        {{make_tensor({5, 4}, dt, -3, 0, 1), make_int_valued({5}, DType::Int64, 0, 3, 2)}, "mean"},
        {{make_tensor({6, 5}, dt, -3, 0, 4), t, IValue(make_tensor({5}, dt, 0.5, 2, 5))}, "class weights, ignored row"},
        {{make_tensor({6, 5}, dt, -3, 0, 6), t, IValue(), IValue(int64_t(2))}, "sum, ignored row"},
        {{testing::make_noncontig({4, 7}, dt, -3, 0, 7), make_int_valued({4}, DType::Int64, 0, 6, 8), IValue(),
          IValue(int64_t(0)), IValue(int64_t(3))},
         "non-contiguous, none, ignore_index 3"},
        {{make_tensor({9}, dt, -3, 0, 9), make_int_valued({}, DType::Int64, 0, 8, 10)}, "one row, 0-d target"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor x = a[0].to_tensor(), t = a[1].to_tensor(), w = arg_tensor(a, 2);
    int64_t reduction = arg_int(a, 3, Reduction::Mean), ignore = arg_int(a, 4, -100);
    if (x.dim() == 1) {
      x = x.unsqueeze(0);
      t = t.reshape({1});
    }
    int64_t N = x.size(0);
    Tensor l = zeros({N}, kFloat64);
    double wsum = 0;
    for (int64_t i = 0; i < N; ++i) {
      int64_t k = testing::at_int(t, {i});
      if (k == ignore) continue;
      double wk = w.defined() ? testing::at(w, {k}) : 1.0;
      l.data_ptr<double>()[i] = -wk * testing::at(x, {i, k});
      wsum += wk;
    }
    if (reduction == Reduction::None && a[0].to_tensor().dim() == 1) l = l.reshape({});
    return {ref_reduced(l, reduction, wsum)};
  };
  info.tol_scale = 4;
}
EMBER_OP_INFO("ember::binary_cross_entropy", info) {
  info.samples = [](DType dt) {
    auto s = pair_samples(dt, 0.05, 0.95, 0, 1, 1);
    s.push_back({{testing::make_tensor({3, 4}, dt, 0.05, 0.95, 13), testing::make_tensor({3, 4}, dt, 0, 1, 14),
                  IValue(testing::make_tensor({4}, dt, 0.5, 2, 15))},
                 "weight broadcast over rows"});
    return s;
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor l = testing::ref_map2(a[0].to_tensor(), a[1].to_tensor(), [](double x, double y) {
      return -(y * std::max(std::log(x), -100.0) + (1 - y) * std::max(std::log(1 - x), -100.0));
    });
    Tensor w = arg_tensor(a, 2);
    if (w.defined()) l = testing::ref_map2(l, w, [](double v, double k) { return v * k; });
    return {ref_reduced(l, arg_int(a, 3, Reduction::Mean))};
  };
  info.tol_scale = 4;
}
EMBER_OP_INFO("ember::binary_cross_entropy_with_logits", info) {
  info.samples = [](DType dt) {
    auto s = pair_samples(dt, -6, 6, 0, 1, 2);
    s.push_back({{testing::make_tensor({3, 4}, dt, -6, 6, 16), testing::make_tensor({3, 4}, dt, 0, 1, 17),
                  IValue(testing::make_tensor({4}, dt, 0.5, 2, 18)), IValue(testing::make_tensor({4}, dt, 0.5, 3, 19))},
                 "weight and pos_weight"});
    return s;
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor x = a[0].to_tensor(), y = a[1].to_tensor(), w = arg_tensor(a, 2), pw = arg_tensor(a, 3);
    Tensor l = zeros(x.sizes(), kFloat64);
    std::vector<double> xv = x.to_vector<double>(), yv = y.to_vector<double>();
    int64_t C = x.size(-1);
    for (size_t i = 0; i < xv.size(); ++i) {
      double p = 1 / (1 + std::exp(-xv[i])), pwk = pw.defined() ? testing::at(pw, {static_cast<int64_t>(i) % C}) : 1.0;
      l.data_ptr<double>()[i] = -(pwk * yv[i] * std::log(p) + (1 - yv[i]) * std::log(1 - p));
    }
    if (w.defined()) l = testing::ref_map2(l, w, [](double v, double k) { return v * k; });
    return {ref_reduced(l, arg_int(a, 4, Reduction::Mean))};
  };
  info.tol_scale = 4;
}

// ---------------------------------------------------------------- the fused losses' backward ops
namespace {
// (grad, the forward's sample arguments...): grad has the shape of the forward's output.
std::vector<testing::Sample> backward_samples(const char* forward, DType dt) {
  const testing::OpInfo* f = testing::find_op_info(forward);
  std::vector<testing::Sample> out;
  uint64_t seed = 40;
  for (const testing::Sample& s : f->samples(dt)) {
    Tensor y = f->reference(s.args)[0].to_tensor();
    Stack args{testing::make_tensor(y.sizes(), dt, 0.5, 2, seed++)};
    args.insert(args.end(), s.args.begin(), s.args.end());
    out.push_back({args, s.desc});
  }
  return out;
}
// grad spread over the elements of v (v's shape): g itself for Reduction::None, g / n for Mean.
Tensor ref_times_grad(const Tensor& v, const Tensor& g, int64_t reduction) {
  if (reduction == Reduction::None) return testing::ref_map2(v, g, [](double a, double b) { return a * b; });
  double k = testing::at(g.reshape({}), {}) / (reduction == Reduction::Mean ? static_cast<double>(v.numel()) : 1.0);
  return testing::ref_map(v, [k](double a) { return a * k; });
}
Tensor ref_times(const Tensor& v, const Tensor& w) {
  return w.defined() ? testing::ref_map2(v, w, [](double a, double b) { return a * b; }) : v;
}
}  // namespace

EMBER_OP_INFO("ember::mse_loss_backward", info) {
  info.samples = [](DType dt) { return backward_samples("ember::mse_loss", dt); };
  info.reference = [](const Stack& a) -> Stack {
    Tensor d = testing::ref_map2(a[1].to_tensor(), a[2].to_tensor(), [](double x, double y) { return 2 * (x - y); });
    return {ref_times_grad(d, a[0].to_tensor(), arg_int(a, 3, Reduction::Mean))};
  };
}
EMBER_OP_INFO("ember::l1_loss_backward", info) {
  info.samples = [](DType dt) { return backward_samples("ember::l1_loss", dt); };
  info.reference = [](const Stack& a) -> Stack {
    Tensor d = testing::ref_map2(a[1].to_tensor(), a[2].to_tensor(),
                                 [](double x, double y) { return double((x > y) - (x < y)); });
    return {ref_times_grad(d, a[0].to_tensor(), arg_int(a, 3, Reduction::Mean))};
  };
}
EMBER_OP_INFO("ember::smooth_l1_loss_backward", info) {
  info.samples = [](DType dt) { return backward_samples("ember::smooth_l1_loss", dt); };
  info.reference = [](const Stack& a) -> Stack {
    double beta = a.size() > 4 ? a[4].to_double() : 1.0;
    Tensor d = testing::ref_map2(a[1].to_tensor(), a[2].to_tensor(), [beta](double x, double y) {
      double e = x - y;
      return std::fabs(e) < beta ? e / beta : double((e > 0) - (e < 0));
    });
    return {ref_times_grad(d, a[0].to_tensor(), arg_int(a, 3, Reduction::Mean))};
  };
}
EMBER_OP_INFO("ember::binary_cross_entropy_backward", info) {
  info.samples = [](DType dt) { return backward_samples("ember::binary_cross_entropy", dt); };
  info.reference = [](const Stack& a) -> Stack {
    Tensor d = testing::ref_map2(a[1].to_tensor(), a[2].to_tensor(),
                                 [](double x, double y) { return (x - y) / std::max(x * (1 - x), 1e-12); });
    return {ref_times_grad(ref_times(d, arg_tensor(a, 3)), a[0].to_tensor(), arg_int(a, 4, Reduction::Mean))};
  };
  info.tol_scale = 4;
}
EMBER_OP_INFO("ember::binary_cross_entropy_with_logits_backward", info) {
  info.samples = [](DType dt) { return backward_samples("ember::binary_cross_entropy_with_logits", dt); };
  info.reference = [](const Stack& a) -> Stack {
    Tensor x = a[1].to_tensor(), y = a[2].to_tensor(), pw = arg_tensor(a, 4);
    auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
    Tensor d = pw.defined() ? testing::ref_map3(x, y, pw, [sig](double v, double t, double p) {
      return (1 + (p - 1) * t) * sig(v) - p * t;
    })
                            : testing::ref_map2(x, y, [sig](double v, double t) { return sig(v) - t; });
    return {ref_times_grad(ref_times(d, arg_tensor(a, 3)), a[0].to_tensor(), arg_int(a, 5, Reduction::Mean))};
  };
  info.tol_scale = 4;
}

namespace {
// nll_loss's total weight: the sum of weight[t] over the rows whose target is not ignored.
double ref_nll_total(const Stack& a, size_t first) {
  Tensor t = a[first + 1].to_tensor(), w = arg_tensor(a, first + 2);
  int64_t ignore = arg_int(a, first + 4, -100);
  double total = 0;
  for (int64_t k : t.reshape({-1}).to_vector<int64_t>())
    if (k != ignore) total += w.defined() ? testing::at(w, {k}) : 1.0;
  return total;
}
}  // namespace

EMBER_OP_INFO("ember::nll_loss_forward", info) {
  info.samples = [](DType dt) { return testing::find_op_info("ember::nll_loss")->samples(dt); };
  info.reference = [](const Stack& a) -> Stack {
    Stack out = testing::find_op_info("ember::nll_loss")->reference(a);
    out.push_back(full({}, ref_nll_total(a, 0), kFloat64));
    return out;
  };
  info.tol_scale = 4;
}
// (grad, input, target, weight, reduction, ignore_index, total_weight), from nll_loss's samples.
EMBER_OP_INFO("ember::nll_loss_backward", info) {
  info.samples = [](DType dt) {
    std::vector<testing::Sample> out;
    for (testing::Sample s : backward_samples("ember::nll_loss", dt)) {
      Stack& a = s.args;
      double total = ref_nll_total(a, 1);
      a.resize(6);  // the defaults made explicit
      if (a[4].is_none()) a[4] = IValue(int64_t(Reduction::Mean));
      if (a[5].is_none()) a[5] = IValue(int64_t(-100));
      a.push_back(IValue(full({}, total, TensorOptions(dt))));
      out.push_back(s);
    }
    return out;
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor g = a[0].to_tensor(), x = a[1].to_tensor(), t = a[2].to_tensor(), w = arg_tensor(a, 3);
    int64_t reduction = a[4].to_int(), ignore = a[5].to_int();
    double total = testing::at(a[6].to_tensor(), {});
    bool rows = x.dim() == 2;
    int64_t N = rows ? x.size(0) : 1, C = x.size(-1);
    Tensor out = zeros(x.sizes(), kFloat64);
    for (int64_t i = 0; i < N; ++i) {
      int64_t k = rows ? testing::at_int(t, {i}) : testing::at_int(t, {});
      if (k == ignore) continue;
      double gi = reduction == Reduction::None && rows ? testing::at(g, {i}) : testing::at(g.reshape({}), {});
      out.data_ptr<double>()[i * C + k] = -(w.defined() ? testing::at(w, {k}) : 1.0) * gi /
                                          (reduction == Reduction::Mean ? total : 1.0);
    }
    return {out};
  };
  info.tol_scale = 4;
}

}  // namespace ember
