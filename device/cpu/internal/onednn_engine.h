// Internal (not installed): oneDNN's CPU engine and this thread's stream, shared by the GEMM
// (onednn_gemm.cpp) and convolution (onednn_conv.cpp) paths. Only with oneDNN in the build.
#pragma once

#ifdef EMBER_HAVE_ONEDNN
#include <dnnl.hpp>

namespace ember {
namespace cpu {

// Created once, after ember's ISA cap was handed to oneDNN.
dnnl::engine& onednn_engine();
// This thread's in-order stream on that engine.
dnnl::stream& onednn_stream();

}  // namespace cpu
}  // namespace ember
#endif
