// Losses. cross_entropy(logits [N, C] or [C], int64 target [N] or []) = mean over rows whose
// target is not ignore_index of logsumexp(logits[i]) - logits[i, target[i]]: log-softmax fused
// in, fp32 math, a 0-d result in the logits' dtype. mse_loss(input, target) = mean((input -
// target)^2), written with public ops.
#include <cmath>

#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/nn.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/ops/testing/reference.h"

namespace ember {
namespace {
using namespace ops;

// logits and target as [N, C] and [N].
std::pair<Tensor, Tensor> ce_rows(const char* op, const Tensor& logits, const Tensor& target) {
  common_device(op, {&logits, &target});
  EMBER_CHECK_DTYPE(logits.is_floating_point(), op, ": logits must be floating, got ", logits.dtype());
  EMBER_CHECK_DTYPE(target.dtype() == DType::Int64, op, ": target must hold int64 class indices, got ", target.dtype());
  bool batched = logits.dim() == 2 && target.dim() == 1 && target.size(0) == logits.size(0);
  bool single = logits.dim() == 1 && target.dim() == 0;
  EMBER_CHECK_SHAPE(batched || single, op, ": expects logits [N, C] with target [N] (or [C] with a 0-d target), got ",
                    logits.sizes(), " and ", target.sizes());
  if (single) return {logits.unsqueeze(0), target.reshape({1})};
  return {logits, target};
}

Tensor cross_entropy_cpu(const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  auto [l, t] = ce_rows("cross_entropy", logits, target);
  Tensor out = empty_on({}, logits.dtype(), logits.device());
  cpu::cross_entropy(strided(out), strided(l.contiguous()), strided(t.contiguous()), ignore_index, "cross_entropy");
  return out;
}

Tensor cross_entropy_npu(const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  auto [l, t] = ce_rows("cross_entropy", logits, target);
  Tensor out = empty_on({}, logits.dtype(), logits.device());
  EXEC_NPU_CMD(npu::aclnnCrossEntropy, l, t, ignore_index, out);
  return out;
}

Tensor mse_loss_composite(const Tensor& input, const Tensor& target) { return (input - target).square().mean(); }

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("cross_entropy(Tensor logits, Tensor target, int ignore_index=-100) -> Tensor");
  m.def("mse_loss(Tensor input, Tensor target) -> Tensor", &mse_loss_composite);
}
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl("cross_entropy", &cross_entropy_cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl("cross_entropy", &cross_entropy_npu); }

Tensor cross_entropy(const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  return EMBER_OP("ember::cross_entropy", Tensor(const Tensor&, const Tensor&, int64_t)).call(logits, target, ignore_index);
}
Tensor mse_loss(const Tensor& input, const Tensor& target) {
  return EMBER_OP("ember::mse_loss", Tensor(const Tensor&, const Tensor&)).call(input, target);
}

// ---------------------------------------------------------------- backward
// d loss / d logits[i] = grad / n (softmax(logits[i]) - onehot(target[i])), n = rows counted;
// zero for ignored rows. One fused pass (softmax recomputed from the saved logits).
namespace {
using namespace autograd;

Tensor cross_entropy_backward_cpu(const Tensor& grad, const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  auto [l, t] = ce_rows("cross_entropy_backward", logits, target);
  common_device("cross_entropy_backward", {&grad, &logits});
  EMBER_CHECK_SHAPE(grad.numel() == 1, "cross_entropy_backward: grad must hold one element, got shape ", grad.sizes());
  Tensor out = empty_on(logits.sizes(), logits.dtype(), logits.device());
  cpu::cross_entropy_backward(strided(out.view(l.sizes())), strided(grad.contiguous()), strided(l.contiguous()),
                              strided(t.contiguous()), ignore_index, "cross_entropy_backward");
  return out;
}

Tensor cross_entropy_backward_npu(const Tensor& grad, const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  auto [l, t] = ce_rows("cross_entropy_backward", logits, target);
  common_device("cross_entropy_backward", {&grad, &logits});
  EMBER_CHECK_SHAPE(grad.numel() == 1, "cross_entropy_backward: grad must hold one element, got shape ", grad.sizes());
  Tensor out = empty_on(logits.sizes(), logits.dtype(), logits.device());
  EXEC_NPU_CMD(npu::aclnnCrossEntropyGrad, grad.reshape({}), l, t, ignore_index, out.view(l.sizes()));
  return out;
}

using CESig = Tensor(const Tensor&, const Tensor&, int64_t);
std::vector<Tensor> cross_entropy_bw(const BackwardCtx<CESig>& c) {
  return {EMBER_OP("ember::cross_entropy_backward", Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t))
              .call(c.grad(), c.arg<0>(), c.arg<1>(), c.arg<2>()),
          Tensor()};
}
const auto kCrossEntropy =
    OpSpec<CESig>{"CrossEntropyBackward", "ember::cross_entropy", &cross_entropy_bw}.saving(saves(0, 1));
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("cross_entropy_backward(Tensor grad, Tensor logits, Tensor target, int ignore_index=-100) -> Tensor");
}
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl("cross_entropy_backward", &cross_entropy_backward_cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl("cross_entropy_backward", &cross_entropy_backward_npu); }
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl("cross_entropy", autograd_kernel<&kCrossEntropy>());
  m.impl_not_differentiable("cross_entropy_backward");  // no double backward
}

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
EMBER_OP_INFO("ember::mse_loss", info) {
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({4, 5}, dt, -2, 2, 1), make_tensor({4, 5}, dt, -2, 2, 2)}, "same shapes"},
        {{testing::make_noncontig({3, 6}, dt, -2, 2, 3), make_tensor({6}, dt, -2, 2, 4)}, "non-contiguous, broadcast"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor d = testing::ref_map2(a[0].to_tensor(), a[1].to_tensor(), [](double x, double y) { return (x - y) * (x - y); });
    return {testing::ref_reduce(d, {}, false, [](const std::vector<double>& v) {
      double s = 0;
      for (double x : v) s += x;
      return s / static_cast<double>(v.size());
    })};
  };
}

}  // namespace ember
