// ember's own aclnn ops for autocast's rounded products (aclnn_ember.h): EmberMatmulRounded(V2),
// the GEMM of _mm_rounded, and EmberRoundTo, the kernel of _round_to. They run the CPU's
// gemm_rounded and copy_rounded on device memory.
#include "ember/device/cpu/gemm.h"
#include "ember/device/npu/aclnn_common.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {

cpu::Matrix matrix(void* data, DType dt, IntArrayRef sizes, IntArrayRef strides, bool rounded) {
  cpu::Matrix m{data, dt, sizes[0], sizes[1], strides[0], strides[1], 0};
  m.rounded = rounded;
  return m;
}

aclnnStatus compute_dtype(const char* op, aclDataType computeType, DType* compute) {
  if (!dtype_from_acl(computeType, compute) || (*compute != DType::BFloat16 && *compute != DType::Float16))
    return invalid(op, "computeType must be ACL_BF16 or ACL_FLOAT16");
  return ACLNN_SUCCESS;
}

// out = round(round(self) @ round(mat2)) in computeType; an operand flagged as rounded is
// read as it is (its elements are already computeType values).
aclnnStatus matmul_rounded(const char* op, const aclTensor* self, const aclTensor* mat2, aclDataType computeType,
                           bool selfRounded, bool mat2Rounded, aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"mat2", mat2}, {"out", out}})) return s;
  DType compute = DType::Float32;
  if (aclnnStatus s = compute_dtype(op, computeType, &compute)) return s;
  if (!cpu::gemm_rounded_available()) return invalid(op, "needs a CPU with AVX2 under the emulator");
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"self", self}, {"mat2", mat2}, {"out", out}}) {
    if (aclnnStatus s = check_tensor(op, name, t)) return s;
    if (aclnnStatus s = check_dtype(op, name, t, {DType::Float32, compute})) return s;
  }
  IntArrayRef as = shape_of(self), bs = shape_of(mat2);
  if (as.size() != 2 || bs.size() != 2 || as[1] != bs[0])
    return invalid(op,
                   "self [M, K] and mat2 [K, N] must be 2-D and agree, got " + shape_str(as) + " and " + shape_str(bs));
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef(std::vector<int64_t>{as[0], bs[1]}))) return s;
  if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}, {"mat2", mat2}})) return s;
  auto planned = [](const aclTensor* t, bool rounded) {
    return matrix(nullptr, dtype_of(t), shape_of(t), strides_of(t), rounded);
  };
  const uint64_t bytes = cpu::gemm_rounded_scratch_bytes(1, planned(self, selfRounded), planned(mat2, mat2Rounded),
                                                         planned(out, false), compute);
  TensorRef ra = ref(self), rb = ref(mat2), ro = ref(out);
  return make_executor(
      op, bytes,
      [=](KernelContext& k) {
        auto view = [&](const TensorRef& r, bool rounded) {
          cpu::Strided v = k.view(r);
          return matrix(v.data, v.dtype, v.sizes, v.strides, rounded);
        };
        cpu::gemm_rounded(1, view(ra, selfRounded), view(rb, mat2Rounded), view(ro, false), compute,
                          bytes ? k.workspace() : nullptr, bytes);
      },
      ws, ex);
}

}  // namespace

extern "C" aclnnStatus aclnnEmberMatmulRoundedGetWorkspaceSize(const aclTensor* self, const aclTensor* mat2,
                                                               aclDataType computeType, aclTensor* out, uint64_t* ws,
                                                               aclOpExecutor** ex) {
  return matmul_rounded("aclnnEmberMatmulRounded", self, mat2, computeType, false, false, out, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnEmberMatmulRounded)

extern "C" aclnnStatus aclnnEmberMatmulRoundedV2GetWorkspaceSize(const aclTensor* self, const aclTensor* mat2,
                                                                 aclDataType computeType, bool selfRounded,
                                                                 bool mat2Rounded, aclTensor* out, uint64_t* ws,
                                                                 aclOpExecutor** ex) {
  return matmul_rounded("aclnnEmberMatmulRoundedV2", self, mat2, computeType, selfRounded, mat2Rounded, out, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnEmberMatmulRoundedV2)

extern "C" aclnnStatus aclnnEmberRoundToGetWorkspaceSize(const aclTensor* self, aclDataType computeType, aclTensor* out,
                                                         uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnEmberRoundTo";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  DType compute = DType::Float32;
  if (aclnnStatus s = compute_dtype(op, computeType, &compute)) return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"self", self}, {"out", out}}) {
    if (aclnnStatus s = check_tensor(op, name, t)) return s;
    if (aclnnStatus s = check_dtype(op, name, t, kFloats)) return s;
  }
  if (aclnnStatus s = check_shape(op, "out", out, shape_of(self))) return s;
  if (dtype_of(out) != dtype_of(self) || !is_contiguous(out)) {  // in place only element for element
    if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}}, false)) return s;
  } else if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}})) {
    return s;
  }
  TensorRef a = ref(self), o = ref(out);
  return make_executor(
      op, 0, [a, o, compute](KernelContext& k) { cpu::copy_rounded(k.view(o), k.view(a), compute); }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnEmberRoundTo)

}  // namespace npu
}  // namespace ember
