// embedding(weight, indices): rows of weight [num, D] picked by int64/int32 indices of any
// shape; the result has shape indices.shape + [D]. An index outside [0, num) is an IndexError
// (on the NPU, a kernel fault reported at the next synchronize, naming aclnnEmbedding).
#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/nn.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

namespace ember {
namespace {
using namespace ops;

DimVector embedding_shape(const Tensor& weight, const Tensor& indices) {
  common_device("embedding", {&weight, &indices});
  EMBER_CHECK_SHAPE(weight.dim() == 2, "embedding: weight must be 2-D [num_embeddings, dim], got shape ", weight.sizes());
  EMBER_CHECK_DTYPE(indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32,
                    "embedding: indices must be int64 or int32, got ", indices.dtype());
  DimVector shape(indices.sizes());
  shape.push_back(weight.size(1));
  return shape;
}

Tensor embedding_cpu(const Tensor& weight, const Tensor& indices) {
  DimVector shape = embedding_shape(weight, indices);
  Tensor out = empty_on(shape, weight.dtype(), weight.device());
  if (out.numel()) cpu::embedding(strided(out), strided(weight.contiguous()), strided(indices.contiguous()), "embedding");
  return out;
}

Tensor embedding_npu(const Tensor& weight, const Tensor& indices) {
  DimVector shape = embedding_shape(weight, indices);
  Tensor out = empty_on(shape, weight.dtype(), weight.device());
  if (out.numel()) EXEC_NPU_CMD(npu::aclnnEmbedding, weight, indices, out);
  return out;
}

}  // namespace

EMBER_LIBRARY(ember, m) { m.def("embedding(Tensor weight, Tensor indices) -> Tensor"); }
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl("embedding", &embedding_cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl("embedding", &embedding_npu); }

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  return EMBER_OP("ember::embedding", Tensor(const Tensor&, const Tensor&)).call(weight, indices);
}

// ---------------------------------------------------------------- backward
// d weight[r, :] = sum of grad rows whose index is r (a deterministic scatter-add).
namespace {
using namespace autograd;

void check_embedding_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights) {
  common_device("embedding_backward", {&grad, &indices});
  EMBER_CHECK_VALUE(num_weights >= 0, "embedding_backward: num_weights must be non-negative, got ", num_weights);
  EMBER_CHECK_DTYPE(grad.is_floating_point(), "embedding_backward: grad must be floating, got ", grad.dtype());
  EMBER_CHECK_DTYPE(indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32,
                    "embedding_backward: indices must be int64 or int32, got ", indices.dtype());
  EMBER_CHECK_SHAPE(grad.dim() == indices.dim() + 1 && grad.sizes().slice(0, static_cast<size_t>(indices.dim())) == indices.sizes(),
                    "embedding_backward: grad of shape ", grad.sizes(), " does not match indices of shape ",
                    indices.sizes(), " (expected indices.shape + [dim])");
}

Tensor embedding_backward_cpu(const Tensor& grad, const Tensor& indices, int64_t num_weights, int64_t padding_idx,
                              bool scale_grad_by_freq) {
  check_embedding_backward(grad, indices, num_weights);
  Tensor out = empty_on({num_weights, grad.size(-1)}, grad.dtype(), grad.device());
  cpu::embedding_backward(strided(out), strided(grad.contiguous()), strided(indices.contiguous()), padding_idx,
                          scale_grad_by_freq, "embedding_backward");
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
  return {EMBER_OP("ember::embedding_backward", Tensor(const Tensor&, const Tensor&, int64_t, int64_t, bool))
              .call(c.grad(), c.arg<1>(), c.meta<0>().sizes[0], -1, false),
          Tensor()};
}
const auto kEmbedding = OpSpec<EmbSig>{"EmbeddingBackward", "ember::embedding", &embedding_bw}.saving(saves(1));
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("embedding_backward(Tensor grad, Tensor indices, int num_weights, int padding_idx=-1, "
        "bool scale_grad_by_freq=False) -> Tensor");
}
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl("embedding_backward", &embedding_backward_cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl("embedding_backward", &embedding_backward_npu); }
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl("embedding", autograd_kernel<&kEmbedding>());
  autograd::impl_no_double_backward(m, "embedding_backward");
}

}  // namespace ember
