// ember: CPU matrix multiply. The engine is chosen at run time, per dtype, from what this CPU
// (under EMBER_MAX_CPU_ISA) and this oneDNN can do:
//   f32                 oneDNN (any x86-64), Eigen for tiny sizes;
//   bf16                oneDNN in bf16 where the CPU's bf16 units pay (AMX, or AVX512_BF16 at least
//                       0.75x fp32 FMA's rate: bf16_units_pay in isa.h) and oneDNN builds the
//                       primitive; on AVX2-only CPUs ember's packed fp32 GEMM (packed_gemm.h);
//                       with AVX-512 otherwise, the staged fp32 path;
//   f16                 the packed path on AVX2-only CPUs, elsewhere the staged fp32 path
//                       (oneDNN 2.6 has no f16 matmul);
//   f64, int32, int64   Eigen.
// The staged path converts B once and A and C one row panel at a time (panels sized to stay in
// cache), runs the fp32 GEMM on each panel, accumulates in fp32 and rounds once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ember/core/dtype.h"

namespace ember {
namespace cpu {

// A (batched) matrix view: element (b, i, j) at data + b*batch_stride + i*row_stride + j*col_stride
// (in elements). batch_stride 0 broadcasts one matrix over the batch.
struct Matrix {
  void* data = nullptr;
  DType dtype = DType::Float32;
  int64_t rows = 0, cols = 0;
  int64_t row_stride = 0, col_stride = 1;
  int64_t batch_stride = 0;
  // gemm_rounded only: every element is already a value of the compute dtype (an fp32 operand
  // made by _round_to, Note [Rounded storage]). The staged path then reads an fp32 operand with
  // a unit stride in place instead of rounding a copy; results are the same. Claiming it of an
  // operand that is not rounded gives the product of the unrounded values there.
  bool rounded = false;
};

// c[b] = a[b] @ b[b] for b in [0, batch). All three share one dtype; c must not alias a or b.
// Packed or staged operands (16-bit without native support, operands without a unit row or
// column stride) live in `scratch` when given (64-byte aligned, scratch_bytes long, at least
// what gemm_scratch_bytes asked for with one thread), else in a block borrowed from the CPU
// caching allocator. A smaller scratch than gemm_scratch_bytes runs on fewer threads.
void gemm(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, void* scratch = nullptr,
          size_t scratch_bytes = 0);
// Bytes of scratch gemm needs for these operands on `threads` threads (get_num_threads() when 0;
// 0 bytes when it works in place). Depends only on shapes, strides, dtypes and the thread count
// (data pointers are not read).
size_t gemm_scratch_bytes(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, int threads = 0);

// c[b] = round(a[b]) @ round(b[b]): every input element rounded to `compute` (bf16 or f16),
// products accumulated in fp32, each output rounded to `compute` and stored in c's dtype; each
// of a, b, c is `compute` or f32. The product of a `compute` cast of f32 operands, without the
// cast copies: autocast's linear on CPUs without bf16 units (ops/linear.cpp). Any strides.
// Runs ember's packed kernel on AVX2, oneDNN's fp32 GEMM on rounded staged copies with AVX-512:
// only where gemm_rounded_available() (the CPU has AVX2). Scratch as gemm's (when given, at
// least what gemm_rounded_scratch_bytes asked for with one thread, for operands with the same
// `rounded` flags).
void gemm_rounded(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, DType compute,
                  void* scratch = nullptr, size_t scratch_bytes = 0);
size_t gemm_rounded_scratch_bytes(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, DType compute,
                                  int threads = 0);
bool gemm_rounded_available();
// True when gemm_rounded stages its operands (AVX-512 with oneDNN: rounded fp32 copies, where an
// operand marked `rounded` is read in place); false when it rounds while packing (AVX2), where
// rounding an operand beforehand saves nothing.
bool gemm_rounded_stages();

// The path gemm takes for these operands: "eigen", "onednn" (in the operands' dtype), "packed"
// (converted while packing), "staged_onednn" or "staged_eigen" (converted to fp32 panel by
// panel). For tests and benchmarks.
const char* gemm_path(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c);
// The staged path's budget for A's and C's fp32 row panels together, in bytes (64 MiB): tests
// lower it to reach several panels with small problems. Returns the previous budget.
int64_t set_staged_panel_bytes(int64_t bytes);
// True when bf16 GEMM runs natively (oneDNN on AVX512_BF16 or AMX, within the caps, where
// bf16_units_pay()).
bool gemm_native_bf16();
// oneDNN's effective ISA as it reports it ("avx512_core_amx", "avx2", ...), or "none" in a
// build without oneDNN. Honours ONEDNN_MAX_CPU_ISA, and EMBER_MAX_CPU_ISA when only it is set.
std::string onednn_isa();

}  // namespace cpu
}  // namespace ember
