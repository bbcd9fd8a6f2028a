// Tensor-parallel layers: the two communicating autograd functions, column- and row-parallel
// linears, the LLaMA MLP over them, and the state-dict slicing / gathering.
#include "ember/distributed/tensor_parallel.h"

#include <cmath>
#include <cstdint>

#include "ember/autograd/function.h"
#include "ember/core/error.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/ops/ops.h"

namespace ember {
namespace nn {
namespace parallel {

namespace dist = ember::distributed;

namespace {

dist::ProcessGroup& resolve(dist::ProcessGroup* g) { return g ? *g : dist::default_group(); }

// (the group travels to backward as an integer: AutogradContext holds IValues)
int64_t handle(dist::ProcessGroup& g) { return static_cast<int64_t>(reinterpret_cast<intptr_t>(&g)); }
dist::ProcessGroup& from_handle(const IValue& v) {
  return *reinterpret_cast<dist::ProcessGroup*>(static_cast<intptr_t>(v.to_int()));
}

Tensor all_reduced(const Tensor& t, dist::ProcessGroup& g) {
  Tensor out = t.contiguous().clone();
  g.all_reduce(out, dist::ReduceOp::SUM)->wait();
  return out;
}

struct CopyToTensorParallel : autograd::Function<CopyToTensorParallel> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, int64_t group) {
    ctx->saved_data["group"] = group;
    return x.view(x.sizes());  // identity (a view: the output is a node of its own)
  }
  static std::vector<Tensor> backward(autograd::AutogradContext* ctx, std::vector<Tensor> g) {
    return {all_reduced(g[0], from_handle(ctx->saved_data["group"]))};
  }
};

struct ReduceFromTensorParallel : autograd::Function<ReduceFromTensorParallel> {
  static Tensor forward(autograd::AutogradContext*, const Tensor& x, int64_t group) {
    return all_reduced(x, *reinterpret_cast<dist::ProcessGroup*>(static_cast<intptr_t>(group)));
  }
  static std::vector<Tensor> backward(autograd::AutogradContext*, std::vector<Tensor> g) { return {g[0]}; }
};

int64_t shard(const char* what, int64_t n, int world, const char* dim) {
  EMBER_CHECK_VALUE(n > 0 && n % world == 0, what, ": ", dim, " = ", n, " must be a positive multiple of the group's ",
                    world, " ranks");
  return n / world;
}

// The rows [r * n, (r + 1) * n) of a full tensor's dimension dim, as a fresh tensor like into.
void take_slice(const std::string& key, const std::map<std::string, Tensor>& full, int64_t dim, int rank, int world,
                Tensor& into, const char* who) {
  auto it = full.find(key);
  EMBER_CHECK_VALUE(it != full.end(), who, ": the state dict has no ", key);
  const Tensor& t = it->second;
  const int64_t n = into.size(dim);
  std::vector<int64_t> want(into.sizes().begin(), into.sizes().end());
  want[static_cast<size_t>(dim)] = n * world;
  EMBER_CHECK_SHAPE(t.sizes() == IntArrayRef(want), who, ": ", key, " has shape ", t.sizes(), ", expected ",
                    IntArrayRef(want));
  NoGradGuard g;
  into.copy_(t.narrow(dim, rank * n, n).to(into.device(), into.dtype()));
}

// Every rank's shard along dim, concatenated (collective).
Tensor gather(const Tensor& shard_t, int64_t dim, dist::ProcessGroup& g) {
  NoGradGuard ng;
  // Gathered along dim 0 as [world, ...shard], then moved to dim.
  Tensor local = shard_t.detach().contiguous();
  std::vector<int64_t> big(local.sizes().begin(), local.sizes().end());
  big.insert(big.begin(), g.size());
  Tensor out = zeros(big, TensorOptions().dtype(local.dtype()).device(local.device()));
  g.all_gather(out, local)->wait();
  // [world, d0, d1] -> concatenated along dim
  std::vector<Tensor> parts;
  for (int r = 0; r < g.size(); ++r) parts.push_back(out.select(0, r));
  return cat(parts, dim);
}

}  // namespace

Tensor copy_to_tensor_parallel(const Tensor& x, dist::ProcessGroup* group) {
  return CopyToTensorParallel::apply(x, handle(resolve(group)));
}

Tensor reduce_from_tensor_parallel(const Tensor& x, dist::ProcessGroup* group) {
  return ReduceFromTensorParallel::apply(x, handle(resolve(group)));
}

ColumnParallelLinear::ColumnParallelLinear(int64_t in, int64_t out, bool with_bias, dist::ProcessGroup* g)
    : in_features(in), out_features(out), group(&resolve(g)) {
  local_out = shard("ColumnParallelLinear", out, group->size(), "out_features");
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));  // as Linear's, for the whole layer
  Tensor w = empty({local_out, in});
  init::uniform_(w, -bound, bound);
  weight = register_parameter("weight", w);
  if (with_bias) {
    Tensor b = empty({local_out});
    init::uniform_(b, -bound, bound);
    bias = register_parameter("bias", b);
  }
}
Tensor ColumnParallelLinear::forward(const Tensor& x) { return forward_local(copy_to_tensor_parallel(x, group)); }
Tensor ColumnParallelLinear::forward_local(const Tensor& x) { return functional::linear(x, weight, bias); }
std::string ColumnParallelLinear::extra_repr() const {
  return "in_features=" + std::to_string(in_features) + ", out_features=" + std::to_string(out_features) +
         " (this rank: " + std::to_string(local_out) + ")";
}

RowParallelLinear::RowParallelLinear(int64_t in, int64_t out, bool with_bias, dist::ProcessGroup* g)
    : in_features(in), out_features(out), group(&resolve(g)) {
  local_in = shard("RowParallelLinear", in, group->size(), "in_features");
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  Tensor w = empty({out, local_in});
  init::uniform_(w, -bound, bound);
  weight = register_parameter("weight", w);
  if (with_bias) {
    Tensor b = empty({out});
    init::uniform_(b, -bound, bound);
    bias = register_parameter("bias", b);
  }
}
Tensor RowParallelLinear::forward(const Tensor& x) {
  Tensor y = reduce_from_tensor_parallel(functional::linear(x, weight), group);
  return bias.defined() ? y + bias : y;
}
std::string RowParallelLinear::extra_repr() const {
  return "in_features=" + std::to_string(in_features) + " (this rank: " + std::to_string(local_in) +
         "), out_features=" + std::to_string(out_features);
}

TensorParallelSwiGLU::TensorParallelSwiGLU(int64_t dm, int64_t ff, dist::ProcessGroup* g)
    : d_model(dm), d_ff(ff), group(&resolve(g)) {
  gate_proj = register_module("gate_proj", std::make_shared<ColumnParallelLinear>(dm, ff, false, group));
  up_proj = register_module("up_proj", std::make_shared<ColumnParallelLinear>(dm, ff, false, group));
  down_proj = register_module("down_proj", std::make_shared<RowParallelLinear>(ff, dm, false, group));
}
Tensor TensorParallelSwiGLU::forward(const Tensor& x) {
  Tensor xp = copy_to_tensor_parallel(x, group);  // one all-reduce backward, for gate and up together
  return (*down_proj)(silu_mul(gate_proj->forward_local(xp), up_proj->forward_local(xp)));
}
std::string TensorParallelSwiGLU::extra_repr() const {
  return "d_model=" + std::to_string(d_model) + ", d_ff=" + std::to_string(d_ff) + " over " +
         std::to_string(group->size()) + " ranks";
}
void TensorParallelSwiGLU::load_full_state_dict(const std::map<std::string, Tensor>& full, const std::string& prefix) {
  const int r = group->rank(), n = group->size();
  const char* who = "TensorParallelSwiGLU::load_full_state_dict";
  take_slice(prefix + "gate_proj.weight", full, 0, r, n, gate_proj->weight, who);
  take_slice(prefix + "up_proj.weight", full, 0, r, n, up_proj->weight, who);
  take_slice(prefix + "down_proj.weight", full, 1, r, n, down_proj->weight, who);
}
std::map<std::string, Tensor> TensorParallelSwiGLU::full_state_dict(const std::string& prefix) {
  return {{prefix + "gate_proj.weight", gather(gate_proj->weight, 0, *group)},
          {prefix + "up_proj.weight", gather(up_proj->weight, 0, *group)},
          {prefix + "down_proj.weight", gather(down_proj->weight, 1, *group)}};
}

TensorParallelLlamaMLPBlock::TensorParallelLlamaMLPBlock(int64_t dm, int64_t ff, dist::ProcessGroup* g) {
  norm = register_module("norm", std::make_shared<RMSNorm>(dm));
  mlp = register_module("mlp", std::make_shared<TensorParallelSwiGLU>(dm, ff, g));
}
Tensor TensorParallelLlamaMLPBlock::forward(const Tensor& x) { return x + (*mlp)((*norm)(x)); }
void TensorParallelLlamaMLPBlock::load_full_state_dict(const std::map<std::string, Tensor>& full) {
  auto it = full.find("norm.weight");
  EMBER_CHECK_VALUE(it != full.end(), "TensorParallelLlamaMLPBlock::load_full_state_dict: the state dict has no norm.weight");
  norm->load_state_dict({{"weight", it->second}});
  mlp->load_full_state_dict(full, "mlp.");
}
std::map<std::string, Tensor> TensorParallelLlamaMLPBlock::full_state_dict() {
  auto out = mlp->full_state_dict("mlp.");
  out["norm.weight"] = norm->weight.detach().clone();
  return out;
}

}  // namespace parallel
}  // namespace nn
}  // namespace ember
