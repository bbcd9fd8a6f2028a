// ember (private): Eigen array maps over raw compute buffers. Included only by .cpp files.
#pragma once

// GCC 12 reports '__Y is used uninitialized' inside avx512fintrin.h when Eigen's AVX-512 packet
// code is inlined (GCC bug 105593, a false positive in a system header). This header must be the
// first include of the kernel files that use it, so the pragma covers the intrinsics headers.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>

namespace ember {
namespace cpu {

template <class C>
using ArrOut = Eigen::Map<Eigen::Array<C, Eigen::Dynamic, 1>>;
template <class C>
using ArrIn = Eigen::Map<const Eigen::Array<C, Eigen::Dynamic, 1>>;

template <class C>
inline ArrOut<C> out_arr(void* p, int64_t n) {
  return ArrOut<C>(static_cast<C*>(p), n);
}
template <class C>
inline ArrIn<C> in_arr(const void* p, int64_t n) {
  return ArrIn<C>(static_cast<const C*>(p), n);
}

}  // namespace cpu
}  // namespace ember
