// softmax(x, dim) = exp(x - max) / sum(exp(x - max)); log_softmax(x, dim) = x - max - log(sum(exp(x - max)))
// along dim, computed in fp32 for fp16/bf16. Optional dtype: the input is cast to it first.
#include <algorithm>
#include <cmath>

#include "ember/device/cpu/reduce.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(softmax, Float32, "ember::softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                 Tensor(const Tensor&, int64_t, std::optional<DType>));
EMBER_DECLARE_OP(log_softmax, Float32, "ember::log_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                 Tensor(const Tensor&, int64_t, std::optional<DType>));
EMBER_DECLARE_OP(log_softmax_backward, Keep,
                 "ember::log_softmax_backward(Tensor grad, Tensor output, "
                 "int dim) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, int64_t));
EMBER_DECLARE_OP(softmax_backward, Keep, "ember::softmax_backward(Tensor grad, Tensor output, int dim) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, int64_t));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

using SoftmaxKernel = void (*)(const cpu::Strided&, const cpu::Strided&, int64_t);
using SoftmaxBackwardKernel = void (*)(const cpu::Strided&, const cpu::Strided&, const cpu::Strided&, int64_t);

template <SoftmaxKernel K>
Tensor softmax_cpu_impl(const char* op, const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  Tensor in = dtype ? x.to(*dtype) : x;
  EMBER_CHECK_DTYPE(in.is_floating_point(), op, ": expects a floating tensor, got ", in.dtype());
  int64_t d = x.dim() ? wrap_dim(dim, x.dim(), op) : 0;
  in = in.contiguous();
  Tensor out = empty_on(in.sizes_ref(), in.dtype(), in.device());
  if (out.numel()) K(strided(out), strided(in), d);
  return out;
}
Tensor softmax_cpu(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  return softmax_cpu_impl<cpu::softmax>(op::softmax::op_name(), x, dim, dtype);
}
Tensor log_softmax_cpu(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  return softmax_cpu_impl<cpu::log_softmax>(op::log_softmax::op_name(), x, dim, dtype);
}

// NPU: aclnnSoftmax / aclnnLogSoftmax (a non-contiguous input is staged by the op).
template <bool kLog>
Tensor softmax_npu_impl(const char* op, const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  Tensor in = dtype ? x.to(*dtype) : x;
  EMBER_CHECK_DTYPE(in.is_floating_point(), op, ": expects a floating tensor, got ", in.dtype());
  int64_t d = x.dim() ? wrap_dim(dim, x.dim(), op) : 0;
  Tensor out = empty_on(in.sizes(), in.dtype(), in.device());
  if (kLog) {
    EXEC_NPU_CMD(npu::aclnnLogSoftmax, in, d, out);
  } else {
    EXEC_NPU_CMD(npu::aclnnSoftmax, in, d, out);
  }
  return out;
}
Tensor softmax_npu(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  return softmax_npu_impl<false>(op::softmax::op_name(), x, dim, dtype);
}
Tensor log_softmax_npu(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  return softmax_npu_impl<true>(op::log_softmax::op_name(), x, dim, dtype);
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::softmax());
  m.def(op::log_softmax());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::softmax(), &softmax_cpu);
  m.impl(op::log_softmax(), &log_softmax_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::softmax(), &softmax_npu);
  m.impl(op::log_softmax(), &log_softmax_npu);
}

using Sig = Tensor(const Tensor&, int64_t, std::optional<DType>);

Tensor softmax(const Tensor& x, int64_t dim) { return op::softmax::call(x, dim, std::nullopt); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return op::log_softmax::call(x, dim, std::nullopt); }
Tensor Tensor::softmax(int64_t dim) const { return ember::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return ember::log_softmax(*this, dim); }

// ---------------------------------------------------------------- backward
// d softmax: y (g - sum(g y));  d log_softmax: g - exp(y) sum(g). Fused backward ops, fp32 inside.
namespace {
using namespace autograd;
using BwSig = Tensor(const Tensor&, const Tensor&, int64_t);

// The checks both backends share; returns the wrapped dim.
int64_t check_softmax_backward(const char* op, const Tensor& g, const Tensor& y, int64_t dim) {
  common_device(op, {&g, &y});
  EMBER_CHECK_SHAPE(g.sizes() == y.sizes(), op, ": grad of shape ", g.sizes(), " vs output of shape ", y.sizes());
  EMBER_CHECK_DTYPE(g.is_floating_point() && y.is_floating_point(), op, ": expected a floating dtype, got grad ",
                    g.dtype(), " and output ", y.dtype());
  return y.dim() ? wrap_dim(dim, y.dim(), op) : 0;
}

template <SoftmaxBackwardKernel K>
Tensor softmax_backward_cpu_impl(const char* op, const Tensor& g, const Tensor& y, int64_t dim) {
  int64_t d = check_softmax_backward(op, g, y, dim);
  Tensor gc = g.contiguous(), yc = y.contiguous();
  Tensor out = empty_on(y.sizes(), y.dtype(), y.device());
  if (out.numel()) K(strided(out), strided(gc), strided(yc), d);
  return out;
}
Tensor softmax_backward_cpu(const Tensor& g, const Tensor& y, int64_t dim) {
  return softmax_backward_cpu_impl<cpu::softmax_backward>(op::softmax_backward::op_name(), g, y, dim);
}
Tensor log_softmax_backward_cpu(const Tensor& g, const Tensor& y, int64_t dim) {
  return softmax_backward_cpu_impl<cpu::log_softmax_backward>(op::log_softmax_backward::op_name(), g, y, dim);
}

template <bool kLog>
Tensor softmax_backward_npu_impl(const char* op, const Tensor& g, const Tensor& y, int64_t dim) {
  int64_t d = check_softmax_backward(op, g, y, dim);
  Tensor out = empty_on(y.sizes(), y.dtype(), y.device());
  if (kLog) {
    EXEC_NPU_CMD(npu::aclnnLogSoftmaxBackward, g, y, d, out);
  } else {
    EXEC_NPU_CMD(npu::aclnnSoftmaxBackward, g, y, d, out);
  }
  return out;
}
Tensor softmax_backward_npu(const Tensor& g, const Tensor& y, int64_t dim) {
  return softmax_backward_npu_impl<false>(op::softmax_backward::op_name(), g, y, dim);
}
Tensor log_softmax_backward_npu(const Tensor& g, const Tensor& y, int64_t dim) {
  return softmax_backward_npu_impl<true>(op::log_softmax_backward::op_name(), g, y, dim);
}

std::vector<Tensor> softmax_bw(const BackwardCtx<Sig>& c) {
  Tensor y = c.output();
  return {op::softmax_backward::call(c.grad().to(y.dtype()), y, c.arg<1>())};
}
std::vector<Tensor> log_softmax_bw(const BackwardCtx<Sig>& c) {
  Tensor y = c.output();
  return {op::log_softmax_backward::call(c.grad().to(y.dtype()), y, c.arg<1>())};
}
const auto kSoftmax = spec_of<op::softmax>("SoftmaxBackward", &softmax_bw).saving_output();
const auto kLogSoftmax = spec_of<op::log_softmax>("LogSoftmaxBackward", &log_softmax_bw).saving_output();
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::softmax_backward());
  m.def(op::log_softmax_backward());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::softmax_backward(), &softmax_backward_cpu);
  m.impl(op::log_softmax_backward(), &log_softmax_backward_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::softmax_backward(), &softmax_backward_npu);
  m.impl(op::log_softmax_backward(), &log_softmax_backward_npu);
}
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::softmax(), autograd_kernel<&kSoftmax>());
  m.impl(op::log_softmax(), autograd_kernel<&kLogSoftmax>());
  autograd::impl_no_double_backward(m, op::softmax_backward());
  autograd::impl_no_double_backward(m, op::log_softmax_backward());
}

}  // namespace ember
