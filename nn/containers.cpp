#include "ember/nn/containers.h"

namespace ember {
namespace nn {

std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> k;
  for (const auto& kv : named_children()) k.push_back(kv.first);
  return k;
}
void ModuleDict::clear() {
  for (const auto& k : keys()) unregister(k);
}
ModulePtr ModuleDict::operator[](const std::string& key) const {
  ModulePtr m = child(key);
  EMBER_CHECK_INDEX(m != nullptr, "ModuleDict: no module at key '", key, "'");
  return m;
}
ModulePtr ModuleDict::pop(const std::string& key) {
  ModulePtr m = (*this)[key];
  unregister(key);
  return m;
}
void ModuleDict::insert(const std::string& key, ModulePtr module) {
  EMBER_CHECK_VALUE(module != nullptr, "ModuleDict: inserting an empty module at key '", key, "'");
  if (contains(key)) unregister(key);
  add_child(key, std::move(module));
}

Tensor ParameterDict::insert(const std::string& key, Tensor param) {
  if (contains(key)) unregister(key);
  return register_parameter(key, param, param.requires_grad());
}
Tensor ParameterDict::pop(const std::string& key) {
  Tensor t = get(key);
  unregister(key);
  return t;
}
void ParameterDict::clear() {
  for (const auto& k : keys()) unregister(k);
}

void ParameterList::append(const Tensor& param) {
  list_.push_back(register_parameter(std::to_string(list_.size()), param, param.requires_grad()));
}
Tensor ParameterList::at(size_t idx) const {
  EMBER_CHECK_INDEX(idx < list_.size(), "ParameterList: index ", idx, " is out of range for ", list_.size(),
                    " parameters");
  return list_[idx];
}
std::vector<Tensor>::const_iterator ParameterList::begin() const { return list_.begin(); }
std::vector<Tensor>::const_iterator ParameterList::end() const { return list_.end(); }

}  // namespace nn
}  // namespace ember
