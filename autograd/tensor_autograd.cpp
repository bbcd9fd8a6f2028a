// The autograd part of Tensor's API: requires_grad, grad, is_leaf, backward, retain_grad,
// register_hook, grad_fn; and the hooks the tensor/ops layers call.
#include "ember/autograd/engine.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/meta.h"

namespace ember {

using autograd::AutogradMeta;
using autograd::get_meta;
using autograd::materialize_meta;

bool Tensor::requires_grad() const { return autograd::any_requires_grad(*this); }

Tensor& Tensor::requires_grad_(bool requires_grad) {
  AutogradMeta* m = get_meta(*this);
  EMBER_CHECK(!(m && m->grad_fn) || requires_grad,
              "requires_grad_: you can only change requires_grad flags of leaf variables. If you want to use a "
              "computed variable in a subgraph that doesn't require differentiation use detach()");
  if (m && m->grad_fn) return *this;
  EMBER_CHECK_DTYPE(!requires_grad || is_floating_point(), "requires_grad_: only tensors of floating point dtype can "
                    "require gradients, got ", dtype());
  materialize_meta(*this).requires_grad = requires_grad;
  impl()->set_autograd_key(requires_grad);
  return *this;
}

bool Tensor::is_leaf() const {
  AutogradMeta* m = get_meta(*this);
  return !m || !m->grad_fn;
}

Tensor Tensor::grad() const {
  AutogradMeta* m = get_meta(*this);
  if (!m) return Tensor();
  if (m->grad_fn) return m->retained_grad ? *m->retained_grad : Tensor();
  std::lock_guard<std::mutex> lock(m->mutex);  // a backward on another thread may be adding
  return m->grad;
}

Tensor& Tensor::mutable_grad() { return materialize_meta(*this).grad; }

void Tensor::set_grad(const Tensor& g) {
  if (g.defined()) {
    EMBER_CHECK_SHAPE(g.sizes() == sizes(), "set_grad: gradient of shape ", g.sizes(), " for a tensor of shape ",
                      sizes());
  }
  AutogradMeta& m = materialize_meta(*this);
  std::lock_guard<std::mutex> lock(m.mutex);
  m.grad = g;
}

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  if (defined() && impl()->view_base()) autograd::refresh_view_history(*this);
  AutogradMeta* m = get_meta(*this);
  return m ? m->grad_fn : nullptr;
}

uint32_t Tensor::output_nr() const {
  AutogradMeta* m = get_meta(*this);
  return m ? m->output_nr : 0;
}

void Tensor::backward() const { autograd::backward({*this}, {}, false); }

void Tensor::backward(const Tensor& grad, std::optional<bool> retain_graph, bool create_graph) const {
  autograd::backward({*this}, {grad}, retain_graph, create_graph);
}

void Tensor::retain_grad() {
  EMBER_CHECK(requires_grad(), "retain_grad: can't retain_grad on a tensor that has requires_grad=False");
  AutogradMeta& m = materialize_meta(*this);
  if (!m.grad_fn || m.retains_grad) return;  // leaves always keep their grad
  m.retains_grad = true;
  // The hook holds the TensorImpl weakly in effect: it writes through a shared box the meta
  // also points at, so a dead tensor leaves a harmless box behind.
  auto box = std::make_shared<Tensor>();
  m.retained_grad = box;
  m.grad_fn->add_pre_hook(m.output_nr, [box](const Tensor& g) {
    NoGradGuard ng;
    *box = box->defined() ? box->add(g) : g.clone();
    return Tensor();
  });
}

bool Tensor::retains_grad() const {
  AutogradMeta* m = get_meta(*this);
  return m && m->retains_grad;
}

void Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) {
  EMBER_CHECK(requires_grad(), "register_hook: cannot register a hook on a tensor that doesn't require gradient");
  AutogradMeta& m = materialize_meta(*this);
  if (m.grad_fn) {
    m.grad_fn->add_pre_hook(m.output_nr, std::move(hook));
  } else {
    m.leaf_hooks.push_back(std::move(hook));
  }
}

void Tensor::register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) {
  AutogradMeta* existing = get_meta(*this);
  EMBER_CHECK(existing && existing->requires_grad && !existing->grad_fn,
              "register_post_accumulate_grad_hook: only leaf tensors that require grad have an accumulated grad");
  existing->post_accumulate_hooks.push_back(std::move(hook));
}

std::string autograd::print_suffix(const Tensor& t) {
  AutogradMeta* m = get_meta(t);
  if (!m) return "";
  if (m->grad_fn) return ", grad_fn=<" + m->grad_fn->name() + ">";
  if (m->requires_grad) return ", requires_grad=True";
  return "";
}

void set_requires_grad_for_factory(Tensor& t, bool requires_grad) { t.requires_grad_(requires_grad); }

}  // namespace ember

namespace ember::autograd {
// self takes view's shape, strides and offset (view is a view of self just made) and, when the
// view was recorded, its history: x.unsqueeze_(0) is x = x.unsqueeze(0) on every handle of x.
Tensor& adopt_view(Tensor& self, const Tensor& view, const char* op) {
  AutogradMeta* m = get_meta(self);
  EMBER_CHECK(!(is_grad_enabled() && m && m->requires_grad && !m->grad_fn), op,
              ": a leaf tensor that requires grad ([", self.dtype(), " ", self.sizes(),
              "]) is being used in an in-place operation. Wrap it in NoGradGuard or use the out-of-place op");
  self.impl()->set_sizes_strides(view.sizes(), view.strides());
  self.impl()->set_storage_offset(view.storage_offset());
  if (AutogradMeta* vm = get_meta(view); vm && vm->grad_fn) {
    AutogradMeta& sm = materialize_meta(self);
    sm.grad_fn = vm->grad_fn;
    sm.output_nr = vm->output_nr;
  }
  return self;
}
}  // namespace ember::autograd

namespace ember {
Tensor& Tensor::detach_() {
  if (AutogradMeta* m = get_meta(*this)) {
    EMBER_CHECK(!impl()->is_view() || !m->grad_fn, "detach_: cannot detach a view in place (", dtype(), " ",
                sizes(), "); use detach()");
    m->grad_fn.reset();
    m->output_nr = 0;
    m->requires_grad = false;
    impl()->set_autograd_key(false);
  }
  return *this;
}
}  // namespace ember
