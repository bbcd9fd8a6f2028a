// ember: kernels as the dispatcher stores them, and the boxing adapters between typed C++
// signatures and the boxed Stack convention.
#pragma once

#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "ember/dispatch/ivalue.h"

namespace ember {

class OperatorHandle;

// ---- canonical kernel parameter types (see schema.h: arg_type_cpp) ----
namespace detail {

template <class T>
struct ArgTraits {
  static constexpr bool kSupported = false;
  static std::string name() { return std::string("<unsupported type ") + typeid(T).name() + ">"; }
};

#define EMBER_ARG_TRAITS(CppT, Name, HolderT, FromIValue, ToIValue) \
  template <>                                                   \
  struct ArgTraits<CppT> {                                      \
    static constexpr bool kSupported = true;                    \
    using Holder = HolderT;                                     \
    static std::string name() { return Name; }                  \
    static Holder hold(const IValue& v) { return FromIValue; }  \
    static const Holder& get(const Holder& h) { return h; }     \
    static IValue box(CppT x) { return ToIValue; }              \
  };

EMBER_ARG_TRAITS(const Tensor&, "const Tensor&", Tensor, v.to_tensor(), IValue(x))
EMBER_ARG_TRAITS(const std::optional<Tensor>&, "const std::optional<Tensor>&", std::optional<Tensor>,
                 v.is_none() ? std::optional<Tensor>() : std::optional<Tensor>(v.to_tensor()), IValue(x))
EMBER_ARG_TRAITS(const std::vector<Tensor>&, "const std::vector<Tensor>&", std::vector<Tensor>,
                 v.to_tensor_list(), IValue(x))
EMBER_ARG_TRAITS(int64_t, "int64_t", int64_t, v.to_int(), IValue(x))
EMBER_ARG_TRAITS(std::optional<int64_t>, "std::optional<int64_t>", std::optional<int64_t>,
                 v.is_none() ? std::optional<int64_t>() : std::optional<int64_t>(v.to_int()), IValue(x))
EMBER_ARG_TRAITS(double, "double", double, v.to_double(), IValue(x))
EMBER_ARG_TRAITS(std::optional<double>, "std::optional<double>", std::optional<double>,
                 v.is_none() ? std::optional<double>() : std::optional<double>(v.to_double()), IValue(x))
EMBER_ARG_TRAITS(bool, "bool", bool, v.to_bool(), IValue(x))
EMBER_ARG_TRAITS(const std::string&, "const std::string&", std::string, v.to_string(), IValue(x))
EMBER_ARG_TRAITS(const Scalar&, "const Scalar&", Scalar, v.to_scalar(), IValue(x))
EMBER_ARG_TRAITS(const std::optional<Scalar>&, "const std::optional<Scalar>&", std::optional<Scalar>,
                 v.is_none() ? std::optional<Scalar>() : std::optional<Scalar>(v.to_scalar()), IValue(x))
EMBER_ARG_TRAITS(DType, "DType", DType, v.to_dtype(), IValue(x))
EMBER_ARG_TRAITS(std::optional<DType>, "std::optional<DType>", std::optional<DType>,
                 v.is_none() ? std::optional<DType>() : std::optional<DType>(v.to_dtype()), IValue(x))
EMBER_ARG_TRAITS(Device, "Device", Device, v.to_device(), IValue(x))
#undef EMBER_ARG_TRAITS

// int[] is held as a vector and passed as a view of it.
template <>
struct ArgTraits<IntArrayRef> {
  static constexpr bool kSupported = true;
  using Holder = std::vector<int64_t>;
  static std::string name() { return "IntArrayRef"; }
  static Holder hold(const IValue& v) { return v.is_int() ? Holder{v.to_int()} : v.to_int_list(); }
  static IntArrayRef get(const Holder& h) { return IntArrayRef(h); }
  static IValue box(IntArrayRef x) { return IValue(x.vec()); }
};

template <class R>
struct RetTraits {
  static constexpr bool kSupported = false;
  static std::string name() { return std::string("<unsupported return ") + typeid(R).name() + ">"; }
};
template <>
struct RetTraits<void> {
  static constexpr bool kSupported = true;
  static std::string name() { return "void"; }
};
#define EMBER_RET_TRAITS(CppT, Name, Pop)                               \
  template <>                                                          \
  struct RetTraits<CppT> {                                             \
    static constexpr bool kSupported = true;                           \
    static std::string name() { return Name; }                         \
    static void push(Stack* s, CppT&& r) { s->emplace_back(std::move(r)); } \
    static CppT pop(const IValue& v) { return Pop; }                   \
  };
EMBER_RET_TRAITS(Tensor, "Tensor", v.to_tensor())
EMBER_RET_TRAITS(std::vector<Tensor>, "std::vector<Tensor>", v.to_tensor_list())
EMBER_RET_TRAITS(int64_t, "int64_t", v.to_int())
EMBER_RET_TRAITS(double, "double", v.to_double())
EMBER_RET_TRAITS(bool, "bool", v.to_bool())
#undef EMBER_RET_TRAITS
template <class... Ts>
struct RetTraits<std::tuple<Ts...>> {
  static constexpr bool kSupported = (RetTraits<Ts>::kSupported && ...);
  static std::string name() {
    std::string s = "std::tuple<";
    bool first = true;
    ((s += (first ? "" : ", ") + RetTraits<Ts>::name(), first = false), ...);
    return s + ">";
  }
};

// The signature string compared with FunctionSchema::cpp_signature().
template <class Sig>
struct SignatureOf;
template <class R, class... Args>
struct SignatureOf<R(Args...)> {
  static std::string str() {
    std::string s = RetTraits<R>::name() + " (";
    bool first = true;
    ((s += (first ? "" : ", ") + ArgTraits<Args>::name(), first = false), ...);
    return s + ")";
  }
};

template <class R>
void push_return(Stack* s, R&& r) {
  RetTraits<std::decay_t<R>>::push(s, std::forward<R>(r));
}
template <class... Ts>
void push_return(Stack* s, std::tuple<Ts...>&& r) {
  std::apply([&](auto&&... xs) { (push_return(s, std::move(xs)), ...); }, std::move(r));
}

template <class R>
struct PopReturn {
  static R pop(Stack* s) {
    EMBER_ASSERT(!s->empty(), "boxed kernel returned no value");
    return RetTraits<R>::pop(s->back());
  }
};
template <>
struct PopReturn<void> {
  static void pop(Stack*) {}
};
template <class... Ts>
struct PopReturn<std::tuple<Ts...>> {
  static std::tuple<Ts...> pop(Stack* s) {
    EMBER_ASSERT(s->size() >= sizeof...(Ts), "boxed kernel returned too few values");
    size_t base = s->size() - sizeof...(Ts);
    return pop_impl(s, base, std::index_sequence_for<Ts...>());
  }
  template <size_t... I>
  static std::tuple<Ts...> pop_impl(Stack* s, size_t base, std::index_sequence<I...>) {
    return std::tuple<Ts...>(RetTraits<Ts>::pop((*s)[base + I])...);
  }
};

// Calls an unboxed kernel with arguments taken from the top of the stack; replaces them with
// the returns.
template <class Sig>
struct BoxedAdapter;
template <class R, class... Args>
struct BoxedAdapter<R(Args...)> {
  static void call(void (*fn)(), Stack* stack) {
    call_impl(fn, stack, std::index_sequence_for<Args...>());
  }
  template <size_t... I>
  static void call_impl(void (*fn)(), Stack* stack, std::index_sequence<I...>) {
    constexpr size_t n = sizeof...(Args);
    EMBER_ASSERT(stack->size() >= n, "stack holds fewer values than the kernel's arguments");
    size_t base = stack->size() - n;
    std::tuple<typename ArgTraits<Args>::Holder...> holders{ArgTraits<Args>::hold((*stack)[base + I])...};
    auto f = reinterpret_cast<R (*)(Args...)>(fn);
    if constexpr (std::is_void<R>::value) {
      f(ArgTraits<Args>::get(std::get<I>(holders))...);
      stack->resize(base);
    } else {
      R r = f(ArgTraits<Args>::get(std::get<I>(holders))...);
      stack->resize(base);
      push_return(stack, std::move(r));
    }
  }
};

}  // namespace detail

using BoxedKernel = std::function<void(const OperatorHandle&, Stack*)>;

// A kernel: an unboxed function pointer (fast typed path) with its boxing adapter, or a boxed
// function only (fallbacks, kernels registered by name), or a fallthrough marker.
// How an Autograd-key kernel treats gradients (for the registry walk in the conformance test).
enum class AutogradTag : uint8_t {
  None,               // a real autograd kernel (records a backward)
  NotDifferentiable,  // outputs never require grad (comparisons, argmax, detach, ...)
  Unsupported,        // throws if an input requires grad (a stated gap)
  NoDoubleBackward,   // a backward op without a derivative of its own: outputs recorded with a
                      // node that throws when reached (create_graph through it)
};

struct KernelFunction {
  void (*unboxed)() = nullptr;
  void (*boxed_adapter)(void (*)(), Stack*) = nullptr;
  BoxedKernel boxed;
  bool fallthrough = false;
  AutogradTag autograd_tag = AutogradTag::None;
  std::string signature;  // SignatureOf<Sig>::str() for unboxed kernels
  std::string debug;      // where it was registered

  bool valid() const { return unboxed || boxed; }

  template <class R, class... Args>
  static KernelFunction from_unboxed(R (*fn)(Args...)) {
    static_assert((detail::ArgTraits<Args>::kSupported && ...),
                  "kernel parameter types must be canonical: const Tensor&, "
                  "const std::optional<Tensor>&, const std::vector<Tensor>&, int64_t, double, bool, "
                  "IntArrayRef, const std::string&, const Scalar&, const std::optional<Scalar>&, "
                  "std::optional<int64_t>, std::optional<double>, DType, std::optional<DType>, Device");
    KernelFunction k;
    k.unboxed = reinterpret_cast<void (*)()>(fn);
    k.boxed_adapter = &detail::BoxedAdapter<R(Args...)>::call;
    k.signature = detail::SignatureOf<R(Args...)>::str();
    return k;
  }
  static KernelFunction from_boxed(BoxedKernel fn) {
    KernelFunction k;
    k.boxed = std::move(fn);
    return k;
  }
  static KernelFunction make_fallthrough() {
    KernelFunction k;
    k.fallthrough = true;
    return k;
  }

  void call_boxed(const OperatorHandle& op, Stack* stack) const {
    if (unboxed) {
      boxed_adapter(unboxed, stack);
    } else {
      boxed(op, stack);
    }
  }
};

}  // namespace ember
