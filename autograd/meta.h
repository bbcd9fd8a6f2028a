// ember: per-tensor autograd state, kept in TensorImpl's autograd slot.
#pragma once

#include <atomic>
#include <memory>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "ember/autograd/node.h"

namespace ember {
namespace autograd {

// A lock for sections of a few instructions (reading or setting one pointer), taken on every op
// that records a leaf: uncontended it costs one exchange and one store, half of a std::mutex.
// Waiters spin briefly, then yield.
class SpinLock {
 public:
  void lock() {
    while (held_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; held_.load(std::memory_order_relaxed); ++spins)
        if (spins > 64) std::this_thread::yield();
    }
  }
  void unlock() { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

struct AutogradMeta final : AutogradMetaInterface {
  bool requires_grad = false;  // set by the user on leaves
  // Backward passes on several host threads may reach the same leaf (Hogwild, data-parallel
  // threads). mutex guards grad: adds into it happen under it (autograd/node.cpp), for as long as
  // an add takes. accumulator_lock guards grad_accumulator, so the leaf has one AccumulateGrad
  // whichever thread records it.
  std::mutex mutex;
  SpinLock accumulator_lock;
  Tensor grad;
  // NPU: the stream that last wrote grad (raw handle; -1: none or a CPU grad). A backward on
  // another host thread adds on its own current stream, after waiting for this one.
  int grad_stream_device = -1;
  void* grad_stream = nullptr;
  std::shared_ptr<Node> grad_fn;             // non-leaves
  std::weak_ptr<Node> grad_accumulator;      // leaves (weak: the node holds the leaf)
  uint32_t output_nr = 0;
  bool retains_grad = false;
  std::shared_ptr<Tensor> retained_grad;     // non-leaf .grad after retain_grad()
  std::vector<GradHook> leaf_hooks;          // register_hook on a leaf
  std::vector<std::function<void(const Tensor&)>> post_accumulate_hooks;  // leaves
  // Note [CopySlices]: a base counts the in-place ops on its views that rewrote its history
  // (history_epoch); a view records the count its own history was made at (base_epoch), and a
  // view whose base has moved on gets a fresh history from the base's (gradient_edge).
  uint32_t history_epoch = 0;
  uint32_t base_epoch = 0;
};
// Under m.mutex, before writing m.grad on device: orders the write after the NPU stream that last
// wrote it and records the current stream as the last writer (autograd/node.cpp).
void order_grad_write(AutogradMeta& m, Device device);


AutogradMeta* get_meta(const Tensor& t);      // nullptr if none
AutogradMeta& materialize_meta(const Tensor& t);
// What printing a tensor appends: "", ", requires_grad=True" or ", grad_fn=<...>".
std::string print_suffix(const Tensor& t);

// Note [In-place on views]
// A view shares its base's storage, so an in-place op on a view that takes part in autograd
// changes the base's values too, and the base's history is rewritten, as PyTorch's CopySlices
// does: the base's new grad_fn takes the base's gradient, runs the op's backward on the view's
// part of it, and passes the rest to the base's old history; the view's grad_fn becomes a view of
// the base's new history. Refused, with an error naming the op: an in-place op on a leaf that
// requires grad or on a view of one, and on a view of a non-contiguous base. A detached tensor
// is written like a non-view (its source's history is not its own). check_inplace runs only when
// the op is recorded (grad mode on, an input requires grad).
void check_inplace(std::string_view op, const Tensor& self);
// After an in-place op recorded by node fn wrote self: if self is a view, rewrites its base's
// history around fn (CopySlices) and gives self a view of it, returning true; false otherwise
// (the caller makes fn self's grad_fn).
bool rebase_view_history(const Tensor& self, const std::shared_ptr<Node>& fn);
// A view whose base's history was rewritten since its own was made gets a fresh one (a view of
// the base's); gradient_edge and any_requires_grad call it.
void refresh_view_history(const Tensor& t);
// The in-place view ops (unsqueeze_, t_, ...): self takes the shape of view (a view of self just
// made) and its recorded history (autograd/tensor_autograd.cpp).
Tensor& adopt_view(Tensor& self, const Tensor& view, const char* op);

}  // namespace autograd
}  // namespace ember
