// ember: CPU reductions and row-wise kernels.
#pragma once

#include "ember/device/cpu/strided.h"
#include "ember/core/tables/reduce_ops.def"

namespace ember {
namespace cpu {

// The reductions of the reduce table (core/tables/reduce_ops.def: sum, amax, amin, ...).
// out has in's rank, with size 1 at every reduced dim (the keepdim layout) and any strides.
// Accumulation: float (as double across blocks) for f32/f16/bf16, double, int64 for integers.
// amax/amin: NaN propagates.
#define EMBER_DECLARE_TABLE_REDUCE(name, ...) void name(const Strided& out, const Strided& in);
EMBER_REDUCE_OPS(EMBER_DECLARE_TABLE_REDUCE)
#undef EMBER_DECLARE_TABLE_REDUCE
// Index (int64) of the first max/min along dim; out in keepdim layout. NaN counts as the max.
void argmax(const Strided& out, const Strided& in, int64_t dim);
void argmin(const Strided& out, const Strided& in, int64_t dim);

// Softmax family over dim; in and out contiguous with the same sizes.
void softmax(const Strided& out, const Strided& in, int64_t dim);
void log_softmax(const Strided& out, const Strided& in, int64_t dim);
// grad_in = y * (g - sum(g * y)) ; grad_in = g - exp(y) * sum(g)   (all contiguous, same sizes)
void softmax_backward(const Strided& grad_in, const Strided& grad, const Strided& y, int64_t dim);
void log_softmax_backward(const Strided& grad_in, const Strided& grad, const Strided& y, int64_t dim);

}  // namespace cpu
}  // namespace ember
