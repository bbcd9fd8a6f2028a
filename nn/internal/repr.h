// ember (internal to nn/): how modules print numbers in extra_repr (shortest stream form, as
// libtorch prints its options: 0.5, 1e-05).
#pragma once

#include <sstream>
#include <string>

namespace ember {
namespace nn {
namespace detail {
inline std::string repr_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
// One value alone, several in braces: "3", "{3, 5}" (libtorch's ExpandingArray print).
template <typename Array>
std::string repr_ints(const Array& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return v.size() == 1 ? s : "{" + s + "}";
}
}  // namespace detail
}  // namespace nn
}  // namespace ember
