// ember::nn::ModuleHolder and TORCH_MODULE: libtorch's module-holder idiom, so modules written
// the libtorch way compile with their names unchanged:
//
//   struct NetImpl : nn::Module {
//     NetImpl(int64_t in, int64_t out) : fc(register_module("fc", std::make_shared<nn::Linear>(in, out))) {}
//     Tensor forward(Tensor x) { return fc->forward(x).relu(); }   // by value, as libtorch writes it
//     std::shared_ptr<nn::Linear> fc;
//   };
//   TORCH_MODULE(Net);                  // class Net: a ModuleHolder<NetImpl>
//
//   Net net(4, 8);                       // makes a NetImpl (shared, like a shared_ptr)
//   Net empty{nullptr};                  // no module yet (libtorch's `nn::Linear fc{nullptr}`)
//   Tensor y = net(x);                   // = net->forward(x)
//   parent.register_module("net", net);  // returns the std::shared_ptr<NetImpl>
//
// Calling the holder calls the module's own forward, whatever its signature (so a by-value or a
// many-argument forward works). A module whose forward is ember's virtual forward(const Tensor&)
// goes through Module::operator(), with its forward hooks, as (*ptr)(x) does.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "ember/core/error.h"
#include "ember/nn/module.h"

namespace ember {
namespace nn {

template <class Impl>
class ModuleHolder {
  template <class... A>
  struct one_tensor : std::false_type {};
  template <class A>
  struct one_tensor<A> : std::is_convertible<A, const Tensor&> {};

  static_assert(std::is_base_of<Module, Impl>::value, "ModuleHolder<Impl>: Impl must derive from ember::nn::Module");

 public:
  using ContainedType = Impl;

  // A new Impl from its default constructor (libtorch: `Net net;`).
  ModuleHolder() : impl_(make_default()) {}
  // Empty: assign a module later (libtorch: `Net net{nullptr};`).
  ModuleHolder(std::nullptr_t) {}  // NOLINT: implicit, as libtorch's
  // A new Impl from these arguments.
  template <class Head, class... Tail,
            std::enable_if_t<!std::is_same<std::decay_t<Head>, std::nullptr_t>::value &&
                                 !std::is_base_of<ModuleHolder, std::decay_t<Head>>::value &&
                                 !std::is_convertible<Head, std::shared_ptr<Impl>>::value,
                             int> = 0>
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(Module::adopt_forward(std::make_shared<Impl>(std::forward<Head>(head), std::forward<Tail>(tail)...))) {}
  // Holds an existing module (what register_module returns).
  ModuleHolder(std::shared_ptr<Impl> module)  // NOLINT: implicit, as libtorch's
      : impl_(Module::adopt_forward(module)) {}

  Impl* operator->() const { return get(); }
  Impl& operator*() const { return *get(); }
  Impl* get() const {
    check();
    return impl_.get();
  }
  const std::shared_ptr<Impl>& ptr() const {
    check();
    return impl_;
  }
  bool is_empty() const noexcept { return impl_ == nullptr; }
  explicit operator bool() const noexcept { return !is_empty(); }
  // As a Module pointer (for ModuleList, Sequential, optimizers' parameters(), ...).
  operator std::shared_ptr<Module>() const { return ptr(); }  // NOLINT: implicit, as libtorch's

  // The contained module's subscript (ModuleList, Sequential, ModuleDict, ParameterList, ...).
  template <class Arg>
  decltype(auto) operator[](Arg&& arg) const {
    return (*get())[std::forward<Arg>(arg)];
  }
  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    Impl& m = *get();
    if constexpr (!detail::forward_is_not_virtual<Impl>::value && one_tensor<Args...>::value) {
      return m(std::forward<Args>(args)...);  // the virtual forward, with hooks
    } else {
      return m.forward(std::forward<Args>(args)...);
    }
  }

 private:
  static std::shared_ptr<Impl> make_default() {
    static_assert(std::is_default_constructible<Impl>::value,
                  "this module has no default constructor: give the holder its arguments, or nullptr for an empty "
                  "holder to assign later");
    return Module::adopt_forward(std::make_shared<Impl>());
  }
  void check() const {
    if (!impl_)
      throw ValueError(std::string("accessing an empty module holder (made with nullptr and never assigned a module; ") +
                       "assign it, e.g. fc = register_module(\"fc\", Linear(...)))");
  }
  std::shared_ptr<Impl> impl_;
};

// libtorch's holder idiom: after `struct NameImpl : nn::Module {...};`, TORCH_MODULE(Name) (or
// EMBER_MODULE(Name)) makes the holder class Name. (A translation unit that includes libtorch's
// headers first keeps libtorch's TORCH_MODULE; EMBER_MODULE is ember's there.)
#define EMBER_MODULE(Name)                                     \
  class Name : public ::ember::nn::ModuleHolder<Name##Impl> { \
   public:                                                     \
    using ::ember::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
  }
#ifndef TORCH_MODULE
#define TORCH_MODULE(Name) EMBER_MODULE(Name)
#endif

}  // namespace nn
}  // namespace ember
