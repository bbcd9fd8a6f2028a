// ember: CPU matrix multiply. oneDNN (f32, bf16) with primitives cached by shape/strides/dtype,
// Eigen for tiny sizes, f64 and integers; f16 goes through f32 (converted, accumulated in f32).
#pragma once

#include <cstdint>

#include "ember/tensor/dtype.h"

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
};

// c[b] = a[b] @ b[b] for b in [0, batch). All three share one dtype; c must not alias a or b.
// Operands without a unit row or column stride, and fp16 operands (computed in fp32), are staged
// in float32 buffers: in `scratch` when given (gemm_scratch_bytes long), else on the heap.
void gemm(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, void* scratch = nullptr);
// Bytes of staging gemm needs for these operands (0 when it works in place).
size_t gemm_scratch_bytes(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c);

// Which engine gemm would use for this problem ("onednn", "eigen"); for tests and benchmarks.
const char* gemm_engine(int64_t m, int64_t n, int64_t k, DType dtype);

}  // namespace cpu
}  // namespace ember
