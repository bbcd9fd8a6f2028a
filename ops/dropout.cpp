// dropout's op, _dropout(input, p, seed, offset) -> (output, mask): element i is kept when the
// Philox uniform of counter offset + i (uniform_'s value there) is >= p, and scaled by
// 1 / (1 - p). mask is CANN's bit mask (device/cpu/random.h: uint8, align(n, 128) / 8 bytes), the
// same bits on every device. On the NPU, CANN's aclnnDropoutGenMask + aclnnDropoutDoMask; the
// node NativeDropoutBackward0 applies the mask to the gradient (_dropout_backward, aclnnDropoutDoMask
// on the NPU), which is linear and its own derivative.
#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/random.h"
#include "ember/dispatch/library.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"

namespace ember::op {
EMBER_DECLARE_OP(_dropout, Keep, "ember::_dropout(Tensor input, float p, int seed, int offset) -> (Tensor, Tensor)",
                 std::tuple<Tensor, Tensor>(const Tensor&, double, int64_t, int64_t));
EMBER_DECLARE_OP(_dropout_backward, Keep, "ember::_dropout_backward(Tensor grad, Tensor mask, float p) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, double));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

void check_p(const char* op, double p) {
  EMBER_CHECK_VALUE(p >= 0 && p <= 1, op, ": dropout probability has to be between 0 and 1, but got ", p);
}
void check_mask(const char* op, const Tensor& mask, const Tensor& like) {
  common_device(op, {&mask, &like});
  EMBER_CHECK_DTYPE(mask.dtype() == kUInt8, op, ": mask must be uint8 (a bit mask), got ", mask.dtype());
  const int64_t bytes = cpu::dropout_mask_bytes(like.numel());
  EMBER_CHECK_SHAPE(mask.dim() == 1 && mask.size(0) == bytes, op, ": mask must have shape [", bytes, "] for ",
                    like.numel(), " elements, got ", mask.sizes());
}

std::tuple<Tensor, Tensor> dropout_kernel(const Tensor& x, double p, int64_t seed, int64_t offset) {
  const char* op = "dropout";
  check_p(op, p);
  EMBER_CHECK_DTYPE(x.is_floating_point(), op, ": expects a floating tensor, got ", x.dtype());
  Tensor out = empty_on(x.sizes(), x.dtype(), x.device());
  Tensor mask = empty_on({cpu::dropout_mask_bytes(x.numel())}, kUInt8, x.device());
  if (x.is_npu()) {
    EXEC_NPU_CMD(npu::aclnnDropoutGenMask, x.sizes(), p, seed, offset, mask);
    EXEC_NPU_CMD(npu::aclnnDropoutDoMask, x, mask, p, out);
  } else {
    cpu::dropout_mask(mask.data_ptr<uint8_t>(), x.numel(), p, static_cast<uint64_t>(seed), static_cast<uint64_t>(offset));
    cpu::dropout_apply(strided(out), strided(x), mask.data_ptr<uint8_t>(), p);
  }
  return {out, mask};
}
Tensor dropout_backward_kernel(const Tensor& grad, const Tensor& mask, double p) {
  const char* op = ::ember::op::_dropout_backward::op_name();
  check_p(op, p);
  EMBER_CHECK_DTYPE(grad.is_floating_point(), op, ": grad must be floating, got ", grad.dtype());
  check_mask(op, mask, grad);
  Tensor out = empty_on(grad.sizes(), grad.dtype(), grad.device());
  if (grad.is_npu()) {
    EXEC_NPU_CMD(npu::aclnnDropoutDoMask, grad, mask, p, out);
  } else {
    cpu::dropout_apply(strided(out), strided(grad), mask.contiguous().data_ptr<uint8_t>(), p);
  }
  return out;
}
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::_dropout());
  m.def(op::_dropout_backward());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::_dropout(), &dropout_kernel);
  m.impl(op::_dropout_backward(), &dropout_backward_kernel);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::_dropout(), &dropout_kernel);
  m.impl(op::_dropout_backward(), &dropout_backward_kernel);
}

using DropSig = std::tuple<Tensor, Tensor>(const Tensor&, double, int64_t, int64_t);
using DropBackSig = Tensor(const Tensor&, const Tensor&, double);
std::tuple<Tensor, Tensor> _dropout(const Tensor& input, double p, int64_t seed, int64_t offset) {
  return op::_dropout::call(input, p, seed, offset);
}
Tensor _dropout_backward(const Tensor& grad, const Tensor& mask, double p) {
  return op::_dropout_backward::call(grad, mask, p);
}

namespace {
using namespace autograd;
std::vector<Tensor> dropout_bw(const BackwardCtx<DropSig>& c) {
  return {_dropout_backward(c.grad(0), c.output(), c.arg<1>())};
}
std::vector<Tensor> dropout_back_bw(const BackwardCtx<DropBackSig>& c) {
  return {_dropout_backward(c.grad(), c.arg<1>(), c.arg<2>()), Tensor()};
}
const auto kDropout = spec_of<op::_dropout>("NativeDropoutBackward0", &dropout_bw).saving_output(1);
const auto kDropoutBack =
    spec_of<op::_dropout_backward>("NativeDropoutBackwardBackward0", &dropout_back_bw).saving(saves(1));
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::_dropout(), autograd_kernel<&kDropout>());
  m.impl(op::_dropout_backward(), autograd_kernel<&kDropoutBack>());
}

}  // namespace ember
