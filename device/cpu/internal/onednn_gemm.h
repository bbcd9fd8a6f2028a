// Internal (not installed): the oneDNN GEMM engine as gemm.cpp sees it. Each function answers
// "no" when the build has no oneDNN, so gemm.cpp has no #ifdef.
#pragma once

#include <cstdint>

#include "ember/device/cpu/gemm.h"

namespace ember {
namespace cpu {

bool onednn_available();
// Whether this oneDNN builds a bf16 matmul on this CPU (asked once).
bool onednn_bf16_probe();
// c = a b (batched) through a cached oneDNN primitive; false when oneDNN has none for this problem
// (nothing was computed).
bool onednn_gemm(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c);

}  // namespace cpu
}  // namespace ember
