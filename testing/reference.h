// ember: sample makers and naive float64 reference implementations for OpInfo.
//
// References read elements through sizes/strides with plain index loops and compute in double,
// so they share nothing with the kernels they check.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ember/testing/op_info.h"

namespace ember {
namespace testing {

// ---- sample inputs (deterministic: values come from std::mt19937_64(seed)) ----
// Values uniform in [lo, hi), generated in double and rounded once to dtype.
Tensor make_tensor(IntArrayRef shape, DType dtype, double lo = -1.0, double hi = 1.0, uint64_t seed = 1);
// The same kind of values, as a non-contiguous view of the given shape (a transpose of a
// larger buffer, sliced with step 2 along the last dim).
Tensor make_noncontig(IntArrayRef shape, DType dtype, double lo = -1.0, double hi = 1.0, uint64_t seed = 2);
// Distinct values: a shuffled even grid over [lo, hi) (spacing (hi - lo) / numel), for ops whose
// gradient jumps at ties (max/min), so finite differences never straddle a tie.
Tensor make_distinct(IntArrayRef shape, DType dtype, double lo = -1.0, double hi = 1.0, uint64_t seed = 4);
// Integer-valued tensors in [lo, hi] (exact in every dtype, useful for exact comparisons).
Tensor make_int_valued(IntArrayRef shape, DType dtype, int64_t lo, int64_t hi, uint64_t seed = 3);

// Standard unary/binary sample sets (contiguous, 0-d, non-contiguous, large enough to run in
// parallel; binary adds broadcasting and mixed dtypes).
std::vector<Sample> unary_samples(DType dtype, double lo = -2.0, double hi = 2.0);
std::vector<Sample> binary_samples(DType dtype, double lo = -2.0, double hi = 2.0);

// ---- reading ----
double at(const Tensor& t, IntArrayRef index);            // any dtype, any strides (CPU)
int64_t at_int(const Tensor& t, IntArrayRef index);
// Converts floating tensors in a stack to float64 copies (other values unchanged).
Stack to_float64(const Stack& args);

// ---- references (return new contiguous float64 tensors, or int64/bool where noted) ----
Tensor ref_map(const Tensor& x, const std::function<double(double)>& f);
Tensor ref_map2(const Tensor& a, const Tensor& b, const std::function<double(double, double)>& f);
Tensor ref_map3(const Tensor& a, const Tensor& b, const Tensor& c,
                const std::function<double(double, double, double)>& f);
// Reduces over dims (empty = all) with keepdim; f folds the values of one output in order.
Tensor ref_reduce(const Tensor& x, IntArrayRef dims, bool keepdim,
                  const std::function<double(const std::vector<double>&)>& f);
// Applies f to every 1-d slice along dim (f maps the slice to a slice of the same length).
Tensor ref_along(const Tensor& x, int64_t dim,
                 const std::function<std::vector<double>(const std::vector<double>&)>& f);
Tensor ref_matmul(const Tensor& a, const Tensor& b);  // 2-D or batched 3-D, naive triple loop
// Copies values (any dtype/strides) into a new contiguous tensor of dtype (naive loop).
Tensor ref_contiguous(const Tensor& x, DType dtype);
// Every index of a shape in row-major order.
std::vector<Shape> all_indices(IntArrayRef shape);

}  // namespace testing
}  // namespace ember

namespace ember {
namespace testing {
// Fills info for a binary op f(a, b) (optionally with a trailing alpha: f(a, alpha * b)).
void set_binary_info(OpInfo& info, std::function<double(double, double)> f, double lo = -2.0, double hi = 2.0,
                     bool with_alpha = false);
// Fills info for a tensor-scalar op f(x, s) (optionally with alpha: f(x, alpha * s)).
void set_scalar_info(OpInfo& info, std::function<double(double, double)> f, double lo = -2.0, double hi = 2.0,
                     bool with_alpha = false);
// Fills info for a unary op f(x).
void set_unary_info(OpInfo& info, std::function<double(double)> f, double lo = -2.0, double hi = 2.0);
}  // namespace testing
}  // namespace ember
