// libtorch's OrderedDict<std::string, V>, as Module::named_parameters() / named_buffers() return
// it: a vector of (name, value) items in registration order, each also an std::pair (.first,
// .second, structured bindings) with libtorch's key() / value(), looked up by name with
// operator[](name) (throws IndexError when absent), find(name) (nullptr) and contains(name).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ember/core/error.h"

namespace ember {

template <class V>
struct NamedItem : std::pair<std::string, V> {
  using Pair = std::pair<std::string, V>;
  NamedItem(std::string key, V value) : Pair(std::move(key), std::move(value)) {}
  NamedItem(Pair p) : Pair(std::move(p)) {}  // NOLINT: implicit
  const std::string& key() const noexcept { return this->first; }
  V& value() noexcept { return this->second; }
  const V& value() const noexcept { return this->second; }
  const Pair& pair() const noexcept { return *this; }
};

template <class V>
class OrderedDict : public std::vector<NamedItem<V>> {
 public:
  using Item = NamedItem<V>;
  using std::vector<Item>::vector;
  using std::vector<Item>::operator[];
  V& operator[](const std::string& key) { return at_key(key); }
  const V& operator[](const std::string& key) const { return const_cast<OrderedDict*>(this)->at_key(key); }
  V* find(const std::string& key) noexcept {
    for (auto& item : *this)
      if (item.first == key) return &item.second;
    return nullptr;
  }
  const V* find(const std::string& key) const noexcept { return const_cast<OrderedDict*>(this)->find(key); }
  bool contains(const std::string& key) const noexcept { return find(key) != nullptr; }
  bool is_empty() const noexcept { return this->empty(); }
  std::vector<std::string> keys() const {
    std::vector<std::string> k;
    for (const auto& item : *this) k.push_back(item.first);
    return k;
  }
  std::vector<V> values() const {
    std::vector<V> v;
    for (const auto& item : *this) v.push_back(item.second);
    return v;
  }
  // Appends (key, value); a key already present is an error, as libtorch's.
  V& insert(std::string key, V value) {
    EMBER_CHECK_VALUE(!contains(key), "OrderedDict: key '", key, "' already defined");
    this->emplace_back(std::move(key), std::move(value));
    return this->back().second;
  }

 private:
  V& at_key(const std::string& key) {
    V* v = find(key);
    EMBER_CHECK_INDEX(v != nullptr, "OrderedDict: key '", key, "' is not defined");
    return *v;
  }
};

}  // namespace ember
