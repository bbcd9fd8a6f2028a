// ember: typed op declarations: an op's identity written once, checked by the compiler.
//
//   namespace op {
//   EMBER_DECLARE_OP(silu_mul, Keep, "ember::silu_mul(Tensor self, Tensor other) -> Tensor",
//                    Tensor(const Tensor&, const Tensor&));
//   }
//   EMBER_LIBRARY(ember, m) { m.def(op::silu_mul()); }
//   EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl(op::silu_mul(), &silu_mul_cpu); }
//   Tensor silu_mul(const Tensor& a, const Tensor& b) { return op::silu_mul::call(a, b); }
//
// A declaration holds the qualified schema (the op's name string, written nowhere else), its C++
// signature and its autocast policy (Keep, Lower, Float32, Promote: PyTorch's autocast lists, see
// Note [Autocast policies] in nn/amp/autocast.h). The compiler checks, with static_assert:
//  - the schema's argument and return types against the signature ("Tensor?" is
//    `const std::optional<Tensor>&`, "int[]" is `IntArrayRef`, ...: schema.cpp's kTypes);
//  - the identifier against the schema's name ("linear.bias" is declared as linear_bias);
//  - every kernel given to m.impl(decl, fn) against the signature (fn converts to D::Fn or fails).
// The long form, for a declaration with more than a policy (fill_'s writes_idempotent):
//   struct fill_ : OpDecl<fill_, Tensor(const Tensor&, const Scalar&)> {
//     static constexpr std::string_view ident = "fill_";
//     static constexpr std::string_view schema = "ember::fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)";
//     static constexpr AmpPolicy amp = AmpPolicy::Keep;
//     static constexpr bool writes_idempotent = true;
//   };
// This is PyTorch's generated at::_ops structs (name, schema_str, schema type, call) written as
// C++ instead of generated: the compiler does the generator's checking and nothing runs at build
// time. What the compiler cannot see (defaults, alias annotations) the dispatcher checks when the
// schema is parsed at registration.
#pragma once

#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/dispatch/dispatcher.h"

namespace ember {

namespace detail {
namespace decl {

// The schema spelling of a C++ parameter or return type ("" where there is none).
template <class T>
constexpr std::string_view arg_name() {
  if constexpr (std::is_same_v<T, const Tensor&>)
    return "Tensor";
  else if constexpr (std::is_same_v<T, const std::optional<Tensor>&>)
    return "Tensor?";
  else if constexpr (std::is_same_v<T, const std::vector<Tensor>&>)
    return "Tensor[]";
  else if constexpr (std::is_same_v<T, int64_t>)
    return "int";
  else if constexpr (std::is_same_v<T, std::optional<int64_t>>)
    return "int?";
  else if constexpr (std::is_same_v<T, double>)
    return "float";
  else if constexpr (std::is_same_v<T, std::optional<double>>)
    return "float?";
  else if constexpr (std::is_same_v<T, bool>)
    return "bool";
  else if constexpr (std::is_same_v<T, IntArrayRef>)
    return "int[]";
  else if constexpr (std::is_same_v<T, const std::string&>)
    return "str";
  else if constexpr (std::is_same_v<T, const Scalar&>)
    return "Scalar";
  else if constexpr (std::is_same_v<T, const std::optional<Scalar>&>)
    return "Scalar?";
  else if constexpr (std::is_same_v<T, DType>)
    return "ScalarType";
  else if constexpr (std::is_same_v<T, std::optional<DType>>)
    return "ScalarType?";
  else if constexpr (std::is_same_v<T, Device>)
    return "Device";
  else
    return "";
}
template <class T>
constexpr std::string_view ret_name() {
  if constexpr (std::is_same_v<T, Tensor>)
    return "Tensor";
  else if constexpr (std::is_same_v<T, std::vector<Tensor>>)
    return "Tensor[]";
  else if constexpr (std::is_same_v<T, int64_t>)
    return "int";
  else if constexpr (std::is_same_v<T, double>)
    return "float";
  else if constexpr (std::is_same_v<T, bool>)
    return "bool";
  else
    return "";
}
template <class R>
struct Returns {
  static constexpr std::string_view names[] = {ret_name<R>()};
  static constexpr size_t size = 1;
};
template <>
struct Returns<void> {
  static constexpr std::string_view names[] = {""};
  static constexpr size_t size = 0;
};
template <class... Ts>
struct Returns<std::tuple<Ts...>> {
  static constexpr std::string_view names[] = {ret_name<Ts>()...};
  static constexpr size_t size = sizeof...(Ts);
};

constexpr bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }
constexpr bool is_ident(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
constexpr std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}
// The end of the comma-separated item starting at i (a ',' or the closing ')' at depth 0; lists,
// annotations and quoted defaults are skipped).
constexpr size_t item_end(std::string_view s, size_t i) {
  int depth = 0;
  char quote = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ']' || (c == ')' && depth > 0)) {
      --depth;
    } else if ((c == ',' || c == ')') && depth == 0) {
      return i;
    }
  }
  return s.size();
}
// Does the type at the start of item (e.g. "Tensor(a!)? out=None", "int[2] size") spell want?
// Alias annotations and fixed list sizes are not part of the type.
constexpr bool type_is(std::string_view item, std::string_view want) {
  size_t i = 0;
  while (i < item.size() && is_ident(item[i])) ++i;
  std::string_view base = item.substr(0, i);
  if (want.substr(0, base.size()) != base) return false;
  want.remove_prefix(base.size());
  if (i < item.size() && item[i] == '[') {
    while (i < item.size() && item[i] != ']') ++i;
    ++i;
    if (want.substr(0, 2) != "[]") return false;
    want.remove_prefix(2);
  }
  if (i < item.size() && item[i] == '(') {
    while (i < item.size() && item[i] != ')') ++i;
    ++i;
  }
  bool optional = i < item.size() && item[i] == '?';
  if (optional) ++i;
  if (i < item.size() && !is_space(item[i])) return false;
  return want == (optional ? "?" : "");
}
// Checks a list "(T a, T b=..., *, T c)" or a single return type against names.
constexpr bool list_matches(std::string_view list, const std::string_view* names, size_t n, bool parens) {
  size_t i = 0, k = 0;
  if (parens) {
    if (list.empty() || list.front() != '(' || list.back() != ')') return false;
    list = list.substr(1, list.size() - 2);
  }
  if (trim(list).empty()) return n == 0;
  while (i <= list.size()) {
    size_t end = item_end(list, i);
    std::string_view item = trim(list.substr(i, end - i));
    if (item != "*") {
      if (k >= n || names[k].empty() || !type_is(item, names[k])) return false;
      ++k;
    }
    i = end + 1;
  }
  return k == n;
}
// The name part of a qualified schema: "ember::linear.bias(...)" -> "ember::linear.bias".
constexpr std::string_view qualified_name(std::string_view schema) { return trim(schema.substr(0, schema.find('('))); }
// The schema names op `id` ("linear_bias" for "linear.bias") in a namespace.
constexpr bool name_matches(std::string_view schema, std::string_view id) {
  std::string_view q = qualified_name(schema);
  size_t colons = q.find("::");
  if (colons == std::string_view::npos || colons == 0) return false;
  q.remove_prefix(colons + 2);
  if (q.size() != id.size()) return false;
  for (size_t i = 0; i < q.size(); ++i)
    if (q[i] != id[i] && !(q[i] == '.' && id[i] == '_')) return false;
  return true;
}
template <class R, class... Args>
constexpr bool signature_matches(std::string_view schema) {
  size_t open = schema.find('(');
  if (open == std::string_view::npos) return false;
  size_t close = open + 1;
  while (close < schema.size() && schema[close] != ')') close = item_end(schema, close + 1);
  if (close >= schema.size()) return false;
  constexpr std::string_view args[] = {arg_name<Args>()..., ""};
  if (!list_matches(schema.substr(open, close - open + 1), args, sizeof...(Args), true)) return false;
  std::string_view rest = trim(schema.substr(close + 1));
  if (rest.substr(0, 2) != "->") return false;
  rest = trim(rest.substr(2));
  using Ret = Returns<R>;
  bool tuple = !rest.empty() && rest.front() == '(';
  if (!tuple && Ret::size != 1) return false;
  return list_matches(rest, Ret::names, Ret::size, tuple);
}

}  // namespace decl
}  // namespace detail

// The base of a declaration (see EMBER_DECLARE_OP); D is the declaring struct.
template <class D, class Sig>
struct OpDecl;
template <class D, class R, class... Args>
struct OpDecl<D, R(Args...)> {
  using Signature = R(Args...);
  using Fn = R (*)(Args...);
  static constexpr bool writes_idempotent = false;  // fill_, zero_ (OpTag::WritesIdempotent)

  // Compile-time checks of the declaration; every use below goes through them.
  static constexpr bool check() {
    static_assert(detail::decl::signature_matches<R, Args...>(D::schema),
                  "op declaration: the schema's argument or return types do not match the C++ signature");
    static_assert(detail::decl::name_matches(D::schema, D::ident),
                  "op declaration: the identifier does not match the "
                  "schema's ns::name[.overload] (write linear.bias as linear_bias)");
    return true;
  }
  // "ember::linear.bias"
  static constexpr std::string_view name() { return check(), detail::decl::qualified_name(D::schema); }
  // "linear.bias": the name within its namespace, as m.impl takes it.
  static constexpr std::string_view local_name() {
    std::string_view q = name();
    return q.substr(q.find("::") + 2);
  }
  // local_name() as a C string, for error messages: an op's errors name it through its
  // declaration (op::cumsum::op_name() is "cumsum"), so the name is written once, in the schema.
  static const char* op_name() {
    static const std::string s(local_name());
    return s.c_str();
  }
  // The op's handle, looked up at its first use (thread-safe static initialisation).
  static const TypedOperatorHandle<R(Args...)>& handle() {
    static const auto h = Dispatcher::singleton().find_schema(std::string(name())).template typed<R(Args...)>();
    return h;
  }
  static R call(Args... args) { return handle().call(args...); }
  static R redispatch(DispatchKeySet ks, Args... args) { return handle().redispatch(ks, args...); }
};

template <class T, class = void>
struct is_op_decl : std::false_type {};
template <class T>
struct is_op_decl<T, std::void_t<typename T::Signature, decltype(T::schema), decltype(T::amp)>> : std::true_type {};

}  // namespace ember

// Declares op `id` with its autocast policy (Keep, Lower, Float32, Promote), its qualified
// schema and its C++ signature (last: it may hold commas).
#define EMBER_DECLARE_OP(id, policy, schema_text, ...)                    \
  struct id : ::ember::OpDecl<id, __VA_ARGS__> {                          \
    static constexpr ::std::string_view ident = #id;                      \
    static constexpr ::std::string_view schema = schema_text;             \
    static constexpr ::ember::AmpPolicy amp = ::ember::AmpPolicy::policy; \
  }

// Marks a declared op public: cmake/public_ops.cmake generates from its declaration the function
// ember::id (with the schema's defaults) when `function` is listed, and Tensor::id when `method`
// is (the schema's first argument is then "Tensor self"); torch::id follows the function.
//   EMBER_EXPORT_OP(cumsum, function, method);
// In C++ it only checks that id is a declaration; the list is read by the generator.
#define EMBER_EXPORT_OP(id, ...) \
  static_assert(::ember::is_op_decl<id>::value, "EMBER_EXPORT_OP names an op declared with EMBER_DECLARE_OP")
