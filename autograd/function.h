// ember: custom differentiable functions (PyTorch's torch::autograd::Function).
//
//   struct ScaleShift : autograd::Function<ScaleShift> {
//     static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, double a, double b) {
//       ctx->saved_data["a"] = a;
//       return x * a + b;                       // runs with grad disabled
//     }
//     static std::vector<Tensor> backward(autograd::AutogradContext* ctx, std::vector<Tensor> g) {
//       return {g[0] * ctx->saved_data["a"].to_double()};   // one gradient per tensor input
//     }
//   };
//   Tensor y = ScaleShift::apply(x, 2.0, 1.0);
#pragma once

#include <cxxabi.h>

#include <cstdlib>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/meta.h"
#include "ember/dispatch/ivalue.h"

namespace ember {
namespace autograd {

class AutogradContext {
 public:
  // Kept once forward returns (Function::apply), so a saved output is known to be one: with
  // create_graph it comes back as the node's output, with its place in the graph.
  void save_for_backward(const std::vector<Tensor>& tensors) {
    saved_.clear();
    to_save_ = tensors;
  }
  // The saved tensors (version-checked: modified in place since saving is an error).
  std::vector<Tensor> get_saved_variables() const {
    std::vector<Tensor> out;
    for (const SavedTensor& s : saved_) out.push_back(s.unpack(name_.c_str()));
    return out;
  }
  // Non-tensor values for backward.
  std::unordered_map<std::string, IValue> saved_data;
  // Whether tensor input i (counting tensor arguments only) needs a gradient.
  bool needs_input_grad(size_t i) const { return i < needs_.size() && needs_[i]; }

 private:
  template <class T>
  friend struct Function;
  template <class T>
  friend class CppNode;
  // Turns the tensors save_for_backward was given into saved ones; those that are outputs of
  // node (after attach) are saved as outputs (no reference cycle through the node).
  void finish_saving(const std::shared_ptr<Node>& node) {
    for (const Tensor& t : to_save_) {
      AutogradMeta* m = t.defined() ? get_meta(t) : nullptr;
      if (node && m && m->grad_fn == node)
        saved_.emplace_back(t, node, m->output_nr);
      else
        saved_.emplace_back(t);
    }
    to_save_.clear();
  }
  std::vector<Tensor> to_save_;
  std::vector<SavedTensor> saved_;
  std::vector<bool> needs_;
  std::string name_;
};

namespace detail {
inline std::string demangled_name(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string s = status == 0 && d ? d : mangled;
  std::free(d);
  auto colon = s.rfind("::");
  return colon == std::string::npos ? s : s.substr(colon + 2);
}

template <class T>
inline void collect(std::vector<Edge>& e, std::vector<int>& positions, int pos, const T& a) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same<D, Tensor>::value) {
    e.push_back(gradient_edge(a));
    positions.push_back(pos);
  } else if constexpr (std::is_same<D, std::vector<Tensor>>::value) {
    for (const Tensor& t : a) {
      e.push_back(gradient_edge(t));
      positions.push_back(pos);
    }
  }
}

inline void attach(const Tensor& out, const std::shared_ptr<Node>& node) {
  if (out.defined() && is_floating_point(out.dtype())) set_history(out, node);
}
inline void attach(const std::vector<Tensor>& outs, const std::shared_ptr<Node>& node) {
  for (const Tensor& o : outs) attach(o, node);
}
}  // namespace detail

template <class T>
class CppNode final : public Node {
 public:
  std::string name() const override { return ctx_.name_; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].defined()) {  // materialize zeros for outputs that got no gradient
        const TensorMeta& m = input_meta(i);
        grads[i] = Tensor(IntrusivePtr<TensorImpl>::make(Storage::make(numel_of(m.sizes) * element_size(m.dtype), m.device),
                                                         m.dtype, m.sizes, contiguous_strides(m.sizes), 0));
        grads[i].fill_(0);
      }
    }
    std::vector<Tensor> out = T::backward(&ctx_, std::move(grads));
    size_t n = next_edges().size();
    // Trailing undefined gradients beyond the arguments (or the tensor inputs) are dropped, as in
    // libtorch: backward may list a gradient for an optional input that apply() was not given.
    auto drop_undefined_tail = [&out](size_t keep) {
      if (out.size() <= keep) return;
      for (size_t i = keep; i < out.size(); ++i)
        if (out[i].defined()) return;
      out.resize(keep);
    };
    drop_undefined_tail(num_args_);
    drop_undefined_tail(n);
    if (out.size() == n) return out;
    if (out.size() == num_args_) {  // one entry per argument: keep the tensor positions
      std::vector<Tensor> sel;
      for (int p : positions_) sel.push_back(out[static_cast<size_t>(p)]);
      return sel;
    }
    EMBER_THROW(Error, ctx_.name_, ": backward returned ", out.size(), " gradients, expected ", n,
                " (one per tensor input) or ", num_args_, " (one per argument)");
  }
  void release_variables() override {
    for (SavedTensor& s : ctx_.saved_) s.release();
  }

 private:
  template <class U>
  friend struct Function;
  AutogradContext ctx_;
  std::vector<int> positions_;
  size_t num_args_ = 0;
};

template <class T>
struct Function {
  template <class... Args>
  static auto apply(Args&&... args) {
    auto node = std::make_shared<CppNode<T>>();
    node->ctx_.name_ = detail::demangled_name(typeid(T).name());
    node->num_args_ = sizeof...(Args);
    std::vector<Edge> edges;
    int pos = 0;
    (detail::collect(edges, node->positions_, pos++, args), ...);
    bool need = false;
    for (const Edge& e : edges) {
      node->ctx_.needs_.push_back(e.valid());
      need |= e.valid();
    }
    need = need && is_grad_enabled();
    auto out = [&] {
      NoGradGuard no_grad;
      return T::forward(&node->ctx_, std::forward<Args>(args)...);
    }();
    if (need) {
      node->set_next_edges(std::move(edges));
      detail::attach(out, node);
    }
    node->ctx_.finish_saving(need ? node : nullptr);
    return out;
  }
};

}  // namespace autograd
}  // namespace ember
