// libtorch's functions that ember builds from its own ops (ops/composite*.cpp): shape helpers,
// masked_fill, max/min over a dim with indices, predicates, multinomial and a few factories.
// Being compositions, they differentiate and run on every device their parts do.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/ops/ops.h"

namespace ember {

Tensor flip(const Tensor& x, IntArrayRef dims);
Tensor fliplr(const Tensor& x);
Tensor flipud(const Tensor& x);
Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes);
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& x, IntArrayRef split_sizes, int64_t dim = 0);
Tensor movedim(const Tensor& x, IntArrayRef source, IntArrayRef destination);
Tensor movedim(const Tensor& x, int64_t source, int64_t destination);
inline Tensor moveaxis(const Tensor& x, IntArrayRef s, IntArrayRef d) { return movedim(x, s, d); }
inline Tensor moveaxis(const Tensor& x, int64_t s, int64_t d) { return movedim(x, s, d); }
inline Tensor swapaxes(const Tensor& x, int64_t a, int64_t b) { return x.transpose(a, b); }
inline Tensor swapdims(const Tensor& x, int64_t a, int64_t b) { return x.transpose(a, b); }
inline Tensor broadcast_to(const Tensor& x, IntArrayRef shape) { return x.expand(shape); }
inline Tensor ravel(const Tensor& x) { return x.reshape({-1}); }
Tensor tile(const Tensor& x, IntArrayRef reps);
std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors);
// indexing "ij" (matrix, the default) or "xy" (Cartesian: the first two outputs' dims swapped).
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing = "ij");
Tensor atleast_1d(const Tensor& x);
Tensor atleast_2d(const Tensor& x);
Tensor atleast_3d(const Tensor& x);
std::vector<Tensor> atleast_1d(const std::vector<Tensor>& xs);
std::vector<Tensor> atleast_2d(const std::vector<Tensor>& xs);
Tensor hstack(const std::vector<Tensor>& tensors);
Tensor vstack(const std::vector<Tensor>& tensors);
Tensor dstack(const std::vector<Tensor>& tensors);
inline Tensor concat(const std::vector<Tensor>& tensors, int64_t dim = 0) { return cat(tensors, dim); }

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value);
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value);
// (values, indices) of the largest/smallest element along dim; the first one on ties, which alone
// gets the gradient, as in libtorch.
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor max(const Tensor& x, const Tensor& other);
Tensor min(const Tensor& x, const Tensor& other);
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isfinite(const Tensor& x);
Tensor isposinf(const Tensor& x);
Tensor isneginf(const Tensor& x);
Tensor logical_xor(const Tensor& a, const Tensor& b);
bool is_nonzero(const Tensor& x);
inline bool is_same_size(const Tensor& a, const Tensor& b) { return a.sizes() == b.sizes(); }
// num_samples category indices per row of x (1-D [k] or 2-D [rows, k] non-negative weights),
// drawn with ember's generator (manual_seed); int64 on x's device.
Tensor multinomial(const Tensor& x, int64_t num_samples, bool replacement = false);

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options = {});
Tensor randint(int64_t high, IntArrayRef shape, const TensorOptions& options = kInt64);
Tensor randint_like(const Tensor& x, int64_t high, const TensorOptions& options = {},
                    std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor randint_like(const Tensor& x, int64_t low, int64_t high, const TensorOptions& options = {},
                    std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor eye(int64_t n, int64_t m, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options);
Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base = 10.0,
                const TensorOptions& options = {});
Tensor tril_indices(int64_t row, int64_t col, int64_t offset = 0, const TensorOptions& options = kInt64);
Tensor triu_indices(int64_t row, int64_t col, int64_t offset = 0, const TensorOptions& options = kInt64);

// ---- gathers, scatters and index ops (ops/composite_index.cpp)
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index, bool sparse_grad = false);
Tensor take(const Tensor& x, const Tensor& index);
Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int64_t> dim = std::nullopt);
Tensor masked_select(const Tensor& x, const Tensor& mask);
Tensor nonzero(const Tensor& x);  // [n, dim] int64 positions of the non-zero elements (a host sync)
Tensor argwhere(const Tensor& x);
std::vector<Tensor> where(const Tensor& condition);  // nonzero's columns
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other);
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other);
Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other);
// scatter: x with src (or value) written at index along dim (duplicates: the last write).
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value);
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value);
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& value);
Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source);
// x + alpha * (source's slices summed into the slices of x at index along dim)
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);
Tensor diag(const Tensor& x, int64_t diagonal = 0);
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
Tensor diag_embed(const Tensor& x, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
Tensor rot90(const Tensor& x, int64_t k = 1, IntArrayRef dims = {0, 1});
std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int64_t dim = 0);
std::vector<Tensor> tensor_split(const Tensor& x, IntArrayRef indices, int64_t dim = 0);
Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
Tensor narrow(const Tensor& x, int64_t dim, const Tensor& start, int64_t length);

// ---- order statistics and reductions (ops/composite_reduce.cpp)
std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> sort(const Tensor& x, std::optional<bool> stable, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
std::tuple<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim = -1, bool keepdim = false);
Tensor median(const Tensor& x);
std::tuple<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> cummax(const Tensor& x, int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor& x, int64_t dim);
Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim = false);
Tensor prod(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& x, int64_t dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor sum(const Tensor& x, std::optional<DType> dtype);
Tensor count_nonzero(const Tensor& x, IntArrayRef dims = {});
Tensor nanmean(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
std::tuple<Tensor, Tensor> aminmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, IntArrayRef dims, bool unbiased = true, bool keepdim = false);

// ---- binary and ternary math (ops/composite_reduce.cpp)
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor mv(const Tensor& mat, const Tensor& vec);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor outer(const Tensor& a, const Tensor& b);
Tensor addmm(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor baddbmm(const Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor fmax(const Tensor& a, const Tensor& b);
Tensor fmin(const Tensor& a, const Tensor& b);
Tensor hypot(const Tensor& a, const Tensor& b);
Tensor xlogy(const Tensor& x, const Tensor& y);
inline Tensor true_divide(const Tensor& a, const Tensor& b) { return div(a, b); }
// floor_divide, remainder (the sign of b) and fmod (the sign of a), as PyTorch; integer inputs
// are computed in float64 (exact up to 2^53).
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, const Scalar& b);
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Scalar& b);
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Scalar& b);
inline Tensor clip(const Tensor& x, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt) {
  return clamp(x, min, max);
}
Tensor nan_to_num(const Tensor& x, std::optional<double> nan = 0.0, std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);
Tensor dist(const Tensor& a, const Tensor& b, const Scalar& p = 2);
Tensor kron(const Tensor& a, const Tensor& b);
Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim = std::nullopt);
inline Tensor greater(const Tensor& a, const Tensor& b) { return gt(a, b); }
inline Tensor greater(const Tensor& a, const Scalar& b) { return gt(a, b); }
inline Tensor less(const Tensor& a, const Tensor& b) { return lt(a, b); }
inline Tensor less(const Tensor& a, const Scalar& b) { return lt(a, b); }
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false);
bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan);
Tensor range(const Scalar& start, const Scalar& end, const Scalar& step = 1, const TensorOptions& options = {});
Tensor range(const Scalar& start, const Scalar& end, const TensorOptions& options);

// ---- libtorch's other overloads (ops/composite_torch.cpp)
Tensor mean(const Tensor& x, std::optional<DType> dtype);
Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<DType> dtype);
// The standard deviation: sqrt of var (unbiased: n - 1; correction c: n - c).
Tensor std(const Tensor& x, bool unbiased = true);
Tensor std(const Tensor& x, IntArrayRef dims, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& x, IntArrayRef dims, std::optional<int64_t> correction, bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, bool unbiased = true);
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, IntArrayRef dims, bool unbiased = true, bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, IntArrayRef dims, std::optional<int64_t> correction,
                                    bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, bool unbiased = true);
Tensor norm(const Tensor& x, const std::optional<Scalar>& p, DType dtype);
Tensor norm(const Tensor& x, const std::optional<Scalar>& p, IntArrayRef dims, bool keepdim, DType dtype);
Tensor argsort(const Tensor& x, bool stable, int64_t dim = -1, bool descending = false);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
// Counts (or summed weights) of each non-negative integer value: [max(x) + 1] at least minlength.
Tensor bincount(const Tensor& x, const std::optional<Tensor>& weights = {}, int64_t minlength = 0);
// bins equal-width bins over [min, max] (the data's range when min == max); outside: not counted.
Tensor histc(const Tensor& x, int64_t bins = 100, const Scalar& min = 0, const Scalar& max = 0);
// (values, inverse, counts) of the runs of equal consecutive elements of the flattened x.
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& x, bool return_inverse = false,
                                                      bool return_counts = false,
                                                      std::optional<int64_t> dim = std::nullopt);
// rounding_mode "trunc" (toward zero), "floor" (floor_divide) or none (true division).
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode);
Tensor div(const Tensor& a, const Scalar& b, std::optional<std::string_view> rounding_mode);
inline Tensor true_divide(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor remainder(const Scalar& a, const Tensor& b);
Tensor pow(const Scalar& a, const Tensor& exponent);
Tensor xlogy(const Scalar& x, const Tensor& y);
Tensor xlogy(const Tensor& x, const Scalar& y);
Tensor sgn(const Tensor& x);
Tensor round(const Tensor& x, int64_t decimals);  // round(x 10^decimals) / 10^decimals
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt);
Tensor clamp_min(const Tensor& x, const Tensor& min);
Tensor clamp_max(const Tensor& x, const Tensor& max);
inline Tensor clip(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max = {}) {
  return clamp(x, min, max);
}
Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
              const Scalar& alpha = 1);
Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype);
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype);
Tensor logit(const Tensor& x, std::optional<double> eps = std::nullopt);
// x with src's values added at index along dim (duplicates add up), differentiable in x and src.
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// reduce "add" (scatter_add); "multiply" is refused by name.
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce);
// reduce "sum" or "mean" (with or without x's own value); prod, amax and amin are refused by name.
Tensor scatter_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self = true);
// x with source's leading elements written, in order, where mask is true.
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);
// Sums of products over the equation's repeated letters ("ij,jk->ik"; without "->": the letters
// seen once, in alphabetical order). No "..." (refused by name).
Tensor einsum(std::string_view equation, const std::vector<Tensor>& tensors,
              std::optional<std::vector<int64_t>> path = std::nullopt);
Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b);
// The p-norm distances between the rows of x1 [B, P, M] and x2 [B, R, M] (or 2-D): [B, P, R].
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2, std::optional<int64_t> compute_mode = std::nullopt);

namespace detail {
// For an in-place composite: the tensor's value to compute from. When the op is recorded, a copy,
// so its backward still has the old value after the write.
Tensor old_value(const Tensor& t);
}  // namespace detail

}  // namespace ember
