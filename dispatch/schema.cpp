// FunctionSchema: its printed forms and argument checks (the parser: schema_parser.cpp).
#include "ember/dispatch/schema.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace ember {

namespace {
struct TypeInfo {
  ArgType type;
  const char* name;
  const char* cpp;
};
const TypeInfo kTypes[] = {
    {ArgType::Tensor, "Tensor", "const Tensor&"},
    {ArgType::OptionalTensor, "Tensor?", "const std::optional<Tensor>&"},
    {ArgType::TensorList, "Tensor[]", "const std::vector<Tensor>&"},
    {ArgType::Int, "int", "int64_t"},
    {ArgType::OptionalInt, "int?", "std::optional<int64_t>"},
    {ArgType::Float, "float", "double"},
    {ArgType::OptionalFloat, "float?", "std::optional<double>"},
    {ArgType::Bool, "bool", "bool"},
    {ArgType::IntList, "int[]", "IntArrayRef"},
    {ArgType::Str, "str", "const std::string&"},
    {ArgType::Scalar, "Scalar", "const Scalar&"},
    {ArgType::OptionalScalar, "Scalar?", "const std::optional<Scalar>&"},
    {ArgType::DType, "ScalarType", "DType"},
    {ArgType::OptionalDType, "ScalarType?", "std::optional<DType>"},
    {ArgType::Device, "Device", "Device"},
};

}  // namespace

const char* return_type_cpp(ArgType t) {
  switch (t) {
    case ArgType::Tensor: return "Tensor";
    case ArgType::TensorList: return "std::vector<Tensor>";
    case ArgType::Int: return "int64_t";
    case ArgType::Float: return "double";
    case ArgType::Bool: return "bool";
    default: return "?";
  }
}

const char* arg_type_name(ArgType t) { return kTypes[static_cast<int>(t)].name; }
const char* arg_type_cpp(ArgType t) { return kTypes[static_cast<int>(t)].cpp; }

std::string FunctionSchema::full_name() const {
  return ns + "::" + name + (overload.empty() ? "" : "." + overload);
}

namespace {
// A float default as the parser reads it back to the same double: the fewest significant digits
// that do (1e-06, not 9.9999999999999995e-07), and a decimal point when there is none ("-0"
// would come back as the integer 0).
std::string float_literal(double v) {
  char buf[40];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}
// The type as the parser reads it: the alias annotation before the optional marker (Tensor(a!)?).
std::string annotated_type(const Argument& a) {
  std::string t = arg_type_name(a.type);
  if (!a.is_mutable) return t;
  const bool optional = !t.empty() && t.back() == '?';
  if (optional) t.pop_back();
  return t + "(a!)" + (optional ? "?" : "");
}
}  // namespace

std::string FunctionSchema::str() const {
  std::ostringstream os;
  os << full_name() << '(';
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Argument& a = arguments[i];
    os << (i ? ", " : "") << annotated_type(a) << ' ' << a.name;
    if (a.default_value) {
      const IValue& d = *a.default_value;
      os << '='
         << (d.is_bool()     ? (d.to_bool() ? "True" : "False")
             : d.is_double() ? float_literal(d.to_double())
                             : d.repr());
    }
  }
  os << ") -> ";
  if (returns.size() == 1) {
    os << annotated_type(returns[0]);
  } else {
    os << '(';
    for (size_t i = 0; i < returns.size(); ++i) os << (i ? ", " : "") << arg_type_name(returns[i].type);
    os << ')';
  }
  return os.str();
}

std::string FunctionSchema::cpp_signature() const {
  std::ostringstream os;
  if (returns.empty()) {
    os << "void";
  } else if (returns.size() == 1) {
    os << return_type_cpp(returns[0].type);
  } else {
    os << "std::tuple<";
    for (size_t i = 0; i < returns.size(); ++i) os << (i ? ", " : "") << return_type_cpp(returns[i].type);
    os << '>';
  }
  os << " (";
  for (size_t i = 0; i < arguments.size(); ++i) os << (i ? ", " : "") << arg_type_cpp(arguments[i].type);
  os << ')';
  return os.str();
}

void FunctionSchema::check_argument(size_t i, const IValue& v) const {
  const Argument& a = arguments[i];
  bool ok = false;
  switch (a.type) {
    case ArgType::Tensor: ok = v.is_tensor(); break;
    case ArgType::OptionalTensor: ok = v.is_tensor() || v.is_none(); break;
    case ArgType::TensorList: ok = v.is_tensor_list(); break;
    case ArgType::Int: ok = v.is_int(); break;
    case ArgType::OptionalInt: ok = v.is_int() || v.is_none(); break;
    case ArgType::Float: ok = v.is_double() || v.is_int(); break;
    case ArgType::OptionalFloat: ok = v.is_double() || v.is_int() || v.is_none(); break;
    case ArgType::Bool: ok = v.is_bool(); break;
    case ArgType::IntList: ok = v.is_int_list() || v.is_int(); break;
    case ArgType::Str: ok = v.is_string(); break;
    case ArgType::Scalar: ok = v.is_scalar(); break;
    case ArgType::OptionalScalar: ok = v.is_scalar() || v.is_none(); break;
    case ArgType::DType: ok = v.tag() == IValue::Tag::DType; break;
    case ArgType::OptionalDType: ok = v.tag() == IValue::Tag::DType || v.is_none(); break;
    case ArgType::Device: ok = v.tag() == IValue::Tag::Device; break;
  }
  EMBER_CHECK_TYPE(ok, full_name(), ": argument ", i, " '", a.name, "' expects ", arg_type_name(a.type),
                   " but got ", v.tag_name(), " (", v.repr(), "); schema: ", str());
}

}  // namespace ember
