// Reductions over any dims (empty list = all) with keepdim: sum (integers accumulate into int64,
// optional output dtype), amax/amin (NaN propagates), and the composites mean, max(), min().
// fp16/bf16 accumulate in fp32.
#include <cmath>
#include <limits>

#include "ember/device/cpu/reduce.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/ops/dispatch/library.h"

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
}  // namespace ops

namespace {
using namespace ops;

using ReduceKernel = void (*)(const cpu::Strided&, const cpu::Strided&);

template <ReduceKernel K>
Tensor reduce_into(const char* op, const Tensor& x, IntArrayRef dims, bool keepdim, DType out_dtype) {
  uint64_t mask = reduce_mask(op, dims, x.dim());
  Tensor out = empty_on(reduced_shape(x.sizes_ref(), mask, keepdim), out_dtype, x.device());
  K(strided(keepdim_view(out, x.sizes_ref(), mask)), strided(x));
  return out;
}

DType sum_dtype(const Tensor& x, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return is_integral(x.dtype(), true) ? kInt64 : x.dtype();
}

Tensor sum_cpu(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  return reduce_into<cpu::sum>("sum", x, dims, keepdim, sum_dtype(x, dtype));
}

void check_nonempty(const char* op, const Tensor& x, IntArrayRef dims) {
  uint64_t mask = reduce_mask(op, dims, x.dim());
  for (int64_t d = 0; d < x.dim(); ++d) {
    EMBER_CHECK_SHAPE(!((mask >> d) & 1) || x.size(d) > 0, op, ": expected reduction dim ", d,
                      " to have non-zero size (shape ", x.sizes_ref(), ")");
  }
  EMBER_CHECK_SHAPE(x.numel() > 0 || x.dim() > 0, op, ": empty input");
}

Tensor amax_cpu(const Tensor& x, IntArrayRef dims, bool keepdim) {
  check_nonempty("amax", x, dims);
  return reduce_into<cpu::amax>("amax", x, dims, keepdim, x.dtype());
}
Tensor amin_cpu(const Tensor& x, IntArrayRef dims, bool keepdim) {
  check_nonempty("amin", x, dims);
  return reduce_into<cpu::amin>("amin", x, dims, keepdim, x.dtype());
}

// ---------------------------------------------------------------- NPU
Tensor sum_npu(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  uint64_t mask = reduce_mask("sum", dims, x.dim());
  DType out_dt = sum_dtype(x, dtype);
  Tensor out = empty_on(reduced_shape(x.sizes(), mask, keepdim), out_dt, x.device());
  EXEC_NPU_CMD(npu::aclnnReduceSum, x, dims, keepdim, out_dt, out);
  return out;
}
Tensor amax_npu(const Tensor& x, IntArrayRef dims, bool keepdim) {
  check_nonempty("amax", x, dims);
  Tensor out = empty_on(reduced_shape(x.sizes(), reduce_mask("amax", dims, x.dim()), keepdim), x.dtype(), x.device());
  EXEC_NPU_CMD(npu::aclnnAmax, x, dims, keepdim, out);
  return out;
}
Tensor amin_npu(const Tensor& x, IntArrayRef dims, bool keepdim) {
  check_nonempty("amin", x, dims);
  Tensor out = empty_on(reduced_shape(x.sizes(), reduce_mask("amin", dims, x.dim()), keepdim), x.dtype(), x.device());
  EXEC_NPU_CMD(npu::aclnnAmin, x, dims, keepdim, out);
  return out;
}

// mean = sum / count, accumulated in fp32 for fp16/bf16 and rounded once.
Tensor mean_any(const Tensor& x, IntArrayRef dims, bool keepdim) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), "mean: could not infer output dtype; input dtype must be floating point, got ",
                    x.dtype());
  uint64_t mask = reduce_mask("mean", dims, x.dim());
  int64_t count = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if ((mask >> d) & 1) count *= x.size(d);
  DType acc = is_reduced_float(x.dtype()) ? kFloat32 : x.dtype();
  Tensor s = ember::sum(x, dims, keepdim, acc);
  Tensor m = count ? ember::div(s, Scalar(static_cast<double>(count))) : ember::div(s, Scalar(0.0));
  return m.dtype() == x.dtype() ? m : m.to(x.dtype());
}

Tensor max_all(const Tensor& x) { return ember::amax(x, {}, false); }
Tensor min_all(const Tensor& x) { return ember::amin(x, {}, false); }

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("sum(Tensor self, int[] dim=[], bool keepdim=False, ScalarType? dtype=None) -> Tensor");
  m.def("amax(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor");
  m.def("amin(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor");
  m.def("mean(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", &mean_any);
  m.def("max(Tensor self) -> Tensor", &max_all);
  m.def("min(Tensor self) -> Tensor", &min_all);
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl("sum", &sum_cpu);
  m.impl("amax", &amax_cpu);
  m.impl("amin", &amin_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl("sum", &sum_npu);
  m.impl("amax", &amax_npu);
  m.impl("amin", &amin_npu);
}

using Red = Tensor(const Tensor&, IntArrayRef, bool);
Tensor sum(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  return EMBER_OP("ember::sum", Tensor(const Tensor&, IntArrayRef, bool, std::optional<DType>)).call(x, dims, keepdim, dtype);
}
Tensor amax(const Tensor& x, IntArrayRef dims, bool keepdim) { return EMBER_OP("ember::amax", Red).call(x, dims, keepdim); }
Tensor amin(const Tensor& x, IntArrayRef dims, bool keepdim) { return EMBER_OP("ember::amin", Red).call(x, dims, keepdim); }
Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim) { return EMBER_OP("ember::mean", Red).call(x, dims, keepdim); }
Tensor max(const Tensor& x) { return EMBER_OP("ember::max", Tensor(const Tensor&)).call(x); }
Tensor min(const Tensor& x) { return EMBER_OP("ember::min", Tensor(const Tensor&)).call(x); }

Tensor Tensor::sum(std::optional<DType> dtype) const { return ember::sum(*this, {}, false, dtype); }
Tensor Tensor::sum(IntArrayRef dims, bool keepdim, std::optional<DType> dtype) const {
  return ember::sum(*this, dims, keepdim, dtype);
}
Tensor Tensor::mean() const { return ember::mean(*this, {}, false); }
Tensor Tensor::mean(IntArrayRef dims, bool keepdim) const { return ember::mean(*this, dims, keepdim); }
Tensor Tensor::max() const { return ember::max(*this); }
Tensor Tensor::min() const { return ember::min(*this); }
Tensor Tensor::amax(IntArrayRef dims, bool keepdim) const { return ember::amax(*this, dims, keepdim); }
Tensor Tensor::amin(IntArrayRef dims, bool keepdim) const { return ember::amin(*this, dims, keepdim); }

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
using SumSig = Tensor(const Tensor&, IntArrayRef, bool, std::optional<DType>);
using AmSig = Tensor(const Tensor&, IntArrayRef, bool);

// g restored to the keepdim layout (size 1 at reduced dims), ready to broadcast over x.
Tensor unsqueeze_reduced(const Tensor& g, IntArrayRef in_shape, IntArrayRef dims, bool keepdim) {
  if (keepdim) return g;
  uint64_t mask = reduce_mask("sum_backward", dims, static_cast<int64_t>(in_shape.size()));
  Shape shape = reduced_shape(in_shape, mask, true).vec();
  return g.reshape(shape);
}
// d sum(x, dims) = g broadcast back over the reduced dims
std::vector<Tensor> sum_bw(const BackwardCtx<SumSig>& c) {
  const TensorMeta& m = c.meta<0>();
  return {unsqueeze_reduced(c.grad(), m.sizes, c.arg<1>(), c.arg<2>()).expand(m.sizes)};
}
// d amax(x, dims) = g shared evenly among the elements equal to the max (PyTorch's rule)
std::vector<Tensor> amax_amin_bw(const BackwardCtx<AmSig>& c) {
  Tensor x = c.arg<0>();
  Tensor y = unsqueeze_reduced(c.output(), x.sizes(), c.arg<1>(), c.arg<2>());
  Tensor g = unsqueeze_reduced(c.grad(), x.sizes(), c.arg<1>(), c.arg<2>());
  Tensor hit = (x == y).to(g.dtype());
  Tensor count = hit.sum(c.arg<1>(), true);
  return {g * hit / count};
}
const auto kSum = OpSpec<SumSig>{"SumBackward", "ember::sum", &sum_bw};
const auto kAmax = OpSpec<AmSig>{"AmaxBackward", "ember::amax", &amax_amin_bw}.saving(saves(0)).saving_output();
const auto kAmin = OpSpec<AmSig>{"AminBackward", "ember::amin", &amax_amin_bw}.saving(saves(0)).saving_output();
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl("sum", autograd_kernel<&kSum>());
  m.impl("amax", autograd_kernel<&kAmax>());
  m.impl("amin", autograd_kernel<&kAmin>());
}

}  // namespace ember
