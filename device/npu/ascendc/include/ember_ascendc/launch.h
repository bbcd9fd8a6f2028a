// ember's Ascend C: launching a kernel. Every launch form becomes ember_launch(kernel, name, ...)
// (args...): the <<<blockDim, l2ctrl, stream>>> syntax (rewritten by ember's ascendc.cmake and ASC
// compiler), the generated aclrtlaunch_<kernel> functions, and CANN's CPU-debug ICPU_RUN_KF.
#pragma once

#include <memory>
#include <tuple>
#include <utility>

#include "ember_ascendc/base.h"

namespace AscendC {
namespace detail {

// A host argument as the kernel's parameter: addresses convert to any pointer type (GM_ADDR,
// __gm__ float*, void*); a struct parameter given by address (aclrtlaunch_<kernel>'s void* for a
// tiling struct) is copied from the host memory there, at launch; the rest as C++ converts it.
template <class P, class A>
P to_param(A&& a) {
  using D = std::decay_t<A>;
  if constexpr (std::is_pointer<P>::value && (std::is_pointer<D>::value || std::is_null_pointer<D>::value))
    return reinterpret_cast<P>(const_cast<void*>(static_cast<const volatile void*>(a)));
  else if constexpr (std::is_class<P>::value && std::is_pointer<D>::value)
    return *static_cast<const P*>(static_cast<const void*>(a));
  else if constexpr (std::is_pointer<P>::value && std::is_integral<D>::value)
    return reinterpret_cast<P>(static_cast<uintptr_t>(a));
  else
    return static_cast<P>(std::forward<A>(a));
}

template <class... P>
struct Launch {
  void (*fn)(P...);
  std::tuple<std::decay_t<P>...> args;
  static void run(void* self) {
    auto* l = static_cast<Launch*>(self);
    std::apply(l->fn, l->args);
  }
  static void destroy(void* self) { delete static_cast<Launch*>(self); }
};

template <class V>
void note_ptr(const V& v, const void** ptrs, uint32_t& n) {
  if constexpr (std::is_pointer<V>::value) ptrs[n++] = const_cast<const void*>(static_cast<const volatile void*>(v));
}

template <class... P>
class Launcher {
 public:
  Launcher(void (*fn)(P...), const char* name, uint32_t block_dim, void* stream)
      : fn_(fn), name_(name), block_dim_(block_dim), stream_(stream) {}
  // Enqueues the launch; returns an aclError (0: enqueued).
  template <class... A>
  uint32_t operator()(A&&... a) const {
    static_assert(sizeof...(A) == sizeof...(P), "the launch passes a different number of arguments than the kernel takes");
    auto* l = new Launch<P...>{fn_, std::tuple<std::decay_t<P>...>(to_param<P>(std::forward<A>(a))...)};
    const void* ptrs[sizeof...(P) + 1] = {};
    uint32_t n = 0;
    std::apply([&](const auto&... v) { (note_ptr(v, ptrs, n), ...); }, l->args);
    return static_cast<uint32_t>(
        ember_ascendc_launch(name_, block_dim_, stream_, &Launch<P...>::run, l, &Launch<P...>::destroy, ptrs, n));
  }
  // CPU debug (ICPU_RUN_KF): runs now; a fault throws KernelError.
  template <class... A>
  void run_now(A&&... a) const {
    Launch<P...> l{fn_, std::tuple<std::decay_t<P>...>(to_param<P>(std::forward<A>(a))...)};
    char msg[4096];
    if (ember_ascendc_run_now(name_, block_dim_, &Launch<P...>::run, &l, msg, sizeof(msg)) != 0) throw KernelError(msg);
  }

 private:
  void (*fn_)(P...);
  const char* name_;
  uint32_t block_dim_;
  void* stream_;
};

template <class S>
void* stream_arg(S s) {
  if constexpr (std::is_pointer<S>::value) return const_cast<void*>(static_cast<const volatile void*>(s));
  else if constexpr (std::is_null_pointer<S>::value) return nullptr;
  else return reinterpret_cast<void*>(static_cast<uintptr_t>(s));  // 0 / nullptr-like integers
}

}  // namespace detail

// kernel<<<blockDim, l2ctrl, stream>>>(args...) is ember_launch(kernel, "kernel", blockDim, l2ctrl, stream)(args...).
template <class... P, class L, class S>
detail::Launcher<P...> ember_launch(void (*fn)(P...), const char* name, uint32_t blockDim, L /*l2ctrl*/, S stream) {
  return detail::Launcher<P...>(fn, name, blockDim, detail::stream_arg(stream));
}
template <class... P>
detail::Launcher<P...> ember_launch(void (*fn)(P...), const char* name, uint32_t blockDim) {
  return detail::Launcher<P...>(fn, name, blockDim, nullptr);
}

// ---- CANN's CPU debug library (tikicpulib.h) ----
inline void* GmAlloc(size_t size) { return ember_ascendc_gm_alloc(size); }
inline void GmFree(void* ptr) { ember_ascendc_gm_free(ptr); }
inline void SetKernelMode(KernelMode) {}

}  // namespace AscendC

using AscendC::KernelMode;

// Runs kernel on blockDim cores now and waits (CANN's CPU debug mode); a fault throws
// AscendC::KernelError with the kernel, the core and the call.
#define ICPU_RUN_KF(func, blockdim, ...) \
  ::AscendC::ember_launch(func, #func, static_cast<uint32_t>(blockdim)).run_now(__VA_ARGS__)
