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
}  // namespace detail
}  // namespace nn
}  // namespace ember
