// einsum, tensordot and cdist as compositions of ember's ops (ops/composite.h), and the Tensor
// methods of ops/composite_torch.cpp's functions.
#include <algorithm>
#include <cmath>
#include <map>

#include "ember/ops/composite.h"

namespace ember {
using detail::old_value;

// Each operand's letters laid out over all the equation's letters (size 1 where absent), the
// product taken with broadcasting, the letters not in the output summed, the rest ordered.
Tensor einsum(std::string_view equation, const std::vector<Tensor>& tensors, std::optional<std::vector<int64_t>>) {
  const char* op = "einsum";
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  EMBER_CHECK_VALUE(eq.find("...") == std::string::npos, op, ": \"...\" (ellipsis) is not supported, in \"", eq, "\"");
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t start = 0;
  for (size_t i = 0; i <= lhs.size(); ++i)
    if (i == lhs.size() || lhs[i] == ',') terms.push_back(lhs.substr(start, i - start)), start = i + 1;
  EMBER_CHECK_VALUE(terms.size() == tensors.size(), op, ": the equation \"", eq, "\" has ", terms.size(),
                    " operands, got ", tensors.size(), " tensors");
  std::map<char, int64_t> size, seen;
  std::string letters;
  for (size_t t = 0; t < terms.size(); ++t) {
    EMBER_CHECK_SHAPE(static_cast<int64_t>(terms[t].size()) == tensors[t].dim(), op, ": operand ", t, " (\"", terms[t],
                      "\") needs ", terms[t].size(), " dims, got shape ", tensors[t].sizes());
    for (size_t i = 0; i < terms[t].size(); ++i) {
      const char c = terms[t][i];
      EMBER_CHECK_VALUE(std::isalpha(static_cast<unsigned char>(c)), op, ": bad subscript '", c, "' in \"", eq, "\"");
      const int64_t n = tensors[t].size(static_cast<int64_t>(i));
      if (!size.count(c)) letters += c, size[c] = n;
      EMBER_CHECK_SHAPE(size[c] == n || n == 1 || size[c] == 1, op, ": subscript '", c, "' has sizes ", size[c],
                        " and ", n);
      size[c] = std::max(size[c], n);
      ++seen[c];
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
    for (char c : out)
      EMBER_CHECK_VALUE(size.count(c), op, ": output subscript '", c, "' is not in any operand of \"", eq, "\"");
  } else {
    for (auto& [c, n] : seen)
      if (n == 1) out += c;
  }
  Tensor prod;
  for (size_t t = 0; t < terms.size(); ++t) {
    // Permute this operand's letters into the order of `letters`, inserting size-1 dims.
    Tensor x = tensors[t];
    std::string have = terms[t];
    // A letter repeated within one operand: take the diagonal.
    for (size_t i = 0; i < have.size(); ++i)
      for (size_t j = i + 1; j < have.size(); ++j)
        if (have[i] == have[j]) {
          x = x.diagonal(0, static_cast<int64_t>(i), static_cast<int64_t>(j)).movedim(-1, static_cast<int64_t>(i));
          have.erase(j, 1);
          j = i;
        }
    std::vector<int64_t> perm;
    for (char c : letters) {
      const size_t at = have.find(c);
      if (at != std::string::npos) perm.push_back(static_cast<int64_t>(at));
    }
    x = x.permute(perm);
    Shape view;
    size_t k = 0;
    for (char c : letters) view.push_back(have.find(c) != std::string::npos ? x.size(static_cast<int64_t>(k++)) : 1);
    x = x.reshape(view);
    prod = prod.defined() ? prod * x : x;
  }
  std::vector<int64_t> summed;
  for (size_t i = 0; i < letters.size(); ++i)
    if (out.find(letters[i]) == std::string::npos) summed.push_back(static_cast<int64_t>(i));
  Tensor r = summed.empty() ? prod : prod.sum(summed);
  std::string kept;
  for (char c : letters)
    if (out.find(c) != std::string::npos) kept += c;
  std::vector<int64_t> perm;
  for (char c : out) perm.push_back(static_cast<int64_t>(kept.find(c)));
  return perm.empty() ? r : r.permute(perm);
}

Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b) {
  const char* op = "tensordot";
  EMBER_CHECK_SHAPE(dims_a.size() == dims_b.size(), op, ": dims_a and dims_b must have the same length, got ",
                    dims_a.size(), " and ", dims_b.size());
  std::vector<int64_t> ca, cb, fa, fb;
  int64_t k = 1;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    ca.push_back(wrap_dim(dims_a[i], a.dim(), op));
    cb.push_back(wrap_dim(dims_b[i], b.dim(), op));
    EMBER_CHECK_SHAPE(a.size(ca.back()) == b.size(cb.back()), op,
                      ": contracted dims differ in size: ", a.size(ca.back()), " and ", b.size(cb.back()));
    k *= a.size(ca.back());
  }
  Shape out;
  for (int64_t i = 0; i < a.dim(); ++i)
    if (std::find(ca.begin(), ca.end(), i) == ca.end()) fa.push_back(i), out.push_back(a.size(i));
  for (int64_t i = 0; i < b.dim(); ++i)
    if (std::find(cb.begin(), cb.end(), i) == cb.end()) fb.push_back(i), out.push_back(b.size(i));
  std::vector<int64_t> pa = fa, pb = cb;
  pa.insert(pa.end(), ca.begin(), ca.end());
  pb.insert(pb.end(), fb.begin(), fb.end());
  Tensor m = a.permute(pa).reshape({-1, k}).matmul(b.permute(pb).reshape({k, -1}));
  return m.reshape(out);
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t>) {
  EMBER_CHECK_SHAPE(x1.dim() >= 2 && x2.dim() >= 2 && x1.size(-1) == x2.size(-1),
                    "cdist: expected [..., P, M] and "
                    "[..., R, M] with the same M, got shapes ",
                    x1.sizes(), " and ", x2.sizes());
  EMBER_CHECK_VALUE(p >= 0, "cdist: p must be non-negative, got ", p);
  return (x1.unsqueeze(-2) - x2.unsqueeze(-3)).norm(p, {-1});
}

// ---- the Tensor methods
Tensor Tensor::mean(std::optional<DType> d) const { return ember::mean(*this, d); }
Tensor Tensor::mean(IntArrayRef dims, bool keepdim, std::optional<DType> d) const {
  return ember::mean(*this, dims, keepdim, d);
}
Tensor Tensor::std(bool unbiased) const { return ember::std(*this, unbiased); }
Tensor Tensor::std(IntArrayRef dims, bool unbiased, bool keepdim) const {
  return ember::std(*this, dims, unbiased, keepdim);
}
Tensor Tensor::std(IntArrayRef dims, std::optional<int64_t> c, bool keepdim) const {
  return ember::std(*this, dims, c, keepdim);
}
Tensor Tensor::std(int dim) const {
  const int64_t d = dim;
  return ember::std(*this, IntArrayRef(d), true, false);
}
Tensor Tensor::norm(const std::optional<Scalar>& p, DType d) const { return ember::norm(*this, p, d); }
Tensor Tensor::norm(const std::optional<Scalar>& p, IntArrayRef dims, bool keepdim, DType d) const {
  return ember::norm(*this, p, dims, keepdim, d);
}
Tensor Tensor::argsort(bool stable, int64_t dim, bool descending) const {
  return ember::argsort(*this, stable, dim, descending);
}
Tensor Tensor::cumprod(int64_t dim, std::optional<DType> d) const { return ember::cumprod(*this, dim, d); }
Tensor Tensor::bincount(const std::optional<Tensor>& w, int64_t minlength) const {
  return ember::bincount(*this, w, minlength);
}
Tensor Tensor::histc(int64_t bins, const Scalar& min, const Scalar& max) const {
  return ember::histc(*this, bins, min, max);
}
Tensor Tensor::div(const Tensor& o, std::optional<std::string_view> m) const { return ember::div(*this, o, m); }
Tensor Tensor::div(const Scalar& o, std::optional<std::string_view> m) const { return ember::div(*this, o, m); }
Tensor Tensor::xlogy(const Scalar& o) const { return ember::xlogy(*this, o); }
Tensor Tensor::sgn() const { return ember::sgn(*this); }
Tensor Tensor::round(int64_t decimals) const { return ember::round(*this, decimals); }
Tensor Tensor::clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return ember::clamp(*this, min, max);
}
Tensor Tensor::clamp_min(const Tensor& m) const { return ember::clamp_min(*this, m); }
Tensor Tensor::clamp_max(const Tensor& m) const { return ember::clamp_max(*this, m); }
Tensor Tensor::addbmm(const Tensor& b1, const Tensor& b2, const Scalar& beta, const Scalar& alpha) const {
  return ember::addbmm(*this, b1, b2, beta, alpha);
}
Tensor Tensor::softmax(int64_t dim, std::optional<DType> d) const { return ember::softmax(*this, dim, d); }
Tensor Tensor::log_softmax(int64_t dim, std::optional<DType> d) const { return ember::log_softmax(*this, dim, d); }
Tensor Tensor::logit(std::optional<double> eps) const { return ember::logit(*this, eps); }
Tensor Tensor::cross(const Tensor& o, std::optional<int64_t> dim) const { return ember::cross(*this, o, dim); }
Tensor Tensor::kron(const Tensor& o) const { return ember::kron(*this, o); }
Tensor Tensor::dist(const Tensor& o, const Scalar& p) const { return ember::dist(*this, o, p); }
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter_add(*this, dim, index, src);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) const {
  return ember::scatter(*this, dim, index, src, reduce);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) const {
  return ember::scatter(*this, dim, index, value, reduce);
}
Tensor Tensor::scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                              bool include_self) const {
  return ember::scatter_reduce(*this, dim, index, src, reduce, include_self);
}
Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& source) const {
  return ember::masked_scatter(*this, mask, source);
}
// ---- in place
Tensor& Tensor::div_(const Tensor& o, std::optional<std::string_view> m) {
  return copy_(ember::div(old_value(*this), o, m));
}
Tensor& Tensor::div_(const Scalar& o, std::optional<std::string_view> m) {
  return copy_(ember::div(old_value(*this), o, m));
}
Tensor& Tensor::clamp_(const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return copy_(ember::clamp(old_value(*this), min, max));
}
Tensor& Tensor::clamp_min_(const Tensor& m) { return copy_(ember::clamp_min(old_value(*this), m)); }
Tensor& Tensor::clamp_max_(const Tensor& m) { return copy_(ember::clamp_max(old_value(*this), m)); }
Tensor& Tensor::fill_(const Tensor& value) {
  EMBER_CHECK_SHAPE(value.dim() == 0, "fill_ (a tensor value): value must be a 0-dim tensor, got shape ", value.sizes());
  return copy_(value.to(dtype()).expand(sizes()));
}
Tensor& Tensor::round_(int64_t decimals) { return copy_(ember::round(old_value(*this), decimals)); }
Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight) {
  return copy_(ember::lerp(old_value(*this), end, weight));
}
Tensor& Tensor::fmod_(const Tensor& o) { return copy_(ember::fmod(old_value(*this), o)); }
Tensor& Tensor::fmod_(const Scalar& o) { return copy_(ember::fmod(old_value(*this), o)); }
Tensor& Tensor::remainder_(const Tensor& o) { return copy_(ember::remainder(old_value(*this), o)); }
Tensor& Tensor::remainder_(const Scalar& o) { return copy_(ember::remainder(old_value(*this), o)); }
Tensor& Tensor::floor_divide_(const Tensor& o) { return copy_(ember::floor_divide(old_value(*this), o)); }
Tensor& Tensor::floor_divide_(const Scalar& o) { return copy_(ember::floor_divide(old_value(*this), o)); }
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  return copy_(ember::scatter_add(old_value(*this), dim, index, src));
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) {
  return copy_(ember::scatter(old_value(*this), dim, index, src, reduce));
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) {
  return copy_(ember::scatter(old_value(*this), dim, index, value, reduce));
}
Tensor& Tensor::copy_(const Tensor& src, bool) { return copy_(src); }

}  // namespace ember
