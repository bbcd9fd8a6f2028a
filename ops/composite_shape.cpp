// libtorch's shape helpers built from ember's view and copy ops (ops/composite.h).
#include <algorithm>
#include <numeric>

#include "ember/ops/composite.h"
#include "ember/ops/op_util.h"

namespace ember {

namespace {
Tensor reversed_positions(int64_t n, Device device) {
  return arange(n - 1, -1, -1, TensorOptions(kInt64).device(device));
}
}  // namespace

Tensor flip(const Tensor& x, IntArrayRef dims) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(x.dim(), 1)), false);
  Tensor r = x;
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, x.dim(), "flip");
    EMBER_CHECK_VALUE(!seen[static_cast<size_t>(w)], "flip: dim ", d, " appears more than once in dims ", dims);
    seen[static_cast<size_t>(w)] = true;
    if (x.dim() == 0 || x.size(w) < 2) continue;
    r = r.index_select(w, reversed_positions(x.size(w), x.device()));
  }
  return r.is_same(x) ? x.clone() : r;
}
Tensor fliplr(const Tensor& x) {
  EMBER_CHECK_SHAPE(x.dim() >= 2, "fliplr: input must be at least 2-D, got shape ", x.sizes());
  return flip(x, {1});
}
Tensor flipud(const Tensor& x) {
  EMBER_CHECK_SHAPE(x.dim() >= 1, "flipud: input must be at least 1-D, got shape ", x.sizes());
  return flip(x, {0});
}

Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes) {
  const int64_t d = wrap_dim(dim, x.dim(), "unflatten");
  EMBER_CHECK_SHAPE(!sizes.empty(), "unflatten: sizes must be non-empty");
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + d);
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      EMBER_CHECK_SHAPE(infer < 0, "unflatten: only one size may be -1, got ", sizes);
      infer = static_cast<int64_t>(i);
    } else {
      known = checked_mul(known, sizes[i], "unflatten");
    }
  }
  std::vector<int64_t> s(sizes.begin(), sizes.end());
  if (infer >= 0 && known != 0) s[static_cast<size_t>(infer)] = x.size(d) / known;
  int64_t prod = 1;
  for (int64_t v : s) prod = checked_mul(prod, v, "unflatten");
  EMBER_CHECK_SHAPE(prod == x.size(d), "unflatten: sizes ", sizes, " do not multiply to dim ", dim, "'s size ",
                    x.size(d), " (input shape ", x.sizes(), ")");
  shape.insert(shape.end(), s.begin(), s.end());
  shape.insert(shape.end(), x.sizes().begin() + d + 1, x.sizes().end());
  return x.view(shape);
}

std::vector<Tensor> unbind(const Tensor& x, int64_t dim) {
  const int64_t d = wrap_dim(dim, x.dim(), "unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < x.size(d); ++i) out.push_back(x.select(d, i));
  return out;
}

std::vector<Tensor> split_with_sizes(const Tensor& x, IntArrayRef sizes, int64_t dim) {
  const int64_t d = wrap_dim(dim, x.dim(), "split_with_sizes");
  int64_t total = 0;
  for (int64_t s : sizes) {
    EMBER_CHECK_VALUE(s >= 0, "split_with_sizes: sizes must be non-negative, got ", sizes);
    total = checked_add(total, s, "split_with_sizes");
  }
  EMBER_CHECK_SHAPE(total == x.size(d), "split_with_sizes: sizes ", sizes, " sum to ", total, " but dim ", dim,
                    " of shape ", x.sizes(), " has ", x.size(d));
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(x.narrow(d, start, s));
    start += s;
  }
  return out;
}
std::vector<Tensor> split(const Tensor& x, IntArrayRef sizes, int64_t dim) { return split_with_sizes(x, sizes, dim); }

Tensor movedim(const Tensor& x, IntArrayRef source, IntArrayRef destination) {
  EMBER_CHECK_SHAPE(source.size() == destination.size(), "movedim: source ", source, " and destination ", destination,
                    " differ in length");
  const int64_t n = x.dim();
  std::vector<int64_t> perm(static_cast<size_t>(n), -1);
  std::vector<bool> used_src(static_cast<size_t>(n), false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int64_t s = wrap_dim(source[i], n, "movedim"), d = wrap_dim(destination[i], n, "movedim");
    EMBER_CHECK_VALUE(!used_src[static_cast<size_t>(s)] && perm[static_cast<size_t>(d)] < 0,
                      "movedim: repeated dim in source ", source, " or destination ", destination);
    perm[static_cast<size_t>(d)] = s;
    used_src[static_cast<size_t>(s)] = true;
  }
  int64_t next = 0;
  for (auto& p : perm) {
    if (p >= 0) continue;
    while (used_src[static_cast<size_t>(next)]) ++next;
    p = next++;
  }
  return x.permute(perm);
}
Tensor movedim(const Tensor& x, int64_t source, int64_t destination) {
  return movedim(x, IntArrayRef(source), IntArrayRef(destination));
}

Tensor tile(const Tensor& x, IntArrayRef reps) {
  std::vector<int64_t> r(reps.begin(), reps.end());
  while (static_cast<int64_t>(r.size()) < x.dim()) r.insert(r.begin(), 1);
  Tensor y = x;
  while (y.dim() < static_cast<int64_t>(r.size())) y = y.unsqueeze(0);
  return y.repeat(r);
}

std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors) {
  DimVector shape;
  for (const Tensor& t : tensors) shape = broadcast_shapes(shape, t.sizes(), "broadcast_tensors");
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(t.expand(shape));
  return out;
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing) {
  EMBER_CHECK_VALUE(indexing == "ij" || indexing == "xy", "meshgrid: indexing must be \"ij\" or \"xy\", got \"",
                    indexing, "\"");
  DimVector shape;
  for (const Tensor& t : tensors) {
    EMBER_CHECK_SHAPE(t.dim() <= 1, "meshgrid: expects 0-D or 1-D tensors, got shape ", t.sizes());
    shape.push_back(t.numel());
  }
  const bool swap = indexing == "xy" && tensors.size() >= 2;
  if (swap) std::swap(shape[0], shape[1]);
  std::vector<Tensor> out;
  for (size_t i = 0; i < tensors.size(); ++i) {
    size_t at = i;
    if (swap && i < 2) at = 1 - i;
    DimVector view(shape.size(), 1);
    view[at] = tensors[i].numel();
    out.push_back(tensors[i].reshape(view).expand(shape));
  }
  return out;
}

Tensor atleast_1d(const Tensor& x) { return x.dim() >= 1 ? x : x.reshape({1}); }
Tensor atleast_2d(const Tensor& x) { return x.dim() >= 2 ? x : x.reshape({1, x.numel()}); }
Tensor atleast_3d(const Tensor& x) {
  if (x.dim() >= 3) return x;
  if (x.dim() == 2) return x.unsqueeze(2);
  return x.reshape({1, x.numel(), 1});
}
std::vector<Tensor> atleast_1d(const std::vector<Tensor>& xs) {
  std::vector<Tensor> out;
  for (const Tensor& x : xs) out.push_back(atleast_1d(x));
  return out;
}
std::vector<Tensor> atleast_2d(const std::vector<Tensor>& xs) {
  std::vector<Tensor> out;
  for (const Tensor& x : xs) out.push_back(atleast_2d(x));
  return out;
}
Tensor hstack(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> v = atleast_1d(tensors);
  EMBER_CHECK_VALUE(!v.empty(), "hstack: expects a non-empty list of tensors");
  return cat(v, v[0].dim() == 1 ? 0 : 1);
}
Tensor vstack(const std::vector<Tensor>& tensors) { return cat(atleast_2d(tensors), 0); }
Tensor dstack(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> v;
  for (const Tensor& t : tensors) v.push_back(atleast_3d(t));
  return cat(v, 2);
}

// ---------------------------------------------------------------- Tensor methods
Tensor Tensor::flip(IntArrayRef dims) const { return ember::flip(*this, dims); }
Tensor Tensor::fliplr() const { return ember::fliplr(*this); }
Tensor Tensor::flipud() const { return ember::flipud(*this); }
Tensor Tensor::unflatten(int64_t dim, IntArrayRef sizes) const { return ember::unflatten(*this, dim, sizes); }
std::vector<Tensor> Tensor::unbind(int64_t dim) const { return ember::unbind(*this, dim); }
std::vector<Tensor> Tensor::split(IntArrayRef sizes, int64_t dim) const {
  return ember::split_with_sizes(*this, sizes, dim);
}
std::vector<Tensor> Tensor::split_with_sizes(IntArrayRef sizes, int64_t dim) const {
  return ember::split_with_sizes(*this, sizes, dim);
}
Tensor Tensor::movedim(IntArrayRef s, IntArrayRef d) const { return ember::movedim(*this, s, d); }
Tensor Tensor::movedim(int64_t s, int64_t d) const { return ember::movedim(*this, s, d); }
Tensor Tensor::tile(IntArrayRef reps) const { return ember::tile(*this, reps); }
Tensor Tensor::new_empty(IntArrayRef shape, const TensorOptions& o) const {
  return empty(shape, TensorOptions(o.dtype_or(dtype())).device(o.has_device() ? o.device() : device()));
}
Tensor Tensor::new_zeros(IntArrayRef shape, const TensorOptions& o) const { return new_empty(shape, o).zero_(); }
Tensor Tensor::new_ones(IntArrayRef shape, const TensorOptions& o) const { return new_empty(shape, o).fill_(1); }
Tensor Tensor::new_full(IntArrayRef shape, const Scalar& v, const TensorOptions& o) const {
  return new_empty(shape, o).fill_(v);
}

bool Tensor::is_contiguous(MemoryFormat f) const {
  if (f == MemoryFormat::Contiguous || f == MemoryFormat::Preserve) return is_contiguous();
  const int64_t want = f == MemoryFormat::ChannelsLast ? 4 : 5;
  if (dim() != want) return false;
  // NHWC: dims ordered C, W, H, N from the fastest (NDHWC: C, W, H, D, N).
  std::vector<int64_t> order = want == 4 ? std::vector<int64_t>{1, 3, 2, 0} : std::vector<int64_t>{1, 4, 3, 2, 0};
  int64_t expected = 1;
  for (int64_t d : order) {
    if (size(d) != 1 && stride(d) != expected) return false;
    expected *= size(d);
  }
  return true;
}

}  // namespace ember
