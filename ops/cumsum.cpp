// cumsum(x, dim, dtype): the running sum along dim, as torch.cumsum: x is cast to dtype first when
// given; without it integral and bool inputs sum in int64. The gradient is the running sum of the
// gradient taken from the end (cumsum_backward), whose own gradient is cumsum again.
#include "ember/gen/cpu_kernels.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(cumsum, Float32, "ember::cumsum(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                 Tensor(const Tensor&, int64_t, std::optional<DType>));
EMBER_DECLARE_OP(cumsum_backward, Keep, "ember::cumsum_backward(Tensor grad, int dim) -> Tensor",
                 Tensor(const Tensor&, int64_t));
// The running sum along dim (self is cast to dtype first when given); integral and bool inputs
// give int64 without dtype, as in PyTorch.
EMBER_EXPORT_OP(cumsum, function, method);
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

// meta (shared by both backends): the input cast to dtype, the wrapped dim and the output.
struct CumsumMeta {
  Tensor in;
  int64_t dim;
  Tensor out;
};
CumsumMeta cumsum_meta(const char* op, const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  EMBER_CHECK_DTYPE(!dtype || *dtype != DType::Bool, op, ": dtype must not be bool");
  Tensor in = dtype ? x.to(*dtype) : x;
  DType out_dtype = dtype ? *dtype : is_floating_point(x.dtype()) ? x.dtype() : DType::Int64;
  int64_t d = wrap_dim(dim, x.dim(), op);  // (a 0-d x takes dim 0 or -1)
  return {in, d, empty_on(x.sizes_ref(), out_dtype, x.device())};
}

Tensor cumsum_cpu(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  CumsumMeta m = cumsum_meta(op::cumsum::op_name(), x, dim, dtype);
  cpu::cumsum(strided(m.out), strided(m.in), m.dim);
  return m.out;
}
Tensor cumsum_npu(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  CumsumMeta m = cumsum_meta(op::cumsum::op_name(), x, dim, dtype);
  EXEC_NPU_CMD(npu::aclnnCumsum, m.in, m.dim, m.out.dtype(), m.out);
  return m.out;
}

// The running sum from the end, in grad's dtype.
Tensor cumsum_backward_cpu(const Tensor& g, int64_t dim) {
  CumsumMeta m = cumsum_meta(op::cumsum_backward::op_name(), g, dim, g.dtype());
  cpu::cumsum(strided(m.out), strided(m.in), m.dim, /*exclusive=*/false, /*reverse=*/true);
  return m.out;
}
Tensor cumsum_backward_npu(const Tensor& g, int64_t dim) {
  CumsumMeta m = cumsum_meta(op::cumsum_backward::op_name(), g, dim, g.dtype());
  EXEC_NPU_CMD(npu::aclnnCumsumV2, m.in, m.dim, false, true, m.out);
  return m.out;
}

using namespace autograd;
std::vector<Tensor> cumsum_bw(const BackwardCtx<Tensor(const Tensor&, int64_t, std::optional<DType>)>& c) {
  return {op::cumsum_backward::call(c.grad(), c.arg<1>()).to(c.meta<0>().dtype)};
}
std::vector<Tensor> cumsum_backward_bw(const BackwardCtx<Tensor(const Tensor&, int64_t)>& c) {
  return {op::cumsum::call(c.grad(), c.arg<1>(), std::nullopt)};
}
const auto kCumsum = spec_of<op::cumsum>("CumsumBackward", &cumsum_bw);
const auto kCumsumBackward = spec_of<op::cumsum_backward>("CumsumBackwardBackward", &cumsum_backward_bw);
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::cumsum());
  m.def(op::cumsum_backward());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::cumsum(), &cumsum_cpu);
  m.impl(op::cumsum_backward(), &cumsum_backward_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::cumsum(), &cumsum_npu);
  m.impl(op::cumsum_backward(), &cumsum_backward_npu);
}
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::cumsum(), autograd_kernel<&kCumsum>());
  m.impl(op::cumsum_backward(), autograd_kernel<&kCumsumBackward>());
}

}  // namespace ember
