// argmax / argmin: int64 index of the first extreme value along dim (dim = None: of the
// flattened tensor). NaN counts as the maximum (and the minimum), as in PyTorch.
#include <cmath>

#include "ember/device/cpu/reduce.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(argmax, Keep, "ember::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
                 Tensor(const Tensor&, std::optional<int64_t>, bool));
EMBER_DECLARE_OP(argmin, Keep, "ember::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
                 Tensor(const Tensor&, std::optional<int64_t>, bool));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

using ArgKernel = void (*)(const cpu::Strided&, const cpu::Strided&, int64_t);

template <ArgKernel K>
Tensor arg_cpu(const char* op, const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  EMBER_CHECK_SHAPE(x.numel() > 0, op, ": expected a non-empty tensor, got shape ", x.sizes_ref());
  if (!dim) {
    Tensor flat = x.reshape({-1});
    Tensor r = arg_cpu<K>(op, flat, 0, false);
    return keepdim ? r.reshape(Shape(static_cast<size_t>(x.dim()), 1)) : r;
  }
  int64_t d = wrap_dim(*dim, x.dim(), op);
  if (x.dim() == 0) return empty_on({}, kInt64, x.device()).fill_(0);
  uint64_t mask = uint64_t(1) << d;
  Tensor out = empty_on(reduced_shape(x.sizes_ref(), mask, keepdim), kInt64, x.device());
  K(strided(keepdim_view(out, x.sizes_ref(), mask)), strided(x), d);
  return out;
}
// NPU: aclnnArgMax/ArgMin over one dim; dim = None flattens first (a view or a copy).
template <bool kMax>
Tensor arg_npu(const char* op, const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  EMBER_CHECK_SHAPE(x.numel() > 0, op, ": expected a non-empty tensor, got shape ", x.sizes());
  if (!dim) {
    Tensor r = arg_npu<kMax>(op, x.reshape({-1}), 0, false);
    return keepdim ? r.reshape(Shape(static_cast<size_t>(x.dim()), 1)) : r;
  }
  int64_t d = wrap_dim(*dim, x.dim(), op);
  if (x.dim() == 0) return empty_on({}, kInt64, x.device()).fill_(0);
  Tensor out = empty_on(reduced_shape(x.sizes(), uint64_t(1) << d, keepdim), kInt64, x.device());
  if (kMax) {
    EXEC_NPU_CMD(npu::aclnnArgMax, x, d, keepdim, out);
  } else {
    EXEC_NPU_CMD(npu::aclnnArgMin, x, d, keepdim, out);
  }
  return out;
}
Tensor argmax_npu(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_npu<true>(op::argmax::op_name(), x, dim, keepdim);
}
Tensor argmin_npu(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_npu<false>(op::argmin::op_name(), x, dim, keepdim);
}

Tensor argmax_cpu(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_cpu<cpu::argmax>(op::argmax::op_name(), x, dim, keepdim);
}
Tensor argmin_cpu(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_cpu<cpu::argmin>(op::argmin::op_name(), x, dim, keepdim);
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::argmax());
  m.def(op::argmin());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::argmax(), &argmax_cpu);
  m.impl(op::argmin(), &argmin_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::argmax(), &argmax_npu);
  m.impl(op::argmin(), &argmin_npu);
}

using Sig = Tensor(const Tensor&, std::optional<int64_t>, bool);
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) { return op::argmax::call(x, dim, keepdim); }
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) { return op::argmin::call(x, dim, keepdim); }
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const { return ember::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const { return ember::argmin(*this, dim, keepdim); }

// ---------------------------------------------------------------- backward
// Indices are not differentiable.
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl_not_differentiable(op::argmax());
  m.impl_not_differentiable(op::argmin());
}

}  // namespace ember
