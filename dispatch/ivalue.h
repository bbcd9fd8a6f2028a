// ember: IValue, the boxed value of the dispatcher's Stack.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ember/tensor/tensor.h"

namespace ember {

class IValue {
 public:
  enum class Tag : uint8_t { None, Tensor, Double, Int, Bool, String, IntList, DoubleList, TensorList, DType, Device };

  IValue() = default;
  IValue(std::nullopt_t) {}  // NOLINT
  IValue(Tensor t) : v_(std::move(t)) {}  // NOLINT
  IValue(double d) : v_(d) {}  // NOLINT
  IValue(int64_t i) : v_(i) {}  // NOLINT
  IValue(int i) : v_(static_cast<int64_t>(i)) {}  // NOLINT
  IValue(bool b) : v_(b) {}  // NOLINT
  IValue(std::string s) : v_(std::move(s)) {}  // NOLINT
  IValue(const char* s) : v_(std::string(s)) {}  // NOLINT
  IValue(std::vector<int64_t> l) : v_(std::move(l)) {}  // NOLINT
  IValue(IntArrayRef l) : v_(l.vec()) {}  // NOLINT
  IValue(std::vector<double> l) : v_(std::move(l)) {}  // NOLINT
  IValue(std::vector<Tensor> l) : v_(std::move(l)) {}  // NOLINT
  IValue(DType t) : v_(t) {}  // NOLINT
  IValue(Device d) : v_(d) {}  // NOLINT
  IValue(const Scalar& s);  // NOLINT: Double, Int or Bool
  template <class T>
  IValue(const std::optional<T>& o) {  // NOLINT
    if (o) *this = IValue(*o);
  }

  Tag tag() const { return static_cast<Tag>(v_.index()); }
  const char* tag_name() const;
  bool is_none() const { return tag() == Tag::None; }
  bool is_tensor() const { return tag() == Tag::Tensor; }
  bool is_double() const { return tag() == Tag::Double; }
  bool is_int() const { return tag() == Tag::Int; }
  bool is_bool() const { return tag() == Tag::Bool; }
  bool is_string() const { return tag() == Tag::String; }
  bool is_int_list() const { return tag() == Tag::IntList; }
  bool is_tensor_list() const { return tag() == Tag::TensorList; }
  bool is_scalar() const { return is_double() || is_int() || is_bool(); }

  // Accessors throw TypeError naming both tags on mismatch.
  const Tensor& to_tensor() const;
  Tensor& to_tensor();
  double to_double() const;   // accepts Int too
  int64_t to_int() const;
  bool to_bool() const;
  const std::string& to_string() const;
  const std::vector<int64_t>& to_int_list() const;
  const std::vector<double>& to_double_list() const;
  const std::vector<Tensor>& to_tensor_list() const;
  Scalar to_scalar() const;
  DType to_dtype() const;
  Device to_device() const;
  // libtorch's spellings, for code written against c10::IValue (ctx->saved_data["k"].toDouble()).
  double toDouble() const { return to_double(); }
  int64_t toInt() const { return to_int(); }
  bool toBool() const { return to_bool(); }
  const Tensor& toTensor() const { return to_tensor(); }

  std::string repr() const;  // for messages and dumps

 private:
  std::variant<std::monostate, Tensor, double, int64_t, bool, std::string, std::vector<int64_t>,
               std::vector<double>, std::vector<Tensor>, DType, Device>
      v_;
};

using Stack = std::vector<IValue>;

}  // namespace ember
