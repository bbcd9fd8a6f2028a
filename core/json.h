// ember: a small strict JSON reader (safetensors headers, profiler traces in tests) and quoting
// for JSON writers. Depth is limited to 64 and, optionally, array length, so that hostile input
// is refused while parsing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ember {
namespace json {

struct Value {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool b = false;
  std::string num;  // the literal, as written
  std::string str;
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members;  // in order; duplicates kept
  const Value* find(const std::string& key) const;     // the first member named key, or nullptr
};

// Throws Error("<where>: malformed JSON at byte N: ...") on anything but one JSON value.
Value parse(const std::string& text, const std::string& where, size_t max_items = SIZE_MAX);
// s as a JSON string literal, quotes included.
std::string quote(const std::string& s);

}  // namespace json
}  // namespace ember
