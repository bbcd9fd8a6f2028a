// ember: the staged GEMM path (device/cpu/staged_gemm.cpp), for the engines of gemm.cpp. Operands
// that no GEMM takes as they are (16-bit without native support, no unit stride, or to be rounded)
// are converted to fp32 (B once, A and C a row panel at a time) around an fp32 GEMM.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/device/cpu/gemm.h"

namespace ember {
namespace cpu {

inline bool unit_stride(const Matrix& m) { return m.col_stride == 1 || m.row_stride == 1; }

// Bytes of fp32 scratch staged_gemm needs for these operands (round_to as staged_gemm's).
size_t staged_bytes(const Matrix& a, const Matrix& b, const Matrix& c, DType round_to);

// c[i] = a[i] @ b[i] for i in [0, batch) through fp32 copies in buf (staged_bytes long), on
// `threads` threads of the pool this thread has reserved; the panels' GEMM is fp32_gemm. With
// round_to bf16 or f16, every input element is rounded to it as it is staged and every output
// before it is stored (gemm_rounded); an fp32 operand with a unit stride that needs no rounding
// (round_to f32, or Matrix::rounded) is read in place.
void staged_gemm(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, float* buf, bool onednn, int threads,
                 DType round_to = DType::Float32);

// The fp32 GEMM of one staged panel (gemm.cpp): oneDNN where `onednn` and it takes the shape,
// else Eigen on `threads` threads.
void fp32_gemm(const Matrix& a, const Matrix& b, const Matrix& c, bool onednn, int threads);

}  // namespace cpu
}  // namespace ember
