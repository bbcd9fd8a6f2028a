#include "ember/core/scalar.h"

namespace ember {

Scalar Scalar::operator-() const {
  if (kind_ == Kind::Double) return Scalar(-v_.d);
  return Scalar(-v_.i);  // bool negates to an int, as in PyTorch's -True == -1
}

bool Scalar::equal(const Scalar& o) const {
  if (kind_ == Kind::Double || o.kind_ == Kind::Double) return to_double() == o.to_double();
  return v_.i == o.v_.i;
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Double: return os << s.to_double();
    case Scalar::Kind::Int: return os << s.to_int();
    case Scalar::Kind::Bool: return os << (s.to_bool() ? "true" : "false");
  }
  return os;
}

}  // namespace ember
