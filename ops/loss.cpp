// Losses. cross_entropy(logits [N, C] or [C], int64 target [N] or []) = mean over rows whose
// target is not ignore_index of logsumexp(logits[i]) - logits[i, target[i]]: log-softmax fused
// in, fp32 math, a 0-d result in the logits' dtype.
//
// mse_loss, l1_loss, smooth_l1_loss, nll_loss, binary_cross_entropy(_with_logits), each with
// PyTorch's reduction (Reduction::None / Mean / Sum), are ops of their own: on the CPU their
// kernel is the formula's composite; on the NPU, CANN's fused kernel (aclnnMseLoss, ...). Their
// node (MseLossBackward0, ..., ops/loss_backward.cpp) calls the backward op (mse_loss_backward:
// aclnnMseLossBackward on the NPU, the formula's ops on the CPU), or with create_graph the
// formula's differentiable ops, so second derivatives work. A binary_cross_entropy weight or
// pos_weight that requires grad runs the composite instead, which differentiates every argument;
// nll_loss's node differentiates its class weight itself. (libtorch 1.13's l1_loss is a
// composite, grad_fn MeanBackward0; ember's follows torch_npu's: one kernel, L1LossBackward0.)
#include <cmath>

#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/nn.h"
#include "ember/ops/internal/loss.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

#include "ember/ops/internal/loss_decls.h"

namespace ember::op {
EMBER_DECLARE_OP(cross_entropy, Float32,
                 "ember::cross_entropy(Tensor logits, Tensor target, "
                 "int ignore_index=-100) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, int64_t));
EMBER_DECLARE_OP(nll_loss, Float32,
                 "ember::nll_loss(Tensor input, Tensor target, Tensor? weight=None, "
                 "int reduction=1, int ignore_index=-100) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t, int64_t));
EMBER_DECLARE_OP(cross_entropy_backward, Keep,
                 "ember::cross_entropy_backward(Tensor grad, Tensor logits, "
                 "Tensor target, int ignore_index=-100) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;
using namespace ops::loss;

Tensor cross_entropy_cpu(const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  auto [l, t] = ce_rows(op::cross_entropy::op_name(), logits, target);
  Tensor out = empty_on({}, logits.dtype(), logits.device());
  cpu::cross_entropy(strided(out), strided(l.contiguous()), strided(t.contiguous()), ignore_index,
                     op::cross_entropy::op_name());
  return out;
}

Tensor cross_entropy_npu(const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  auto [l, t] = ce_rows(op::cross_entropy::op_name(), logits, target);
  Tensor out = empty_on({}, logits.dtype(), logits.device());
  EXEC_NPU_CMD(npu::aclnnEmberCrossEntropy, l, t, ignore_index, out);
  return out;
}

Tensor mse_loss_composite(const Tensor& input, const Tensor& target, int64_t reduction) {
  check_pair(op::mse_loss::op_name(), input, target);
  return reduced(op::mse_loss::op_name(), (input - target).square(), reduction);
}

Tensor l1_loss_composite(const Tensor& input, const Tensor& target, int64_t reduction) {
  check_pair(op::l1_loss::op_name(), input, target);
  return reduced(op::l1_loss::op_name(), (input - target).abs(), reduction);
}

// |d| < beta: 0.5 d^2 / beta; else |d| - 0.5 beta (beta = 0 is l1_loss).
Tensor smooth_l1_loss_composite(const Tensor& input, const Tensor& target, int64_t reduction, double beta) {
  check_pair(op::smooth_l1_loss::op_name(), input, target);
  EMBER_CHECK_VALUE(beta >= 0, op::smooth_l1_loss::op_name(), ": beta must be non-negative, got ", beta);
  Tensor d = input - target;
  Tensor a = d.abs();
  if (beta == 0) return reduced(op::smooth_l1_loss::op_name(), a, reduction);
  Tensor l = where(a.lt(beta), d.square().mul(0.5 / beta), a.sub(0.5 * beta));
  return reduced(op::smooth_l1_loss::op_name(), l, reduction);
}

// nll_loss's value and its total weight (the sum of w[t_i] over the rows not ignored).
std::pair<Tensor, Tensor> nll_loss_math(const char* op, const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index) {
  auto [x, t] = nll_check(op, input, target, weight, ignore_index);
  auto [l, w] = nll_rows(x, t, weight, ignore_index);
  Tensor total = w.sum();
  if (reduction == Reduction::Mean) return {l.sum() / total, total};
  l = reduced(op, l, reduction);
  return {reduction == Reduction::None && input.dim() == 1 ? l.reshape({}) : l, total};
}

Tensor mse_loss_npu(const Tensor& input, const Tensor& target, int64_t reduction) {
  check_pair(op::mse_loss::op_name(), input, target);
  check_reduction(op::mse_loss::op_name(), reduction);
  Tensor out = loss_out({&input, &target}, reduction, input);
  EXEC_NPU_CMD(npu::aclnnMseLoss, input, target, reduction, out);
  return out;
}
Tensor l1_loss_npu(const Tensor& input, const Tensor& target, int64_t reduction) {
  check_pair(op::l1_loss::op_name(), input, target);
  check_reduction(op::l1_loss::op_name(), reduction);
  Tensor out = loss_out({&input, &target}, reduction, input);
  EXEC_NPU_CMD(npu::aclnnL1Loss, input, target, reduction, out);
  return out;
}
Tensor smooth_l1_loss_npu(const Tensor& input, const Tensor& target, int64_t reduction, double beta) {
  check_pair(op::smooth_l1_loss::op_name(), input, target);
  check_reduction(op::smooth_l1_loss::op_name(), reduction);
  EMBER_CHECK_VALUE(beta >= 0, op::smooth_l1_loss::op_name(), ": beta must be non-negative, got ", beta);
  Tensor out = loss_out({&input, &target}, reduction, input);
  EXEC_NPU_CMD(npu::aclnnSmoothL1Loss, input, target, reduction, static_cast<float>(beta), out);
  return out;
}
Tensor binary_cross_entropy_npu(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                                int64_t reduction) {
  const char* op = ::ember::op::binary_cross_entropy::op_name();
  check_same_shape(op, input, target);
  check_reduction(op, reduction);
  check_weight(op, input, weight);
  check_probabilities(op, input);
  Tensor out = loss_out({&input, &target, &opt(weight)}, reduction, input);
  EXEC_NPU_CMD(npu::aclnnBinaryCrossEntropy, input, target, opt(weight), reduction, out);
  return out;
}
Tensor binary_cross_entropy_with_logits_npu(const Tensor& input, const Tensor& target,
                                            const std::optional<Tensor>& weight,
                                            const std::optional<Tensor>& pos_weight, int64_t reduction) {
  const char* op = ::ember::op::binary_cross_entropy_with_logits::op_name();
  check_same_shape(op, input, target);
  check_reduction(op, reduction);
  check_weight(op, input, weight);
  check_weight(op, input, pos_weight);
  Tensor out = loss_out({&input, &target, &opt(weight), &opt(pos_weight)}, reduction, input);
  EXEC_NPU_CMD(npu::aclnnBinaryCrossEntropyWithLogits, input, target, opt(weight), opt(pos_weight), reduction, out);
  return out;
}

std::tuple<Tensor, Tensor> nll_loss_forward_cpu(const Tensor& input, const Tensor& target,
                                                const std::optional<Tensor>& weight, int64_t reduction,
                                                int64_t ignore_index) {
  check_reduction(op::nll_loss::op_name(), reduction);
  auto [out, total] = nll_loss_math(op::nll_loss::op_name(), input, target, weight, reduction, ignore_index);
  return {out, total};
}
std::tuple<Tensor, Tensor> nll_loss_forward_npu(const Tensor& input, const Tensor& target,
                                                const std::optional<Tensor>& weight, int64_t reduction,
                                                int64_t ignore_index) {
  check_reduction(op::nll_loss::op_name(), reduction);
  nll_check(op::nll_loss::op_name(), input, target, weight, ignore_index);
  Shape shape = reduction == Reduction::None && input.dim() == 2 ? Shape{input.size(0)} : Shape{};
  Tensor out = empty_on(shape, input.dtype(), input.device());
  Tensor total = empty_on({}, input.dtype(), input.device());
  EXEC_NPU_CMD(npu::aclnnNLLLoss, input, target, nll_weight(input, weight), reduction, ignore_index, out, total);
  return {out, total};
}

// nll_loss: the first output of nll_loss_forward (the NPU's aclnnNLLLoss), whose node is
// NllLossBackward0.
Tensor nll_loss_entry(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                      int64_t reduction, int64_t ignore_index) {
  return std::get<0>(nll_loss_forward(input, target, weight, reduction, ignore_index));
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::cross_entropy());
  m.def(op::mse_loss());
  m.def(op::l1_loss());
  m.def(op::smooth_l1_loss());
  m.def(op::nll_loss(),
        &nll_loss_entry);
  m.def(op::nll_loss_forward());
  m.def(op::binary_cross_entropy());
  m.def(op::binary_cross_entropy_with_logits());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::cross_entropy(), &cross_entropy_cpu);
  m.impl(op::mse_loss(), &mse_loss_composite);
  m.impl(op::l1_loss(), &l1_loss_composite);
  m.impl(op::smooth_l1_loss(), &smooth_l1_loss_composite);
  m.impl(op::nll_loss_forward(), &nll_loss_forward_cpu);
  m.impl(op::binary_cross_entropy(), &binary_cross_entropy_composite);
  m.impl(op::binary_cross_entropy_with_logits(), &binary_cross_entropy_with_logits_composite);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::cross_entropy(), &cross_entropy_npu);
  m.impl(op::mse_loss(), &mse_loss_npu);
  m.impl(op::l1_loss(), &l1_loss_npu);
  m.impl(op::smooth_l1_loss(), &smooth_l1_loss_npu);
  m.impl(op::nll_loss_forward(), &nll_loss_forward_npu);
  m.impl(op::binary_cross_entropy(), &binary_cross_entropy_npu);
  m.impl(op::binary_cross_entropy_with_logits(), &binary_cross_entropy_with_logits_npu);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  return op::cross_entropy::call(logits, target, ignore_index);
}
Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  return op::mse_loss::call(input, target, reduction);
}
Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  return op::l1_loss::call(input, target, reduction);
}
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, int64_t reduction, double beta) {
  return op::smooth_l1_loss::call(input, target, reduction, beta);
}
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction,
                int64_t ignore_index) {
  return op::nll_loss::call(input, target, weight, reduction, ignore_index);
}
std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& input, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction,
                                            int64_t ignore_index) {
  return op::nll_loss_forward::call(input, target, weight, reduction, ignore_index);
}
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                            int64_t reduction) {
  return op::binary_cross_entropy::call(input, target, weight, reduction);
}
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight, int64_t reduction) {
  return op::binary_cross_entropy_with_logits::call(input, target, weight, pos_weight, reduction);
}

// ---------------------------------------------------------------- backward
// d loss / d logits[i] = grad / n (softmax(logits[i]) - onehot(target[i])), n = rows counted;
// zero for ignored rows. One fused pass (softmax recomputed from the saved logits).
namespace {
using namespace autograd;

Tensor cross_entropy_backward_cpu(const Tensor& grad, const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  auto [l, t] = ce_rows(op::cross_entropy_backward::op_name(), logits, target);
  common_device(op::cross_entropy_backward::op_name(), {&grad, &logits});
  EMBER_CHECK_SHAPE(grad.numel() == 1, op::cross_entropy_backward::op_name(),
                    ": grad must hold one element, got shape ", grad.sizes());
  Tensor out = empty_on(logits.sizes(), logits.dtype(), logits.device());
  cpu::cross_entropy_backward(strided(out.view(l.sizes())), strided(grad.contiguous()), strided(l.contiguous()),
                              strided(t.contiguous()), ignore_index, op::cross_entropy_backward::op_name());
  return out;
}

Tensor cross_entropy_backward_npu(const Tensor& grad, const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  auto [l, t] = ce_rows(op::cross_entropy_backward::op_name(), logits, target);
  common_device(op::cross_entropy_backward::op_name(), {&grad, &logits});
  EMBER_CHECK_SHAPE(grad.numel() == 1, op::cross_entropy_backward::op_name(),
                    ": grad must hold one element, got shape ", grad.sizes());
  Tensor out = empty_on(logits.sizes(), logits.dtype(), logits.device());
  EXEC_NPU_CMD(npu::aclnnEmberCrossEntropyGrad, grad.reshape({}), l, t, ignore_index, out.view(l.sizes()));
  return out;
}

using CESig = Tensor(const Tensor&, const Tensor&, int64_t);
std::vector<Tensor> cross_entropy_bw(const BackwardCtx<CESig>& c) {
  return {op::cross_entropy_backward::call(c.grad(), c.arg<0>(), c.arg<1>(), c.arg<2>()),
          Tensor()};
}
const auto kCrossEntropy =
    spec_of<op::cross_entropy>("CrossEntropyBackward", &cross_entropy_bw).saving(saves(0, 1));
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::cross_entropy_backward());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl(op::cross_entropy_backward(), &cross_entropy_backward_cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl(op::cross_entropy_backward(), &cross_entropy_backward_npu); }
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::cross_entropy(), autograd_kernel<&kCrossEntropy>());
  autograd::impl_no_double_backward(m, op::cross_entropy_backward());
}

}  // namespace ember
