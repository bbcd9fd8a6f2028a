// torch::indexing over ember's ops: basic indices are views (select, slice, unsqueeze), tensor
// indices are one index_select over the indexed dims flattened (ops/indexing.h).
#include <numeric>

#include "ember/ops/indexing.h"
#include "ember/ops/op_util.h"

namespace ember {
namespace indexing {

Slice::Slice(std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step)
    : start_(start.value_or(0)), stop_(stop.value_or(INDEX_MAX)), step_(step.value_or(1)) {
  EMBER_CHECK_VALUE(step_ > 0, "Slice: step must be positive, got ", step_);
}
TensorIndex::TensorIndex(const char* s) : kind_(Kind::Ellipsis) {
  EMBER_CHECK_VALUE(std::string(s) == "...", "TensorIndex: the only string index is \"...\", got \"", s, "\"");
}
std::ostream& operator<<(std::ostream& os, const Slice& s) {
  os << s.start() << ":";
  if (s.stop() != INDEX_MAX) os << s.stop();
  return os << ":" << s.step();
}
std::ostream& operator<<(std::ostream& os, const TensorIndex& i) {
  switch (i.kind()) {
    case TensorIndex::Kind::None:
      return os << "None";
    case TensorIndex::Kind::Ellipsis:
      return os << "...";
    case TensorIndex::Kind::Integer:
      return os << i.integer();
    case TensorIndex::Kind::Boolean:
      return os << (i.boolean() ? "true" : "false");
    case TensorIndex::Kind::Slice:
      return os << i.slice();
    case TensorIndex::Kind::Tensor:
      return os << "Tensor(" << i.tensor().dtype() << " " << i.tensor().sizes() << ")";
  }
  return os;
}

}  // namespace indexing

namespace {
using indexing::TensorIndex;

std::string describe(const std::vector<TensorIndex>& idx) {
  std::ostringstream os;
  os << "{";
  for (size_t i = 0; i < idx.size(); ++i) os << (i ? ", " : "") << idx[i];
  return os.str() + "}";
}

// The basic part of x[idx] as a view, and the tensor indices, each with the view's dim it indexes.
struct Basic {
  Tensor view;
  std::vector<std::pair<int64_t, Tensor>> tensors;
};

Basic apply_basic(const Tensor& x, const std::vector<TensorIndex>& idx) {
  int64_t consumed = 0, ellipses = 0;
  for (const TensorIndex& i : idx) {
    if (i.is_integer() || i.is_slice()) ++consumed;
    if (i.is_tensor()) consumed += i.tensor().dtype() == DType::Bool ? std::max<int64_t>(i.tensor().dim(), 1) : 1;
    ellipses += i.is_ellipsis();
  }
  EMBER_CHECK_INDEX(ellipses <= 1, "index: at most one Ellipsis in ", describe(idx));
  EMBER_CHECK_INDEX(consumed <= x.dim(), "index: too many indices for a tensor of dimension ", x.dim(), " (shape ",
                    x.sizes(), "): ", describe(idx));
  Basic b{x, {}};
  int64_t d = 0;
  for (const TensorIndex& i : idx) {
    switch (i.kind()) {
      case TensorIndex::Kind::Integer: {
        const int64_t n = b.view.size(d);
        EMBER_CHECK_INDEX(i.integer() >= -n && i.integer() < n, "index: index ", i.integer(),
                          " is out of bounds for "
                          "dimension of size ",
                          n, " (shape ", x.sizes(), ", indices ", describe(idx), ")");
        b.view = b.view.select(d, i.integer());
        break;
      }
      case TensorIndex::Kind::Slice:
        b.view = b.view.slice(d, i.slice().start(), i.slice().stop(), i.slice().step());
        ++d;
        break;
      case TensorIndex::Kind::None:
        b.view = b.view.unsqueeze(d++);
        break;
      case TensorIndex::Kind::Boolean:
        b.view = b.view.unsqueeze(d);
        if (!i.boolean()) b.view = b.view.slice(d, 0, 0);
        ++d;
        break;
      case TensorIndex::Kind::Ellipsis:
        d += x.dim() - consumed;
        break;
      case TensorIndex::Kind::Tensor: {
        const Tensor& t = i.tensor();
        ops::common_device("index", {&x, &t});
        if (t.dtype() == DType::Bool) {
          // A mask over the next t.dim() dims: the positions of its true elements, one index
          // tensor per dim (a 0-d mask is a dim of size 1 or 0, like a bool).
          if (t.dim() == 0) {
            b.view = b.view.unsqueeze(d);
            if (!t.item().to<bool>()) b.view = b.view.slice(d, 0, 0);
            ++d;
            break;
          }
          for (int64_t k = 0; k < t.dim(); ++k)
            EMBER_CHECK_INDEX(t.size(k) == b.view.size(d + k), "index: the mask of shape ", t.sizes(),
                              " does not match the indexed shape ", x.sizes(), " at dim ", d + k);
          std::vector<bool> m = t.to_vector<bool>();
          std::vector<std::vector<int64_t>> pos(static_cast<size_t>(t.dim()));
          for (size_t e = 0; e < m.size(); ++e) {
            if (!m[e]) continue;
            int64_t rem = static_cast<int64_t>(e);
            for (int64_t k = t.dim() - 1; k >= 0; --k) {
              pos[static_cast<size_t>(k)].push_back(rem % t.size(k));
              rem /= t.size(k);
            }
          }
          for (int64_t k = 0; k < t.dim(); ++k)
            b.tensors.push_back({d + k, tensor(pos[static_cast<size_t>(k)]).to(x.device())});
          d += t.dim();
        } else {
          EMBER_CHECK_DTYPE(t.dtype() == DType::Int64 || t.dtype() == DType::Int32,
                            "index: tensors used as indices "
                            "must be int64, int32 or bool, got ",
                            t.dtype());
          b.tensors.push_back({d++, t.to(kInt64)});
        }
        break;
      }
    }
  }
  return b;
}

// The advanced part: the view with its tensor-indexed dims moved to the front and flattened,
// and the flat positions (broadcast shape of the indices) into that first dim.
struct Advanced {
  Tensor front;     // [prod(indexed sizes), rest...]
  Tensor flat;      // int64, shape `shape`
  DimVector shape;  // the broadcast shape of the indices
  std::vector<int64_t> perm;
  int64_t place;  // where the indexed dims go in the result
};

Advanced prepare(const Basic& b) {
  Advanced a;
  const Tensor& v = b.view;
  std::vector<Tensor> idx;
  for (const auto& p : b.tensors) idx.push_back(p.second);
  std::vector<Tensor> bc = broadcast_tensors(idx);
  a.shape = bc.empty() ? DimVector() : DimVector(bc[0].sizes());
  std::vector<bool> indexed(static_cast<size_t>(v.dim()), false);
  bool adjacent = true;
  for (size_t k = 0; k < b.tensors.size(); ++k) {
    a.perm.push_back(b.tensors[k].first);
    indexed[static_cast<size_t>(b.tensors[k].first)] = true;
    if (k && b.tensors[k].first != b.tensors[k - 1].first + 1) adjacent = false;
  }
  for (int64_t d = 0; d < v.dim(); ++d)
    if (!indexed[static_cast<size_t>(d)]) a.perm.push_back(d);
  a.place = adjacent ? b.tensors[0].first : 0;
  Tensor p = v.permute(a.perm);
  DimVector front_shape{1};
  Tensor flat = zeros(a.shape, TensorOptions(kInt64).device(v.device()));
  for (size_t k = 0; k < bc.size(); ++k) {
    const int64_t n = v.size(b.tensors[k].first);
    Tensor i = bc[k];
    if (i.numel()) {
      const int64_t lo = i.min().item<int64_t>(), hi = i.max().item<int64_t>();
      EMBER_CHECK_INDEX(lo >= -n && hi < n, "index: index ", lo < -n ? lo : hi, " is out of bounds for dimension ",
                        b.tensors[k].first, " with size ", n);
    }
    i = where(i < 0, i + n, i);
    flat = flat * n + i;
    front_shape[0] = checked_mul(front_shape[0], n, "index");
  }
  for (int64_t d = static_cast<int64_t>(bc.size()); d < p.dim(); ++d) front_shape.push_back(p.size(d));
  a.front = p.reshape(front_shape);
  a.flat = flat;
  return a;
}

// [shape..., rest...] with the index dims moved to a.place.
Tensor place_result(const Advanced& a, const Tensor& r) {
  if (a.place == 0) return r;
  std::vector<int64_t> src(a.shape.size()), dst(a.shape.size());
  std::iota(src.begin(), src.end(), 0);
  std::iota(dst.begin(), dst.end(), a.place);
  return movedim(r, src, dst);
}
}  // namespace

Tensor index(const Tensor& x, const std::vector<TensorIndex>& idx) {
  Basic b = apply_basic(x, idx);
  if (b.tensors.empty()) return b.view.is_same(x) ? x.view(x.sizes()) : b.view;
  Advanced a = prepare(b);
  DimVector out_shape(a.shape);
  for (int64_t d = 1; d < a.front.dim(); ++d) out_shape.push_back(a.front.size(d));
  Tensor r = a.front.index_select(0, a.flat.reshape({-1})).reshape(out_shape);
  return place_result(a, r);
}

Tensor& index_put_(Tensor& x, const std::vector<TensorIndex>& idx, const Tensor& value) {
  Basic b = apply_basic(x, idx);
  if (b.tensors.empty()) {
    b.view.copy_(value);
    return x;
  }
  Advanced a = prepare(b);
  // The value in the result's layout, moved to the front layout: [flat numel, rest...].
  DimVector out_shape(a.shape);
  for (int64_t d = 1; d < a.front.dim(); ++d) out_shape.push_back(a.front.size(d));
  Tensor v =
      value.to(x.dtype()).expand(place_result(a, empty(out_shape, TensorOptions(kBool).device(x.device()))).sizes());
  if (a.place) {
    std::vector<int64_t> src(a.shape.size()), dst(a.shape.size());
    std::iota(src.begin(), src.end(), a.place);
    std::iota(dst.begin(), dst.end(), 0);
    v = movedim(v, src, dst);
  }
  const int64_t rows = a.front.size(0);
  DimVector rows_shape{a.flat.numel()};
  for (int64_t d = 1; d < a.front.dim(); ++d) rows_shape.push_back(a.front.size(d));
  v = v.reshape(rows_shape);
  Tensor flat = a.flat.reshape({-1});
  // The rows written get their value (duplicates: the last one, as on libtorch's CPU), the
  // others keep theirs.
  Tensor front = a.front.contiguous();
  Tensor updated;
  if (x.is_floating_point() && (x.requires_grad() || value.requires_grad())) {
    // Differentiable: rows written are replaced by a one-hot selection of the last write.
    std::vector<int64_t> f = flat.to_vector<int64_t>(), l(static_cast<size_t>(rows), -1);
    for (size_t k = 0; k < f.size(); ++k) l[static_cast<size_t>(f[k])] = static_cast<int64_t>(k);
    Tensor last = tensor(l).to(x.device());
    Tensor written = last >= 0;
    Tensor picked = v.index_select(0, where(written, last, zeros_like(last)));
    DimVector mask_shape(static_cast<size_t>(front.dim()), 1);
    mask_shape[0] = rows;
    updated = where(written.view(mask_shape), picked, front);
  } else {
    updated = front.clone();
    std::vector<int64_t> f = flat.to_vector<int64_t>();
    for (size_t k = 0; k < f.size(); ++k) updated.select(0, f[k]).copy_(v.select(0, static_cast<int64_t>(k)));
  }
  // Back to the view's layout, then into x.
  DimVector perm_shape;
  for (int64_t d : a.perm) perm_shape.push_back(b.view.size(d));
  Tensor back = updated.reshape(perm_shape);
  std::vector<int64_t> inverse(a.perm.size());
  for (size_t k = 0; k < a.perm.size(); ++k) inverse[static_cast<size_t>(a.perm[k])] = static_cast<int64_t>(k);
  b.view.copy_(back.permute(inverse));
  return x;
}

Tensor Tensor::index(std::initializer_list<TensorIndex> i) const {
  return ember::index(*this, std::vector<TensorIndex>(i));
}
Tensor Tensor::index(const std::vector<TensorIndex>& i) const { return ember::index(*this, i); }
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> i, const Tensor& v) {
  return ember::index_put_(*this, std::vector<TensorIndex>(i), v);
}
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> i, const Scalar& v) {
  return ember::index_put_(*this, std::vector<TensorIndex>(i),
                           scalar_tensor(v, TensorOptions(dtype()).device(device())));
}
Tensor& Tensor::index_put_(const std::vector<TensorIndex>& i, const Tensor& v) {
  return ember::index_put_(*this, i, v);
}
Tensor& Tensor::index_put_(const std::vector<TensorIndex>& i, const Scalar& v) {
  return ember::index_put_(*this, i, scalar_tensor(v, TensorOptions(dtype()).device(device())));
}

}  // namespace ember
