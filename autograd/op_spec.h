// ember: autograd kernels for dispatcher ops, from a one-line spec and a backward formula.
//
//   // d(a*b) = g*b, g*a
//   std::vector<Tensor> mul_backward(const BackwardCtx<Tensor(const Tensor&, const Tensor&)>& c) {
//     return {c.needs(0) ? c.grad() * c.arg<1>() : Tensor(), c.needs(1) ? c.grad() * c.arg<0>() : Tensor()};
//   }
//   const auto kMul = spec_of<op::mul>("MulBackward", &mul_backward).saving(saves(0, 1));
//   EMBER_LIBRARY_IMPL(ember, Autograd, m) { m.impl(op::mul(), autograd_kernel<&kMul>()); }
//
// The kernel records a node when grad mode is on and a tensor input requires grad, saves what
// the spec asks for, redispatches below Autograd, and gives the outputs their grad_fn. Formulas
// return one gradient per tensor input (tensor lists flattened, in argument order); the engine
// reduces broadcast dims and converts dtype/device, so `return {g, g}` is add's whole backward.
#pragma once

#include <array>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/meta.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/library.h"

namespace ember {
namespace autograd {

template <class Sig>
class BackwardCtx;
template <class Sig>
class OpNode;

// Bit i: save tensor argument at position i (outputs are saved with OpSpec::saving_output).
constexpr uint32_t saves() { return 0; }
template <class... I>
constexpr uint32_t saves(int first, I... rest) {
  return (1u << first) | saves(rest...);
}

template <class Sig>
struct OpSpec;
template <class R, class... Args>
struct OpSpec<R(Args...)> {
  const char* name;  // "MulBackward"
  std::string_view op;  // "ember::mul": the declaration's name() (spec_of)
  std::vector<Tensor> (*backward)(const BackwardCtx<R(Args...)>&);
  uint32_t save_mask = 0;    // tensor arguments kept for backward (saves(...))
  bool save_output = false;  // keep an output (e.g. exp, sigmoid, softmax)
  uint32_t output_index = 0;  // which one, for ops returning several (a statistic of the forward)
  uint32_t output_mask = 0;   // or several: bit i keeps output i (saving_outputs)
  bool inplace = false;      // argument 0 is written in place and returned
  // Run the formula on float32 copies of fp16/bf16 grads and saved tensors: for formulas that
  // chain several ops, so intermediate values are not rounded to 16 bits between them.
  bool upcast = false;

  // Chainable setters: spec_of<op::mul>("MulBackward", &mul_bw).saving(saves(0, 1))
  constexpr OpSpec saving(uint32_t mask) const {
    OpSpec s = *this;
    s.save_mask = mask;
    return s;
  }
  constexpr OpSpec saving_output(uint32_t index = 0) const {
    OpSpec s = *this;
    s.save_output = true;
    s.output_index = index;
    return s;
  }
  // Keeps outputs by mask (bit i: output i; at most 4), read with BackwardCtx::output(i).
  constexpr OpSpec saving_outputs(uint32_t mask) const {
    OpSpec s = *this;
    s.output_mask = mask;
    return s;
  }
  constexpr OpSpec in_place() const {
    OpSpec s = *this;
    s.inplace = true;
    return s;
  }
  constexpr OpSpec upcasting() const {
    OpSpec s = *this;
    s.upcast = true;
    return s;
  }
};

namespace detail {

// How each kind of argument is kept in a node.
struct SavedSlot {
  SavedTensor saved;
  TensorMeta meta;
  bool defined = false;
};

template <class T>
struct Keep {
  using type = std::decay_t<T>;
  static type keep(T v, bool) { return v; }
};
template <>
struct Keep<const Tensor&> {
  using type = SavedSlot;
  static SavedSlot keep(const Tensor& t, bool save) {
    SavedSlot s;
    s.defined = t.defined();
    if (s.defined) s.meta = TensorMeta(t);
    if (save) s.saved = SavedTensor(t);
    return s;
  }
};
template <>
struct Keep<const std::optional<Tensor>&> {
  using type = SavedSlot;
  static SavedSlot keep(const std::optional<Tensor>& t, bool save) {
    return Keep<const Tensor&>::keep(t ? *t : Tensor(), save);
  }
};
template <>
struct Keep<const std::vector<Tensor>&> {
  using type = std::vector<SavedSlot>;
  static type keep(const std::vector<Tensor>& ts, bool save) {
    type v;
    for (const Tensor& t : ts) v.push_back(Keep<const Tensor&>::keep(t, save));
    return v;
  }
};
template <>
struct Keep<IntArrayRef> {
  using type = std::vector<int64_t>;
  static type keep(IntArrayRef a, bool) { return a.vec(); }
};

inline void add_edges(std::vector<Edge>& e, const Tensor& t) { e.push_back(gradient_edge(t)); }
inline void add_edges(std::vector<Edge>& e, const std::optional<Tensor>& t) {
  e.push_back(t ? gradient_edge(*t) : Edge());
}
inline void add_edges(std::vector<Edge>& e, const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) e.push_back(gradient_edge(t));
}
template <class T>
inline void add_edges(std::vector<Edge>&, const T&) {}

inline bool needs_grad(const Tensor& t) { return any_requires_grad(t); }
inline bool needs_grad(const std::optional<Tensor>& t) { return t && any_requires_grad(*t); }
inline bool needs_grad(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts)
    if (any_requires_grad(t)) return true;
  return false;
}
template <class T>
inline bool needs_grad(const T&) {
  return false;
}

template <class T>
struct IsTensorArg : std::false_type {};
template <>
struct IsTensorArg<const Tensor&> : std::true_type {};

inline Tensor maybe_upcast(const Tensor& t, bool up) {
  return up && t.defined() && is_reduced_float(t.dtype()) ? t.to(DType::Float32) : t;
}

// Attaches history to the outputs (floating tensors only).
inline void set_outputs(const Tensor& out, const std::shared_ptr<Node>& node) {
  if (out.defined() && is_floating_point(out.dtype())) set_history(out, node);
}
template <class... Ts>
inline void set_outputs(const std::tuple<Ts...>& outs, const std::shared_ptr<Node>& node) {
  std::apply([&](const auto&... o) { (set_outputs(o, node), ...); }, outs);
}
inline void set_outputs(const std::vector<Tensor>& outs, const std::shared_ptr<Node>& node) {
  for (const Tensor& o : outs) set_outputs(o, node);
}

inline const Tensor& nth_output(const Tensor& t, uint32_t) { return t; }
template <class... Ts>
inline Tensor nth_output(const std::tuple<Ts...>& t, uint32_t n) {
  Tensor out;
  uint32_t i = 0;
  std::apply([&](const auto&... o) { ((out = i++ == n ? Tensor(o) : out), ...); }, t);
  return out;
}
inline const Tensor& nth_output(const std::vector<Tensor>& v, uint32_t n) { return v.at(n); }

inline const Tensor* tensor_ptr(const Tensor& t) { return &t; }
template <class T>
inline const Tensor* tensor_ptr(const T&) {
  return nullptr;
}
// Argument 0 when it is a Tensor (in-place ops write it, view ops view it), else nullptr.
template <class A0, class... Rest>
inline const Tensor* first_tensor(const A0& a, const Rest&...) {
  return tensor_ptr(a);
}

}  // namespace detail

template <class R, class... Args>
class OpNode<R(Args...)> final : public Node {
 public:
  using Spec = OpSpec<R(Args...)>;
  explicit OpNode(const Spec* spec) : spec_(spec) {}
  std::string name() const override { return spec_->name; }

  void keep(Args... args, bool clone_self) {
    self_ = clone_self ? detail::first_tensor(args...) : nullptr;
    keep_impl(std::index_sequence_for<Args...>(), clone_self, args...);
    self_ = nullptr;
  }
  void save_output(const Tensor& t, size_t slot = 0) {
    AutogradMeta* m = get_meta(t);
    outputs_.at(slot) = m && m->grad_fn.get() == this ? SavedTensor(t, shared_from_this(), m->output_nr) : SavedTensor(t);
  }

  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  void release_variables() override {
    std::apply([](auto&... a) { (release(a), ...); }, args_);
    for (SavedTensor& o : outputs_) o.release();
  }

 private:
  friend class BackwardCtx<R(Args...)>;
  template <size_t... I>
  void keep_impl(std::index_sequence<I...>, bool clone_self, Args... args) {
    args_ = std::tuple<typename detail::Keep<Args>::type...>(keep_one<I, Args>(args, clone_self)...);
  }
  template <size_t I, class A>
  typename detail::Keep<A>::type keep_one(A a, bool clone_self) {
    bool save = (spec_->save_mask >> I) & 1u;
    if constexpr (detail::IsTensorArg<A>::value) {
      // The in-place op overwrites self: a saved self, or a saved argument sharing self's
      // storage (x.mul_(x)), is kept as a copy of its value before the op.
      if (save && clone_self && a.defined() && (I == 0 || (self_ && a.is_alias_of(*self_)))) {
        ExcludeDispatchKeyGuard g(DispatchKey::Autograd);
        return detail::Keep<A>::keep(a.clone(), true);
      }
    }
    return detail::Keep<A>::keep(a, save);
  }
  static void release(detail::SavedSlot& s) { s.saved.release(); }
  static void release(std::vector<detail::SavedSlot>& v) {
    for (auto& s : v) s.saved.release();
  }
  template <class T>
  static void release(T&) {}

  const Spec* spec_;
  std::tuple<typename detail::Keep<Args>::type...> args_;
  std::array<SavedTensor, 4> outputs_;  // slot 0: the saving_output one; else output i in slot i
  const Tensor* self_ = nullptr;  // argument 0 of an in-place op, while keep() runs
};

// What a backward formula sees.
template <class R, class... Args>
class BackwardCtx<R(Args...)> {
 public:
  BackwardCtx(const OpNode<R(Args...)>& node, std::vector<Tensor>& grads) : node_(node), grads_(grads) {}

  // The gradient of forward output i (zeros if that output got none).
  Tensor grad(size_t i = 0) const {
    Tensor g = i < grads_.size() ? grads_[i] : Tensor();
    if (!g.defined()) {
      const TensorMeta& m = node_.input_meta(i);
      g = Tensor(IntrusivePtr<TensorImpl>::make(Storage::make(numel_of(m.sizes) * element_size(m.dtype), m.device),
                                                m.dtype, m.sizes, contiguous_strides(m.sizes), 0));
      g.fill_(0);
    }
    return detail::maybe_upcast(g, node_.spec_->upcast);
  }
  // Whether forward output i received a gradient (grad(i) is zeros otherwise).
  bool has_grad(size_t i) const { return i < grads_.size() && grads_[i].defined(); }
  // Argument I: a Tensor (unpacked; throws if the spec did not save it), a list, or the value.
  template <size_t I>
  decltype(auto) arg() const {
    const auto& a = std::get<I>(node_.args_);
    using K = std::decay_t<decltype(a)>;
    if constexpr (std::is_same<K, detail::SavedSlot>::value) {
      return unpack(a, I);
    } else if constexpr (std::is_same<K, std::vector<detail::SavedSlot>>::value) {
      std::vector<Tensor> v;
      for (const auto& s : a) v.push_back(unpack(s, I));
      return v;
    } else if constexpr (std::is_same<K, std::vector<int64_t>>::value) {
      return IntArrayRef(a);
    } else {
      return static_cast<const K&>(a);
    }
  }
  // Shape/dtype/device of tensor argument I (kept even when the tensor is not saved).
  template <size_t I>
  const TensorMeta& meta() const {
    return std::get<I>(node_.args_).meta;
  }
  template <size_t I>
  const std::vector<detail::SavedSlot>& list_meta() const {
    return std::get<I>(node_.args_);
  }
  // The saved output (saving_output), or output i when saved by saving_outputs' mask.
  Tensor output() const {
    return detail::maybe_upcast(node_.outputs_[0].unpack(node_.spec_->name), node_.spec_->upcast);
  }
  Tensor output(size_t i) const {
    EMBER_ASSERT(i < 4 && ((node_.spec_->output_mask >> i) & 1u), node_.spec_->name, ": output ", i,
                 " is read by the backward formula but its spec does not save it");
    return detail::maybe_upcast(node_.outputs_[i].unpack(node_.spec_->name), node_.spec_->upcast);
  }
  // Whether the k-th tensor input (lists flattened) needs a gradient.
  bool needs(size_t k) const { return k < node_.next_edges().size() && node_.next_edges()[k].valid(); }
  size_t num_tensor_inputs() const { return node_.next_edges().size(); }
  const char* name() const { return node_.spec_->name; }

 private:
  Tensor unpack(const detail::SavedSlot& s, size_t index) const {
    EMBER_ASSERT(s.saved.defined() || !s.defined, node_.spec_->name, ": argument ", index,
                 " is used by the backward formula but its spec does not save it");
    return detail::maybe_upcast(s.saved.unpack(node_.spec_->name), node_.spec_->upcast);
  }
  const OpNode<R(Args...)>& node_;
  std::vector<Tensor>& grads_;
};

template <class R, class... Args>
std::vector<Tensor> OpNode<R(Args...)>::apply(std::vector<Tensor>&& grads) {
  BackwardCtx<R(Args...)> ctx(*this, grads);
  return spec_->backward(ctx);
}

template <class Sig>
struct KernelImpl;
template <class R, class... Args>
struct KernelImpl<R(Args...)> {
  template <const OpSpec<R(Args...)>* S>
  static R call(Args... args) {
    static const TypedOperatorHandle<R(Args...)> op =
        Dispatcher::singleton().find_schema(std::string(S->op)).template typed<R(Args...)>();
    bool need = is_grad_enabled() && (detail::needs_grad(args) || ...);
    if (!need) {
      ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
      return op.call(args...);
    }
    const Tensor* self = detail::first_tensor(args...);
    if (S->inplace && self) check_inplace(S->op, *self);
    auto node = std::make_shared<OpNode<R(Args...)>>(S);
    std::vector<Edge> edges;
    (detail::add_edges(edges, args), ...);
    node->set_next_edges(std::move(edges));
    node->keep(args..., S->inplace);
    R out = [&] {
      ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
      return op.call(args...);
    }();
    // An in-place op on a view rewrites its base's history (Note [In-place on views]).
    if (!(S->inplace && self && rebase_view_history(*self, node))) detail::set_outputs(out, node);
    if (S->save_output) node->save_output(detail::nth_output(out, S->output_index));
    for (uint32_t i = 0; i < 4; ++i)
      if ((S->output_mask >> i) & 1u) node->save_output(detail::nth_output(out, i), i);
    return out;
  }
};

// The spec of declared op D (dispatch/op_decl.h): its name and signature come from the
// declaration, so a backward formula of another signature does not compile.
template <class D>
constexpr OpSpec<typename D::Signature> spec_of(const char* node,
                                                std::vector<Tensor> (*backward)(const BackwardCtx<typename D::Signature>&)) {
  return OpSpec<typename D::Signature>{node, D::name(), backward};
}

template <class T>
struct SigOf;
template <class Sig>
struct SigOf<OpSpec<Sig>> {
  using type = Sig;
};

// The Autograd-key kernel for the op described by *S (a static OpSpec).
template <const auto* S>
auto autograd_kernel() {
  using SpecT = std::remove_cv_t<std::remove_pointer_t<decltype(S)>>;
  return &KernelImpl<typename SigOf<SpecT>::type>::template call<S>;
}

// The Autograd kernel of a backward op (x_backward) that has no derivative of its own. Calls
// run the op; when an input requires grad (create_graph), its outputs are recorded with a node
// that raises NotImplementedError ("double backward is not implemented") if a second backward
// reaches it, never a silently missing second derivative.
void no_double_backward_kernel(const OperatorHandle& op, Stack* stack);
inline Library& impl_no_double_backward(Library& m, const std::string& name) {
  return m.impl_boxed(name, &no_double_backward_kernel, AutogradTag::NoDoubleBackward);
}
template <class D, std::enable_if_t<is_op_decl<D>::value, int> = 0>
Library& impl_no_double_backward(Library& m, D) {
  return impl_no_double_backward(m, std::string(D::local_name()));
}

}  // namespace autograd
}  // namespace ember
