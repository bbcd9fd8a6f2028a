// libtorch's keyed containers: ModuleDict (named submodules), ParameterDict (named parameters)
// and ParameterList (parameters named "0", "1", ...), registered so that parameters(),
// state_dict() and optimizers see them.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/nn/module.h"
#include "ember/nn/module_holder.h"

namespace ember {
namespace nn {

class ModuleDict : public Module {
 public:
  ModuleDict() = default;
  explicit ModuleDict(const std::vector<std::pair<std::string, ModulePtr>>& modules) { update(modules); }
  explicit ModuleDict(const OrderedDict<ModulePtr>& modules) { update(modules); }
  std::vector<std::pair<std::string, ModulePtr>> items() const { return named_children(); }
  std::vector<std::string> keys() const;
  std::vector<ModulePtr> values() const { return children(); }
  size_t size() const noexcept { return children().size(); }
  bool empty() const noexcept { return size() == 0; }
  bool contains(const std::string& key) const noexcept { return child(key) != nullptr; }
  void clear();
  // The module of that key (IndexError when absent).
  ModulePtr operator[](const std::string& key) const;
  template <class T>
  T& at(const std::string& key) {
    auto m = std::dynamic_pointer_cast<T>((*this)[key]);
    EMBER_CHECK_TYPE(m != nullptr, "ModuleDict: the module at '", key, "' is not of the type asked for");
    return *m;
  }
  ModulePtr pop(const std::string& key);
  // Adds (key, module), replacing the module of a key already there.
  void insert(const std::string& key, ModulePtr module);
  template <class Container>
  void update(const Container& items) {
    for (const auto& kv : items) insert(kv.first, kv.second);
  }
};

class ParameterDict : public Module {
 public:
  ParameterDict() = default;
  explicit ParameterDict(const OrderedDict<Tensor>& params) { update(params); }
  // Registers param (requires_grad kept as it is) under key, replacing one already there.
  Tensor insert(const std::string& key, Tensor param);
  Tensor pop(const std::string& key);
  std::vector<std::string> keys() const { return named_parameters(false).keys(); }
  std::vector<Tensor> values() const { return parameters(false); }
  size_t size() const noexcept { return parameters(false).size(); }
  bool empty() const noexcept { return size() == 0; }
  bool contains(const std::string& key) const noexcept { return named_parameters(false).contains(key); }
  void clear();
  Tensor get(const std::string& key) const { return named_parameters(false)[key]; }
  Tensor operator[](const std::string& key) const { return get(key); }
  template <class Container>
  void update(const Container& items) {
    for (const auto& kv : items) insert(kv.first, kv.second);
  }
};

class ParameterList : public Module {
 public:
  ParameterList() = default;
  template <class... Tensors>
  explicit ParameterList(const Tensors&... params) {
    (append(params), ...);
  }
  void append(const Tensor& param);
  void append(const NamedItem<Tensor>& item) { append(item.value()); }
  template <class Container>
  void extend(const Container& params) {
    for (const auto& p : params) append(p);
  }
  Tensor at(size_t idx) const;
  Tensor operator[](size_t idx) const { return at(idx); }
  size_t size() const noexcept { return parameters(false).size(); }
  bool is_empty() const noexcept { return size() == 0; }
  std::vector<Tensor>::const_iterator begin() const;
  std::vector<Tensor>::const_iterator end() const;

 private:
  std::vector<Tensor> list_;
};

}  // namespace nn
}  // namespace ember
