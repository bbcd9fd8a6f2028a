// aclnn Tril / Triu (and their in-place forms), Roll, Repeat, ConstantPadNd, ReflectionPad1d,
// UpsampleNearest2d, Slice and GatherV2:
// ops that move elements without arithmetic (cpu::triangle, roll, repeat, constant_pad, copy,
// index_select). Their CANN headers are
// generated from the definitions below (cmake/cann_headers.cmake reads each "CANN header" comment
// and the phase-1 signature under it).
#include <cmath>

#include "ember/device/cpu/nn.h"
#include "ember/gen/cpu_kernels.h"
#include "ember/device/npu/aclnn_common.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {

// self and out live, of one dtype; out of the given shape; out disjoint from self or, where the
// op allows it (in place), exactly self.
aclnnStatus check_moved(const char* op, const aclTensor* self, const aclTensor* out, IntArrayRef out_shape,
                        bool same_ok) {
  if (aclnnStatus s = check_all(op, {{"self", self}, {"out", out}})) return s;
  if (dtype_of(out) != dtype_of(self)) return invalid(op, "out must have self's dtype");
  if (aclnnStatus s = check_shape(op, "out", out, out_shape)) return s;
  return check_overlap(op, "out", out, {{"self", self}}, same_ok);
}

aclnnStatus triangle_op(const char* op, const aclTensor* self, int64_t diagonal, const aclTensor* out, bool upper,
                        uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (aclnnStatus s = check_moved(op, self, out, shape_of(self), true)) return s;
  const size_t n = shape_of(self).size();
  if (n < 2 || n > 8) return invalid(op, "self needs 2 to 8 dims, got " + shape_str(shape_of(self)));
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, 0, [=](KernelContext& k) { cpu::triangle(k.view(o), k.view(a), diagonal, upper); }, ws, ex);
}

}  // namespace

// CANN header aclnnop/aclnn_tril.h: out = self with the elements above the diagonal-th diagonal of each matrix (the last two dims) zeroed
extern "C" aclnnStatus aclnnTrilGetWorkspaceSize(const aclTensor* self, int64_t diagonal, aclTensor* out,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor) {
  return triangle_op("aclnnTril", self, diagonal, out, false, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnTril)

// CANN header aclnnop/aclnn_tril.h: selfRef = tril(selfRef, diagonal)
extern "C" aclnnStatus aclnnInplaceTrilGetWorkspaceSize(aclTensor* selfRef, int64_t diagonal, uint64_t* workspaceSize,
                                                        aclOpExecutor** executor) {
  return triangle_op("aclnnInplaceTril", selfRef, diagonal, selfRef, false, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceTril)

// CANN header aclnnop/aclnn_triu.h: out = self with the elements below the diagonal-th diagonal of each matrix (the last two dims) zeroed
extern "C" aclnnStatus aclnnTriuGetWorkspaceSize(const aclTensor* self, int64_t diagonal, aclTensor* out,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor) {
  return triangle_op("aclnnTriu", self, diagonal, out, true, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnTriu)

// CANN header aclnnop/aclnn_triu.h: selfRef = triu(selfRef, diagonal)
extern "C" aclnnStatus aclnnInplaceTriuGetWorkspaceSize(aclTensor* selfRef, int64_t diagonal, uint64_t* workspaceSize,
                                                        aclOpExecutor** executor) {
  return triangle_op("aclnnInplaceTriu", selfRef, diagonal, selfRef, true, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceTriu)

// CANN header aclnnop/aclnn_roll.h: out = x rolled by shifts[k] along dims[k] (as torch.roll; shifts and dims of one length, at least 1)
extern "C" aclnnStatus aclnnRollGetWorkspaceSize(const aclTensor* x, const aclIntArray* shifts, const aclIntArray* dims,
                                                 aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  const char* op = "aclnnRoll";
  if (aclnnStatus s = check_not_null(op, {{"x", x}, {"out", out}})) return s;
  if (!shifts) return null_arg(op, "shifts");
  if (!dims) return null_arg(op, "dims");
  if (aclnnStatus s = check_moved(op, x, out, shape_of(x), false)) return s;
  std::vector<int64_t> sh = int_array(shifts), d = int_array(dims);
  if (sh.empty() || sh.size() != d.size())
    return invalid(op, "shifts (" + std::to_string(sh.size()) + " values) and dims (" + std::to_string(d.size()) +
                           ") must have one length, at least 1");
  const int64_t n = static_cast<int64_t>(shape_of(x).size());
  for (int64_t& v : d) {
    if (v < -n || v >= n)
      return invalid(op, "dim " + std::to_string(v) + " is out of range for " + std::to_string(n) + " dims");
    if (v < 0) v += n;
  }
  TensorRef a = ref(x), o = ref(out);
  return make_executor(op, 0, [=](KernelContext& k) { cpu::roll(k.view(o), k.view(a), sh, d); }, workspaceSize,
                       executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnRoll)

// CANN header aclnnop/aclnn_repeat.h: out = self tiled repeats[k] times along each dim (as Tensor.repeat: at least self's rank of repeats, each >= 0)
extern "C" aclnnStatus aclnnRepeatGetWorkspaceSize(const aclTensor* self, const aclIntArray* repeats, aclTensor* out,
                                                   uint64_t* workspaceSize, aclOpExecutor** executor) {
  const char* op = "aclnnRepeat";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (!repeats) return null_arg(op, "repeats");
  std::vector<int64_t> r = int_array(repeats);
  IntArrayRef in = shape_of(self);
  if (r.size() < in.size() || r.size() > 8)
    return invalid(op, "repeats has " + std::to_string(r.size()) + " values; it needs self's rank (" +
                           std::to_string(in.size()) + ") to 8");
  std::vector<int64_t> shape(r.size());
  for (size_t k = 0; k < r.size(); ++k) {
    const int64_t s = k < r.size() - in.size() ? 1 : in[k - (r.size() - in.size())];
    if (r[k] < 0) return invalid(op, "repeats[" + std::to_string(k) + "] = " + std::to_string(r[k]) + " is negative");
    if (__builtin_mul_overflow(r[k], s, &shape[k])) return invalid(op, "the output's size overflows");
  }
  if (aclnnStatus s = check_moved(op, self, out, IntArrayRef(shape), false)) return s;
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, 0, [=](KernelContext& k) { cpu::repeat(k.view(o), k.view(a), r); }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnRepeat)

// CANN header aclnnop/aclnn_constant_pad_nd.h: out = self padded with value; pad holds (before, after) pairs from the last dim backwards, a negative amount crops
extern "C" aclnnStatus aclnnConstantPadNdGetWorkspaceSize(const aclTensor* self, const aclIntArray* pad,
                                                          const aclScalar* value, aclTensor* out,
                                                          uint64_t* workspaceSize, aclOpExecutor** executor) {
  const char* op = "aclnnConstantPadNd";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (!pad) return null_arg(op, "pad");
  if (!value) return null_arg(op, "value");
  std::vector<int64_t> p = int_array(pad);
  IntArrayRef in = shape_of(self);
  if (p.size() % 2 || p.size() / 2 > in.size())
    return invalid(op, "pad has " + std::to_string(p.size()) + " values; it needs an even number, at most twice self's " +
                           std::to_string(in.size()) + " dims");
  std::vector<int64_t> shape(in.begin(), in.end());
  for (size_t q = 0; q < p.size() / 2; ++q) {
    const size_t d = in.size() - 1 - q;
    int64_t grown;
    if (__builtin_add_overflow(shape[d], p[2 * q], &grown) || __builtin_add_overflow(grown, p[2 * q + 1], &grown))
      return invalid(op, "the padded size of dim " + std::to_string(d) + " overflows");
    if (grown < 0)
      return invalid(op, "pad (" + std::to_string(p[2 * q]) + ", " + std::to_string(p[2 * q + 1]) + ") leaves dim " +
                             std::to_string(d) + " of size " + std::to_string(in[d]) + " with a negative size");
    shape[d] = grown;
  }
  if (aclnnStatus s = check_moved(op, self, out, IntArrayRef(shape), false)) return s;
  const double v = scalar_value(value);
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, 0, [=](KernelContext& k) { cpu::constant_pad(k.view(o), k.view(a), p, v); }, workspaceSize,
                       executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnConstantPadNd)

// CANN header aclnnop/aclnn_slice.h: out = self[start:end:step] along dim, copied (start and end as Python's: negative from the end, clamped to the dim)
extern "C" aclnnStatus aclnnSliceGetWorkspaceSize(const aclTensor* self, int64_t dim, int64_t start, int64_t end,
                                                  int64_t step, aclTensor* out, uint64_t* workspaceSize,
                                                  aclOpExecutor** executor) {
  const char* op = "aclnnSlice";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"self", self}, {"out", out}})) return s;
  IntArrayRef in = shape_of(self);
  const int64_t n = static_cast<int64_t>(in.size());
  if (n == 0) return invalid(op, "self must have at least 1 dim");
  if (dim < -n || dim >= n) return invalid(op, "dim " + std::to_string(dim) + " is out of range for " + std::to_string(n) + " dims");
  if (step <= 0) return invalid(op, "step must be positive, got " + std::to_string(step));
  const size_t d = static_cast<size_t>(dim < 0 ? dim + n : dim);
  const int64_t size = in[d];
  auto clamp = [size](int64_t v) { return v < 0 ? std::max<int64_t>(v + size, 0) : std::min(v, size); };
  const int64_t lo = clamp(start), hi = std::max(clamp(end), lo), len = (hi - lo + step - 1) / step;
  std::vector<int64_t> shape(in.begin(), in.end());
  shape[d] = len;
  if (aclnnStatus s = check_moved(op, self, out, IntArrayRef(shape), false)) return s;
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, 0, [=](KernelContext& k) {
    cpu::Strided src = k.view(a), dst = k.view(o);
    if (len == 0 || dst.numel() == 0) return;
    src.data = src.bytes() + lo * src.strides[d] * static_cast<int64_t>(element_size(src.dtype));
    src.sizes[d] = len;
    src.strides[d] *= step;
    cpu::copy(dst, src);
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnSlice)

// CANN header aclnnop/aclnn_gather_v2.h: out = the slices of self along dim that index names; out's shape is self's with dim replaced by index's shape
extern "C" aclnnStatus aclnnGatherV2GetWorkspaceSize(const aclTensor* self, int64_t dim, const aclTensor* index,
                                                     aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  const char* op = "aclnnGatherV2";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"index", index}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"self", self}, {"index", index}, {"out", out}})) return s;
  if (aclnnStatus s = check_dtype(op, "index", index, {DType::Int32, DType::Int64})) return s;
  IntArrayRef in = shape_of(self), ix = shape_of(index);
  const int64_t n = static_cast<int64_t>(in.size()), m = n > 0 ? n : 1;
  if (dim < -m || dim >= m) return invalid(op, "dim " + std::to_string(dim) + " is out of range for " + std::to_string(n) + " dims");
  const size_t d = static_cast<size_t>(dim < 0 ? dim + m : dim);
  std::vector<int64_t> shape(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(d, in.size())));
  shape.insert(shape.end(), ix.begin(), ix.end());
  if (n > 0) shape.insert(shape.end(), in.begin() + static_cast<std::ptrdiff_t>(d) + 1, in.end());
  if (aclnnStatus s = check_moved(op, self, out, IntArrayRef(shape), false)) return s;
  // The kernel is IndexSelect's with index flattened: index and out's index dims must merge.
  // Dims [from, from + count) merge when each non-1 dim's stride is the next non-1 dim's stride
  // times its size; *stride: the merged dim's (the innermost non-1 dim's, 1 if none).
  auto merged = [](IntArrayRef sz, IntArrayRef st, size_t from, size_t count, int64_t* stride) {
    *stride = 1;
    bool first = true;
    int64_t expect = 0;  // the stride the next outer non-1 dim must have
    for (size_t k = from + count; k-- > from;) {
      if (sz[k] == 1) continue;
      if (first) *stride = st[k];
      if (!first && st[k] != expect) return false;
      if (__builtin_mul_overflow(st[k], sz[k], &expect)) return false;
      first = false;
    }
    return true;
  };
  int64_t istride = 1, ostride = 1;
  if (!merged(ix, strides_of(index), 0, ix.size(), &istride) ||
      !merged(shape_of(out), strides_of(out), d, ix.size(), &ostride))
    return invalid(op, "index and out must be laid out so that index's dims merge into one (e.g. contiguous)");
  const int64_t count = numel_of(ix);
  TensorRef a = ref(self), o = ref(out), ri = ref(index);
  const size_t nix = ix.size();
  return make_executor(op, 0, [=](KernelContext& k) {
    cpu::Strided src = k.view(a), dst = k.view(o), idx = k.view(ri);
    if (dst.numel() == 0) return;
    // index as 1-D, out with its index dims as one.
    idx.sizes = DimVector{count};
    idx.strides = DimVector{istride};
    DimVector os, ost;
    for (size_t q = 0; q < d; ++q) {
      os.push_back(dst.sizes[q]);
      ost.push_back(dst.strides[q]);
    }
    os.push_back(count);
    ost.push_back(ostride);
    for (size_t q = d + nix; q < dst.sizes.size(); ++q) {
      os.push_back(dst.sizes[q]);
      ost.push_back(dst.strides[q]);
    }
    if (src.dim() == 0) {  // a 0-d self: one element, each index must be 0
      src.sizes = DimVector{1};
      src.strides = DimVector{1};
    }
    cpu::index_select(cpu::Strided(dst.data, dst.dtype, os, ost), src, idx, static_cast<int64_t>(d), op);
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnGatherV2)

// CANN header aclnnop/aclnn_rotary_position_embedding.h: out = x cos + rotate(x) sin along the last dim; mode 0 (half): halves (a, b) -> (-b, a), 1 (interleave): pairs (a, b) -> (-b, a)
extern "C" aclnnStatus aclnnRotaryPositionEmbeddingGetWorkspaceSize(const aclTensor* x, const aclTensor* cos,
                                                                    const aclTensor* sin, int64_t mode, aclTensor* out,
                                                                    uint64_t* workspaceSize, aclOpExecutor** executor) {
  const char* op = "aclnnRotaryPositionEmbedding";
  if (aclnnStatus s = check_not_null(op, {{"x", x}, {"cos", cos}, {"sin", sin}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"x", x}, {"cos", cos}, {"sin", sin}, {"out", out}})) return s;
  if (aclnnStatus s = check_dtype(op, "x", x, {DType::Float32, DType::Float16, DType::BFloat16})) return s;
  if (dtype_of(cos) != dtype_of(x) || dtype_of(sin) != dtype_of(x) || dtype_of(out) != dtype_of(x))
    return invalid(op, "cos, sin and out must have x's dtype");
  IntArrayRef xs = shape_of(x);
  if (xs.size() != 3 && xs.size() != 4) return invalid(op, "x must be 3-D or 4-D, got " + shape_str(xs));
  if (shape_of(cos) != shape_of(sin))
    return invalid(op, "cos " + shape_str(shape_of(cos)) + " and sin " + shape_str(shape_of(sin)) + " must have one shape");
  std::vector<int64_t> b;
  if (!broadcast(shape_of(cos), xs, &b) || IntArrayRef(b) != xs)
    return invalid(op, "cos and sin " + shape_str(shape_of(cos)) + " must broadcast to x " + shape_str(xs));
  const int64_t D = xs.back();
  // Atlas A2/A3 (ember reports Ascend910B4): modes 0 and 1, D even and below 896 (CANN's doc).
  if (mode != 0 && mode != 1)
    return invalid(op, "mode " + std::to_string(mode) + " is not 0 (half) or 1 (interleave), the modes of Atlas A2/A3");
  if (D % 2 != 0 || D >= 896) return invalid(op, "the last dim (" + std::to_string(D) + ") must be even and below 896");
  if (aclnnStatus s = check_shape(op, "out", out, xs)) return s;
  if (aclnnStatus s = check_overlap(op, "out", out, {{"x", x}, {"cos", cos}, {"sin", sin}})) return s;
  TensorRef rx = ref(x), rc = ref(cos), rs = ref(sin), o = ref(out);
  return make_executor(op, 0, [=](KernelContext& k) {
    cpu::Strided ov = k.view(o);
    cpu::rotary_embedding(ov, k.view(rx), expand_to(k.view(rc), ov.sizes), expand_to(k.view(rs), ov.sizes), mode);
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnRotaryPositionEmbedding)

// CANN header aclnnop/aclnn_reflection_pad1d.h: out = self ([C, W] or [N, C, W]) padded along the last dim by reflection, padding = (left, right), each below W
extern "C" aclnnStatus aclnnReflectionPad1dGetWorkspaceSize(const aclTensor* self, const aclIntArray* padding,
                                                            aclTensor* out, uint64_t* workspaceSize,
                                                            aclOpExecutor** executor) {
  const char* op = "aclnnReflectionPad1d";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (!padding) return null_arg(op, "padding");
  IntArrayRef in = shape_of(self);
  if (in.size() != 2 && in.size() != 3) return invalid(op, "self must be 2-D or 3-D, got " + shape_str(in));
  std::vector<int64_t> p = int_array(padding);
  const int64_t W = in.back();
  if (p.size() != 2 || p[0] < 0 || p[1] < 0 || p[0] >= W || p[1] >= W)
    return invalid(op, "padding must be 2 values, each >= 0 and below the last dim's size " + std::to_string(W) +
                           ", got " + shape_str(IntArrayRef(p)));
  std::vector<int64_t> shape(in.begin(), in.end());
  shape.back() = W + p[0] + p[1];
  if (aclnnStatus s = check_moved(op, self, out, IntArrayRef(shape), false)) return s;
  TensorRef a = ref(self), o = ref(out);
  const size_t d = in.size() - 1;
  const int64_t left = p[0], ow = shape.back();
  return make_executor(op, 0, [=](KernelContext& k) {
    cpu::Strided src = k.view(a), dst = k.view(o);
    if (dst.numel() == 0) return;
    for (int64_t j = 0; j < ow; ++j) {
      int64_t i = j - left;
      if (i < 0) i = -i;
      if (i >= W) i = 2 * (W - 1) - i;
      cpu::copy(narrowed(dst, d, j, 1), narrowed(src, d, i, 1));
    }
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnReflectionPad1d)

// CANN header aclnnop/aclnn_upsample_nearest_2d.h: out[n, c, h, w] = self[n, c, min(floor(h * H / outH), H - 1), min(floor(w * W / outW), W - 1)], outputSize = (outH, outW); the scales in float, as PyTorch's nearest
extern "C" aclnnStatus aclnnUpsampleNearest2dGetWorkspaceSize(const aclTensor* self, const aclIntArray* outputSize,
                                                              aclTensor* out, uint64_t* workspaceSize,
                                                              aclOpExecutor** executor) {
  const char* op = "aclnnUpsampleNearest2d";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (!outputSize) return null_arg(op, "outputSize");
  IntArrayRef in = shape_of(self);
  if (in.size() != 4) return invalid(op, "self must be 4-D (N, C, H, W), got " + shape_str(in));
  std::vector<int64_t> o = int_array(outputSize);
  if (o.size() != 2 || o[0] <= 0 || o[1] <= 0)
    return invalid(op, "outputSize must be 2 positive values, got " + shape_str(IntArrayRef(o)));
  if (in[2] <= 0 || in[3] <= 0) return invalid(op, "self's H and W must not be empty, got " + shape_str(in));
  std::vector<int64_t> shape{in[0], in[1], o[0], o[1]};
  if (aclnnStatus s = check_moved(op, self, out, IntArrayRef(shape), false)) return s;
  TensorRef a = ref(self), r = ref(out);
  const int64_t H = in[2], W = in[3];
  const float sh = static_cast<float>(H) / static_cast<float>(o[0]), sw = static_cast<float>(W) / static_cast<float>(o[1]);
  return make_executor(op, 0, [=](KernelContext& k) {
    cpu::Strided src = k.view(a), dst = k.view(r);
    if (dst.numel() == 0) return;
    for (int64_t y = 0; y < o[0]; ++y) {
      const int64_t sy = std::min(static_cast<int64_t>(std::floor(static_cast<float>(y) * sh)), H - 1);
      for (int64_t x = 0; x < o[1]; ++x) {
        const int64_t sx = std::min(static_cast<int64_t>(std::floor(static_cast<float>(x) * sw)), W - 1);
        cpu::copy(narrowed(narrowed(dst, 2, y, 1), 3, x, 1), narrowed(narrowed(src, 2, sy, 1), 3, sx, 1));
      }
    }
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnUpsampleNearest2d)

}  // namespace npu
}  // namespace ember
