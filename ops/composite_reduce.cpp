// libtorch's order statistics, reductions and math built from ember's ops (ops/composite.h).
// Sorts find their indices on the host (a synchronisation on the NPU) and gather the values, so
// the values differentiate; the rest are compositions.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ember/autograd/grad_mode.h"
#include "ember/ops/composite.h"
#include "ember/ops/op_util.h"

namespace ember {
namespace {
// The rows of x along dim (moved last), as float64 or int64 values on the host.
struct Rows {
  Tensor moved;  // x with dim last, contiguous
  int64_t n = 1, rows = 0;
};
Rows rows_of(const Tensor& x, int64_t dim, const char* op) {
  Rows r;
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), op);
  r.moved = (x.dim() ? x.movedim(d, -1) : x.reshape({1})).contiguous();
  r.n = r.moved.size(-1);
  r.rows = r.n ? r.moved.numel() / r.n : 0;
  return r;
}
// Indices that order each row (NaN largest, as PyTorch), stable; back in x's layout along dim.
template <class T>
std::vector<int64_t> order(const std::vector<T>& v, int64_t rows, int64_t n, bool descending) {
  std::vector<int64_t> idx(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    auto b = idx.begin() + r * n;
    std::iota(b, b + n, 0);
    const T* row = v.data() + r * n;
    auto less = [&](int64_t a, int64_t c) {
      const T x = row[a], y = row[c];
      const bool xn = x != x, yn = y != y;
      if (xn || yn) return descending ? (xn && !yn) : (!xn && yn);
      return descending ? x > y : x < y;
    };
    std::stable_sort(b, b + n, less);
  }
  return idx;
}
Tensor sort_indices(const Tensor& x, int64_t dim, bool descending, const char* op) {
  Rows r = rows_of(x, dim, op);
  std::vector<int64_t> idx = x.is_floating_point()
                                 ? order(r.moved.to(kFloat64).to_vector<double>(), r.rows, r.n, descending)
                                 : order(r.moved.to(kInt64).to_vector<int64_t>(), r.rows, r.n, descending);
  Tensor t = tensor(idx, r.moved.sizes()).to(x.device());
  return x.dim() ? t.movedim(-1, wrap_dim(dim, x.dim(), op)) : t.reshape({});
}
// The running extreme's index along dim (the last one on ties, as PyTorch).
Tensor cumulative_extreme_indices(const Tensor& x, int64_t dim, bool is_max) {
  Rows r = rows_of(x, dim, is_max ? "cummax" : "cummin");
  std::vector<double> v = r.moved.to(kFloat64).to_vector<double>();
  std::vector<int64_t> idx(v.size());
  for (int64_t row = 0; row < r.rows; ++row) {
    int64_t best = 0;
    for (int64_t i = 0; i < r.n; ++i) {
      const double a = v[static_cast<size_t>(row * r.n + i)], b = v[static_cast<size_t>(row * r.n + best)];
      if (a != a || (b == b && (is_max ? a >= b : a <= b))) best = i;
      idx[static_cast<size_t>(row * r.n + i)] = best;
    }
  }
  Tensor t = tensor(idx, r.moved.sizes()).to(x.device());
  return x.dim() ? t.movedim(-1, wrap_dim(dim, x.dim(), "cummax")) : t.reshape({});
}
}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  Tensor idx = sort_indices(x, dim, descending, "sort");
  return {x.dim() ? gather(x, dim, idx) : x.clone(), idx};
}
std::tuple<Tensor, Tensor> sort(const Tensor& x, std::optional<bool>, int64_t dim, bool descending) {
  return sort(x, dim, descending);  // (always stable)
}
Tensor argsort(const Tensor& x, int64_t dim, bool descending) { return sort_indices(x, dim, descending, "argsort"); }
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "topk");
  const int64_t n = x.dim() ? x.size(d) : 1;
  EMBER_CHECK_T(IndexError, k >= 0 && k <= n, "topk: k (", k, ") is out of range for a dim of size ", n);
  auto [v, i] = sort(x, d, largest);
  if (!x.dim()) return {v, i};
  return {v.narrow(d, 0, k), i.narrow(d, 0, k)};
}
std::tuple<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "kthvalue");
  const int64_t n = x.dim() ? x.size(d) : 1;
  EMBER_CHECK_T(IndexError, k >= 1 && k <= n, "kthvalue: k (", k, ") is out of range for a dim of size ", n);
  auto [v, i] = sort(x, d, false);
  if (!x.dim()) return {v, i};
  if (keepdim) return {v.narrow(d, k - 1, 1), i.narrow(d, k - 1, 1)};
  return {v.select(d, k - 1), i.select(d, k - 1)};
}
Tensor median(const Tensor& x) {
  EMBER_CHECK_VALUE(x.numel() > 0, "median: the input is empty");
  return std::get<0>(kthvalue(x.reshape({-1}), (x.numel() - 1) / 2 + 1, 0));
}
std::tuple<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim) {
  const int64_t n = x.dim() ? x.size(wrap_dim(dim, x.dim(), "median")) : 1;
  EMBER_CHECK_VALUE(n > 0, "median: cannot reduce a dim of size 0");
  return kthvalue(x, (n - 1) / 2 + 1, dim, keepdim);
}
std::tuple<Tensor, Tensor> cummax(const Tensor& x, int64_t dim) {
  Tensor i = cumulative_extreme_indices(x, dim, true);
  return {x.dim() ? gather(x, dim, i) : x.clone(), i};
}
std::tuple<Tensor, Tensor> cummin(const Tensor& x, int64_t dim) {
  Tensor i = cumulative_extreme_indices(x, dim, false);
  return {x.dim() ? gather(x, dim, i) : x.clone(), i};
}
Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim) {
  Tensor in = x.is_floating_point() ? x : x.to(default_float_dtype());
  Tensor m = amax(in, dims, true).detach();
  m = where(isinf(m), zeros({}, m.options()), m);  // all -inf (or an inf): no shift
  Tensor out = (in - m).exp().sum(dims, true).log() + m;
  if (keepdim) return out;
  std::vector<int64_t> ds(dims.begin(), dims.end());
  if (ds.empty())
    for (int64_t k = 0; k < in.dim(); ++k) ds.push_back(k);
  for (int64_t& d : ds) d = wrap_dim(d, in.dim(), "logsumexp");
  std::sort(ds.rbegin(), ds.rend());
  for (int64_t d : ds) out = out.squeeze(d);
  return out;
}
Tensor prod(const Tensor& x, int64_t dim, bool keepdim, std::optional<DType> dtype) {
  Tensor in = dtype ? x.to(*dtype) : (x.is_floating_point() ? x : x.to(kInt64));
  const int64_t d = wrap_dim(dim, std::max<int64_t>(in.dim(), 1), "prod");
  Tensor t = in.dim() ? in.movedim(d, 0) : in.reshape({1});
  // Pairwise products of halves: log2(n) ops, exact with zeros and differentiable.
  while (t.size(0) > 1) {
    const int64_t n = t.size(0);
    if (n % 2) {
      DimVector one(t.sizes());
      one[0] = 1;
      t = cat({t, ones(one, t.options())}, 0);
    }
    const int64_t h = t.size(0) / 2;
    t = t.narrow(0, 0, h) * t.narrow(0, h, h);
  }
  if (t.size(0) == 0) {
    DimVector one(t.sizes());
    one[0] = 1;
    t = ones(one, t.options());
  }
  Tensor out = t.select(0, 0);
  return keepdim && in.dim() ? out.unsqueeze(d) : out;
}
Tensor prod(const Tensor& x, std::optional<DType> dtype) { return prod(x.reshape({-1}), 0, false, dtype); }
Tensor sum(const Tensor& x, std::optional<DType> dtype) { return x.sum(dtype); }
Tensor count_nonzero(const Tensor& x, IntArrayRef dims) { return x.ne(0.0).sum(dims, false, kInt64); }
Tensor nanmean(const Tensor& x, IntArrayRef dims, bool keepdim) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), "nanmean: expects a floating input, got ", x.dtype());
  return nansum(x, dims, keepdim) / (x == x).sum(dims, keepdim, x.dtype());
}
std::tuple<Tensor, Tensor> aminmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  if (!dim) return {x.amin({}, keepdim), x.amax({}, keepdim)};
  return {x.amin({*dim}, keepdim), x.amax({*dim}, keepdim)};
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, IntArrayRef dims, bool unbiased, bool keepdim) {
  return {x.var(dims, unbiased, keepdim), x.mean(dims, keepdim)};
}

// ---------------------------------------------------------------- math
Tensor lerp(const Tensor& a, const Tensor& b, const Scalar& w) { return a + (b - a) * w; }
Tensor lerp(const Tensor& a, const Tensor& b, const Tensor& w) { return a + (b - a) * w; }
Tensor addcmul(const Tensor& s, const Tensor& a, const Tensor& b, const Scalar& v) { return s + a * b * v; }
Tensor addcdiv(const Tensor& s, const Tensor& a, const Tensor& b, const Scalar& v) { return s + a / b * v; }
Tensor mv(const Tensor& m, const Tensor& v) {
  EMBER_CHECK_SHAPE(m.dim() == 2 && v.dim() == 1, "mv: expects a matrix and a vector, got shapes ", m.sizes(), " and ",
                    v.sizes());
  return matmul(m, v);
}
Tensor dot(const Tensor& a, const Tensor& b) {
  EMBER_CHECK_SHAPE(a.dim() == 1 && b.dim() == 1 && a.numel() == b.numel(),
                    "dot: expects two 1-D tensors of one "
                    "size, got shapes ",
                    a.sizes(), " and ", b.sizes());
  return (a * b).sum();
}
Tensor outer(const Tensor& a, const Tensor& b) { return a.reshape({-1, 1}) * b.reshape({1, -1}); }
namespace {
// beta * s + alpha * p, with s left out when beta is 0 (its NaNs too), as PyTorch.
Tensor scaled_sum(const Tensor& s, const Tensor& p, const Scalar& beta, const Scalar& alpha) {
  Tensor r = alpha.to<double>() == 1.0 ? p : p * alpha;
  if (beta.to<double>() == 0.0) return r + zeros_like(s);
  return (beta.to<double>() == 1.0 ? s : s * beta) + r;
}
}  // namespace
Tensor addmm(const Tensor& s, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  return scaled_sum(s, mm(a, b), beta, alpha);
}
Tensor addmv(const Tensor& s, const Tensor& m, const Tensor& v, const Scalar& beta, const Scalar& alpha) {
  return scaled_sum(s, mv(m, v), beta, alpha);
}
Tensor baddbmm(const Tensor& s, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  return scaled_sum(s, bmm(a, b), beta, alpha);
}
Tensor fmax(const Tensor& a, const Tensor& b) { return where(a != a, b, where(b != b, a, maximum(a, b))); }
Tensor fmin(const Tensor& a, const Tensor& b) { return where(a != a, b, where(b != b, a, minimum(a, b))); }
Tensor hypot(const Tensor& a, const Tensor& b) { return (a * a + b * b).sqrt(); }
// x log(y), 0 where x is 0 (unless y is NaN); the gradient for x is log(y) there too, as
// libtorch's (the log made finite where it multiplies a zero x).
Tensor xlogy(const Tensor& x, const Tensor& y) {
  Tensor l = y.log();
  return x * where(logical_and(x == 0.0, isinf(l)), zeros({}, l.options()), l);
}
namespace {
enum class Rounding { Floor, Trunc };
// a - round(a / b) * b (remainder: floor, the sign of b; fmod: trunc, the sign of a), or the
// rounded quotient; integer inputs in float64, cast back.
Tensor divmod(const char* op, const Tensor& a, const Tensor& b, Rounding mode, bool quotient) {
  const DType out = result_type(a, b);
  const bool integral = !is_floating_point(out);
  Tensor x = integral ? a.to(kFloat64) : a, y = integral ? b.to(kFloat64) : b;
  if (integral && b.numel()) {
    EMBER_CHECK_VALUE(!b.eq(0.0).any().item<bool>(), op, ": integer division by zero");
  }
  Tensor q = x / y;
  q = mode == Rounding::Floor ? q.floor() : q.trunc();
  Tensor r = quotient ? q : x - q * y;
  return r.to(out);
}
}  // namespace
Tensor floor_divide(const Tensor& a, const Tensor& b) { return divmod("floor_divide", a, b, Rounding::Floor, true); }
namespace {
// A Scalar operand as PyTorch wraps it: in the tensor's dtype, or the default float for a
// floating scalar with an integer tensor.
Tensor wrapped(const Tensor& a, const Scalar& b) {
  const DType t = a.is_floating_point() || !is_floating_point(b.dtype()) ? a.dtype() : default_float_dtype();
  return scalar_tensor(b, TensorOptions(t).device(a.device()));
}
}  // namespace
Tensor floor_divide(const Tensor& a, const Scalar& b) { return floor_divide(a, wrapped(a, b)); }
Tensor remainder(const Tensor& a, const Tensor& b) { return divmod("remainder", a, b, Rounding::Floor, false); }
Tensor remainder(const Tensor& a, const Scalar& b) { return remainder(a, wrapped(a, b)); }
Tensor fmod(const Tensor& a, const Tensor& b) { return divmod("fmod", a, b, Rounding::Trunc, false); }
Tensor fmod(const Tensor& a, const Scalar& b) { return fmod(a, wrapped(a, b)); }
Tensor nan_to_num(const Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  if (!x.is_floating_point()) return x.clone();
  double hi = std::numeric_limits<double>::max();
  if (x.dtype() == kFloat32) hi = std::numeric_limits<float>::max();
  if (x.dtype() == kFloat16) hi = 65504.0;
  if (x.dtype() == kBFloat16) hi = 3.3895313892515355e38;
  Tensor r = where(x != x, scalar_tensor(nan.value_or(0.0), x.options()), x);
  r = where(x == std::numeric_limits<double>::infinity(), scalar_tensor(posinf.value_or(hi), x.options()), r);
  return where(x == -std::numeric_limits<double>::infinity(), scalar_tensor(neginf.value_or(-hi), x.options()), r);
}
Tensor dist(const Tensor& a, const Tensor& b, const Scalar& p) { return norm(a - b, p); }
Tensor kron(const Tensor& a, const Tensor& b) {
  const int64_t r = std::max(a.dim(), b.dim());
  std::vector<int64_t> as(static_cast<size_t>(r - a.dim()), 1), bs(static_cast<size_t>(r - b.dim()), 1);
  as.insert(as.end(), a.sizes().begin(), a.sizes().end());
  bs.insert(bs.end(), b.sizes().begin(), b.sizes().end());
  std::vector<int64_t> av, bv, out;
  for (int64_t k = 0; k < r; ++k) {
    av.insert(av.end(), {as[static_cast<size_t>(k)], 1});
    bv.insert(bv.end(), {1, bs[static_cast<size_t>(k)]});
    out.push_back(as[static_cast<size_t>(k)] * bs[static_cast<size_t>(k)]);
  }
  return (a.reshape(av) * b.reshape(bv)).reshape(out);
}
Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim) {
  auto ab = broadcast_tensors({a, b});
  int64_t d = -1;
  if (dim) {
    d = wrap_dim(*dim, ab[0].dim(), "cross");
  } else {
    for (int64_t k = 0; k < ab[0].dim() && d < 0; ++k)
      if (ab[0].size(k) == 3) d = k;
  }
  EMBER_CHECK_SHAPE(d >= 0 && ab[0].size(d) == 3, "cross: needs a dim of size 3, got shapes ", a.sizes(), " and ",
                    b.sizes());
  auto c = [&](const Tensor& t, int64_t i) { return t.select(d, i); };
  const Tensor &x = ab[0], &y = ab[1];
  return stack({c(x, 1) * c(y, 2) - c(x, 2) * c(y, 1), c(x, 2) * c(y, 0) - c(x, 0) * c(y, 2),
                c(x, 0) * c(y, 1) - c(x, 1) * c(y, 0)},
               d);
}
Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  Tensor close = logical_or(a == b, (a - b).abs() <= (b.abs() * rtol + atol));
  if (equal_nan) close = logical_or(close, logical_and(a != a, b != b));
  return close;
}
bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return isclose(a, b, rtol, atol, equal_nan).all().item<bool>();
}
Tensor range(const Scalar& start, const Scalar& end, const Scalar& step, const TensorOptions& o) {
  const double s = start.to<double>(), e = end.to<double>(), st = step.to<double>();
  EMBER_CHECK_VALUE(st != 0 && ((st > 0 && e >= s) || (st < 0 && e <= s)), "range: step ", st, " does not go from ", s,
                    " to ", e);
  const int64_t n = static_cast<int64_t>(std::floor((e - s) / st)) + 1;
  return (arange(n, TensorOptions(kFloat64).device(o.device())) * st + s).to(o.dtype());
}
Tensor range(const Scalar& start, const Scalar& end, const TensorOptions& o) { return range(start, end, 1, o); }

// ---------------------------------------------------------------- Tensor methods
std::tuple<Tensor, Tensor> Tensor::sort(int64_t d, bool desc) const { return ember::sort(*this, d, desc); }
std::tuple<Tensor, Tensor> Tensor::sort(std::optional<bool> s, int64_t d, bool desc) const {
  return ember::sort(*this, s, d, desc);
}
Tensor Tensor::argsort(int64_t d, bool desc) const { return ember::argsort(*this, d, desc); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t d, bool l, bool s) const {
  return ember::topk(*this, k, d, l, s);
}
std::tuple<Tensor, Tensor> Tensor::kthvalue(int64_t k, int64_t d, bool kd) const {
  return ember::kthvalue(*this, k, d, kd);
}
Tensor Tensor::median() const { return ember::median(*this); }
std::tuple<Tensor, Tensor> Tensor::median(int64_t d, bool kd) const { return ember::median(*this, d, kd); }
std::tuple<Tensor, Tensor> Tensor::cummax(int64_t d) const { return ember::cummax(*this, d); }
std::tuple<Tensor, Tensor> Tensor::cummin(int64_t d) const { return ember::cummin(*this, d); }
Tensor Tensor::logsumexp(IntArrayRef d, bool kd) const { return ember::logsumexp(*this, d, kd); }
Tensor Tensor::prod(std::optional<DType> t) const { return ember::prod(*this, t); }
Tensor Tensor::prod(int64_t d, bool kd, std::optional<DType> t) const { return ember::prod(*this, d, kd, t); }
Tensor Tensor::count_nonzero(IntArrayRef d) const { return ember::count_nonzero(*this, d); }
Tensor Tensor::nanmean(IntArrayRef d, bool kd) const { return ember::nanmean(*this, d, kd); }
std::tuple<Tensor, Tensor> Tensor::aminmax(std::optional<int64_t> d, bool kd) const {
  return ember::aminmax(*this, d, kd);
}
Tensor Tensor::lerp(const Tensor& e, const Scalar& w) const { return ember::lerp(*this, e, w); }
Tensor Tensor::lerp(const Tensor& e, const Tensor& w) const { return ember::lerp(*this, e, w); }
Tensor Tensor::addcmul(const Tensor& a, const Tensor& b, const Scalar& v) const {
  return ember::addcmul(*this, a, b, v);
}
Tensor Tensor::addcdiv(const Tensor& a, const Tensor& b, const Scalar& v) const {
  return ember::addcdiv(*this, a, b, v);
}
Tensor Tensor::mv(const Tensor& v) const { return ember::mv(*this, v); }
Tensor Tensor::dot(const Tensor& o) const { return ember::dot(*this, o); }
Tensor Tensor::outer(const Tensor& o) const { return ember::outer(*this, o); }
Tensor Tensor::addmm(const Tensor& a, const Tensor& b, const Scalar& be, const Scalar& al) const {
  return ember::addmm(*this, a, b, be, al);
}
Tensor Tensor::addmv(const Tensor& m, const Tensor& v, const Scalar& be, const Scalar& al) const {
  return ember::addmv(*this, m, v, be, al);
}
Tensor Tensor::baddbmm(const Tensor& a, const Tensor& b, const Scalar& be, const Scalar& al) const {
  return ember::baddbmm(*this, a, b, be, al);
}
Tensor Tensor::fmax(const Tensor& o) const { return ember::fmax(*this, o); }
Tensor Tensor::fmin(const Tensor& o) const { return ember::fmin(*this, o); }
Tensor Tensor::hypot(const Tensor& o) const { return ember::hypot(*this, o); }
Tensor Tensor::xlogy(const Tensor& o) const { return ember::xlogy(*this, o); }
Tensor Tensor::floor_divide(const Tensor& o) const { return ember::floor_divide(*this, o); }
Tensor Tensor::floor_divide(const Scalar& o) const { return ember::floor_divide(*this, o); }
Tensor Tensor::remainder(const Tensor& o) const { return ember::remainder(*this, o); }
Tensor Tensor::remainder(const Scalar& o) const { return ember::remainder(*this, o); }
Tensor Tensor::fmod(const Tensor& o) const { return ember::fmod(*this, o); }
Tensor Tensor::fmod(const Scalar& o) const { return ember::fmod(*this, o); }
Tensor Tensor::nan_to_num(std::optional<double> n, std::optional<double> p, std::optional<double> m) const {
  return ember::nan_to_num(*this, n, p, m);
}
Tensor Tensor::isclose(const Tensor& o, double r, double a, bool e) const { return ember::isclose(*this, o, r, a, e); }
bool Tensor::allclose(const Tensor& o, double r, double a, bool e) const { return ember::allclose(*this, o, r, a, e); }

// In place: the result of the out-of-place op written into this tensor (old_value: composite.h).
using detail::old_value;
#define EMBER_DEFINE_UNARY_INPLACE(name, ...) \
  Tensor& Tensor::name##_() { return copy_(ember::name(old_value(*this))); }
EMBER_UNARY_OPS(EMBER_DEFINE_UNARY_INPLACE)
#undef EMBER_DEFINE_UNARY_INPLACE
Tensor& Tensor::neg_() { return copy_(ember::neg(old_value(*this))); }
Tensor& Tensor::pow_(const Scalar& e) { return copy_(ember::pow(old_value(*this), e)); }
Tensor& Tensor::pow_(const Tensor& e) { return copy_(ember::pow(old_value(*this), e)); }
Tensor& Tensor::clamp_min_(const Scalar& m) { return copy_(ember::clamp_min(old_value(*this), m)); }
Tensor& Tensor::clamp_max_(const Scalar& m) { return copy_(ember::clamp_max(old_value(*this), m)); }
Tensor& Tensor::tril_(int64_t d) { return copy_(ember::tril(old_value(*this), d)); }
Tensor& Tensor::triu_(int64_t d) { return copy_(ember::triu(old_value(*this), d)); }
Tensor& Tensor::addcmul_(const Tensor& a, const Tensor& b, const Scalar& v) {
  return copy_(ember::addcmul(old_value(*this), a, b, v));
}
Tensor& Tensor::addcdiv_(const Tensor& a, const Tensor& b, const Scalar& v) {
  return copy_(ember::addcdiv(old_value(*this), a, b, v));
}
Tensor& Tensor::lerp_(const Tensor& e, const Scalar& w) { return copy_(ember::lerp(old_value(*this), e, w)); }
Tensor& Tensor::fill_diagonal_(const Scalar& value, bool wrap) {
  EMBER_CHECK_SHAPE(dim() >= 2, "fill_diagonal_: expects at least 2 dims, got shape ", sizes());
  if (dim() > 2)
    for (int64_t k = 1; k < dim(); ++k)
      EMBER_CHECK_SHAPE(size(k) == size(0), "fill_diagonal_: all dims must be equal beyond 2-D, got ", sizes());
  // The flat (row-major) positions of the diagonal; tall matrices with wrap continue every
  // (cols + 1) elements, as PyTorch.
  int64_t step = 0, count = std::min(size(0), size(1));
  for (int64_t k = 0, m = 1; k < dim(); ++k, m *= size(dim() - k)) step += m;
  if (dim() == 2) step = size(1) + 1;
  if (dim() == 2 && wrap && size(0) > size(1) + 1) count = (numel() + step - 1) / step;
  Tensor pos = arange(count, TensorOptions(kInt64).device(device())) * step;
  Tensor flat_new = old_value(*this).contiguous().reshape({-1}).clone();
  flat_new.index_put_({pos}, scalar_tensor(value, options()));
  return copy_(flat_new.reshape(sizes()));
}

}  // namespace ember
