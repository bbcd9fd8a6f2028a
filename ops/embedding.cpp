// embedding(weight, indices): rows of weight [num, D] picked by int64/int32 indices of any
// shape; the result has shape indices.shape + [D]. An index outside [0, num) is an IndexError
// (on the NPU, a kernel fault reported at the next synchronize, naming aclnnEmbedding).
#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/nn.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/ops/testing/reference.h"

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
  m.impl_not_differentiable("embedding_backward");  // no double backward
}

// ---------------------------------------------------------------- samples
EMBER_OP_INFO("ember::embedding", info) {
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({7, 4}, dt, -2, 2, 1), testing::make_int_valued({5}, DType::Int64, 0, 6, 2)}, "1-d indices"},
        {{make_tensor({10, 3}, dt, -2, 2, 3), testing::make_int_valued({2, 6}, DType::Int64, 0, 9, 4)},
         "2-d indices, repeats"},
        {{testing::make_noncontig({6, 5}, dt, -2, 2, 5), testing::make_int_valued({4}, DType::Int32, 0, 5, 6)},
         "non-contiguous weight, int32 indices"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor &w = a[0].to_tensor(), &ix = a[1].to_tensor();
    Shape shape = ix.sizes();
    shape.push_back(w.size(1));
    Tensor out = empty(shape, kFloat64);
    double* o = out.data_ptr<double>();
    for (const Shape& idx : testing::all_indices(ix.sizes())) {
      int64_t r = testing::at_int(ix, idx);
      for (int64_t j = 0; j < w.size(1); ++j) *o++ = testing::at(w, {r, j});
    }
    return {out};
  };
  info.exact = true;
}
EMBER_OP_INFO("ember::embedding_backward", info) {
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({5, 4}, dt, -2, 2, 1), testing::make_int_valued({5}, DType::Int64, 0, 6, 2), IValue(int64_t(7))},
         "1-d indices"},
        {{make_tensor({2, 6, 3}, dt, -2, 2, 3), testing::make_int_valued({2, 6}, DType::Int64, 0, 3, 4), IValue(int64_t(4)),
          IValue(int64_t(1))},
         "repeats, padding_idx 1"},
        {{make_tensor({6, 2}, dt, -2, 2, 5), testing::make_int_valued({6}, DType::Int32, 0, 2, 6), IValue(int64_t(3)),
          IValue(int64_t(-1)), IValue(true)},
         "scale by frequency"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor &g = a[0].to_tensor(), &ix = a[1].to_tensor();
    int64_t num = a[2].to_int(), pad = a.size() > 3 ? a[3].to_int() : -1;
    bool freq = a.size() > 4 && a[4].to_bool();
    int64_t D = g.size(-1);
    std::vector<double> count(static_cast<size_t>(num), 0.0);
    for (const Shape& idx : testing::all_indices(ix.sizes())) count[static_cast<size_t>(testing::at_int(ix, idx))] += 1;
    Tensor out = zeros({num, D}, kFloat64);
    double* o = out.data_ptr<double>();
    for (const Shape& idx : testing::all_indices(ix.sizes())) {
      int64_t r = testing::at_int(ix, idx);
      if (r == pad) continue;
      Shape gi = idx;
      gi.push_back(0);
      for (int64_t j = 0; j < D; ++j) {
        gi.back() = j;
        o[r * D + j] += testing::at(g, gi) / (freq ? count[static_cast<size_t>(r)] : 1.0);
      }
    }
    return {out};
  };
}

}  // namespace ember
