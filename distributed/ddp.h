// ember: DistributedDataParallel, data-parallel training over a process group (PyTorch's
// semantics; libtorch's C++ API has none).
//
//   dist::init_process_group("hccl");
//   auto model = std::make_shared<nn::parallel::DistributedDataParallel>(net);  // broadcasts rank 0's
//   optim::AdamW opt(model->parameters());                                         // weights
//   loss = loss_fn((*model)(x_shard), y_shard); loss.backward();  // grads averaged over the ranks
//   opt.step();
//
// The reducer groups the parameters into buckets of about bucket_cap_mb (in reverse order of
// registration, roughly the order backward produces their gradients). A hook after each
// parameter's gradient accumulation copies it into its bucket; a full bucket starts its
// all-reduce at once (async), so communication overlaps the rest of backward; buckets start in
// order, so every rank makes the same calls. When backward ends, every bucket is waited for and
// the averaged gradients are written back to .grad. Inside a no_sync() scope nothing is
// communicated: gradients accumulate locally, and the next backward outside it reduces the sum.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ember/distributed/process_group.h"
#include "ember/nn/module.h"

namespace ember {
namespace nn {
namespace parallel {

struct DistributedDataParallelOptions {
  double bucket_cap_mb = 25;  // PyTorch's default
  // A parameter that got no gradient in a backward is an error naming it, unless this is set:
  // then it counts as a zero gradient in its bucket.
  bool find_unused_parameters = false;
  bool broadcast_buffers = true;  // rank 0's buffers to every rank before each forward
};

class DistributedDataParallel : public Module {
 public:
  // group: nullptr for the default process group.
  explicit DistributedDataParallel(ModulePtr module, DistributedDataParallelOptions options = {},
                                   distributed::ProcessGroup* group = nullptr);
  ~DistributedDataParallel() override;
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "DistributedDataParallel"; }
  const ModulePtr& module() const { return module_; }

  // While alive, backward passes do not communicate (gradient accumulation).
  class NoSync {
   public:
    explicit NoSync(DistributedDataParallel& ddp);
    ~NoSync();
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    DistributedDataParallel& ddp_;
    bool prev_;
  };
  NoSync no_sync() { return NoSync(*this); }

  // The buckets: each one's parameter names, in the order they are reduced.
  std::vector<std::vector<std::string>> bucket_names() const;
  // Milliseconds the last synced backward spent waiting for all-reduces after its last node
  // (the part of communication not hidden behind backward), and the all-reduce time in total
  // (launch to completion, summed over buckets).
  double last_exposed_comm_ms() const;
  double last_total_comm_ms() const;

 private:
  struct Reducer;
  ModulePtr module_;
  std::shared_ptr<Reducer> reducer_;
};

}  // namespace parallel
}  // namespace nn
}  // namespace ember
