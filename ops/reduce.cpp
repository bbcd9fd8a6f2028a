// Reductions over any dims (empty list = all) with keepdim: the reduce table (core/tables/reduce_ops.def:
// sum, amax, amin, ...), whose rows give each op's schema, kernels, functions and backward here,
// mean (an op of its own: the composite sum / count on the CPU, CANN's aclnnMean on the NPU), and
// the composites max(), min(). fp16/bf16 accumulate in fp32.
#include <cmath>
#include <limits>

#include "ember/device/cpu/reduce.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

#define EMBER_RED_SCHEMA_S ", ScalarType? dtype=None"
#define EMBER_RED_SCHEMA_M ""
#define EMBER_RED_SIG_S Tensor(const Tensor&, IntArrayRef, bool, std::optional<DType>)
#define EMBER_RED_SIG_M Tensor(const Tensor&, IntArrayRef, bool)
namespace ember::op {
#define EMBER_DECL(name, Acl, form, Acc, save, grad, ref, policy, ...)                                     \
  EMBER_DECLARE_OP(name, policy,                                                                            \
                   "ember::" #name "(Tensor self, int[] dim=[], bool keepdim=False" EMBER_RED_SCHEMA_##form \
                   ") -> Tensor",                                                                           \
                   EMBER_RED_SIG_##form);
EMBER_REDUCE_OPS(EMBER_DECL)
#undef EMBER_DECL
EMBER_DECLARE_OP(mean, Float32, "ember::mean(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, bool));
EMBER_DECLARE_OP(max, Keep, "ember::max(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_DECLARE_OP(min, Keep, "ember::min(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_DECLARE_OP(all, Keep, "ember::all(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, bool));
EMBER_DECLARE_OP(any, Keep, "ember::any(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, bool));
}  // namespace ember::op

namespace ember {
namespace ops {
// The output viewed with size-1 dims restored at the reduced positions (the kernels' layout).
Tensor keepdim_view(const Tensor& out, IntArrayRef in_shape, uint64_t mask) {
  if (static_cast<size_t>(out.dim()) == in_shape.size()) return out;
  DimVector sizes, strides;
  size_t j = 0;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    if (mask & (uint64_t(1) << d)) {
      sizes.push_back(1);
      strides.push_back(0);
    } else {
      sizes.push_back(out.sizes_ref()[j]);
      strides.push_back(out.strides_ref()[j]);
      ++j;
    }
  }
  return view_of(out, sizes, strides, out.storage_offset());
}
Tensor unsqueeze_reduced(const Tensor& g, IntArrayRef in_shape, IntArrayRef dims, bool keepdim) {
  if (keepdim) return g;
  uint64_t mask = reduce_mask("reduce_backward", dims, static_cast<int64_t>(in_shape.size()));
  Shape shape = reduced_shape(in_shape, mask, true).vec();
  return g.reshape(shape);
}
}  // namespace ops

namespace {
using namespace ops;

// ---------------------------------------------------------------- meta
// The output of a reduction: shape, dtype, and the reduced dims as a mask. Shared by the CPU and
// NPU kernels of every table row. S rows (like sum): the requested dtype, else int64 for integers
// and bool, else the input's. M rows (like amax): the input's dtype; no zero-size reduced dim.
struct ReduceMeta {
  uint64_t mask;
  DimVector shape;
  DType dtype;
};
void check_nonempty(const char* op, const Tensor& x, uint64_t mask) {
  for (int64_t d = 0; d < x.dim(); ++d) {
    EMBER_CHECK_SHAPE(!((mask >> d) & 1) || x.size(d) > 0, op, ": expected reduction dim ", d,
                      " to have non-zero size (shape ", x.sizes_ref(), ")");
  }
  EMBER_CHECK_SHAPE(x.numel() > 0 || x.dim() > 0, op, ": empty input");
}
ReduceMeta reduce_meta_S(const char* op, const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  uint64_t mask = reduce_mask(op, dims, x.dim());
  DType dt = dtype ? *dtype : is_integral(x.dtype(), true) ? kInt64 : x.dtype();
  return {mask, reduced_shape(x.sizes_ref(), mask, keepdim), dt};
}
ReduceMeta reduce_meta_M(const char* op, const Tensor& x, IntArrayRef dims, bool keepdim) {
  uint64_t mask = reduce_mask(op, dims, x.dim());
  check_nonempty(op, x, mask);
  return {mask, reduced_shape(x.sizes_ref(), mask, keepdim), x.dtype()};
}

// ---------------------------------------------------------------- the reduce table's kernels
// (core/tables/reduce_ops.def); S rows pass the output dtype on to aclnn.
#define EMBER_RED_PARAMS_S IntArrayRef dims, bool keepdim, std::optional<DType> dtype
#define EMBER_RED_PARAMS_M IntArrayRef dims, bool keepdim
#define EMBER_RED_META_S(op) reduce_meta_S(op, x, dims, keepdim, dtype)
#define EMBER_RED_META_M(op) reduce_meta_M(op, x, dims, keepdim)
#define EMBER_RED_NPU_ARGS_S m.dtype,
#define EMBER_RED_NPU_ARGS_M
#define EMBER_RED_KERNELS(name, Acl, form, Acc, ...)                          \
  Tensor name##_cpu(const Tensor& x, EMBER_RED_PARAMS_##form) {                     \
    ReduceMeta m = EMBER_RED_META_##form(#name);                                    \
    Tensor out = empty_on(m.shape, m.dtype, x.device());                            \
    cpu::name(strided(keepdim_view(out, x.sizes_ref(), m.mask)), strided(x));       \
    return out;                                                                     \
  }                                                                                 \
  Tensor name##_npu(const Tensor& x, EMBER_RED_PARAMS_##form) {                     \
    ReduceMeta m = EMBER_RED_META_##form(#name);                                    \
    Tensor out = empty_on(m.shape, m.dtype, x.device());                            \
    EXEC_NPU_CMD(npu::aclnn##Acl, x, dims, keepdim, EMBER_RED_NPU_ARGS_##form out); \
    return out;                                                                     \
  }
EMBER_REDUCE_OPS(EMBER_RED_KERNELS)
#undef EMBER_RED_KERNELS

// mean = sum / count, accumulated in fp32 for fp16/bf16 and rounded once.
void check_mean(const Tensor& x) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), op::mean::op_name(),
                    ": could not infer output dtype; input dtype must be floating point, got ", x.dtype());
}
Tensor mean_any(const Tensor& x, IntArrayRef dims, bool keepdim) {
  check_mean(x);
  uint64_t mask = reduce_mask(op::mean::op_name(), dims, x.dim());
  int64_t count = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if ((mask >> d) & 1) count *= x.size(d);
  DType acc = is_reduced_float(x.dtype()) ? kFloat32 : x.dtype();
  Tensor s = ember::sum(x, dims, keepdim, acc);
  Tensor m = count ? ember::div(s, Scalar(static_cast<double>(count))) : ember::div(s, Scalar(0.0));
  return m.dtype() == x.dtype() ? m : m.to(x.dtype());
}

// On the NPU, CANN's aclnnMean (float64 accumulation, one rounding).
Tensor mean_npu(const Tensor& x, IntArrayRef dims, bool keepdim) {
  check_mean(x);
  uint64_t mask = reduce_mask(op::mean::op_name(), dims, x.dim());
  Tensor out = empty_on(reduced_shape(x.sizes_ref(), mask, keepdim), x.dtype(), x.device());
  EXEC_NPU_CMD(npu::aclnnMean, x, dims, keepdim, x.dtype(), out);
  return out;
}

Tensor max_all(const Tensor& x) { return ember::amax(x, {}, false); }
Tensor min_all(const Tensor& x) { return ember::amin(x, {}, false); }

// all / any (bool results): on the CPU, counts of zero (non-zero) elements, compared; on the NPU
// CANN's aclnnAll / aclnnAny.
Tensor all_cpu(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return ember::sum(x.eq(0), dims, keepdim, kInt64).eq(0);
}
Tensor any_cpu(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return ember::sum(x.ne(0), dims, keepdim, kInt64).gt(0);
}
Tensor all_npu(const Tensor& x, IntArrayRef dims, bool keepdim) {
  uint64_t mask = reduce_mask(op::all::op_name(), dims, x.dim());
  Tensor out = empty_on(reduced_shape(x.sizes_ref(), mask, keepdim), kBool, x.device());
  EXEC_NPU_CMD(npu::aclnnAll, x, dims, keepdim, out);
  return out;
}
Tensor any_npu(const Tensor& x, IntArrayRef dims, bool keepdim) {
  uint64_t mask = reduce_mask(op::any::op_name(), dims, x.dim());
  Tensor out = empty_on(reduced_shape(x.sizes_ref(), mask, keepdim), kBool, x.device());
  EXEC_NPU_CMD(npu::aclnnAny, x, dims, keepdim, out);
  return out;
}

}  // namespace

EMBER_LIBRARY(ember, m) {
#define EMBER_DEF(name, ...) m.def(op::name());
  EMBER_REDUCE_OPS(EMBER_DEF)
#undef EMBER_DEF
  m.def(op::mean());
  m.def(op::max(), &max_all);
  m.def(op::min(), &min_all);
  m.def(op::all());
  m.def(op::any());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
#define EMBER_IMPL(name, ...) m.impl(op::name(), &name##_cpu);
  EMBER_REDUCE_OPS(EMBER_IMPL)
#undef EMBER_IMPL
  m.impl(op::all(), &all_cpu);
  m.impl(op::any(), &any_cpu);
  m.impl(op::mean(), &mean_any);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
#define EMBER_IMPL(name, ...) m.impl(op::name(), &name##_npu);
  EMBER_REDUCE_OPS(EMBER_IMPL)
#undef EMBER_IMPL
  m.impl(op::all(), &all_npu);
  m.impl(op::any(), &any_npu);
  m.impl(op::mean(), &mean_npu);
}

using Red = EMBER_RED_SIG_M;
#define EMBER_FN_S(name)                                                                                 \
  Tensor name(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {             \
    return op::name::call(x, dims, keepdim, dtype);                                                      \
  }                                                                                                      \
  Tensor Tensor::name(std::optional<DType> dtype) const { return ember::name(*this, {}, false, dtype); } \
  Tensor Tensor::name(IntArrayRef dims, bool keepdim, std::optional<DType> dtype) const {                \
    return ember::name(*this, dims, keepdim, dtype);                                                     \
  }
#define EMBER_FN_M(name)                                                                                               \
  Tensor name(const Tensor& x, IntArrayRef dims, bool keepdim) { return op::name::call(x, dims, keepdim); }            \
  Tensor Tensor::name(IntArrayRef dims, bool keepdim) const { return ember::name(*this, dims, keepdim); }
#define EMBER_FN(name, Acl, form, ...) EMBER_FN_##form(name)
EMBER_REDUCE_OPS(EMBER_FN)
#undef EMBER_FN
#undef EMBER_FN_S
#undef EMBER_FN_M
Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim) { return op::mean::call(x, dims, keepdim); }
Tensor max(const Tensor& x) { return op::max::call(x); }
Tensor min(const Tensor& x) { return op::min::call(x); }

Tensor all(const Tensor& x, IntArrayRef dims, bool keepdim) { return op::all::call(x, dims, keepdim); }
Tensor any(const Tensor& x, IntArrayRef dims, bool keepdim) { return op::any::call(x, dims, keepdim); }
Tensor Tensor::all(IntArrayRef dims, bool keepdim) const { return ember::all(*this, dims, keepdim); }
Tensor Tensor::any(IntArrayRef dims, bool keepdim) const { return ember::any(*this, dims, keepdim); }
bool Tensor::equal(const Tensor& other) const { return ember::equal(*this, other); }

Tensor Tensor::mean() const { return ember::mean(*this, {}, false); }
Tensor Tensor::mean(IntArrayRef dims, bool keepdim) const { return ember::mean(*this, dims, keepdim); }
Tensor Tensor::max() const { return ember::max(*this); }
Tensor Tensor::min() const { return ember::min(*this); }

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;

// d amax(x, dims) = g shared evenly among the elements equal to the max (PyTorch's rule; amin alike)
Tensor share_among_equal(const Tensor& g, const Tensor& x, const Tensor& y, IntArrayRef dims) {
  Tensor hit = (x == y).to(g.dtype());
  return g * hit / hit.sum(dims, true);
}

// A row's formula sees g, sizes, dims, and what the row saves: x (X, XY), y (XY).
#define EMBER_RED_BW_VARS_N
#define EMBER_RED_BW_VARS_X const Tensor x = c.arg<0>();
#define EMBER_RED_BW_VARS_XY EMBER_RED_BW_VARS_X const Tensor y = unsqueeze_reduced(c.output(), sizes, dims, keepdim);
#define EMBER_RED_BW_SPEC_N(spec) spec
#define EMBER_RED_BW_SPEC_X(spec) spec.saving(saves(0))
#define EMBER_RED_BW_SPEC_XY(spec) spec.saving(saves(0)).saving_output()
#define EMBER_BW(name, Acl, form, Acc, save, grad_expr, ref, policy, Node)       \
  std::vector<Tensor> name##_bw(const BackwardCtx<EMBER_RED_SIG_##form>& c) { \
    const IntArrayRef sizes = c.meta<0>().sizes, dims = c.arg<1>();           \
    const bool keepdim = c.arg<2>();                                          \
    const Tensor g = unsqueeze_reduced(c.grad(), sizes, dims, keepdim);       \
    EMBER_RED_BW_VARS_##save return {grad_expr};                              \
  }                                                                           \
  const auto k_##name =                                                       \
      EMBER_RED_BW_SPEC_##save((spec_of<op::name>(#Node "Backward", &name##_bw)));
EMBER_REDUCE_OPS(EMBER_BW)
#undef EMBER_BW

// mean: g spread evenly, g / count at every element reduced. libtorch's node is MeanBackward0
// for the mean of every element (x.mean()), MeanBackward1 for a mean over dims.
std::vector<Tensor> mean_bw(const BackwardCtx<Red>& c) {
  const IntArrayRef sizes = c.meta<0>().sizes, dims = c.arg<1>();
  const bool keepdim = c.arg<2>();
  uint64_t mask = reduce_mask("mean_backward", dims, static_cast<int64_t>(sizes.size()));
  double count = 1;
  for (size_t d = 0; d < sizes.size(); ++d)
    if ((mask >> d) & 1) count *= static_cast<double>(sizes[d]);
  Tensor g = unsqueeze_reduced(c.grad(), sizes, dims, keepdim);
  return {g.expand(sizes).div(count).to(c.meta<0>().dtype)};
}
const auto k_mean_all = spec_of<op::mean>("MeanBackward0", &mean_bw);
const auto k_mean_dim = spec_of<op::mean>("MeanBackward1", &mean_bw);
Tensor mean_autograd(const Tensor& x, IntArrayRef dims, bool keepdim) {
  if (dims.empty() && !keepdim) return autograd_kernel<&k_mean_all>()(x, dims, keepdim);
  return autograd_kernel<&k_mean_dim>()(x, dims, keepdim);
}
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl_not_differentiable(op::all());
  m.impl_not_differentiable(op::any());
  m.impl(op::mean(), &mean_autograd);
#define EMBER_BW_IMPL(name, ...) m.impl(op::name(), autograd_kernel<&k_##name>());
  EMBER_REDUCE_OPS(EMBER_BW_IMPL)
#undef EMBER_BW_IMPL
}

}  // namespace ember
