#include "ember/dispatch/ivalue.h"

#include <sstream>

namespace ember {

IValue::IValue(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Double: v_ = s.to_double(); break;
    case Scalar::Kind::Int: v_ = s.to_int(); break;
    case Scalar::Kind::Bool: v_ = s.to_bool(); break;
  }
}

const char* IValue::tag_name() const {
  static const char* kNames[] = {"None", "Tensor", "float", "int", "bool", "str",
                                 "int[]", "float[]", "Tensor[]", "ScalarType", "Device"};
  return kNames[static_cast<int>(tag())];
}

namespace {
[[noreturn]] void mismatch(const IValue& v, const char* wanted) {
  EMBER_THROW(TypeError, "IValue: expected ", wanted, " but got ", v.tag_name(), " (", v.repr(), ")");
}
}  // namespace

const Tensor& IValue::to_tensor() const {
  if (!is_tensor()) mismatch(*this, "Tensor");
  return std::get<Tensor>(v_);
}
Tensor& IValue::to_tensor() {
  if (!is_tensor()) mismatch(*this, "Tensor");
  return std::get<Tensor>(v_);
}
double IValue::to_double() const {
  if (is_double()) return std::get<double>(v_);
  if (is_int()) return static_cast<double>(std::get<int64_t>(v_));
  mismatch(*this, "float");
}
int64_t IValue::to_int() const {
  if (is_int()) return std::get<int64_t>(v_);
  if (is_bool()) return std::get<bool>(v_) ? 1 : 0;
  mismatch(*this, "int");
}
bool IValue::to_bool() const {
  if (!is_bool()) mismatch(*this, "bool");
  return std::get<bool>(v_);
}
const std::string& IValue::to_string() const {
  if (!is_string()) mismatch(*this, "str");
  return std::get<std::string>(v_);
}
const std::vector<int64_t>& IValue::to_int_list() const {
  if (!is_int_list()) mismatch(*this, "int[]");
  return std::get<std::vector<int64_t>>(v_);
}
const std::vector<double>& IValue::to_double_list() const {
  if (tag() != Tag::DoubleList) mismatch(*this, "float[]");
  return std::get<std::vector<double>>(v_);
}
const std::vector<Tensor>& IValue::to_tensor_list() const {
  if (!is_tensor_list()) mismatch(*this, "Tensor[]");
  return std::get<std::vector<Tensor>>(v_);
}
Scalar IValue::to_scalar() const {
  if (is_double()) return Scalar(std::get<double>(v_));
  if (is_int()) return Scalar(std::get<int64_t>(v_));
  if (is_bool()) return Scalar(std::get<bool>(v_));
  mismatch(*this, "Scalar");
}
DType IValue::to_dtype() const {
  if (tag() != Tag::DType) mismatch(*this, "ScalarType");
  return std::get<DType>(v_);
}
Device IValue::to_device() const {
  if (tag() != Tag::Device) mismatch(*this, "Device");
  return std::get<Device>(v_);
}

std::string IValue::repr() const {
  std::ostringstream os;
  switch (tag()) {
    case Tag::None: os << "None"; break;
    case Tag::Tensor: {
      const Tensor& t = std::get<Tensor>(v_);
      if (!t.defined()) {
        os << "Tensor(undefined)";
      } else {
        os << "Tensor(" << t.sizes_ref() << ", " << t.dtype() << ", " << t.device() << ")";
      }
      break;
    }
    case Tag::Double: os << std::get<double>(v_); break;
    case Tag::Int: os << std::get<int64_t>(v_); break;
    case Tag::Bool: os << (std::get<bool>(v_) ? "True" : "False"); break;
    case Tag::String: os << "'" << std::get<std::string>(v_) << "'"; break;
    case Tag::IntList: os << IntArrayRef(std::get<std::vector<int64_t>>(v_)); break;
    case Tag::DoubleList: {
      os << '[';
      const auto& l = std::get<std::vector<double>>(v_);
      for (size_t i = 0; i < l.size(); ++i) os << (i ? ", " : "") << l[i];
      os << ']';
      break;
    }
    case Tag::TensorList: {
      const auto& l = std::get<std::vector<Tensor>>(v_);
      os << '[';
      for (size_t i = 0; i < l.size(); ++i) os << (i ? ", " : "") << IValue(l[i]).repr();
      os << ']';
      break;
    }
    case Tag::DType: os << std::get<DType>(v_); break;
    case Tag::Device: os << std::get<Device>(v_); break;
  }
  return os.str();
}

}  // namespace ember
