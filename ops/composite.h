// libtorch's functions that ember builds from its own ops (ops/composite*.cpp): shape helpers,
// masked_fill, max/min over a dim with indices, predicates, multinomial and a few factories.
// Being compositions, they differentiate and run on every device their parts do.
#pragma once

#include <string>
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
Tensor randint_like(const Tensor& x, int64_t high, const TensorOptions& options = {});
Tensor randint_like(const Tensor& x, int64_t low, int64_t high, const TensorOptions& options = {});
Tensor eye(int64_t n, int64_t m, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options);
Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base = 10.0,
                const TensorOptions& options = {});
Tensor tril_indices(int64_t row, int64_t col, int64_t offset = 0, const TensorOptions& options = kInt64);
Tensor triu_indices(int64_t row, int64_t col, int64_t offset = 0, const TensorOptions& options = kInt64);

}  // namespace ember
