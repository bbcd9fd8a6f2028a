// ember::nn::Module: named parameters, buffers and submodules (dotted names, registration
// order), train/eval, in-place device/dtype moves, zero_grad, state_dict / load_state_dict with
// a full report, forward hooks, and a printable module tree. Modules are held as
// std::shared_ptr, as in libtorch:
//
//   struct Net : nn::Module {
//     std::shared_ptr<nn::Linear> fc1, fc2;
//     Net() : fc1(register_module("fc1", std::make_shared<nn::Linear>(4, 8))),
//             fc2(register_module("fc2", std::make_shared<nn::Linear>(8, 2))) {}
//     Tensor forward(const Tensor& x) override { return (*fc2)((*fc1)(x).relu()); }
//   };
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/nn/ordered_dict.h"
#include "ember/tensor/tensor.h"

namespace ember {
namespace nn {

class Module;
using ModulePtr = std::shared_ptr<Module>;
template <class Impl>
class ModuleHolder;  // libtorch's holder idiom (module_holder.h)

// What load_state_dict found. With strict = true any problem throws before anything is copied.
// Clears the gradients of params (set_to_none: drops them, PyTorch's default; else fills them
// with zeros). Module::zero_grad and Optimizer::zero_grad use it.
void zero_grad(std::vector<Tensor> params, bool set_to_none = true);

struct LoadReport {
  std::vector<std::string> missing_keys;     // in the module, not in the state dict
  std::vector<std::string> unexpected_keys;  // in the state dict, not in the module
};

namespace detail {
// Whether M declares a one-Tensor forward that is not Module::forward's signature (a by-value
// Tensor, as libtorch modules write it): it hides the virtual instead of overriding it.
template <class F>
struct fn_of;
template <class C, class F>
struct fn_of<F C::*> {
  using type = F;
};
template <class F>
struct hides_forward : std::false_type {};
template <>
struct hides_forward<Tensor(Tensor)> : std::true_type {};
template <>
struct hides_forward<Tensor(Tensor) const> : std::true_type {};
template <>
struct hides_forward<Tensor(Tensor&)> : std::true_type {};
template <>
struct hides_forward<Tensor(const Tensor&) const> : std::true_type {};
template <class M, class = void>
struct forward_hides_virtual : std::false_type {};
template <class M>
struct forward_hides_virtual<M, std::void_t<decltype(&M::forward)>>
    : hides_forward<typename fn_of<decltype(&M::forward)>::type> {};
// Whether M's forward is one function other than the virtual Tensor(const Tensor&) (e.g. LSTM's,
// returning a tuple): a holder then calls it directly.
template <class M, class = void>
struct forward_is_not_virtual : std::false_type {};
template <class M>
struct forward_is_not_virtual<M, std::void_t<decltype(&M::forward)>>
    : std::integral_constant<bool, !std::is_same<typename fn_of<decltype(&M::forward)>::type,
                                                  Tensor(const Tensor&)>::value> {};
}  // namespace detail

class Module : public std::enable_shared_from_this<Module> {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  virtual ~Module() = default;

  // The module's computation. The default runs the forward adopt_forward recorded, else throws
  // NotImplementedError naming the module.
  // Modules with another forward (losses, recurrent layers, libtorch-style by-value forwards) hide
  // this one on purpose. g++ reports that (-Woverloaded-virtual, in -Wall from g++ 13) here, at the
  // hidden function, for every such module of every program; it is off for this declaration.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverloaded-virtual"
  virtual Tensor forward(const Tensor& x);
#pragma GCC diagnostic pop
  // forward with the hooks: pre-hooks may replace the input, hooks may replace the output.
  Tensor operator()(const Tensor& x);

  // The type name shown by operator<< ("Linear"); defaults to the C++ class name.
  virtual std::string name() const;
  // The arguments shown after the name ("in_features=4, out_features=3, bias=true").
  virtual std::string extra_repr() const { return ""; }

  // Registration. A parameter is a leaf; requires_grad as asked (floating tensors only).
  Tensor register_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  Tensor register_buffer(const std::string& name, Tensor t);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    add_child(name, adopt_forward(m));
    return m;
  }
  // A module written the libtorch way declares its forward with the Tensor by value (or const),
  // which hides the virtual forward(const Tensor&) above instead of overriding it. Where the
  // module's type is known (register_module, ModuleHolder, Sequential's and ModuleList's
  // constructors and push_back) ember records that forward, and the virtual one calls it: such a
  // module then runs as a child, in a Sequential and through operator() with its hooks, as it does
  // in libtorch. Other modules are left as they are. Returns m.
  template <class M>
  static const std::shared_ptr<M>& adopt_forward(const std::shared_ptr<M>& m) {
    if constexpr (detail::forward_hides_virtual<M>::value) {
      if (m) {
        M* raw = m.get();
        static_cast<Module*>(raw)->direct_forward_ = [raw](const Tensor& x) {
          Tensor in = x;  // a by-value or non-const reference parameter takes a handle of its own
          return raw->forward(in);
        };
      }
    }
    return m;
  }
  // A module holder (TORCH_MODULE's classes, module_holder.h): registers its module and returns it.
  template <class Impl>
  std::shared_ptr<Impl> register_module(const std::string& name, const ModuleHolder<Impl>& holder) {
    std::shared_ptr<Impl> m = holder.ptr();
    add_child(name, m);
    return m;
  }
  // Replaces a registered parameter or buffer's data (same object for its holders).
  void set_tensor(const std::string& name, const Tensor& value);

  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<Tensor> named_buffers(bool recurse = true) const;
  std::vector<ModulePtr> children() const;
  std::vector<std::pair<std::string, ModulePtr>> named_children() const;
  // This module ("") and every descendant, depth first in registration order.
  std::vector<std::pair<std::string, ModulePtr>> named_modules();
  ModulePtr child(const std::string& name) const;  // nullptr if none

  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Moves every parameter and buffer (and existing grads) in place: the tensors stay the same
  // objects, so optimizers built on parameters() keep working. to(DType) converts floating
  // tensors only.
  Module& to(Device device);
  Module& to(DType dtype);
  Module& to(Device device, DType dtype);

  // Clears the parameters' gradients (set_to_none: drop them; else fill with zeros).
  void zero_grad(bool set_to_none = true);

  // Parameters and buffers by dotted name (detached tensors sharing the module's storage).
  std::map<std::string, Tensor> state_dict() const;
  // Copies values in (any device; dtype converted when strict = false). strict: every key must
  // match in name, shape and dtype; otherwise ember::Error lists every problem and nothing is
  // copied. Not strict: missing/unexpected keys are reported, shape mismatches still throw.
  LoadReport load_state_dict(const std::map<std::string, Tensor>& state, bool strict = true);

  using ForwardHook = std::function<std::optional<Tensor>(Module&, const Tensor& input, const Tensor& output)>;
  using ForwardPreHook = std::function<std::optional<Tensor>(Module&, const Tensor& input)>;
  // Returns a handle for remove_hook.
  size_t register_forward_hook(ForwardHook hook);
  size_t register_forward_pre_hook(ForwardPreHook hook);
  bool remove_hook(size_t handle);

  int64_t num_parameters(bool recurse = true) const;

  // The module tree with parameter shapes (what operator<< prints).
  void print(std::ostream& os, int indent = 0) const;

 protected:
  void add_child(const std::string& name, ModulePtr m);
  // Unregisters this module's own parameter, buffer or child of that name (containers' pop).
  void unregister(const std::string& name);

 private:
  void collect(const std::string& prefix, bool params, bool recurse,
               std::vector<std::pair<std::string, Tensor>>* out) const;
  void collect_modules(const std::string& prefix, std::vector<std::pair<std::string, ModulePtr>>* out);
  void apply_to_tensors(const std::function<Tensor(const Tensor&)>& fn);
  void check_new_name(const std::string& name) const;

  std::vector<std::pair<std::string, Tensor>> params_, buffers_;
  std::vector<std::pair<std::string, ModulePtr>> children_;
  std::vector<std::pair<size_t, ForwardHook>> hooks_;
  std::vector<std::pair<size_t, ForwardPreHook>> pre_hooks_;
  size_t next_hook_ = 1;
  bool training_ = true;
  std::function<Tensor(const Tensor&)> direct_forward_;  // adopt_forward's
};

std::ostream& operator<<(std::ostream& os, const Module& m);

}  // namespace nn
}  // namespace ember
