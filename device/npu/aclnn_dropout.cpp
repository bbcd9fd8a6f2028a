// aclnn DropoutGenMask / DropoutDoMask (CANN's argument lists): the bit mask of
// device/cpu/random.h (align(n, 128) / 8 uint8 bytes, bit i keeps element i: the Philox uniform
// of counter offset + i is >= prob), and its application, out = self / (1 - prob) where kept.
#include "ember/device/cpu/random.h"
#include "ember/device/npu/aclnn_common.h"
#include "ember/device/npu/descriptors.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {
aclnnStatus check_prob(const char* op, double prob) {
  return prob >= 0 && prob <= 1 ? ACLNN_SUCCESS : invalid(op, "prob must be in [0, 1], got " + std::to_string(prob));
}
aclnnStatus check_mask(const char* op, const aclTensor* mask, int64_t n) {
  if (aclnnStatus s = check_tensor(op, "mask", mask)) return s;
  if (aclnnStatus s = check_dtype(op, "mask", mask, {DType::UInt8})) return s;
  const int64_t bytes = cpu::dropout_mask_bytes(n);
  if (aclnnStatus s = check_shape(op, "mask", mask, {bytes})) return s;
  return ACLNN_SUCCESS;
}
}  // namespace

extern "C" aclnnStatus aclnnDropoutGenMaskGetWorkspaceSize(const aclIntArray* shape, double prob, int64_t seed,
                                                           int64_t offset, aclTensor* out, uint64_t* ws,
                                                           aclOpExecutor** ex) {
  const char* op = "aclnnDropoutGenMask";
  if (!shape) return null_arg(op, "shape");
  if (aclnnStatus s = check_not_null(op, "out", out)) return s;
  if (aclnnStatus s = check_prob(op, prob)) return s;
  int64_t n = 1;
  for (int64_t d : int_array(shape)) {
    if (d < 0) return invalid(op, "shape has a negative size: " + shape_str(int_array(shape)));
    if (d != 0 && n > (int64_t(1) << 56) / d) return invalid(op, "shape's element count overflows");
    n *= d;
  }
  if (aclnnStatus s = check_mask(op, out, n)) return s;
  if (!is_contiguous(out)) return invalid(op, "out must be contiguous");
  TensorRef ro = ref(out);
  return make_executor(op, 0, [=](KernelContext& k) {
    cpu::dropout_mask(static_cast<uint8_t*>(k.view(ro).data), n, prob, static_cast<uint64_t>(seed),
                      static_cast<uint64_t>(offset));
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnDropoutGenMask)

extern "C" aclnnStatus aclnnDropoutDoMaskGetWorkspaceSize(const aclTensor* self, const aclTensor* mask, double prob,
                                                          aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnDropoutDoMask";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"mask", mask}, {"out", out}})) return s;
  if (aclnnStatus s = check_prob(op, prob)) return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"self", self}, {"out", out}}) {
    if (aclnnStatus s = check_tensor(op, name, t)) return s;
    if (aclnnStatus s = check_dtype(op, name, t, kFloats)) return s;
  }
  if (aclnnStatus s = check_shape(op, "out", out, shape_of(self))) return s;
  if (aclnnStatus s = check_mask(op, mask, numel_of(shape_of(self)))) return s;
  uint64_t wsb = 0;
  StagedInput sm = stage_if_strided(mask, &wsb);
  TensorRef rs = ref(self), ro = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::dropout_apply(k.view(ro), k.view(rs), static_cast<const uint8_t*>(sm.view(k).data), prob);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnDropoutDoMask)

}  // namespace npu
}  // namespace ember
