// ember: tensor parallelism for the LLaMA MLP, as Megatron-LM splits it. Each rank of a process
// group holds a slice of d_ff:
//   gate_proj, up_proj: ColumnParallelLinear (rows of the weight, d_ff / world each);
//   down_proj: RowParallelLinear (columns of the weight);
// and the communication is two autograd functions: copy_to_tensor_parallel (identity forward,
// all-reduce of the gradient backward) before the column-parallel pair, and
// reduce_from_tensor_parallel (all-reduce forward, identity backward) after the row-parallel
// one. So one all-reduce in forward and one in backward, and every rank ends with the whole
// output and the whole input gradient. Inputs are replicated: every rank passes the same x.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "ember/distributed/process_group.h"
#include "ember/nn/module.h"
#include "ember/nn/modules.h"

namespace ember {
namespace nn {
namespace parallel {

// group: nullptr for the default process group (here and below).
Tensor copy_to_tensor_parallel(const Tensor& x, distributed::ProcessGroup* group = nullptr);
Tensor reduce_from_tensor_parallel(const Tensor& x, distributed::ProcessGroup* group = nullptr);

// y[..., out/world] = x W_r^T (+ b_r): this rank's rows of an out x in weight.
class ColumnParallelLinear : public Module {
 public:
  ColumnParallelLinear(int64_t in_features, int64_t out_features, bool bias = true,
                       distributed::ProcessGroup* group = nullptr);
  // copy_to_tensor_parallel(x), then the local product.
  Tensor forward(const Tensor& x) override;
  // The local product alone (x already went through copy_to_tensor_parallel).
  Tensor forward_local(const Tensor& x);
  std::string extra_repr() const override;
  int64_t in_features, out_features, local_out;
  Tensor weight, bias;
  distributed::ProcessGroup* group;
};

// y = reduce_from_tensor_parallel(x_r W_r^T) + b: this rank's columns of an out x in weight, x_r
// the rank's slice of the input's last dimension (a column-parallel output).
class RowParallelLinear : public Module {
 public:
  RowParallelLinear(int64_t in_features, int64_t out_features, bool bias = true,
                    distributed::ProcessGroup* group = nullptr);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  int64_t in_features, out_features, local_in;
  Tensor weight, bias;  // bias whole, on every rank
  distributed::ProcessGroup* group;
};

// SwiGLU (down(silu(gate(x)) * up(x))) with d_ff split over the group; same parameter names.
class TensorParallelSwiGLU : public Module {
 public:
  TensorParallelSwiGLU(int64_t d_model, int64_t d_ff, distributed::ProcessGroup* group = nullptr);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  // Takes this rank's slices of an unsharded SwiGLU's state dict (keys gate_proj.weight,
  // up_proj.weight, down_proj.weight, after prefix).
  void load_full_state_dict(const std::map<std::string, Tensor>& full, const std::string& prefix = "");
  // The unsharded state dict, gathered from every rank (collective: every rank calls it).
  std::map<std::string, Tensor> full_state_dict(const std::string& prefix = "");
  int64_t d_model, d_ff;
  std::shared_ptr<ColumnParallelLinear> gate_proj, up_proj;
  std::shared_ptr<RowParallelLinear> down_proj;
  distributed::ProcessGroup* group;
};

// LlamaMLPBlock (x + mlp(norm(x))) with a TensorParallelSwiGLU; the norm is replicated.
class TensorParallelLlamaMLPBlock : public Module {
 public:
  TensorParallelLlamaMLPBlock(int64_t d_model, int64_t d_ff, distributed::ProcessGroup* group = nullptr);
  Tensor forward(const Tensor& x) override;
  // From / to an unsharded LlamaMLPBlock's state dict (norm.weight, mlp.*).
  void load_full_state_dict(const std::map<std::string, Tensor>& full);
  std::map<std::string, Tensor> full_state_dict();
  std::shared_ptr<RMSNorm> norm;
  std::shared_ptr<TensorParallelSwiGLU> mlp;
};

}  // namespace parallel
}  // namespace nn
}  // namespace ember
