// aclnn data movement and fills: Cast, InplaceCopy (strided, any dtypes, broadcasting src),
// InplaceFillScalar, InplaceZero, Permute, IndexSelect, Arange, the counter-based random fills, Cat.
#include <cmath>

#include "ember/device/cpu/nn.h"
#include "ember/device/cpu/random.h"
#include "ember/device/npu/aclnn_common.h"

namespace ember {
namespace npu {

using namespace ops;

extern "C" aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor* self, const aclDataType dtype, aclTensor* out,
                                                 uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnCast";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (aclnnStatus s = check_tensor(op, "self", self)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  DType dt;
  if (!dtype_from_acl(dtype, &dt)) return invalid(op, "unsupported dtype " + std::to_string(dtype));
  if (dtype_of(out) != dt) return invalid(op, "out's dtype must be dtype");
  if (aclnnStatus s = check_shape(op, "out", out, shape_of(self))) return s;
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, 0, [a, o](KernelContext& k) { cpu::copy(k.view(o), k.view(a)); }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnCast)

extern "C" aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor* selfRef, const aclTensor* src, uint64_t* ws,
                                                        aclOpExecutor** ex) {
  const char* op = "aclnnInplaceCopy";
  if (aclnnStatus s = check_not_null(op, {{"selfRef", selfRef}, {"src", src}})) return s;
  if (aclnnStatus s = check_tensor(op, "selfRef", selfRef)) return s;
  if (aclnnStatus s = check_tensor(op, "src", src)) return s;
  std::vector<int64_t> shape;
  if (!broadcast(shape_of(selfRef), shape_of(src), &shape) || IntArrayRef(shape) != shape_of(selfRef))
    return invalid(op, "src of shape " + shape_str(shape_of(src)) + " cannot be broadcast to selfRef's shape " +
                           shape_str(shape_of(selfRef)));
  if (aclnnStatus s = check_overlap(op, "selfRef", selfRef, {{"src", src}})) return s;
  TensorRef a = ref(src), o = ref(selfRef);
  return make_executor(op, 0, [a, o](KernelContext& k) {
    cpu::Strided ov = k.view(o);
    cpu::copy(ov, expand_to(k.view(a), ov.sizes));
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceCopy)

extern "C" aclnnStatus aclnnInplaceFillScalarGetWorkspaceSize(aclTensor* selfRef, const aclScalar* value, uint64_t* ws,
                                                              aclOpExecutor** ex) {
  const char* op = "aclnnInplaceFillScalar";
  if (aclnnStatus s = check_not_null(op, {{"selfRef", selfRef}, {"value", value}})) return s;
  if (aclnnStatus s = check_tensor(op, "selfRef", selfRef)) return s;
  TensorRef o = ref(selfRef);
  bool floating = scalar_is_floating(value);
  double d = scalar_value(value);
  int64_t i = scalar_int_value(value);
  return make_executor(op, 0, [=](KernelContext& k) {
    if (floating) {
      cpu::fill(k.view(o), d);
    } else {
      cpu::fill_int(k.view(o), i);
    }
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceFillScalar)

extern "C" aclnnStatus aclnnInplaceZeroGetWorkspaceSize(aclTensor* selfRef, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnInplaceZero";
  if (aclnnStatus s = check_not_null(op, {{"selfRef", selfRef}})) return s;
  if (aclnnStatus s = check_tensor(op, "selfRef", selfRef)) return s;
  TensorRef o = ref(selfRef);
  return make_executor(op, 0, [o](KernelContext& k) { cpu::fill_int(k.view(o), 0); }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceZero)

// out = self with its dims reordered: out.shape[i] = self.shape[dims[i]] (dims a permutation).
extern "C" aclnnStatus aclnnPermuteGetWorkspaceSize(const aclTensor* self, const aclIntArray* dims, aclTensor* out,
                                                    uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnPermute";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"dims", dims}, {"out", out}})) return s;
  if (aclnnStatus s = check_tensor(op, "self", self)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (dtype_of(out) != dtype_of(self)) return invalid(op, "out must have self's dtype");
  const std::vector<int64_t> perm = int_array(dims);
  const int64_t n = static_cast<int64_t>(shape_of(self).size());
  if (static_cast<int64_t>(perm.size()) != n)
    return invalid(op, "dims has " + std::to_string(perm.size()) + " entries for a " + std::to_string(n) + "-d self");
  std::vector<bool> seen(static_cast<size_t>(n), false);
  std::vector<int64_t> oshape;
  for (int64_t d : perm) {
    int64_t w = d < 0 ? d + n : d;
    if (w < 0 || w >= n || seen[static_cast<size_t>(w)])
      return invalid(op, "dims " + shape_str(IntArrayRef(perm)) + " is not a permutation of the " + std::to_string(n) +
                             " dims");
    seen[static_cast<size_t>(w)] = true;
    oshape.push_back(shape_of(self)[static_cast<size_t>(w)]);
  }
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef(oshape))) return s;
  TensorRef a = ref(self), o = ref(out);
  TensorRef permuted = a;
  for (int64_t i = 0; i < n; ++i) {
    int64_t w = perm[static_cast<size_t>(i)] < 0 ? perm[static_cast<size_t>(i)] + n : perm[static_cast<size_t>(i)];
    permuted.view[static_cast<size_t>(i)] = a.view[static_cast<size_t>(w)];
    permuted.strides[static_cast<size_t>(i)] = a.strides[static_cast<size_t>(w)];
  }
  return make_executor(op, 0, [permuted, o](KernelContext& k) { cpu::copy(k.view(o), k.view(permuted)); }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnPermute)

// out = the slices of self at index along dim (index 1-D or 0-D, INT32 or INT64). An index out
// of range is a kernel fault (an IndexError at the next synchronize).
extern "C" aclnnStatus aclnnIndexSelectGetWorkspaceSize(const aclTensor* self, int64_t dim, const aclTensor* index,
                                                        aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnIndexSelect";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"index", index}, {"out", out}})) return s;
  if (aclnnStatus s = check_tensor(op, "self", self)) return s;
  if (aclnnStatus s = check_tensor(op, "index", index)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (aclnnStatus s = check_dtype(op, "index", index, {DType::Int32, DType::Int64})) return s;
  if (shape_of(index).size() > 1) return invalid(op, "index must be 1-D or 0-D, got " + shape_str(shape_of(index)));
  if (dtype_of(out) != dtype_of(self)) return invalid(op, "out must have self's dtype");
  const int64_t n = static_cast<int64_t>(shape_of(self).size());
  const int64_t m = n > 0 ? n : 1;
  if (dim < -m || dim >= m) return invalid(op, "dim " + std::to_string(dim) + " out of range for a " + std::to_string(n) + "-d self");
  const size_t d = static_cast<size_t>(dim < 0 ? dim + m : dim);
  std::vector<int64_t> oshape(shape_of(self).begin(), shape_of(self).end());
  const int64_t count = numel_of(shape_of(index));
  if (n > 0) oshape[d] = count;
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef(oshape))) return s;
  TensorRef a = ref(self), o = ref(out), ri = ref(index);
  return make_executor(op, 0, [=](KernelContext& k) {
    cpu::index_select(k.view(o), k.view(a), k.view(ri), static_cast<int64_t>(d), op);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnIndexSelect)

extern "C" aclnnStatus aclnnArangeGetWorkspaceSize(const aclScalar* start, const aclScalar* end, const aclScalar* step,
                                                   aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnArange";
  if (aclnnStatus s = check_not_null(op, {{"start", start}, {"end", end}, {"step", step}, {"out", out}})) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  double a = scalar_value(start), b = scalar_value(end), st = scalar_value(step);
  if (st == 0) return invalid(op, "step must be nonzero");
  if ((st > 0 && b < a) || (st < 0 && b > a)) return invalid(op, "end is unreachable from start with this step");
  int64_t n;
  if (!scalar_is_floating(start) && !scalar_is_floating(end) && !scalar_is_floating(step)) {
    // Exact for integers: doubles cannot tell INT64_MAX - 10 from INT64_MAX.
    __int128 span = static_cast<__int128>(scalar_int_value(end)) - scalar_int_value(start), by = scalar_int_value(step);
    n = static_cast<int64_t>((span + by - (by > 0 ? 1 : -1)) / by);
  } else {
    const double len = std::ceil((b - a) / st);  // NaN for non-finite bounds
    if (!(len >= 0 && len < 9.2e18)) return invalid(op, "start, end and step give no finite element count");
    n = static_cast<int64_t>(len);
  }
  if (numel_of(shape_of(out)) != n || !is_contiguous(out))
    return invalid(op, "out must be a contiguous tensor of " + std::to_string(n) + " elements");
  bool integral = !scalar_is_floating(start) && !scalar_is_floating(step) && !is_floating_point(dtype_of(out));
  TensorRef o = ref(out);
  int64_t ia = scalar_int_value(start), is = scalar_int_value(step);
  return make_executor(op, 0, [=](KernelContext& k) {
    cpu::Strided ov = k.view(o);
    if (integral) {
      std::vector<int64_t> v(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)  // wraps as two's complement rather than overflowing
        v[static_cast<size_t>(i)] = static_cast<int64_t>(static_cast<uint64_t>(ia) +
                                                         static_cast<uint64_t>(i) * static_cast<uint64_t>(is));
      cpu::convert(v.data(), DType::Int64, 1, ov.data, ov.dtype, 1, n);
    } else {
      std::vector<double> v(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = a + static_cast<double>(i) * st;
      cpu::convert(v.data(), DType::Float64, 1, ov.data, ov.dtype, 1, n);
    }
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnArange)

namespace {
aclnnStatus random_op(const char* op, const aclTensor* self, cpu::Distribution dist, double a, double b, uint64_t seed,
                      uint64_t offset, uint64_t* ws, aclOpExecutor** ex, int64_t lo = 0, int64_t hi = 1) {
  if (aclnnStatus s = check_not_null(op, {{"selfRef", self}})) return s;
  if (aclnnStatus s = check_tensor(op, "selfRef", self)) return s;
  if (dist == cpu::Distribution::Integer && !(lo < hi)) return invalid(op, "from must be less than to");
  if (dist == cpu::Distribution::Uniform && !(a <= b)) return invalid(op, "from must not exceed to");
  if (dist == cpu::Distribution::Normal && b < 0) return invalid(op, "std must be non-negative");
  TensorRef o = ref(self);
  cpu::RandomSpec spec;
  spec.dist = dist;
  spec.a = a;
  spec.b = b;
  spec.lo = lo;
  spec.hi = hi;
  spec.seed = seed;
  spec.offset = offset;
  return make_executor(op, 0, [o, spec](KernelContext& k) { cpu::fill_random(k.view(o), spec); }, ws, ex);
}
}  // namespace

extern "C" aclnnStatus aclnnInplaceUniformGetWorkspaceSize(const aclTensor* selfRef, double from, double to, uint64_t seed,
                                                           uint64_t offset, uint64_t* ws, aclOpExecutor** ex) {
  return random_op("aclnnInplaceUniform", selfRef, cpu::Distribution::Uniform, from, to, seed, offset, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceUniform)
extern "C" aclnnStatus aclnnInplaceNormalGetWorkspaceSize(const aclTensor* selfRef, float mean, float std, int64_t seed,
                                                          int64_t offset, uint64_t* ws, aclOpExecutor** ex) {
  return random_op("aclnnInplaceNormal", selfRef, cpu::Distribution::Normal, mean, std, static_cast<uint64_t>(seed),
                   static_cast<uint64_t>(offset), ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceNormal)
extern "C" aclnnStatus aclnnInplaceRandomGetWorkspaceSize(const aclTensor* selfRef, int64_t from, int64_t to, int64_t seed,
                                                          int64_t offset, uint64_t* ws, aclOpExecutor** ex) {
  return random_op("aclnnInplaceRandom", selfRef, cpu::Distribution::Integer, 0, 0, static_cast<uint64_t>(seed),
                   static_cast<uint64_t>(offset), ws, ex, from, to);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceRandom)

// out (1-d, n elements, a dtype that holds n - 1 exactly) = cpu::randperm's permutation of
// 0 .. n - 1 for (seed, offset), built as int64 in the workspace.
extern "C" aclnnStatus aclnnRandpermGetWorkspaceSize(int64_t n, int64_t seed, int64_t offset, aclTensor* out,
                                                     uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnRandperm";
  if (aclnnStatus s = check_not_null(op, "out", out)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (n < 0) return invalid(op, "n must be non-negative, got " + std::to_string(n));
  if (shape_of(out).size() != 1 || shape_of(out)[0] != n)
    return invalid(op, "out must have shape [" + std::to_string(n) + "], got " + shape_str(shape_of(out)));
  const DType dt = dtype_of(out);
  if (n > cpu::randperm_limit(dt)) {
    std::ostringstream os;
    os << "a permutation of " << n << " elements does not fit out's dtype " << dt;
    return invalid(op, os.str());
  }
  uint64_t wsb = 0, at = 0;
  if (aclnnStatus s = reserve(op, n, 8, &wsb, &at)) return s;
  TensorRef o = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    auto* perm = reinterpret_cast<int64_t*>(static_cast<char*>(k.workspace()) + at);
    cpu::randperm(perm, n, static_cast<uint64_t>(seed), static_cast<uint64_t>(offset));
    cpu::copy(k.view(o), cpu::Strided(perm, DType::Int64, DimVector{n}, DimVector{1}));
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnRandperm)

namespace {
// Cat's parts: each of out's rank and shape outside dim d (a legacy empty [0] tensor is skipped),
// castable to out; their references, offsets along d and total extent.
aclnnStatus plan_cat_parts(const char* op, const std::vector<const aclTensor*>& ts, const aclTensor* out, int64_t d,
                           std::vector<TensorRef>* parts, std::vector<int64_t>* offsets, int64_t* total) {
  IntArrayRef os = shape_of(out);
  const int64_t n = static_cast<int64_t>(os.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    std::string name = "tensors[" + std::to_string(i) + "]";
    if (aclnnStatus s = check_tensor(op, name.c_str(), ts[i])) return s;
    IntArrayRef sh = shape_of(ts[i]);
    if (sh.size() == 1 && sh[0] == 0) continue;  // legacy empty tensor
    if (static_cast<int64_t>(sh.size()) != n) return invalid(op, name + " has rank " + std::to_string(sh.size()));
    for (int64_t k = 0; k < n; ++k)
      if (k != d && sh[static_cast<size_t>(k)] != os[static_cast<size_t>(k)])
        return invalid(op, name + " of shape " + shape_str(sh) + " does not match out " + shape_str(os) +
                               " outside dim " + std::to_string(d));
    if (aclnnStatus s = check_castable(op, dtype_of(ts[i]), out)) return s;
    parts->push_back(ref(ts[i]));
    offsets->push_back(*total);
    *total += sh[static_cast<size_t>(d)];
  }
  return ACLNN_SUCCESS;
}
}  // namespace

extern "C" aclnnStatus aclnnCatGetWorkspaceSize(const aclTensorList* tensors, int64_t dim, aclTensor* out, uint64_t* ws,
                                                aclOpExecutor** ex) {
  const char* op = "aclnnCat";
  if (aclnnStatus s = check_not_null(op, {{"tensors", tensors}, {"out", out}})) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  std::vector<const aclTensor*> ts = tensor_list(tensors);
  if (ts.empty()) return invalid(op, "tensors is empty");
  IntArrayRef os = shape_of(out);
  int64_t n = static_cast<int64_t>(os.size());
  if (n == 0) return invalid(op, "out must have at least one dimension");
  if (dim < -n || dim >= n) return invalid(op, "dim " + std::to_string(dim) + " out of range");
  int64_t d = dim < 0 ? dim + n : dim;
  std::vector<TensorRef> parts;
  std::vector<int64_t> offsets;
  int64_t total = 0;
  if (aclnnStatus s = plan_cat_parts(op, ts, out, d, &parts, &offsets, &total)) return s;
  if (total != os[static_cast<size_t>(d)])
    return invalid(op, "the parts add up to " + std::to_string(total) + " along dim " + std::to_string(d) + ", out has " +
                           std::to_string(os[static_cast<size_t>(d)]));
  TensorRef o = ref(out);
  return make_executor(op, 0, [=](KernelContext& k) {
    cpu::Strided ov = k.view(o);
    size_t esz = element_size(ov.dtype);
    for (size_t i = 0; i < parts.size(); ++i) {
      cpu::Strided pv = k.view(parts[i]);
      if (pv.sizes[static_cast<size_t>(d)] == 0 || !ov.data) continue;  // nothing to copy (an empty out has no address)
      cpu::Strided dst = ov;
      dst.sizes[static_cast<size_t>(d)] = pv.sizes[static_cast<size_t>(d)];
      dst.data = ov.bytes() + offsets[i] * ov.strides[static_cast<size_t>(d)] * static_cast<int64_t>(esz);
      cpu::copy(dst, pv);
    }
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnCat)

}  // namespace npu
}  // namespace ember
