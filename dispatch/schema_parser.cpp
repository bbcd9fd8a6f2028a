// The schema parser: "ns::name.overload(Type arg=default, ...) -> Ret" into a FunctionSchema, with
// a TypeError naming the text and the position of what it could not read.
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "ember/dispatch/schema.h"

namespace ember {

namespace {
class Parser {
 public:
  Parser(const std::string& ns, const std::string& text) : ns_(ns), s_(text) {}

  FunctionSchema parse() {
    FunctionSchema fs;
    fs.ns = ns_;
    skip_ws();
    name(&fs);
    expect('(');
    skip_ws();
    if (!peek(')')) fs.arguments = list(true, true);
    expect(')');
    skip_ws();
    expect('-');
    expect('>');
    skip_ws();
    if (peek('(')) {
      ++pos_;
      skip_ws();
      if (!peek(')')) fs.returns = list(false, false);
      expect(')');
    } else {
      fs.returns.push_back(argument(false));
    }
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected trailing text");
    check(fs);
    return fs;
  }

 private:
  // "[ns::]name[.overload]": the namespace, when given, must be the library's.
  void name(FunctionSchema* fs) {
    std::string qualified = ident(true);
    auto colons = qualified.find("::");
    if (colons != std::string::npos) {
      std::string given_ns = qualified.substr(0, colons);
      if (given_ns != ns_) fail("namespace '" + given_ns + "' does not match the library's '" + ns_ + "'");
      qualified = qualified.substr(colons + 2);
    }
    auto dot = qualified.find('.');
    fs->name = qualified.substr(0, dot);
    if (dot != std::string::npos) fs->overload = qualified.substr(dot + 1);
    // name and overload are identifiers: no further ':' or '.', not starting with a digit.
    auto is_ident = [](const std::string& w) {
      if (w.empty() || std::isdigit(static_cast<unsigned char>(w[0]))) return false;
      for (char c : w)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
      return true;
    };
    if (!is_ident(fs->name)) fail("expected an operator name, got '" + qualified + "'");
    if (dot != std::string::npos && !is_ident(fs->overload)) fail("bad overload name '" + fs->overload + "'");
  }
  // A comma-separated list of arguments (named: with names and defaults) or returns; arguments may
  // hold the keyword-only marker '*'.
  std::vector<Argument> list(bool named, bool allow_star) {
    std::vector<Argument> out;
    while (true) {
      skip_ws();
      if (allow_star && peek('*')) {
        ++pos_;  // keyword-only from here: C++ calls pass every argument by position
      } else {
        out.push_back(argument(named));
      }
      skip_ws();
      if (!peek(',')) return out;
      ++pos_;
    }
  }
  // Argument names are unique; every return type has a C++ form.
  void check(const FunctionSchema& fs) {
    for (size_t i = 0; i < fs.arguments.size(); ++i)
      for (size_t j = i + 1; j < fs.arguments.size(); ++j)
        if (fs.arguments[i].name == fs.arguments[j].name)
          fail("duplicate argument name '" + fs.arguments[i].name + "'");
    for (const auto& r : fs.returns)
      if (std::string(return_type_cpp(r.type)) == "?")
        fail(std::string("unsupported return type ") + arg_type_name(r.type));
  }

  [[noreturn]] void fail(const std::string& what) {
    EMBER_THROW(TypeError, "schema parse error in '", s_, "' at position ", pos_, ": ", what,
                ". Expected 'name(Type arg[=default], ...) -> Ret' with types Tensor, Tensor?, "
                "Tensor[], int, int?, float, float?, bool, int[], str, Scalar, Scalar?, "
                "ScalarType, ScalarType?, Device");
  }
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool peek(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  void expect(char c) {
    skip_ws();
    if (!peek(c)) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string ident(bool qualified) {
    size_t start = pos_;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
          (qualified && (c == '.' || c == ':')))
        ++pos_;
      else
        break;
    }
    return s_.substr(start, pos_ - start);
  }

  ArgType type() {
    std::string base = ident(false);
    std::string suffix;
    if (peek('[')) {
      ++pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;  // int[2]
      expect(']');
      suffix = "[]";
    }
    bool alias_mut = false;
    if (peek('(')) {  // alias annotation: Tensor(a) or Tensor(a!), before '?' (Tensor(a!)?)
      if (base != "Tensor") fail("alias annotations apply to Tensor types only");
      ++pos_;
      while (pos_ < s_.size() && s_[pos_] != ')') alias_mut |= s_[pos_++] == '!';
      expect(')');
    }
    if (peek('?')) {
      ++pos_;
      suffix += "?";
    }
    pending_mutable_ = alias_mut;
    std::string full = base + suffix;
    for (int i = 0; i <= static_cast<int>(ArgType::Device); ++i)
      if (full == arg_type_name(static_cast<ArgType>(i))) return static_cast<ArgType>(i);
    fail("unknown type '" + full + "'");
  }

  IValue default_value(ArgType t) {
    skip_ws();
    if (peek('[')) return list_default(t);
    if (peek('\'') || peek('"')) return string_default(t);
    size_t start = pos_;
    std::string word;
    while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != ')' &&
           !std::isspace(static_cast<unsigned char>(s_[pos_])))
      word += s_[pos_++];
    if (word == "None") {
      bool optional = t == ArgType::OptionalTensor || t == ArgType::OptionalInt ||
                      t == ArgType::OptionalFloat || t == ArgType::OptionalScalar ||
                      t == ArgType::OptionalDType;
      if (!optional) fail("None is only a default for optional types (Type?)");
      return IValue();
    }
    if (word == "True" || word == "False") {
      if (t != ArgType::Bool && t != ArgType::Scalar) fail("True/False defaults need type bool");
      return IValue(word == "True");
    }
    bool is_float = word.find_first_of(".eE") != std::string::npos && word.find("0x") == std::string::npos;
    return is_float ? float_default(t, word, start) : int_default(t, word, start);
  }
  // "[1, 2]" for int[]
  IValue list_default(ArgType t) {
    ++pos_;
    std::vector<int64_t> l;
    skip_ws();
    while (!peek(']')) {
      l.push_back(int_literal());
      skip_ws();
      if (peek(',')) ++pos_;
      skip_ws();
    }
    ++pos_;
    if (t != ArgType::IntList) fail("a list default needs type int[]");
    return IValue(l);
  }
  // 'text' or "text" for str
  IValue string_default(ArgType t) {
    char q = s_[pos_++];
    size_t end = s_.find(q, pos_);
    if (end == std::string::npos) fail("unterminated string default");
    std::string v = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    if (t != ArgType::Str) fail("a string default needs type str");
    return IValue(v);
  }
  // A float literal, for float, float? and Scalar; start is its position, for messages.
  IValue float_default(ArgType t, const std::string& word, size_t start) {
    char* end = nullptr;
    errno = 0;
    double d = std::strtod(word.c_str(), &end);
    if (word.empty() || *end) {
      pos_ = start;
      fail("bad default value '" + word + "'");
    }
    if (errno == ERANGE && (d > 1.0 || d < -1.0)) {  // overflow to inf (underflow to 0 is fine)
      pos_ = start;
      fail("float default '" + word + "' is out of range");
    }
    if (t != ArgType::Float && t != ArgType::Scalar && t != ArgType::OptionalFloat &&
        t != ArgType::OptionalScalar)
      fail("a float default needs type float or Scalar");
    return IValue(d);
  }
  // An integer literal, for int, int?, float, float?, int[] and Scalar.
  IValue int_default(ArgType t, const std::string& word, size_t start) {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(word.c_str(), &end, 10);
    if (word.empty() || *end) {
      pos_ = start;
      fail("bad default value '" + word + "'");
    }
    if (errno == ERANGE) {
      pos_ = start;
      fail("integer default '" + word + "' does not fit in 64 bits");
    }
    if (t == ArgType::Float || t == ArgType::OptionalFloat) return IValue(static_cast<double>(v));
    if (t == ArgType::IntList) return IValue(std::vector<int64_t>{v});
    if (t != ArgType::Int && t != ArgType::OptionalInt && t != ArgType::Scalar &&
        t != ArgType::OptionalScalar)
      fail("an integer default needs type int, float or Scalar");
    return IValue(static_cast<int64_t>(v));
  }

  int64_t int_literal() {
    skip_ws();
    char* end = nullptr;
    long long v = std::strtoll(s_.c_str() + pos_, &end, 10);
    if (end == s_.c_str() + pos_) fail("expected an integer");
    pos_ = static_cast<size_t>(end - s_.c_str());
    return v;
  }

  Argument argument(bool with_name) {
    skip_ws();
    Argument a;
    a.type = type();
    a.is_mutable = pending_mutable_;
    skip_ws();
    if (with_name) {
      a.name = ident(false);
      if (a.name.empty() || std::isdigit(static_cast<unsigned char>(a.name[0]))) fail("expected an argument name");
      skip_ws();
      if (peek('=')) {
        ++pos_;
        a.default_value = default_value(a.type);
      }
    } else if (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      a.name = ident(false);  // named return
    }
    return a;
  }

  std::string ns_;
  std::string s_;
  size_t pos_ = 0;
  bool pending_mutable_ = false;
};
}  // namespace

FunctionSchema parse_schema(const std::string& ns, const std::string& text) {
  return Parser(ns, text).parse();
}

}  // namespace ember
