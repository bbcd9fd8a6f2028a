// Losses. cross_entropy(logits [N, C] or [C], int64 target [N] or []) = mean over rows whose
// target is not ignore_index of logsumexp(logits[i]) - logits[i, target[i]]: log-softmax fused
// in, fp32 math, a 0-d result in the logits' dtype. mse_loss(input, target) = mean((input -
// target)^2), written with public ops.
#include <cmath>

#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/nn.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

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
  EXEC_NPU_CMD(npu::aclnnEmberCrossEntropy, l, t, ignore_index, out);
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
  EXEC_NPU_CMD(npu::aclnnEmberCrossEntropyGrad, grad.reshape({}), l, t, ignore_index, out.view(l.sizes()));
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

}  // namespace ember
