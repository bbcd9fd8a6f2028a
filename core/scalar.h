// ember: Scalar, a number passed to ops (double, int64 or bool).
#pragma once

#include <cstdint>
#include <ostream>
#include <type_traits>

#include "ember/core/dtype.h"

namespace ember {

class Scalar {
 public:
  enum class Kind : uint8_t { Double, Int, Bool };

  Scalar() : Scalar(int64_t(0)) {}
  Scalar(double v) : kind_(Kind::Double) { v_.d = v; }  // NOLINT
  Scalar(float v) : Scalar(static_cast<double>(v)) {}   // NOLINT
  Scalar(Half v) : Scalar(static_cast<double>(static_cast<float>(v))) {}  // NOLINT
  Scalar(BFloat16 v) : Scalar(static_cast<double>(static_cast<float>(v))) {}  // NOLINT
  Scalar(bool v) : kind_(Kind::Bool) { v_.i = v ? 1 : 0; }  // NOLINT
  template <class I, std::enable_if_t<std::is_integral<I>::value && !std::is_same<I, bool>::value, int> = 0>
  Scalar(I v) : kind_(Kind::Int) {  // NOLINT
    v_.i = static_cast<int64_t>(v);
  }

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Double; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  // The dtype a tensor made from this scalar gets: float32 (default float), int64 or bool.
  DType dtype() const {
    return kind_ == Kind::Double ? default_float_dtype() : kind_ == Kind::Int ? DType::Int64 : DType::Bool;
  }

  double to_double() const { return kind_ == Kind::Double ? v_.d : static_cast<double>(v_.i); }
  int64_t to_int() const { return kind_ == Kind::Double ? saturating_int64(v_.d) : v_.i; }
  bool to_bool() const { return kind_ == Kind::Double ? v_.d != 0.0 : v_.i != 0; }
  template <class T>
  T to() const;

  Scalar operator-() const;
  bool equal(const Scalar& o) const;

 private:
  Kind kind_;
  union {
    double d;
    int64_t i;
  } v_;
};

template <> inline double Scalar::to<double>() const { return to_double(); }
template <> inline float Scalar::to<float>() const { return static_cast<float>(to_double()); }
template <> inline int64_t Scalar::to<int64_t>() const { return to_int(); }
template <> inline int32_t Scalar::to<int32_t>() const { return static_cast<int32_t>(to_int()); }
template <> inline bool Scalar::to<bool>() const { return to_bool(); }
template <> inline Half Scalar::to<Half>() const { return Half(static_cast<float>(to_double())); }
template <> inline BFloat16 Scalar::to<BFloat16>() const { return BFloat16(static_cast<float>(to_double())); }

std::ostream& operator<<(std::ostream& os, const Scalar& s);

}  // namespace ember
