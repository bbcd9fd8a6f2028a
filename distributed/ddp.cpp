// DistributedDataParallel's reducer: buckets, the post-accumulate hooks that fill them, in-order
// async all-reduces, and the end-of-backward callback that waits and writes the averages back.
#include "ember/distributed/ddp.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

#include "ember/autograd/engine.h"
#include "ember/autograd/grad_mode.h"
#include "ember/core/error.h"
#include "ember/ops/ops.h"

namespace ember {
namespace nn {
namespace parallel {

namespace dist = ember::distributed;
using Clock = std::chrono::steady_clock;

struct DistributedDataParallel::Reducer {
  struct Bucket {
    std::vector<size_t> params;    // indices into Reducer::params
    std::vector<int64_t> offsets;  // each one's first element in flat
    Tensor flat;
    size_t pending = 0;
    dist::WorkPtr work;
    Clock::time_point launched;
  };

  dist::ProcessGroup* group = nullptr;
  DistributedDataParallelOptions options;
  std::vector<std::string> names;
  std::vector<Tensor> params;
  std::vector<Bucket> buckets;
  std::vector<size_t> bucket_of, slot_of;  // each parameter's bucket and place in it
  std::vector<char> ready;
  bool sync = true;
  bool in_backward = false;
  size_t next_launch = 0;
  double exposed_ms = 0, total_ms = 0;
  std::mutex mu;

  // Parameter i's elements in its bucket's flat buffer.
  Tensor slice(size_t i) const {
    const Bucket& b = buckets[bucket_of[i]];
    return b.flat.narrow(0, b.offsets[slot_of[i]], params[i].numel());
  }

  void on_ready(size_t i) {
    std::lock_guard<std::mutex> lk(mu);
    if (!sync) return;
    if (!in_backward) {
      in_backward = true;
      std::fill(ready.begin(), ready.end(), 0);
      for (Bucket& b : buckets) {
        b.pending = b.params.size();
        b.work.reset();
      }
      next_launch = 0;
      autograd::queue_callback([this] { finalize(); });  // (the hook holds this reducer alive)
    }
    if (ready[i])
      throw Error("DistributedDataParallel: parameter " + names[i] +
                  " got its gradient twice in one backward (a second backward through the same graph without a "
                  "step in between is not supported: use no_sync() to accumulate)");
    ready[i] = 1;
    slice(i).copy_(params[i].grad().reshape({-1}));
    if (--buckets[bucket_of[i]].pending == 0) launch_ready();
  }

  // Launches the buckets that are complete, in bucket order (every rank makes the same calls).
  void launch_ready() {
    while (next_launch < buckets.size() && buckets[next_launch].pending == 0) {
      Bucket& b = buckets[next_launch++];
      b.launched = Clock::now();
      b.work = group->all_reduce(b.flat, dist::ReduceOp::AVG);
    }
  }

  void finalize() {
    std::unique_lock<std::mutex> lk(mu);
    const auto start = Clock::now();
    std::string unused;
    for (size_t i = 0; i < params.size(); ++i) {
      if (ready[i]) continue;
      if (!options.find_unused_parameters) {
        unused += (unused.empty() ? "" : ", ") + names[i];
        continue;
      }
      slice(i).zero_();
      ready[i] = 1;
      --buckets[bucket_of[i]].pending;
    }
    launch_ready();
    double total = 0;
    std::string failure;
    for (Bucket& b : buckets) {
      if (!b.work) continue;
      try {
        b.work->wait();
      } catch (const std::exception& e) {
        if (failure.empty()) failure = e.what();
      }
      total += std::chrono::duration<double, std::milli>(Clock::now() - b.launched).count();
    }
    exposed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    total_ms = total;
    in_backward = false;
    if (!unused.empty())
      throw Error("DistributedDataParallel: these parameters received no gradient in this backward: " + unused +
                  ". Every parameter must take part in the loss on every rank, or construct DistributedDataParallel "
                  "with find_unused_parameters = true");
    if (!failure.empty()) throw Error("DistributedDataParallel: a gradient all-reduce failed: " + failure);
    for (size_t i = 0; i < params.size(); ++i) {
      Tensor& p = params[i];
      Tensor avg = slice(i).reshape(p.sizes());
      if (p.grad().defined()) {
        Tensor g = p.grad();
        g.copy_(avg);
      } else {
        p.set_grad(avg.clone());
      }
    }
  }
};

DistributedDataParallel::DistributedDataParallel(ModulePtr module, DistributedDataParallelOptions options,
                                                 dist::ProcessGroup* group)
    : module_(std::move(module)), reducer_(std::make_shared<Reducer>()) {
  EMBER_CHECK_VALUE(module_ != nullptr, "DistributedDataParallel: module is null");
  EMBER_CHECK_VALUE(options.bucket_cap_mb > 0, "DistributedDataParallel: bucket_cap_mb must be positive, got ",
                    options.bucket_cap_mb);
  register_module("module", module_);
  Reducer& r = *reducer_;
  r.group = group ? group : &dist::default_group();
  r.options = options;
  // Every rank starts from rank 0's parameters and buffers.
  for (auto& [name, t] : module_->named_parameters()) r.group->broadcast(t, 0)->wait();
  for (auto& [name, t] : module_->named_buffers()) r.group->broadcast(t, 0)->wait();
  for (auto& [name, t] : module_->named_parameters()) {
    if (!t.requires_grad()) continue;
    r.names.push_back(name);
    r.params.push_back(t);
  }
  // Buckets in reverse registration order, one dtype and device each, closed at bucket_cap_mb.
  const double cap = options.bucket_cap_mb * 1024 * 1024;
  r.bucket_of.assign(r.params.size(), 0);
  r.slot_of.assign(r.params.size(), 0);
  r.ready.assign(r.params.size(), 0);
  double bytes = 0;
  for (size_t k = r.params.size(); k-- > 0;) {
    const Tensor& p = r.params[k];
    bool fresh = r.buckets.empty() || bytes >= cap;
    if (!fresh) {
      const Tensor& first = r.params[r.buckets.back().params.front()];
      fresh = first.dtype() != p.dtype() || first.device() != p.device();
    }
    if (fresh) {
      r.buckets.emplace_back();
      bytes = 0;
    }
    Reducer::Bucket& b = r.buckets.back();
    b.offsets.push_back(b.params.empty() ? 0 : b.offsets.back() + r.params[b.params.back()].numel());
    b.params.push_back(k);
    r.bucket_of[k] = r.buckets.size() - 1;
    r.slot_of[k] = b.params.size() - 1;
    bytes += static_cast<double>(p.nbytes());
  }
  for (Reducer::Bucket& b : r.buckets) {
    const Tensor& last = r.params[b.params.back()];
    b.flat = zeros({b.offsets.back() + last.numel()}, TensorOptions().dtype(last.dtype()).device(last.device()));
  }
  // (the hooks outlive this object if the parameters do: they hold the reducer weakly)
  std::weak_ptr<Reducer> weak = reducer_;
  for (size_t k = 0; k < r.params.size(); ++k)
    r.params[k].register_post_accumulate_grad_hook([weak, k](const Tensor&) {
      if (auto red = weak.lock()) red->on_ready(k);
    });
}

DistributedDataParallel::~DistributedDataParallel() = default;

Tensor DistributedDataParallel::forward(const Tensor& x) {
  if (reducer_->options.broadcast_buffers)
    for (auto& [name, t] : module_->named_buffers()) reducer_->group->broadcast(t, 0)->wait();
  return (*module_)(x);
}

DistributedDataParallel::NoSync::NoSync(DistributedDataParallel& ddp) : ddp_(ddp), prev_(ddp.reducer_->sync) {
  ddp_.reducer_->sync = false;
}
DistributedDataParallel::NoSync::~NoSync() { ddp_.reducer_->sync = prev_; }

std::vector<std::vector<std::string>> DistributedDataParallel::bucket_names() const {
  std::vector<std::vector<std::string>> out;
  for (const auto& b : reducer_->buckets) {
    out.emplace_back();
    for (size_t k : b.params) out.back().push_back(reducer_->names[k]);
  }
  return out;
}

double DistributedDataParallel::last_exposed_comm_ms() const { return reducer_->exposed_ms; }
double DistributedDataParallel::last_total_comm_ms() const { return reducer_->total_ms; }

}  // namespace parallel
}  // namespace nn
}  // namespace ember
