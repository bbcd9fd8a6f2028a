// libtorch's gathers, scatters and index ops built from ember's ops (ops/composite.h): positions
// into a contiguous flattening of the input, then index_select / index_put_, so they
// differentiate and run on every device.
#include <algorithm>
#include <functional>
#include <numeric>

#include "ember/autograd/grad_mode.h"

#include "ember/ops/composite.h"
#include "ember/ops/op_util.h"

namespace ember {
namespace {
using indexing::Slice;
using indexing::TensorIndex;

TensorOptions long_on(const Tensor& t) { return TensorOptions(kInt64).device(t.device()); }

// The positions, in x's contiguous row-major layout, of the elements an index tensor of x's rank
// picks along dim (PyTorch's gather/scatter addressing: every other dim by its own position).
Tensor flat_positions(const char* op, const Tensor& x, int64_t dim, const Tensor& index) {
  EMBER_CHECK_DTYPE(index.dtype() == DType::Int64, op, ": index must be int64, got ", index.dtype());
  EMBER_CHECK_SHAPE(index.dim() == x.dim() || (x.dim() == 0 && index.dim() <= 1), op, ": index (shape ", index.sizes(),
                    ") must have the rank of the input (shape ", x.sizes(), ")");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), op);
  if (x.dim() == 0) return index.reshape(index.sizes());
  for (int64_t k = 0; k < x.dim(); ++k)
    EMBER_CHECK_SHAPE(k == d || index.size(k) <= x.size(k), op, ": index (shape ", index.sizes(),
                      ") is larger than the input (shape ", x.sizes(), ") in dim ", k);
  if (index.numel()) {
    const int64_t lo = index.min().item<int64_t>(), hi = index.max().item<int64_t>();
    EMBER_CHECK_T(IndexError, lo >= 0 && hi < x.size(d), op, ": index ", lo < 0 ? lo : hi,
                  " is out of bounds for dimension ", d, " with size ", x.size(d));
  }
  const DimVector stride = contiguous_strides(x.sizes());
  Tensor pos = index * stride[static_cast<size_t>(d)];
  for (int64_t k = 0; k < x.dim(); ++k) {
    if (k == d || index.size(k) == 1) continue;
    DimVector view(static_cast<size_t>(x.dim()), 1);
    view[static_cast<size_t>(k)] = index.size(k);
    pos = pos + arange(index.size(k), long_on(x)).view(view) * stride[static_cast<size_t>(k)];
  }
  return pos;
}
Tensor flat(const Tensor& x) { return x.contiguous().reshape({-1}); }
}  // namespace

namespace detail {
// A strided selection of x's elements, given by geometry(strides, offset) -> (sizes, strides,
// offset) over x's strides: a view (as_strided) when autograd is not recording, else, since
// as_strided has no backward, the same elements gathered by position from a contiguous x.
Tensor strided_pick(
    const Tensor& x,
    const std::function<void(IntArrayRef, int64_t, std::vector<int64_t>&, std::vector<int64_t>&, int64_t&)>& geometry) {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  if (!(autograd::is_grad_enabled() && x.requires_grad())) {
    geometry(x.strides(), x.storage_offset(), sizes, strides, offset);
    return x.as_strided(sizes, strides, offset);
  }
  geometry(contiguous_strides(x.sizes()), 0, sizes, strides, offset);
  Tensor pos = full({}, offset, long_on(x));
  for (size_t k = 0; k < sizes.size(); ++k) {
    DimVector view(sizes.size(), 1);
    view[k] = sizes[k];
    pos = pos + arange(sizes[k], long_on(x)).view(view) * strides[k];
  }
  return flat(x).index_select(0, pos.reshape({-1})).reshape(sizes);
}
}  // namespace detail

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index, bool) {
  Tensor pos = flat_positions("gather", x, dim, index);
  return flat(x).index_select(0, pos.reshape({-1})).reshape(index.sizes());
}
Tensor take(const Tensor& x, const Tensor& index) {
  EMBER_CHECK_DTYPE(index.dtype() == DType::Int64, "take: index must be int64, got ", index.dtype());
  const int64_t n = x.numel();
  if (index.numel()) {
    const int64_t lo = index.min().item<int64_t>(), hi = index.max().item<int64_t>();
    EMBER_CHECK_T(IndexError, lo >= -n && hi < n, "take: index ", lo < -n ? lo : hi,
                  " is out of range for a tensor of ", n, " elements");
  }
  Tensor i = where(index < 0, index + n, index);
  return flat(x).index_select(0, i.reshape({-1})).reshape(index.sizes());
}
Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int64_t> dim) {
  if (!dim) return take(x.reshape({-1}), indices.reshape({-1}));
  const int64_t d = wrap_dim(*dim, x.dim(), "take_along_dim");
  DimVector xs(x.sizes()), is(indices.sizes());
  EMBER_CHECK_SHAPE(xs.size() == is.size(), "take_along_dim: input (shape ", x.sizes(), ") and indices (shape ",
                    indices.sizes(), ") must have the same rank");
  xs[static_cast<size_t>(d)] = 1;
  is[static_cast<size_t>(d)] = 1;
  DimVector b = broadcast_shapes(xs, is, "take_along_dim");
  DimVector bx = b, bi = b;
  bx[static_cast<size_t>(d)] = x.size(d);
  bi[static_cast<size_t>(d)] = indices.size(d);
  return gather(x.expand(bx), d, indices.expand(bi).contiguous());
}
Tensor masked_select(const Tensor& x, const Tensor& mask) {
  EMBER_CHECK_DTYPE(mask.dtype() == DType::Bool, "masked_select: mask must be bool, got ", mask.dtype());
  auto b = broadcast_tensors({x, mask});
  return b[0].contiguous().reshape({-1}).index({b[1].contiguous().reshape({-1})});
}
Tensor nonzero(const Tensor& x) {
  std::vector<bool> nz = x.ne(0.0).to_vector<bool>();
  std::vector<int64_t> out;
  const int64_t rank = x.dim();
  int64_t count = 0;
  for (size_t e = 0; e < nz.size(); ++e) {
    if (!nz[e]) continue;
    ++count;
    std::vector<int64_t> pos(static_cast<size_t>(rank));
    int64_t rem = static_cast<int64_t>(e);
    for (int64_t k = rank - 1; k >= 0; --k) {
      pos[static_cast<size_t>(k)] = rem % x.size(k);
      rem /= x.size(k);
    }
    out.insert(out.end(), pos.begin(), pos.end());
  }
  return tensor(out, {count, rank}).to(x.device());
}
Tensor argwhere(const Tensor& x) { return nonzero(x); }
std::vector<Tensor> where(const Tensor& condition) {
  Tensor nz = nonzero(condition);
  std::vector<Tensor> cols;
  for (int64_t k = 0; k < condition.dim(); ++k) cols.push_back(nz.select(1, k).contiguous());
  return cols;
}
Tensor where(const Tensor& c, const Scalar& a, const Tensor& b) { return where(c, scalar_tensor(a, b.options()), b); }
Tensor where(const Tensor& c, const Tensor& a, const Scalar& b) { return where(c, a, scalar_tensor(b, a.options())); }
Tensor where(const Tensor& c, const Scalar& a, const Scalar& b) {
  TensorOptions o = TensorOptions(result_type(scalar_tensor(a), b)).device(c.device());
  return where(c, scalar_tensor(a, o), scalar_tensor(b, o));
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor pos = flat_positions("scatter", x, dim, index);
  Tensor s = src;
  for (int64_t k = 0; k < index.dim() && s.dim() == index.dim(); ++k) s = s.narrow(k, 0, index.size(k));
  EMBER_CHECK_SHAPE(s.sizes() == index.sizes(), "scatter: src (shape ", src.sizes(), ") must cover index (shape ",
                    index.sizes(), ")");
  Tensor out = flat(x).clone();
  out.index_put_({pos.reshape({-1})}, s.contiguous().reshape({-1}));
  return out.reshape(x.sizes());
}
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value) {
  Tensor pos = flat_positions("scatter", x, dim, index);
  Tensor out = flat(x).clone();
  out.index_put_({pos.reshape({-1})}, scalar_tensor(value, x.options()));
  return out.reshape(x.sizes());
}

namespace {
// {Slice(), ..., index}: index at dim.
std::vector<TensorIndex> at_dim(int64_t dim, const Tensor& index) {
  std::vector<TensorIndex> idx(static_cast<size_t>(dim), TensorIndex(Slice()));
  idx.emplace_back(index.reshape({-1}));
  return idx;
}
}  // namespace
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& value) {
  EMBER_CHECK_SHAPE(value.dim() == 0, "index_fill: value must be a 0-dim tensor, got shape ", value.sizes());
  Tensor out = x.clone();
  out.index_put_(at_dim(wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "index_fill"), index), value.to(x.dtype()));
  return out;
}
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value) {
  return index_fill(x, dim, index, scalar_tensor(value, x.options()));
}
Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source) {
  Tensor out = x.clone();
  out.index_put_(at_dim(wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "index_copy"), index), source);
  return out;
}
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "index_add");
  EMBER_CHECK_SHAPE(index.dim() <= 1 && source.dim() == x.dim() && (x.dim() == 0 || source.size(d) == index.numel()),
                    "index_add: source (shape ", source.sizes(), ") must be the input's shape (", x.sizes(),
                    ") with dim ", dim, " of the index's length (", index.numel(), ")");
  // The sum of source's slices into the positions: a one-hot [n, k] matrix times source's rows.
  const DType compute = x.is_floating_point() ? x.dtype() : kFloat64;
  const int64_t n = x.dim() ? x.size(d) : 1;
  Tensor oh = (arange(n, long_on(x)).view({n, 1}) == index.reshape({1, -1})).to(compute);
  Tensor rows = source.movedim(d, 0).to(compute);
  DimVector moved(rows.sizes());
  Tensor added = oh.mm(rows.reshape({index.numel(), -1}));
  moved[0] = n;
  added = added.reshape(moved).movedim(0, d);
  return (x.to(compute) + added * alpha).to(x.dtype());
}

Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t a = wrap_dim(dim1, x.dim(), "diagonal"), b = wrap_dim(dim2, x.dim(), "diagonal");
  EMBER_CHECK_VALUE(a != b, "diagonal: dim1 and dim2 must differ, got ", dim1, " and ", dim2);
  const int64_t len = std::max<int64_t>(
      0, std::min(x.size(a) - std::max<int64_t>(0, -offset), x.size(b) - std::max<int64_t>(0, offset)));
  return detail::strided_pick(
      x, [&](IntArrayRef st, int64_t off, std::vector<int64_t>& sizes, std::vector<int64_t>& strides, int64_t& start) {
        for (int64_t k = 0; k < x.dim(); ++k) {
          if (k == a || k == b) continue;
          sizes.push_back(x.size(k));
          strides.push_back(st[static_cast<size_t>(k)]);
        }
        sizes.push_back(len);
        strides.push_back(st[static_cast<size_t>(a)] + st[static_cast<size_t>(b)]);
        start = off;
        if (len) start += offset >= 0 ? offset * st[static_cast<size_t>(b)] : -offset * st[static_cast<size_t>(a)];
      });
}
Tensor diag(const Tensor& x, int64_t k) {
  EMBER_CHECK_SHAPE(x.dim() == 1 || x.dim() == 2, "diag: expects a 1-D or 2-D input, got shape ", x.sizes());
  if (x.dim() == 2) return diagonal(x, k, 0, 1).clone();
  const int64_t n = x.size(0) + (k >= 0 ? k : -k);
  Tensor out = zeros({n, n}, x.options());
  diagonal(out, k, 0, 1).copy_(x);
  return out;
}
Tensor diag_embed(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  EMBER_CHECK_SHAPE(x.dim() >= 1, "diag_embed: expects at least a 1-D input");
  const int64_t rank = x.dim() + 1;
  const int64_t a = wrap_dim(dim1, rank, "diag_embed"), b = wrap_dim(dim2, rank, "diag_embed");
  EMBER_CHECK_VALUE(a != b, "diag_embed: dim1 and dim2 must differ");
  const int64_t n = x.size(-1) + (offset >= 0 ? offset : -offset);
  std::vector<int64_t> shape;
  int64_t src = 0;
  for (int64_t k = 0; k < rank; ++k) shape.push_back(k == a || k == b ? n : x.size(src++));
  Tensor out = zeros(shape, x.options());
  diagonal(out, offset, a, b).copy_(x);
  return out;
}
Tensor rot90(const Tensor& x, int64_t k, IntArrayRef dims) {
  EMBER_CHECK_VALUE(dims.size() == 2, "rot90: dims must have two entries, got ", dims);
  const int64_t a = wrap_dim(dims[0], x.dim(), "rot90"), b = wrap_dim(dims[1], x.dim(), "rot90");
  EMBER_CHECK_VALUE(a != b, "rot90: the two dims must differ, got ", dims);
  switch (((k % 4) + 4) % 4) {
    case 1:
      return x.flip({b}).transpose(a, b);
    case 2:
      return x.flip({a, b});
    case 3:
      return x.flip({a}).transpose(a, b);
    default:
      return x.clone();
  }
}
std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int64_t dim) {
  EMBER_CHECK_VALUE(sections > 0, "tensor_split: sections must be positive, got ", sections);
  const int64_t d = wrap_dim(dim, x.dim(), "tensor_split"), n = x.size(d);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s = 0; s < sections; ++s) {
    const int64_t len = n / sections + (s < n % sections ? 1 : 0);
    out.push_back(x.narrow(d, start, len));
    start += len;
  }
  return out;
}
std::vector<Tensor> tensor_split(const Tensor& x, IntArrayRef indices, int64_t dim) {
  const int64_t d = wrap_dim(dim, x.dim(), "tensor_split"), n = x.size(d);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (size_t i = 0; i <= indices.size(); ++i) {
    int64_t end = i < indices.size() ? std::min(std::max<int64_t>(indices[i], 0), n) : n;
    end = std::max(end, start);
    out.push_back(x.narrow(d, start, end - start));
    start = end;
  }
  return out;
}
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim, std::optional<int64_t>) {
  Tensor in = dim ? x : x.reshape({-1});
  const int64_t d = dim ? wrap_dim(*dim, x.dim(), "repeat_interleave") : 0;
  std::vector<int64_t> r = repeats.to(kInt64).reshape({-1}).to_vector<int64_t>();
  const int64_t n = in.size(d);
  EMBER_CHECK_SHAPE(r.size() == 1 || static_cast<int64_t>(r.size()) == n, "repeat_interleave: ", r.size(),
                    " repeats for a dim of size ", n);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = r.size() == 1 ? r[0] : r[static_cast<size_t>(i)];
    EMBER_CHECK_VALUE(c >= 0, "repeat_interleave: repeats must be non-negative, got ", c);
    idx.insert(idx.end(), static_cast<size_t>(c), i);
  }
  return in.index_select(d, tensor(idx).to(x.device()));
}
Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim, std::optional<int64_t> size) {
  return repeat_interleave(x, tensor(std::vector<int64_t>{repeats}), dim, size);
}
Tensor narrow(const Tensor& x, int64_t dim, const Tensor& start, int64_t length) {
  EMBER_CHECK_SHAPE(start.numel() == 1 && !start.is_floating_point(),
                    "narrow (with a tensor start): start must be a one-element integer tensor, got ", start.dtype(),
                    " ", start.sizes());
  return x.narrow(dim, start.item<int64_t>(), length);
}

// ---------------------------------------------------------------- Tensor methods
Tensor Tensor::gather(int64_t d, const Tensor& i, bool s) const { return ember::gather(*this, d, i, s); }
Tensor Tensor::take(const Tensor& i) const { return ember::take(*this, i); }
Tensor Tensor::take_along_dim(const Tensor& i, std::optional<int64_t> d) const {
  return ember::take_along_dim(*this, i, d);
}
Tensor Tensor::masked_select(const Tensor& m) const { return ember::masked_select(*this, m); }
Tensor Tensor::nonzero() const { return ember::nonzero(*this); }
Tensor Tensor::argwhere() const { return ember::nonzero(*this); }
Tensor Tensor::where(const Tensor& c, const Tensor& o) const { return ember::where(c, *this, o); }
Tensor Tensor::scatter(int64_t d, const Tensor& i, const Tensor& s) const { return ember::scatter(*this, d, i, s); }
Tensor Tensor::scatter(int64_t d, const Tensor& i, const Scalar& v) const { return ember::scatter(*this, d, i, v); }
Tensor& Tensor::scatter_(int64_t d, const Tensor& i, const Tensor& s) { return copy_(ember::scatter(*this, d, i, s)); }
Tensor& Tensor::scatter_(int64_t d, const Tensor& i, const Scalar& v) { return copy_(ember::scatter(*this, d, i, v)); }
Tensor Tensor::index_fill(int64_t d, const Tensor& i, const Scalar& v) const {
  return ember::index_fill(*this, d, i, v);
}
Tensor Tensor::index_fill(int64_t d, const Tensor& i, const Tensor& v) const {
  return ember::index_fill(*this, d, i, v);
}
Tensor& Tensor::index_fill_(int64_t d, const Tensor& i, const Scalar& v) {
  return copy_(ember::index_fill(*this, d, i, v));
}
Tensor& Tensor::index_fill_(int64_t d, const Tensor& i, const Tensor& v) {
  return copy_(ember::index_fill(*this, d, i, v));
}
Tensor Tensor::index_copy(int64_t d, const Tensor& i, const Tensor& s) const {
  return ember::index_copy(*this, d, i, s);
}
Tensor& Tensor::index_copy_(int64_t d, const Tensor& i, const Tensor& s) {
  return copy_(ember::index_copy(*this, d, i, s));
}
Tensor Tensor::index_add(int64_t d, const Tensor& i, const Tensor& s, const Scalar& a) const {
  return ember::index_add(*this, d, i, s, a);
}
Tensor& Tensor::index_add_(int64_t d, const Tensor& i, const Tensor& s, const Scalar& a) {
  return copy_(ember::index_add(*this, d, i, s, a));
}
Tensor Tensor::diag(int64_t k) const { return ember::diag(*this, k); }
Tensor Tensor::diagonal(int64_t o, int64_t a, int64_t b) const { return ember::diagonal(*this, o, a, b); }
Tensor Tensor::diag_embed(int64_t o, int64_t a, int64_t b) const { return ember::diag_embed(*this, o, a, b); }
Tensor Tensor::rot90(int64_t k, IntArrayRef dims) const { return ember::rot90(*this, k, dims); }
Tensor Tensor::unfold(int64_t dim, int64_t size, int64_t step) const {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(this->dim(), 1), "unfold");
  const int64_t n = this->dim() ? this->size(d) : 1;
  EMBER_CHECK_VALUE(size >= 0 && size <= n && step > 0, "unfold: size ", size, " and step ", step,
                    " do not fit a dim of size ", n);
  const Tensor self = this->dim() ? *this : reshape({1});
  return detail::strided_pick(self, [&](IntArrayRef st, int64_t off, std::vector<int64_t>& sizes,
                                        std::vector<int64_t>& strides, int64_t& start) {
    sizes.assign(self.sizes().begin(), self.sizes().end());
    strides.assign(st.begin(), st.end());
    sizes[static_cast<size_t>(d)] = (n - size) / step + 1;
    strides[static_cast<size_t>(d)] = st[static_cast<size_t>(d)] * step;
    sizes.push_back(size);
    strides.push_back(st[static_cast<size_t>(d)]);
    start = off;
  });
}
std::vector<Tensor> Tensor::tensor_split(int64_t s, int64_t d) const { return ember::tensor_split(*this, s, d); }
std::vector<Tensor> Tensor::tensor_split(IntArrayRef i, int64_t d) const { return ember::tensor_split(*this, i, d); }
Tensor Tensor::repeat_interleave(int64_t r, std::optional<int64_t> d, std::optional<int64_t> s) const {
  return ember::repeat_interleave(*this, r, d, s);
}
Tensor Tensor::repeat_interleave(const Tensor& r, std::optional<int64_t> d, std::optional<int64_t> s) const {
  return ember::repeat_interleave(*this, r, d, s);
}

}  // namespace ember
