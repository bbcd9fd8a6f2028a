// libtorch's masked_fill, max/min over a dim, predicates, multinomial, in-place view ops and
// factories, built from ember's ops (ops/composite.h).
#include <cmath>
#include <limits>

#include "ember/autograd/meta.h"
#include "ember/ops/composite.h"
#include "ember/ops/op_util.h"

namespace ember {

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value) {
  EMBER_CHECK_DTYPE(mask.dtype() == DType::Bool, "masked_fill: mask must be bool, got ", mask.dtype());
  return where(mask, scalar_tensor(value, TensorOptions(x.dtype()).device(x.device())), x);
}
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value) {
  EMBER_CHECK_DTYPE(mask.dtype() == DType::Bool, "masked_fill: mask must be bool, got ", mask.dtype());
  EMBER_CHECK_SHAPE(value.dim() == 0, "masked_fill: value must be a 0-dim tensor, got shape ", value.sizes());
  return where(mask, value.to(x.dtype()), x);
}

namespace {
std::tuple<Tensor, Tensor> extreme(const Tensor& x, int64_t dim, bool keepdim, bool is_max) {
  const char* op = is_max ? "max" : "min";
  const int64_t d = wrap_dim(dim, x.dim(), op);
  EMBER_CHECK_INDEX(x.dim() == 0 || x.size(d) > 0, op, ": cannot reduce over dim ", dim, " of size 0 (shape ",
                    x.sizes(), ")");
  Tensor idx = is_max ? argmax(x, d, true) : argmin(x, d, true);
  Tensor values;
  if (x.is_floating_point() && x.dim() > 0) {
    // The element at idx: a one-hot selection along d, so only it gets the gradient.
    DimVector view(static_cast<size_t>(x.dim()), 1);
    view[static_cast<size_t>(d)] = x.size(d);
    Tensor pos = arange(x.size(d), TensorOptions(kInt64).device(x.device())).view(view);
    values = where(pos == idx, x, zeros({}, x.options())).sum({d}, true, x.dtype());
  } else {
    values = is_max ? amax(x, x.dim() ? IntArrayRef(d) : IntArrayRef(), true)
                    : amin(x, x.dim() ? IntArrayRef(d) : IntArrayRef(), true);
  }
  if (!keepdim && x.dim() > 0) return {values.squeeze(d), idx.squeeze(d)};
  return {values.reshape(idx.sizes()), idx};
}
}  // namespace

std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) { return extreme(x, dim, keepdim, true); }
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) { return extreme(x, dim, keepdim, false); }
Tensor max(const Tensor& x, const Tensor& other) { return maximum(x, other); }
Tensor min(const Tensor& x, const Tensor& other) { return minimum(x, other); }

Tensor isnan(const Tensor& x) { return x.is_floating_point() ? x != x : zeros(x.sizes(), x.options().dtype(kBool)); }
Tensor isposinf(const Tensor& x) {
  return x.is_floating_point() ? x == std::numeric_limits<double>::infinity()
                               : zeros(x.sizes(), x.options().dtype(kBool));
}
Tensor isneginf(const Tensor& x) {
  return x.is_floating_point() ? x == -std::numeric_limits<double>::infinity()
                               : zeros(x.sizes(), x.options().dtype(kBool));
}
Tensor isinf(const Tensor& x) { return logical_or(isposinf(x), isneginf(x)); }
Tensor isfinite(const Tensor& x) { return logical_not(logical_or(isnan(x), isinf(x))); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return ne(a.ne(0.0), b.ne(0.0)); }
bool is_nonzero(const Tensor& x) {
  EMBER_CHECK_VALUE(x.numel() == 1, "is_nonzero: a boolean value of a tensor with ", x.numel(),
                    " values is ambiguous (shape ", x.sizes(), ")");
  return x.item().to<double>() != 0.0;
}

Tensor multinomial(const Tensor& x, int64_t n, bool replacement) {
  EMBER_CHECK_SHAPE(x.dim() == 1 || x.dim() == 2, "multinomial: prob_dist must be 1-D or 2-D, got shape ", x.sizes());
  EMBER_CHECK_DTYPE(x.is_floating_point(), "multinomial: prob_dist must be floating point, got ", x.dtype());
  EMBER_CHECK_VALUE(n > 0, "multinomial: num_samples must be positive, got ", n);
  const int64_t rows = x.dim() == 2 ? x.size(0) : 1, k = x.size(-1);
  EMBER_CHECK_VALUE(k > 0, "multinomial: prob_dist has no categories (shape ", x.sizes(), ")");
  EMBER_CHECK_VALUE(replacement || n <= k, "multinomial: cannot draw ", n, " samples from ", k,
                    " categories without replacement");
  std::vector<double> w = x.to(kFloat64).to_vector<double>();
  std::vector<double> u = rand({rows, n}, kFloat64).to_vector<double>();
  std::vector<int64_t> out(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> p(w.begin() + r * k, w.begin() + (r + 1) * k);
    int64_t positive = 0;
    for (double v : p) {
      EMBER_CHECK_VALUE(std::isfinite(v) && v >= 0, "multinomial: probabilities must be finite and non-negative, got ",
                        v, " in row ", r);
      positive += v > 0;
    }
    EMBER_CHECK_VALUE(positive > 0, "multinomial: row ", r, " has no positive probability");
    EMBER_CHECK_VALUE(replacement || n <= positive, "multinomial: cannot draw ", n,
                      " samples without replacement "
                      "from row ",
                      r, ", which has ", positive, " categories of positive probability");
    for (int64_t s = 0; s < n; ++s) {
      double total = 0;
      for (double v : p) total += v;
      double target = u[static_cast<size_t>(r * n + s)] * total, acc = 0;
      int64_t pick = -1;
      for (int64_t c = 0; c < k; ++c) {
        if (p[static_cast<size_t>(c)] <= 0) continue;
        pick = c;  // the last positive category takes what rounding leaves
        acc += p[static_cast<size_t>(c)];
        if (target < acc) break;
      }
      out[static_cast<size_t>(r * n + s)] = pick;
      if (!replacement) p[static_cast<size_t>(pick)] = 0;
    }
  }
  Tensor t = tensor(out, x.dim() == 2 ? IntArrayRef({rows, n}) : IntArrayRef({n}));
  return t.to(x.device());
}

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, const TensorOptions& o) {
  EMBER_CHECK_SHAPE(sizes.size() == strides.size(), "empty_strided: sizes ", sizes, " and strides ", strides,
                    " differ in rank");
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    EMBER_CHECK_SHAPE(sizes[i] >= 0 && strides[i] >= 0, "empty_strided: negative size or stride in ", sizes, " / ",
                      strides);
    if (sizes[i] == 0) extent = 0;
  }
  for (size_t i = 0; extent && i < sizes.size(); ++i)
    extent = checked_add(extent, checked_mul(sizes[i] - 1, strides[i], "empty_strided"), "empty_strided");
  return empty({extent}, o).as_strided(sizes, strides, 0);
}
Tensor randint(int64_t high, IntArrayRef shape, const TensorOptions& o) { return randint(0, high, shape, o); }
Tensor randint_like(const Tensor& x, int64_t high, const TensorOptions& o, std::optional<MemoryFormat> f) {
  return randint_like(x, 0, high, o, f);
}
Tensor randint_like(const Tensor& x, int64_t low, int64_t high, const TensorOptions& o, std::optional<MemoryFormat> f) {
  check_memory_format("randint_like", f);
  return randint(low, high, x.sizes(),
                 TensorOptions(o.dtype_or(x.dtype())).device(o.has_device() ? o.device() : x.device()));
}
Tensor eye(int64_t n, int64_t m, const TensorOptions& o) {
  EMBER_CHECK_VALUE(n >= 0 && m >= 0, "eye: n and m must be non-negative, got ", n, " and ", m);
  TensorOptions io = TensorOptions(kInt64).device(o.device());
  return (arange(n, io).unsqueeze(1) == arange(m, io).unsqueeze(0)).to(o.dtype());
}
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& o) { return arange(start, end, 1, o); }
Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base, const TensorOptions& o) {
  Tensor e = linspace(start.to<double>(), end.to<double>(), steps, TensorOptions(kFloat64).device(o.device()));
  return pow(full({}, base, TensorOptions(kFloat64).device(o.device())), e).to(o.dtype());
}
namespace {
Tensor tri_indices(int64_t row, int64_t col, int64_t offset, const TensorOptions& o, bool lower) {
  EMBER_CHECK_VALUE(row >= 0 && col >= 0, lower ? "tril_indices" : "triu_indices",
                    ": row and col must be non-negative, got ", row, " and ", col);
  std::vector<int64_t> rs, cs;
  for (int64_t i = 0; i < row; ++i)
    for (int64_t j = 0; j < col; ++j)
      if (lower ? j - i <= offset : j - i >= offset) {
        rs.push_back(i);
        cs.push_back(j);
      }
  const int64_t k = static_cast<int64_t>(rs.size());
  rs.insert(rs.end(), cs.begin(), cs.end());
  return tensor(rs, {2, k}).to(o.device(), o.dtype_or(kInt64));
}
}  // namespace
Tensor tril_indices(int64_t r, int64_t c, int64_t off, const TensorOptions& o) {
  return tri_indices(r, c, off, o, true);
}
Tensor triu_indices(int64_t r, int64_t c, int64_t off, const TensorOptions& o) {
  return tri_indices(r, c, off, o, false);
}

// ---------------------------------------------------------------- Tensor methods
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& v) const { return ember::masked_fill(*this, mask, v); }
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& v) const { return ember::masked_fill(*this, mask, v); }
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& v) { return copy_(ember::masked_fill(*this, mask, v)); }
Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& v) { return copy_(ember::masked_fill(*this, mask, v)); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const { return ember::max(*this, dim, keepdim); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const { return ember::min(*this, dim, keepdim); }
Tensor Tensor::max(const Tensor& other) const { return ember::maximum(*this, other); }
Tensor Tensor::min(const Tensor& other) const { return ember::minimum(*this, other); }
Tensor& Tensor::unsqueeze_(int64_t d) { return autograd::adopt_view(*this, unsqueeze(d), "unsqueeze_"); }
Tensor& Tensor::squeeze_() { return autograd::adopt_view(*this, squeeze(), "squeeze_"); }
Tensor& Tensor::squeeze_(int64_t d) { return autograd::adopt_view(*this, squeeze(d), "squeeze_"); }
Tensor& Tensor::t_() { return autograd::adopt_view(*this, t(), "t_"); }
Tensor& Tensor::transpose_(int64_t a, int64_t b) { return autograd::adopt_view(*this, transpose(a, b), "transpose_"); }
Tensor Tensor::multinomial(int64_t n, bool replacement) const { return ember::multinomial(*this, n, replacement); }
Tensor Tensor::isnan() const { return ember::isnan(*this); }
Tensor Tensor::isinf() const { return ember::isinf(*this); }
Tensor Tensor::isfinite() const { return ember::isfinite(*this); }
Tensor Tensor::isposinf() const { return ember::isposinf(*this); }
Tensor Tensor::isneginf() const { return ember::isneginf(*this); }
Tensor Tensor::logical_and(const Tensor& o) const { return ember::logical_and(*this, o); }
Tensor Tensor::logical_or(const Tensor& o) const { return ember::logical_or(*this, o); }
Tensor Tensor::logical_xor(const Tensor& o) const { return ember::logical_xor(*this, o); }
Tensor Tensor::logical_not() const { return ember::logical_not(*this); }
bool Tensor::is_nonzero() const { return ember::is_nonzero(*this); }

}  // namespace ember
