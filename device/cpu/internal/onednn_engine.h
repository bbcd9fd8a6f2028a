// Internal (not installed): oneDNN's CPU engine and this thread's stream, shared by the GEMM
// (onednn_gemm.cpp) and convolution (onednn_conv.cpp) paths. Only with oneDNN in the build.
#pragma once

#ifdef EMBER_HAVE_ONEDNN
#include <cstdint>
#include <cstring>

#include <dnnl.hpp>

namespace ember {
namespace cpu {

// Created once, after ember's ISA cap was handed to oneDNN.
dnnl::engine& onednn_engine();
// This thread's in-order stream on that engine.
dnnl::stream& onednn_stream();

// The key of a per-thread primitive cache: N int64 values (sizes, strides, dtypes), FNV-1a hashed.
template <size_t N>
struct Int64Key {
  int64_t v[N];
  bool operator==(const Int64Key& o) const { return std::memcmp(v, o.v, sizeof(v)) == 0; }
};
struct Int64KeyHash {
  template <size_t N>
  size_t operator()(const Int64Key<N>& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t x : k.v) h = (h ^ static_cast<size_t>(x)) * 1099511628211ull;
    return h;
  }
};

}  // namespace cpu
}  // namespace ember
#endif
