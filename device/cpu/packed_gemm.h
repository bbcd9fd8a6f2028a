// ember's own fp32 GEMM for bf16 and f16 operands on AVX2 CPUs (AVX2 + FMA + F16C, no AVX-512),
// where oneDNN has no 16-bit matmul. Packing converts: A and B are read in their own dtype and
// layout and written as fp32 micro-panels, so no converted copy of an operand is ever made; the
// 6x16 FMA kernel accumulates in fp32 and the last K block is rounded straight into C.
//
// Work is split over `parts` threads along M or N (whichever duplicates less packing); each part
// has its own slice of the scratch, so the scratch depends only on shapes and the part count.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/device/cpu/gemm.h"

namespace ember {
namespace cpu {

// True where gemm routes bf16 (without native bf16) and f16 here: ember's ISA is AVX2 exactly.
// With AVX-512, oneDNN's fp32 GEMM on staged copies is faster than an 8-lane kernel.
bool packed_gemm_enabled();
// Scratch bytes for this problem cut into `parts` parts (a multiple of 64).
size_t packed_scratch_bytes(const Matrix& a, const Matrix& b, const Matrix& c, int parts, DType compute);
// c[z] = a[z] @ b[z] for z in [0, batch) on up to `parts` threads of the reserved pool, any
// strides, with `scratch` (64-byte aligned) holding packed_scratch_bytes(a, b, c, parts) bytes.
// Every input element is rounded to `compute` as it is packed, products accumulate in fp32, and
// each output is rounded to `compute` before it is stored in c's dtype. Each of a, b, c is
// `compute` or f32; compute f32 is plain fp32 GEMM. The CPU must have AVX2 (tests call it on
// any such CPU, whatever the cap).
void packed_gemm(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, void* scratch, int parts,
                 DType compute);
// dst[i] = src[i] rounded to `compute` (bf16: nearest even, NaN kept quiet; f16: F16C's nearest
// even), still as fp32, for i in [0, n); dst may be src. 8-lane AVX2: the CPU must have AVX2.
void round_floats(const float* src, float* dst, int64_t n, DType compute);

}  // namespace cpu
}  // namespace ember
