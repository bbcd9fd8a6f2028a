// aclnn matmul with a quantised weight (WeightQuantBatchMatmulV2: int8 or int4 weight, antiquant
// scale and offset per tensor, channel or group) and the weight-format calls around it
// (TransMatmulWeight, CalculateMatmulWeightSize[V2]).
//
// INT4 tensors: two values per byte, the element of even index in the low nibble (CANN's packing),
// strides and offset counted in elements (nibbles). The emulator reads them byte-wise here; no
// other op takes INT4.
//
// NZ weights: on hardware aclnnTransMatmulWeight rewrites a weight into the blocked FRACTAL_NZ
// layout in place and the matmuls then take a descriptor of format FRACTAL_NZ. The emulator keeps
// the bytes as they are (TransMatmulWeight checks its argument and changes nothing), so the
// matmuls read an NZ-format weight as ND (check_weight_tensor): a program that only ever hands
// CANN its own weights through TransMatmulWeight computes the same values.
#include <algorithm>
#include <cmath>

#include "ember/device/npu/aclnn_common.h"
#include "ember/device/npu/descriptors.h"
#include "ember/device/npu/runtime.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {

// A weight of ACL_INT4: a live descriptor whose view lies inside its storage, the storage's bytes
// (two values a byte) inside one allocation; *bytes_ref: the storage as UInt8 bytes for the kernel.
aclnnStatus check_int4(const char* op, const char* name, const aclTensor* t, TensorRef* bytes_ref) {
  if (!detail::descriptor_live(t)) return invalid(op, std::string(name) + " is not a live aclTensor (destroyed?)");
  int64_t storage = 1, reach = t->offset;
  for (int64_t d : t->storage)
    if (d < 0 || __builtin_mul_overflow(storage, d, &storage)) return invalid(op, std::string(name) + ": its storage overflows");
  if (t->offset < 0) return invalid(op, std::string(name) + ": negative offset");
  for (size_t i = 0; i < t->view.size(); ++i) {
    int64_t step = 0;
    if (t->view[i] == 0) return invalid(op, std::string(name) + " is empty");
    if (t->strides[i] < 0 || __builtin_mul_overflow(t->view[i] - 1, t->strides[i], &step) ||
        __builtin_add_overflow(reach, step, &reach))
      return invalid(op, std::string(name) + ": its sizes and strides overflow or are negative");
  }
  // (a view may reach past its storage dims, as for every tensor: reach_elements)
  const int64_t bytes = (std::max(storage, reach + 1) + 1) / 2;
  const int dev = detail::device_of(t->data);
  if (dev < 0 || !detail::translate_planned(t->data, static_cast<size_t>(bytes), dev))
    return invalid(op, std::string(name) + ": its " + std::to_string(bytes) +
                           " bytes of storage are not inside one live device allocation");
  TensorRef r = ref(t);
  r.dtype = DType::UInt8;
  r.acl_dtype = ACL_UINT8;
  r.view = DimVector{bytes};
  r.strides = DimVector{1};
  r.storage = DimVector{bytes};
  r.offset = 0;
  *bytes_ref = r;
  return ACLNN_SUCCESS;
}

// The int4 value at element index i of packed bytes.
inline int int4_at(const uint8_t* bytes, int64_t i) {
  const int v = (bytes[i >> 1] >> ((i & 1) * 4)) & 0xF;
  return v >= 8 ? v - 16 : v;
}

}  // namespace

// CANN header aclnnop/aclnn_weight_quant_batch_matmul_v2.h: y = x @ ((weight + antiquantOffset) * antiquantScale) + bias; x [.., M, K] fp16/bf16, weight [K, N] int8 or int4, scale and offset [1] / [N] / [1, N] (per channel) or [ceil(K / antiquantGroupSize), N] (per group); the dequantised weight rounded to x's dtype, products summed exactly, y rounded once
extern "C" aclnnStatus aclnnWeightQuantBatchMatmulV2GetWorkspaceSize(
    const aclTensor* x, const aclTensor* weight, const aclTensor* antiquantScale,
    const aclTensor* antiquantOffsetOptional, const aclTensor* quantScaleOptional, const aclTensor* quantOffsetOptional,
    const aclTensor* biasOptional, int antiquantGroupSize, const aclTensor* y, uint64_t* workspaceSize,
    aclOpExecutor** executor) {
  const char* op = "aclnnWeightQuantBatchMatmulV2";
  if (aclnnStatus s = check_not_null(op, {{"x", x}, {"weight", weight}, {"antiquantScale", antiquantScale}, {"y", y}}))
    return s;
  if (quantScaleOptional || quantOffsetOptional)
    return invalid(op, "quantScale / quantOffset (an int8 output) are not emulated; pass null");
  if (aclnnStatus s = check_all(op, {{"x", x}, {"antiquantScale", antiquantScale}, {"y", y}})) return s;
  if (aclnnStatus s = check_dtype(op, "x", x, {DType::Float16, DType::BFloat16})) return s;
  if (dtype_of(y) != dtype_of(x)) return invalid(op, "y must have x's dtype");
  if (dtype_of(antiquantScale) != dtype_of(x)) return invalid(op, "antiquantScale must have x's dtype");
  const bool int4 = weight->dtype == ACL_INT4;
  TensorRef rw;
  if (int4) {
    if (aclnnStatus s = check_int4(op, "weight", weight, &rw)) return s;
  } else {
    if (aclnnStatus s = check_weight_tensor(op, "weight", weight)) return s;
    if (aclnnStatus s = check_dtype(op, "weight", weight, {DType::Int8})) return s;
    rw = ref(weight);
    rw.offset = 0;  // the kernel adds the offset itself, as for int4
  }
  IntArrayRef xs = shape_of(x), ws = IntArrayRef(weight->view);
  if (ws.size() != 2) return invalid(op, "weight must be 2-D [K, N], got " + shape_str(ws));
  if (xs.size() < 2) return invalid(op, "x must be at least 2-D [.., M, K], got " + shape_str(xs));
  const int64_t K = ws[0], N = ws[1], M = xs[xs.size() - 2];
  if (xs.back() != K) return invalid(op, "x " + shape_str(xs) + " and weight " + shape_str(ws) + " do not multiply (K)");
  std::vector<int64_t> ys(xs.begin(), xs.end());
  ys.back() = N;
  if (aclnnStatus s = check_shape(op, "y", y, IntArrayRef(ys))) return s;
  if (antiquantGroupSize < 0 || (antiquantGroupSize > 0 && (antiquantGroupSize % 32 || antiquantGroupSize >= K)))
    return invalid(op, "antiquantGroupSize " + std::to_string(antiquantGroupSize) +
                           " must be 0 or a multiple of 32 in [32, K - 1] (K = " + std::to_string(K) + ")");
  const int64_t groups = antiquantGroupSize ? (K + antiquantGroupSize - 1) / antiquantGroupSize : 1;
  auto per_shape = [&](const aclTensor* t) {
    IntArrayRef s = shape_of(t);
    if (antiquantGroupSize) return s == IntArrayRef({groups, N});
    return s == IntArrayRef({N}) || s == IntArrayRef({1, N}) || s == IntArrayRef({int64_t(1)});
  };
  if (!per_shape(antiquantScale))
    return invalid(op, "antiquantScale " + shape_str(shape_of(antiquantScale)) + " must be " +
                           (antiquantGroupSize ? shape_str(IntArrayRef({groups, N})) + " (per group)"
                                               : std::string("[1], [N] or [1, N] (per tensor or channel)")));
  if (antiquantOffsetOptional) {
    if (aclnnStatus s = check_tensor(op, "antiquantOffset", antiquantOffsetOptional)) return s;
    if (dtype_of(antiquantOffsetOptional) != dtype_of(x) || shape_of(antiquantOffsetOptional) != shape_of(antiquantScale))
      return invalid(op, "antiquantOffset must have antiquantScale's shape and x's dtype");
  }
  if (biasOptional) {
    if (aclnnStatus s = check_tensor(op, "bias", biasOptional)) return s;
    if (aclnnStatus s = check_dtype(op, "bias", biasOptional, {DType::Float16, DType::Float32})) return s;
    if (shape_of(biasOptional) != IntArrayRef({N}) && shape_of(biasOptional) != IntArrayRef({1, N}))
      return invalid(op, "bias must be [N] or [1, N], got " + shape_str(shape_of(biasOptional)));
  }
  if (aclnnStatus s = check_overlap(op, "y", y, {{"x", x}, {"antiquantScale", antiquantScale}}, false)) return s;
  uint64_t wsb = 0, w_at = 0, y_at = 0;
  F64Input fx, fs, fo, fb;
  int64_t KN = 0, MN = 0;
  if (__builtin_mul_overflow(K, N, &KN) || __builtin_mul_overflow(numel_of(xs) / std::max<int64_t>(K, 1), N, &MN))
    return invalid(op, "the sizes overflow");
  if (aclnnStatus s = stage_f64(op, x, &wsb, &fx)) return s;
  if (aclnnStatus s = stage_f64(op, antiquantScale, &wsb, &fs)) return s;
  if (aclnnStatus s = stage_f64(op, antiquantOffsetOptional, &wsb, &fo)) return s;
  if (aclnnStatus s = stage_f64(op, biasOptional, &wsb, &fb)) return s;
  if (aclnnStatus s = reserve_f64(op, KN, &wsb, &w_at)) return s;
  if (aclnnStatus s = reserve_f64(op, MN, &wsb, &y_at)) return s;
  const DType xdt = dtype_of(x);
  const int64_t rows = K ? numel_of(xs) / K : 0, off = weight->offset;
  const std::vector<int64_t> wst(weight->strides.begin(), weight->strides.end());
  const int64_t G = antiquantGroupSize;
  TensorRef ry = ref(y);
  (void)M;
  return make_executor(op, wsb, [=](KernelContext& k) {
    const double *xv = fx.load(k), *sc = fs.load(k), *of = fo.load(k), *bi = fb.load(k);
    double* w = f64_at(k, w_at);
    double* out = f64_at(k, y_at);
    cpu::Strided wv = k.view(rw);
    for (int64_t kk = 0; kk < K; ++kk)
      for (int64_t n = 0; n < N; ++n) {
        const int64_t e = off + kk * wst[0] + n * wst[1];
        const double q = int4 ? int4_at(static_cast<const uint8_t*>(wv.data), e)
                              : static_cast<double>(static_cast<const int8_t*>(wv.data)[e]);
        const int64_t at = (G ? (kk / G) * N : 0) + n;
        const double v = (q + (of ? of[at] : 0.0)) * sc[at];
        double r = v;  // rounded to x's dtype, as the kernel dequantises into it
        cpu::convert(&v, DType::Float64, 1, &r, xdt, 1, 1);
        cpu::convert(&r, xdt, 1, &r, DType::Float64, 1, 1);
        w[kk * N + n] = r;
      }
    for (int64_t m = 0; m < rows; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = bi ? bi[n] : 0.0;
        for (int64_t kk = 0; kk < K; ++kk) acc += xv[m * K + kk] * w[kk * N + n];
        out[m * N + n] = acc;
      }
    store_f64(k, ry, out);
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnWeightQuantBatchMatmulV2)

namespace {
// The elements a weight of this shape and dtype takes in FRACTAL_NZ: the last dim rounded up to
// C0 = 32 bytes of elements, the one before to 16 (CANN's fractal), times the batch.
aclnnStatus nz_elements(const char* op, const aclIntArray* shape, aclDataType dt, uint64_t* out) {
  if (!shape) return null_arg(op, "tensorShape");
  if (!out) return null_arg(op, "weightTensorSize");
  std::vector<int64_t> s = int_array(shape);
  if (s.size() < 2) return invalid(op, "tensorShape needs at least 2 dims, got " + shape_str(IntArrayRef(s)));
  const int64_t c0 = dt == ACL_INT8 ? 32 : 16;
  uint64_t n = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] <= 0) return invalid(op, "tensorShape " + shape_str(IntArrayRef(s)) + " has a dim that is not positive");
    const int64_t unit = i + 1 == s.size() ? c0 : i + 2 == s.size() ? 16 : 1;
    const uint64_t d = static_cast<uint64_t>((s[i] + unit - 1) / unit * unit);
    if (__builtin_mul_overflow(n, d, &n)) return invalid(op, "the size overflows");
  }
  *out = n;
  return ACLNN_SUCCESS;
}
}  // namespace

// CANN header aclnnop/aclnn_trans_matmul_weight.h: converts a matmul weight in place to the layout the matmuls prefer (FRACTAL_NZ on hardware; the emulator keeps the bytes and its matmuls read an NZ-format weight as ND)
extern "C" aclnnStatus aclnnTransMatmulWeightGetWorkspaceSize(aclTensor* mmWeightRef, uint64_t* workspaceSize,
                                                              aclOpExecutor** executor) {
  const char* op = "aclnnTransMatmulWeight";
  if (aclnnStatus s = check_not_null(op, "mmWeightRef", mmWeightRef)) return s;
  if (aclnnStatus s = check_weight_tensor(op, "mmWeightRef", mmWeightRef)) return s;
  if (aclnnStatus s = check_dtype(op, "mmWeightRef", mmWeightRef, {DType::Float16, DType::BFloat16, DType::Int8})) return s;
  if (shape_of(mmWeightRef).size() < 2 || shape_of(mmWeightRef).size() > 3)
    return invalid(op, "mmWeightRef must be 2-D or 3-D, got " + shape_str(shape_of(mmWeightRef)));
  TensorRef w = ref(mmWeightRef);
  return make_executor(op, 0, [w](KernelContext& k) { (void)k.view(w); }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnTransMatmulWeight)

// CANN header function aclnnop/aclnn_trans_matmul_weight.h: the elements a matmul weight of this shape takes once aclnnTransMatmulWeight has converted it (FLOAT16 / BFLOAT16: both last dims rounded up to 16; INT8: the last to 32, the one before to 16)
extern "C" aclnnStatus aclnnCalculateMatmulWeightSizeV2(const aclIntArray* tensorShape, aclDataType dataType,
                                                        uint64_t* weightTensorSize) {
  const char* op = "aclnnCalculateMatmulWeightSizeV2";
  if (dataType != ACL_FLOAT16 && dataType != ACL_BF16 && dataType != ACL_INT8)
    return invalid(op, "dataType " + std::to_string(dataType) + " is not FLOAT16, BF16 or INT8");
  return nz_elements(op, tensorShape, dataType, weightTensorSize);
}

// CANN header function aclnnop/aclnn_trans_matmul_weight.h: as aclnnCalculateMatmulWeightSizeV2 for a FLOAT16 weight
extern "C" aclnnStatus aclnnCalculateMatmulWeightSize(const aclIntArray* tensorShape, uint64_t* weightTensorSize) {
  return nz_elements("aclnnCalculateMatmulWeightSize", tensorShape, ACL_FLOAT16, weightTensorSize);
}

}  // namespace npu
}  // namespace ember
