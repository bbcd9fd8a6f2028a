// embedding(weight, indices): rows of weight [num, D] picked by int64/int32 indices of any
// shape; the result has shape indices.shape + [D]. An index outside [0, num) is an IndexError
// (on the NPU, a kernel fault reported at the next synchronize, naming aclnnEmbedding).
#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/nn.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(embedding, Keep, "ember::embedding(Tensor weight, Tensor indices) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(index_select, Keep, "ember::index_select(Tensor self, int dim, Tensor index) -> Tensor",
                 Tensor(const Tensor&, int64_t, const Tensor&));
EMBER_DECLARE_OP(embedding_backward, Keep,
                 "ember::embedding_backward(Tensor grad, Tensor indices, int num_weights, "
                 "int padding_idx=-1, bool scale_grad_by_freq=False) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, int64_t, int64_t, bool));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

DimVector embedding_shape(const Tensor& weight, const Tensor& indices) {
  common_device(op::embedding::op_name(), {&weight, &indices});
  EMBER_CHECK_SHAPE(weight.dim() == 2, op::embedding::op_name(),
                    ": weight must be 2-D [num_embeddings, dim], got shape ", weight.sizes());
  EMBER_CHECK_DTYPE(indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32, op::embedding::op_name(),
                    ": indices must be int64 or int32, got ", indices.dtype());
  DimVector shape(indices.sizes());
  shape.push_back(weight.size(1));
  return shape;
}

Tensor embedding_cpu(const Tensor& weight, const Tensor& indices) {
  DimVector shape = embedding_shape(weight, indices);
  Tensor out = empty_on(shape, weight.dtype(), weight.device());
  if (out.numel())
    cpu::embedding(strided(out), strided(weight.contiguous()), strided(indices.contiguous()), op::embedding::op_name());
  return out;
}

Tensor embedding_npu(const Tensor& weight, const Tensor& indices) {
  DimVector shape = embedding_shape(weight, indices);
  Tensor out = empty_on(shape, weight.dtype(), weight.device());
  if (out.numel()) EXEC_NPU_CMD(npu::aclnnEmbedding, weight, indices, out);
  return out;
}

// index_select(x, dim, index): the slices of x at index (1-D or 0-D, int64/int32) along dim. On
// the CPU, rows of embedding over x with dim moved to the front; on the NPU, CANN's
// aclnnIndexSelect. Its node IndexSelectBackward0 scatter-adds the gradient's rows back
// (embedding_backward: aclnnEmbeddingDenseBackward on the NPU).
int64_t index_select_check(const Tensor& x, int64_t dim, const Tensor& index) {
  common_device(op::index_select::op_name(), {&x, &index});
  EMBER_CHECK_DTYPE(index.dtype() == DType::Int64 || index.dtype() == DType::Int32, op::index_select::op_name(),
                    ": index must be int64 or int32, got ", index.dtype());
  EMBER_CHECK_SHAPE(index.dim() <= 1, op::index_select::op_name(), ": index must be 1-D or 0-D, got shape ",
                    index.sizes());
  EMBER_CHECK_SHAPE(x.dim() >= 1, op::index_select::op_name(), ": cannot index a 0-d tensor");
  const int64_t d = wrap_dim(dim, x.dim(), op::index_select::op_name());
  EMBER_CHECK_T(IndexError, x.size(d) > 0 || index.numel() == 0, op::index_select::op_name(),
                ": an index is outside [0, 0) for dim ", d, " of shape ", x.sizes());
  return d;
}
Tensor index_select_cpu(const Tensor& x, int64_t dim, const Tensor& index) {
  const int64_t d = index_select_check(x, dim, index);
  Tensor front = d == 0 ? x : x.transpose(0, d);
  Shape rest(front.sizes().begin() + 1, front.sizes().end());
  int64_t k = index.numel(), n = front.size(0);
  if (k > 0 && x.numel() > 0 && x.device().is_cpu()) {
    // Bounds checked up front on the CPU (the NPU kernel faults at the next synchronize instead).
    Tensor bad = logical_or(index.lt(0), index.ge(n));
    EMBER_CHECK_T(IndexError, !bad.any().item<bool>(), op::index_select::op_name(), ": an index is outside [0, ", n,
                  ") for dim ", d, " of shape ", x.sizes());
  }
  Tensor rows = embedding(front.reshape({n, -1}), index.reshape({k}));  // [k, prod(rest)]
  Shape shape{k};
  shape.insert(shape.end(), rest.begin(), rest.end());
  Tensor out = rows.reshape(shape);
  return d == 0 ? out : out.transpose(0, d);
}
Tensor index_select_npu(const Tensor& x, int64_t dim, const Tensor& index) {
  const int64_t d = index_select_check(x, dim, index);
  Shape shape(x.sizes().begin(), x.sizes().end());
  shape[static_cast<size_t>(d)] = index.numel();
  Tensor out = empty_on(shape, x.dtype(), x.device());
  if (out.numel()) EXEC_NPU_CMD(npu::aclnnIndexSelect, x, d, index.reshape({index.numel()}), out);
  return out;
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::embedding());
  m.def(op::index_select());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::embedding(), &embedding_cpu);
  m.impl(op::index_select(), &index_select_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::embedding(), &embedding_npu);
  m.impl(op::index_select(), &index_select_npu);
}

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  return op::embedding::call(weight, indices);
}

// ---------------------------------------------------------------- backward
// d weight[r, :] = sum of grad rows whose index is r (a deterministic scatter-add).
namespace {
using namespace autograd;

void check_embedding_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights) {
  common_device(op::embedding_backward::op_name(), {&grad, &indices});
  EMBER_CHECK_VALUE(num_weights >= 0, op::embedding_backward::op_name(), ": num_weights must be non-negative, got ",
                    num_weights);
  EMBER_CHECK_DTYPE(grad.is_floating_point(), op::embedding_backward::op_name(), ": grad must be floating, got ",
                    grad.dtype());
  EMBER_CHECK_DTYPE(indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32,
                    op::embedding_backward::op_name(), ": indices must be int64 or int32, got ", indices.dtype());
  EMBER_CHECK_SHAPE(
      grad.dim() == indices.dim() + 1 && grad.sizes().slice(0, static_cast<size_t>(indices.dim())) == indices.sizes(),
      op::embedding_backward::op_name(), ": grad of shape ", grad.sizes(), " does not match indices of shape ",
      indices.sizes(), " (expected indices.shape + [dim])");
}

Tensor embedding_backward_cpu(const Tensor& grad, const Tensor& indices, int64_t num_weights, int64_t padding_idx,
                              bool scale_grad_by_freq) {
  check_embedding_backward(grad, indices, num_weights);
  Tensor out = empty_on({num_weights, grad.size(-1)}, grad.dtype(), grad.device());
  cpu::embedding_backward(strided(out), strided(grad.contiguous()), strided(indices.contiguous()), padding_idx,
                          scale_grad_by_freq, op::embedding_backward::op_name());
  return out;
}

Tensor embedding_backward_npu(const Tensor& grad, const Tensor& indices, int64_t num_weights, int64_t padding_idx,
                              bool scale_grad_by_freq) {
  check_embedding_backward(grad, indices, num_weights);
  Tensor out = empty_on({num_weights, grad.size(-1)}, grad.dtype(), grad.device());
  uint64_t pad = padding_idx < 0 ? static_cast<uint64_t>(num_weights) : static_cast<uint64_t>(padding_idx);
  EXEC_NPU_CMD(npu::aclnnEmbeddingDenseBackward, grad, indices, static_cast<uint64_t>(num_weights), pad,
               scale_grad_by_freq, out);
  return out;
}

using EmbSig = Tensor(const Tensor&, const Tensor&);
std::vector<Tensor> embedding_bw(const BackwardCtx<EmbSig>& c) {
  return {op::embedding_backward::call(c.grad(), c.arg<1>(), c.meta<0>().sizes[0], -1, false),
          Tensor()};
}
const auto kEmbedding = spec_of<op::embedding>("EmbeddingBackward", &embedding_bw).saving(saves(1));

// index_select: the gradient's slices, dim moved to the front, scatter-added back as rows.
using IndexSelectSig = Tensor(const Tensor&, int64_t, const Tensor&);
std::vector<Tensor> index_select_bw(const BackwardCtx<IndexSelectSig>& c) {
  const Shape sizes(c.meta<0>().sizes.begin(), c.meta<0>().sizes.end());
  const int64_t d = wrap_dim(c.arg<1>(), static_cast<int64_t>(sizes.size()), op::index_select::op_name());
  Tensor index = c.arg<2>(), g = c.grad();
  const int64_t k = index.numel(), n = sizes[static_cast<size_t>(d)];
  Tensor front = d == 0 ? g : g.transpose(0, d);
  Shape rest(front.sizes().begin() + 1, front.sizes().end());
  Tensor rows = op::embedding_backward::call(front.reshape({k, -1}), index.reshape({k}), n, -1, false);
  Shape shape{n};
  shape.insert(shape.end(), rest.begin(), rest.end());
  Tensor gx = rows.reshape(shape);
  return {d == 0 ? gx : gx.transpose(0, d), Tensor()};
}
const auto kIndexSelect =
    spec_of<op::index_select>("IndexSelectBackward0", &index_select_bw).saving(saves(2));
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::embedding_backward());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl(op::embedding_backward(), &embedding_backward_cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl(op::embedding_backward(), &embedding_backward_npu); }
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::embedding(), autograd_kernel<&kEmbedding>());
  m.impl(op::index_select(), autograd_kernel<&kIndexSelect>());
  autograd::impl_no_double_backward(m, op::embedding_backward());
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  return op::index_select::call(x, dim, index);
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const { return ember::index_select(*this, dim, index); }

}  // namespace ember
