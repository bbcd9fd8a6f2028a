#include "ember/autograd/node.h"

#include <sstream>

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/engine.h"
#include "ember/autograd/meta.h"
#include "ember/device/npu/npu.h"

namespace ember {
namespace autograd {

namespace {
std::atomic<uint64_t> g_sequence{0};
}

Node::Node() : sequence_nr_(g_sequence.fetch_add(1, std::memory_order_relaxed)) {}

SavedTensor::SavedTensor(const Tensor& t) : saved_(t.defined()) {
  if (!t.defined()) return;
  // An alias without autograd state: no cycle through a saved output's grad_fn.
  data_ = Tensor(IntrusivePtr<TensorImpl>::make(t.impl()->storage(), t.dtype(), t.sizes(), t.strides(),
                                                t.storage_offset()));
  version_ = t.version();
  if (any_requires_grad(t)) original_ = t;
}

SavedTensor::SavedTensor(const Tensor& t, const std::shared_ptr<Node>& node, uint32_t output_nr) : SavedTensor(t) {
  original_ = Tensor();
  node_ = node;
  output_nr_ = output_nr;
}

Tensor SavedTensor::unpack(const char* node_name) const {
  EMBER_CHECK(!released_, node_name,
              ": trying to backward through the graph a second time (or to access saved tensors after they have "
              "been freed). Saved tensors are freed after backward; pass retain_graph=true to backward() the first "
              "time if you need to backward twice");
  if (!saved_) return Tensor();
  EMBER_CHECK(data_.version() == version_, node_name,
              ": one of the variables needed for gradient computation has been modified by an in-place operation: [",
              data_.dtype(), " ", data_.sizes(), "] is at version ", data_.version(), "; expected version ", version_,
              " instead");
  if (!is_grad_enabled()) return data_;
  if (original_.defined()) return original_;
  if (std::shared_ptr<Node> n = node_.lock()) {
    // The node's output again, as a fresh alias whose grad_fn is the node.
    Tensor out(IntrusivePtr<TensorImpl>::make(data_.impl()->storage(), data_.dtype(), data_.sizes(), data_.strides(),
                                              data_.storage_offset()));
    AutogradMeta& m = materialize_meta(out);
    m.grad_fn = std::move(n);
    m.output_nr = output_nr_;
    out.impl()->set_autograd_key(true);
    return out;
  }
  return data_;
}

bool any_requires_grad(const Tensor& t) {
  if (!t.defined()) return false;
  if (EMBER_UNLIKELY(t.impl()->view_base() != nullptr)) refresh_view_history(t);
  AutogradMeta* m = get_meta(t);
  return m && (m->requires_grad || m->grad_fn);
}

Edge gradient_edge(const Tensor& t) {
  if (EMBER_UNLIKELY(t.defined() && t.impl()->view_base())) refresh_view_history(t);
  AutogradMeta* m = get_meta(t);
  if (!m) return Edge();
  if (m->grad_fn) return Edge{m->grad_fn, m->output_nr};
  if (!m->requires_grad) return Edge();
  std::shared_ptr<Node> acc;
  {
    std::lock_guard<SpinLock> lock(m->accumulator_lock);  // one accumulator per leaf, whichever thread asks
    acc = m->grad_accumulator.lock();
    if (acc) return Edge{std::move(acc), 0};
  }
  // Made outside the lock (an allocation); the first to store it wins.
  auto made = std::make_shared<AccumulateGrad>(t);
  std::lock_guard<SpinLock> lock(m->accumulator_lock);
  acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::move(made);
    m->grad_accumulator = acc;
  }
  return Edge{std::move(acc), 0};
}

void set_history(const Tensor& out, const std::shared_ptr<Node>& fn) {
  AutogradMeta& m = materialize_meta(out);
  if (TensorImpl* b = out.impl()->view_base()) {
    auto* bm = static_cast<AutogradMeta*>(b->autograd_meta());
    m.base_epoch = bm ? bm->history_epoch : 0;
  }
  m.grad_fn = fn;
  m.output_nr = fn->add_input_meta(out);
  m.requires_grad = false;
  out.impl()->set_autograd_key(true);
}

AutogradMeta* get_meta(const Tensor& t) {
  return t.defined() ? static_cast<AutogradMeta*>(t.impl()->autograd_meta()) : nullptr;
}

AutogradMeta& materialize_meta(const Tensor& t) {
  AutogradMeta* m = get_meta(t);
  if (!m) {
    t.impl()->set_autograd_meta(std::make_unique<AutogradMeta>());
    m = get_meta(t);
  }
  return *m;
}

void check_inplace(std::string_view op, const Tensor& self) {
  AutogradMeta* m = get_meta(self);
  EMBER_CHECK(!(m && m->requires_grad && !m->grad_fn), op, ": a leaf tensor that requires grad ([", self.dtype(), " ",
              self.sizes(), "]) is being used in an in-place operation. Wrap the update in NoGradGuard (as optimizers "
              "do) or use an out-of-place op");
  // A detached tensor shares its source's storage but not its history: written like a non-view,
  // as in PyTorch.
  if (!self.impl()->is_view() || !self.impl()->view_base()) return;
  Tensor base(self.impl()->view_base_ptr());
  AutogradMeta* bm = get_meta(base);
  EMBER_CHECK(!(bm && bm->requires_grad && !bm->grad_fn), op, ": a view of a leaf tensor that requires grad ([",
              base.dtype(), " ", base.sizes(), "]) is being used in an in-place operation. Wrap it in NoGradGuard, "
              "or write into a clone of the leaf");
  EMBER_CHECK(base.is_contiguous(), op, ": in-place operation on a view of a non-contiguous tensor ([", base.dtype(),
              " ", base.sizes(), ", strides ", base.strides(), "]) while an input requires grad; ember's autograd "
              "rewrites the history of contiguous bases only. contiguous() the base first");
}

// Note [CopySlices]
namespace {
// The geometry of a view inside its contiguous base.
struct ViewGeometry {
  DimVector base_sizes, sizes, strides;
  int64_t offset;  // relative to the base's
  ViewGeometry(const Tensor& base, const Tensor& view)
      : base_sizes(base.sizes()), sizes(view.sizes()), strides(view.strides()),
        offset(view.storage_offset() - base.storage_offset()) {}
};

// grad_fn of a view whose base's history was rewritten: its gradient placed in a zero gradient
// of the base.
class AsStridedBackward final : public Node {
 public:
  explicit AsStridedBackward(ViewGeometry g) : g_(std::move(g)) {}
  std::string name() const override { return "AsStridedBackward0"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    const Tensor& g = grads[0];
    if (!g.defined()) return {Tensor()};
    Tensor gb = g.new_zeros(g_.base_sizes);
    gb.as_strided(g_.sizes, g_.strides, g_.offset).copy_(g);
    return {gb};
  }

 private:
  ViewGeometry g_;
};

// The base's grad_fn after an in-place op (fn) wrote a view of it: the base's gradient outside
// the view goes to the base's old history as it is; inside, fn's backward turns it into the
// gradient of the view's old values (also to the old history) and of fn's other inputs.
class CopySlices final : public Node {
 public:
  CopySlices(ViewGeometry g, std::shared_ptr<Node> fn) : g_(std::move(g)), fn_(std::move(fn)) {}
  std::string name() const override { return "CopySlices"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    std::vector<Tensor> out(next_edges().size());
    const Tensor& g = grads[0];
    if (!g.defined()) return out;
    Tensor result = g.contiguous().clone();
    Tensor slice = result.as_strided(g_.sizes, g_.strides, g_.offset);
    std::vector<Tensor> r = fn_->apply({slice.clone()});
    if (!r.empty() && r[0].defined()) {
      slice.copy_(r[0]);
    } else {
      slice.zero_();
    }
    out[0] = result;
    for (size_t i = 1; i < out.size() && i < r.size(); ++i) out[i] = r[i];
    return out;
  }
  void release_variables() override { fn_->release_variables(); }

 private:
  ViewGeometry g_;
  std::shared_ptr<Node> fn_;
};

void make_view_history(const Tensor& view, const Tensor& base) {
  auto node = std::make_shared<AsStridedBackward>(ViewGeometry(base, view));
  node->set_next_edges({gradient_edge(base)});
  set_history(view, node);
}

// The base of a view whose history is older than its base's, else an undefined tensor.
Tensor stale_base(const Tensor& t) {
  TensorImpl* b = t.impl()->view_base();
  if (EMBER_LIKELY(!b)) return Tensor();
  auto* bm = static_cast<AutogradMeta*>(b->autograd_meta());
  if (!bm || bm->history_epoch == 0) return Tensor();
  AutogradMeta* m = get_meta(t);
  if (m && (m->base_epoch == bm->history_epoch || (m->requires_grad && !m->grad_fn))) return Tensor();
  return Tensor(t.impl()->view_base_ptr());
}
}  // namespace

bool rebase_view_history(const Tensor& self, const std::shared_ptr<Node>& fn) {
  if (!self.impl()->is_view() || !self.impl()->view_base() || !is_floating_point(self.dtype())) return false;
  Tensor base(self.impl()->view_base_ptr());
  fn->add_input_meta(self);  // the gradient fn's backward takes: the view's
  auto cs = std::make_shared<CopySlices>(ViewGeometry(base, self), fn);
  std::vector<Edge> edges{gradient_edge(base)};
  for (size_t i = 1; i < fn->next_edges().size(); ++i) edges.push_back(fn->next_edges()[i]);
  cs->set_next_edges(std::move(edges));
  set_history(base, cs);
  ++materialize_meta(base).history_epoch;
  make_view_history(self, base);
  return true;
}

void refresh_view_history(const Tensor& t) {
  Tensor base = stale_base(t);
  if (base.defined()) make_view_history(t, base);
}

namespace {
class NotImplementedNode final : public Node {
 public:
  explicit NotImplementedNode(std::string message) : message_(std::move(message)) {}
  std::string name() const override { return "NotImplemented"; }
  std::vector<Tensor> apply(std::vector<Tensor>&&) override { throw NotImplementedError(message_); }

 private:
  std::string message_;
};
}  // namespace

std::shared_ptr<Node> not_implemented_node(std::string message) {
  return std::make_shared<NotImplementedNode>(std::move(message));
}

void order_grad_write(AutogradMeta& m, Device device) {
  // On the NPU, backward passes may run on different streams (one per host thread): a write of
  // .grad goes after the stream that last wrote it, as torch's AccumulateGrad does across CUDA
  // streams, and this stream becomes the last writer.
  const bool npu = device.type() == DeviceType::NPU;
  npu::Stream here = npu ? npu::current_stream(device.index()) : npu::Stream();
  if (npu && m.grad.defined() && m.grad_stream_device == here.device() &&
      m.grad_stream != static_cast<void*>(here.raw())) {
    npu::Stream last(m.grad_stream_device, static_cast<aclrtStream>(m.grad_stream));
    if (last.alive()) here.wait_stream(last);  // a destroyed stream finished its work first
  }
  m.grad_stream_device = npu ? here.device() : -1;
  m.grad_stream = npu ? static_cast<void*>(here.raw()) : nullptr;
}

void zero_grad(const Tensor& leaf, bool set_to_none) {
  AutogradMeta* m = get_meta(leaf);
  if (!m) return;
  NoGradGuard no_grad;
  std::lock_guard<std::mutex> lock(m->mutex);  // the lock accumulation holds while it adds
  if (!m->grad.defined()) return;
  if (set_to_none) {
    m->grad = Tensor();
    m->grad_stream_device = -1;
    m->grad_stream = nullptr;
    return;
  }
  order_grad_write(*m, m->grad.device());
  m->grad.zero_();
}

AccumulateGrad::AccumulateGrad(const Tensor& leaf) : variable_(leaf) { add_input_meta(leaf); }

namespace {
// g as a tensor .grad can own, when nothing else holds its memory: its impl is g's alone, and its
// storage is held by that impl and, for a view, by the view's base alone (a base nothing else
// holds, e.g. the product a transposed gradient was made from), with g spanning all of it,
// contiguous. Null otherwise. A view comes back as a plain tensor over the same storage.
Tensor owned_gradient(Tensor& g) {
  const TensorImpl* impl = g.impl();
  if (g.impl_ptr().use_count() != 1 || !g.is_contiguous()) return Tensor();
  uint32_t holders = 1;
  if (impl->view_base()) {
    if (impl->view_base_ptr().use_count() != 1) return Tensor();
    ++holders;
  }
  const Storage& s = impl->storage();
  if (s.use_count() != holders || impl->storage_offset() != 0 ||
      static_cast<size_t>(impl->numel()) * impl->itemsize() != s->nbytes())
    return Tensor();
  if (!impl->view_base()) return std::move(g);
  return Tensor(IntrusivePtr<TensorImpl>::make(s, g.dtype(), g.sizes(), g.strides(), 0));
}
}  // namespace

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>&& grads) {
  Tensor g = std::move(grads[0]);
  AutogradMeta& m = materialize_meta(variable_);
  for (const GradHook& h : m.leaf_hooks) {
    Tensor r = h(g);
    if (r.defined()) g = r;
  }
  if (!g.defined()) return {};
  if (is_grad_enabled()) {
    // A backward with create_graph: .grad keeps the gradient's graph (sums are recorded too).
    std::unique_lock<std::mutex> lock(m.mutex);
    m.grad = m.grad.defined() ? m.grad.add(g) : g;
    lock.unlock();
    for (const auto& h : m.post_accumulate_hooks) h(variable_);
    return {};
  }
  NoGradGuard no_grad;
  std::unique_lock<std::mutex> lock(m.mutex);  // backward passes on other threads add here too
  order_grad_write(m, g.device());
  if (!m.grad.defined()) {
    // Take the gradient over when nothing else holds it; otherwise keep a private copy so that
    // accumulating into .grad later never writes into a tensor someone else sees.
    Tensor owned = owned_gradient(g);
    m.grad = owned.defined() ? std::move(owned) : g.clone();
  } else {
    m.grad.add_(g);
  }
  if (!m.post_accumulate_hooks.empty()) {
    lock.unlock();  // a hook may read .grad (DistributedDataParallel copies it)
    for (const auto& h : m.post_accumulate_hooks) h(variable_);
  }
  return {};
}

}  // namespace autograd
}  // namespace ember
