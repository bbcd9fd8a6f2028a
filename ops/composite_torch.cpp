// libtorch's remaining overloads of the common Tensor families, as compositions of ember's ops
// (ops/composite.h): dtype forms of the reductions and softmax, std / std_mean, rounding modes
// of div, tensor bounds of clamp, Scalar-first math, scatter_add / masked_scatter, cumprod,
// bincount / histc / unique_consecutive, einsum / tensordot / cdist, and in-place forms.
#include <algorithm>
#include <cmath>
#include <map>

#include "ember/autograd/grad_mode.h"
#include "ember/ops/composite.h"

namespace ember {
using detail::old_value;
namespace {
Tensor as_dtype(const Tensor& x, std::optional<DType> dtype) { return dtype ? x.to(*dtype) : x; }
Tensor like(const Scalar& s, const Tensor& t) {
  const DType d = s.is_floating_point() && !is_floating_point(t.dtype()) ? kFloat : t.dtype();
  return scalar_tensor(s, TensorOptions(d).device(t.device()));
}
// Elements reduced by dims (all when empty).
int64_t reduced_count(const Tensor& x, IntArrayRef dims) {
  if (dims.empty()) return x.numel();
  int64_t n = 1;
  for (int64_t d : dims) n *= x.size(wrap_dim(d, x.dim(), "std"));
  return n;
}
}  // namespace

Tensor detail::old_value(const Tensor& t) { return autograd::is_grad_enabled() && t.requires_grad() ? t.clone() : t; }

// ---- reductions
Tensor mean(const Tensor& x, std::optional<DType> dtype) { return as_dtype(x, dtype).mean(); }
Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  return as_dtype(x, dtype).mean(dims, keepdim);
}
Tensor std(const Tensor& x, IntArrayRef dims, std::optional<int64_t> correction, bool keepdim) {
  const int64_t c = correction.value_or(1);
  if (c == 1 || c == 0) return var(x, dims, c == 1, keepdim).sqrt();
  const double n = static_cast<double>(reduced_count(x, dims));
  return (var(x, dims, false, keepdim) * (n / std::max(n - static_cast<double>(c), 0.0))).sqrt();
}
Tensor std(const Tensor& x, bool unbiased) { return var(x, {}, unbiased, false).sqrt(); }
Tensor std(const Tensor& x, IntArrayRef dims, bool unbiased, bool keepdim) {
  return var(x, dims, unbiased, keepdim).sqrt();
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, bool unbiased) { return {std(x, unbiased), x.mean()}; }
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, IntArrayRef dims, bool unbiased, bool keepdim) {
  return {std(x, dims, unbiased, keepdim), x.mean(dims, keepdim)};
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, IntArrayRef dims, std::optional<int64_t> correction,
                                    bool keepdim) {
  return {std(x, dims, correction, keepdim), x.mean(dims, keepdim)};
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, bool unbiased) { return {var(x, {}, unbiased), x.mean()}; }
Tensor norm(const Tensor& x, const std::optional<Scalar>& p, DType dtype) { return x.to(dtype).norm(p.value_or(2)); }
Tensor norm(const Tensor& x, const std::optional<Scalar>& p, IntArrayRef dims, bool keepdim, DType dtype) {
  return x.to(dtype).norm(p.value_or(2), dims, keepdim);
}
Tensor argsort(const Tensor& x, bool stable, int64_t dim, bool descending) {
  return std::get<1>(sort(x, std::optional<bool>(stable), dim, descending));
}
// cumprod: the running product along dim, one multiply per position (exact with zeros).
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  Tensor v = as_dtype(x, dtype);
  if (v.dim() == 0) return v.clone();
  const int64_t d = wrap_dim(dim, v.dim(), "cumprod");
  std::vector<Tensor> parts;
  Tensor run;
  for (int64_t i = 0; i < v.size(d); ++i) {
    Tensor slice = v.narrow(d, i, 1);
    run = run.defined() ? run * slice : slice;
    parts.push_back(run);
  }
  return parts.empty() ? v.clone() : cat(parts, d);
}
Tensor bincount(const Tensor& x, const std::optional<Tensor>& weights, int64_t minlength) {
  EMBER_CHECK_SHAPE(x.dim() == 1 && is_integral(x.dtype()), "bincount: expects a 1-D integer tensor, got shape ",
                    x.sizes(), " of ", x.dtype());
  EMBER_CHECK_VALUE(minlength >= 0, "bincount: minlength must be non-negative, got ", minlength);
  int64_t bins = minlength;
  if (x.numel() > 0) {
    const auto [lo, hi] = aminmax(x);
    EMBER_CHECK_VALUE(lo.item<int64_t>() >= 0, "bincount: values must be non-negative, got ", lo.item<int64_t>());
    bins = std::max(bins, hi.item<int64_t>() + 1);
  }
  const bool w = weights.has_value() && weights->defined();
  if (w)
    EMBER_CHECK_SHAPE(weights->sizes() == x.sizes(), "bincount: weights must have the input's shape ", x.sizes(),
                      ", got ", weights->sizes());
  Tensor src = w ? weights->to(is_floating_point(weights->dtype()) ? weights->dtype() : kFloat64)
                 : ones(x.sizes(), TensorOptions(kInt64).device(x.device()));
  return zeros({bins}, src.options()).index_add(0, x.to(kInt64), src);
}
Tensor histc(const Tensor& x, int64_t bins, const Scalar& min, const Scalar& max) {
  EMBER_CHECK_VALUE(bins > 0, "histc: bins must be positive, got ", bins);
  EMBER_CHECK_DTYPE(x.is_floating_point(), "histc: expects a floating-point tensor, got ", x.dtype());
  double lo = min.to_double(), hi = max.to_double();
  if (lo == hi && x.numel() > 0) {
    const auto [a, b] = aminmax(x);
    lo = a.item<double>();
    hi = b.item<double>();
  }
  if (lo == hi) lo -= 1, hi += 1;
  EMBER_CHECK_VALUE(lo < hi, "histc: max must be larger than min, got min ", lo, " and max ", hi);
  Tensor v = x.detach().reshape({-1});
  Tensor in = v.ge(lo).logical_and(v.le(hi));
  Tensor idx = ((v - lo) * (static_cast<double>(bins) / (hi - lo))).floor().clamp(0.0, static_cast<double>(bins - 1));
  return zeros({bins}, x.options()).index_add(0, idx.to(kInt64), in.to(x.dtype()));
}
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& x, bool return_inverse, bool return_counts,
                                                      std::optional<int64_t> dim) {
  EMBER_CHECK_VALUE(!dim.has_value(), "unique_consecutive: only the flattened form (dim = nullopt) is supported");
  Tensor flat = x.reshape({-1});
  const int64_t n = flat.numel();
  std::vector<int64_t> starts, inverse(static_cast<size_t>(n));
  if (n > 0) {
    Tensor differs = flat.narrow(0, 1, n - 1).ne(flat.narrow(0, 0, n - 1));
    std::vector<bool> d = differs.to(kCPU).to_vector<bool>();
    starts.push_back(0);
    for (int64_t i = 1; i < n; ++i) {
      if (d[static_cast<size_t>(i - 1)]) starts.push_back(i);
      inverse[static_cast<size_t>(i)] = static_cast<int64_t>(starts.size()) - 1;
    }
  }
  std::vector<int64_t> counts;
  for (size_t k = 0; k < starts.size(); ++k) counts.push_back((k + 1 < starts.size() ? starts[k + 1] : n) - starts[k]);
  auto dev = TensorOptions(kInt64).device(x.device());
  Tensor values = flat.index_select(0, tensor(starts).to(x.device()));
  return {values, return_inverse ? tensor(inverse).to(x.device()).reshape(x.sizes()) : empty({0}, dev),
          return_counts ? tensor(counts).to(x.device()) : empty({0}, dev)};
}

// ---- math
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode) {
  if (!rounding_mode) return div(a, b);
  if (*rounding_mode == "floor") return floor_divide(a, b);
  EMBER_CHECK_VALUE(*rounding_mode == "trunc",
                    "div (rounding_mode): rounding_mode must be \"trunc\", \"floor\" or none, got \"",
                    std::string(*rounding_mode), "\"");
  const DType out = result_type(a, b);
  if (is_floating_point(out)) return div(a, b).trunc();
  return div(a.to(kFloat64), b.to(kFloat64)).trunc().to(out);
}
Tensor div(const Tensor& a, const Scalar& b, std::optional<std::string_view> rounding_mode) {
  return div(a, like(b, a), rounding_mode);
}
Tensor remainder(const Scalar& a, const Tensor& b) { return remainder(like(a, b), b); }
Tensor pow(const Scalar& a, const Tensor& exponent) { return pow(like(a, exponent), exponent); }
Tensor xlogy(const Scalar& x, const Tensor& y) { return xlogy(like(x, y), y); }
Tensor xlogy(const Tensor& x, const Scalar& y) { return xlogy(x, like(y, x)); }
Tensor sgn(const Tensor& x) { return x.sign(); }
Tensor round(const Tensor& x, int64_t decimals) {
  if (decimals == 0) return x.round();
  const double f = std::pow(10.0, static_cast<double>(decimals));
  return (x * f).round() / f;
}
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  const bool lo = min && min->defined(), hi = max && max->defined();
  EMBER_CHECK_VALUE(lo || hi, "clamp (tensor bounds): at least one of min and max must be given");
  Tensor y = lo ? maximum(x, *min) : x;
  return hi ? minimum(y, *max) : y;
}
Tensor clamp_min(const Tensor& x, const Tensor& min) { return clamp(x, min, std::nullopt); }
Tensor clamp_max(const Tensor& x, const Tensor& max) { return clamp(x, std::nullopt, max); }
Tensor addbmm(const Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta, const Scalar& alpha) {
  Tensor prod = bmm(b1, b2).sum({0});
  Tensor scaled = alpha.to_double() == 1 ? prod : prod * alpha;
  return beta.to_double() == 0 ? scaled : self * beta + scaled;
}
Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) { return softmax(as_dtype(x, dtype), dim); }
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  return log_softmax(as_dtype(x, dtype), dim);
}
Tensor logit(const Tensor& x, std::optional<double> eps) {
  Tensor z = eps ? x.clamp(*eps, 1.0 - *eps) : x;
  return (z / (1.0 - z)).log();
}
// ---- index ops
// The flat positions in x (contiguous) of index's entries along dim.
Tensor scatter_positions(const Tensor& x, int64_t dim, const Tensor& index, const char* op) {
  const int64_t d = wrap_dim(dim, x.dim(), op);
  EMBER_CHECK_SHAPE(index.dim() == x.dim(), op, ": index must have the input's ", x.dim(), " dims, got shape ",
                    index.sizes());
  if (index.numel() > 0) {  // an index past the dim would land in another row: refuse it
    const auto [lo, hi] = aminmax(index);
    EMBER_CHECK_INDEX(lo.item<int64_t>() >= 0 && hi.item<int64_t>() < x.size(d), op, ": index values must be in [0, ",
                      x.size(d), ") for dim ", dim, " of shape ", x.sizes(), ", got values in [", lo.item<int64_t>(),
                      ", ", hi.item<int64_t>(), "]");
  }
  Shape strides(static_cast<size_t>(x.dim()), 1);
  for (int64_t i = x.dim() - 2; i >= 0; --i)
    strides[static_cast<size_t>(i)] = strides[static_cast<size_t>(i + 1)] * x.size(i + 1);
  Tensor pos = index.to(kInt64) * strides[static_cast<size_t>(d)];
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i == d) continue;
    EMBER_CHECK_SHAPE(index.size(i) <= x.size(i), op, ": index of shape ", index.sizes(), " is larger than the input ",
                      x.sizes(), " in dim ", i);
    Shape view(static_cast<size_t>(x.dim()), 1);
    view[static_cast<size_t>(i)] = index.size(i);
    pos = pos +
          arange(index.size(i), TensorOptions(kInt64).device(x.device())).view(view) * strides[static_cast<size_t>(i)];
  }
  return pos.reshape({-1});
}
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  const char* op = "scatter_add";
  Tensor pos = scatter_positions(x, dim, index, op);
  for (int64_t i = 0; i < index.dim(); ++i)
    EMBER_CHECK_SHAPE(index.size(i) <= src.size(i), op, ": index of shape ", index.sizes(),
                      " is larger than src of shape ", src.sizes(), " in dim ", i);
  Tensor s = src;
  for (int64_t i = 0; i < index.dim(); ++i) s = s.narrow(i, 0, index.size(i));
  return x.contiguous().reshape({-1}).index_add(0, pos, s.reshape({-1}).to(x.dtype())).reshape(x.sizes());
}
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) {
  EMBER_CHECK_VALUE(reduce == "add", "scatter: reduce \"", std::string(reduce),
                    "\" is not supported (only \"add\"; \"multiply\" is not implemented)");
  return scatter_add(x, dim, index, src);
}
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) {
  return scatter(x, dim, index, full(index.sizes(), value, x.options()), reduce);
}
Tensor scatter_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self) {
  EMBER_CHECK_VALUE(reduce == "sum" || reduce == "mean", "scatter_reduce: reduce \"", std::string(reduce),
                    "\" is not supported (\"sum\" and \"mean\" are; prod, amax and amin are not implemented)");
  Tensor base = include_self ? x : x.scatter(dim, index, 0.0);
  Tensor sums = scatter_add(base, dim, index, src);
  if (reduce == "sum") return sums;
  Tensor counts =
      scatter_add(full(x.sizes(), include_self ? 1.0 : 0.0, x.options()), dim, index, ones(index.sizes(), x.options()));
  Tensor m = sums / counts.clamp_min(1.0);
  return is_floating_point(x.dtype()) ? m : m.floor().to(x.dtype());
}
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  EMBER_CHECK_DTYPE(mask.dtype() == kBool, "masked_scatter: mask must be bool, got ", mask.dtype());
  Tensor m = mask.expand(x.sizes()).reshape({-1});
  Tensor pick = (m.to(kInt64).cumsum(0) - 1).clamp_min(0);
  const int64_t needed = m.to(kInt64).sum().item<int64_t>();
  EMBER_CHECK_SHAPE(needed <= source.numel(), "masked_scatter: the mask selects ", needed,
                    " elements, but source has only ", source.numel());
  Tensor taken = source.reshape({-1}).index_select(0, pick).to(x.dtype());
  return where(m, taken, x.reshape({-1})).reshape(x.sizes());
}

}  // namespace ember
