// Tensor-parallel LLaMA MLP under mpirun -np 2, on cpu ("mpi") and npu ("hccl"): a
// TensorParallelLlamaMLPBlock loaded from an unsharded LlamaMLPBlock's state dict gives the same
// output, input gradient and (sliced) parameter gradients as the unsharded block, and gathering
// its state dict gives the unsharded one back. Prints "ok" on every rank.
#include <cstdio>
#include <string>

#include <ember/ember.h>

#include "mpi/mpi_check.h"

using namespace ember;
namespace dist = ember::distributed;
using nn::parallel::TensorParallelLlamaMLPBlock;

namespace {

double rel(const Tensor& a, const Tensor& b) {
  const double diff = (a.cpu() - b.cpu()).abs().max().item<double>();
  return diff / std::max(b.cpu().abs().max().item<double>(), 1e-12);
}

void check(Device dev) {
  const int rank = dist::get_rank(), world = dist::get_world_size();
  const int64_t d_model = 16, d_ff = 64, tokens = 6;
  auto full = std::make_shared<nn::LlamaMLPBlock>(d_model, d_ff);
  full->to(dev);
  for (auto& [name, p] : full->named_parameters()) {  // every rank starts from rank 0's block
    NoGradGuard g;
    nn::init::normal_(p, 0.0, 0.3);  // (a norm weight away from 1, so its gradient matters)
    dist::broadcast(p, 0);
  }
  auto tp = std::make_shared<TensorParallelLlamaMLPBlock>(d_model, d_ff);
  tp->to(dev);
  tp->load_full_state_dict(full->state_dict());

  Tensor x0 = randn({tokens, d_model}).to(dev);
  dist::broadcast(x0, 0);
  Tensor dy = randn({tokens, d_model}).to(dev);
  dist::broadcast(dy, 0);
  Tensor xa = x0.detach().requires_grad_(true), xb = x0.detach().requires_grad_(true);
  Tensor ya = (*full)(xa), yb = (*tp)(xb);
  (ya * dy).sum().backward();
  (yb * dy).sum().backward();
  EXPECT(rel(yb, ya) <= 1e-5, "%s forward: %g", dev.str().c_str(), rel(yb, ya));
  EXPECT(rel(xb.grad(), xa.grad()) <= 1e-5, "%s input gradient: %g", dev.str().c_str(), rel(xb.grad(), xa.grad()));
  const int64_t part = d_ff / world;
  const struct {
    const char* name;
    Tensor sharded, whole;
  } grads[] = {
      {"norm.weight", tp->norm->weight.grad(), full->norm->parameters()[0].grad()},
      {"mlp.gate_proj.weight", tp->mlp->gate_proj->weight.grad(),
       full->mlp->gate_proj->weight.grad().narrow(0, rank * part, part)},
      {"mlp.up_proj.weight", tp->mlp->up_proj->weight.grad(), full->mlp->up_proj->weight.grad().narrow(0, rank * part, part)},
      {"mlp.down_proj.weight", tp->mlp->down_proj->weight.grad(),
       full->mlp->down_proj->weight.grad().narrow(1, rank * part, part)},
  };
  for (const auto& g : grads) {
    const double d = rel(g.sharded, g.whole);
    EXPECT(d <= 1e-5, "%s gradient of %s: %g", dev.str().c_str(), g.name, d);
  }
  std::printf("rank %d %s: output %.1e, input grad %.1e relative to the unsharded block\n", rank, dev.str().c_str(),
              rel(yb, ya), rel(xb.grad(), xa.grad()));
  // Gathering gives the unsharded state dict back, exactly.
  auto gathered = tp->full_state_dict();
  auto original = full->state_dict();
  EXPECT(gathered.size() == original.size(), "%zu keys gathered, %zu in the block", gathered.size(), original.size());
  for (auto& [k, v] : original) {
    auto it = gathered.find(k);
    EXPECT(it != gathered.end() && rel(it->second, v) == 0, "%s: gathered differs", k.c_str());
  }
}

}  // namespace

int main() {
  return mpi_check::on_both_backends([](const std::string&, Device dev) {
    manual_seed(1234 + static_cast<uint64_t>(mpi_check::rank));  // different on purpose: broadcasts align them
    check(dev);
  });
}
