// ember::amp: automatic mixed precision (torch.autocast) as a dispatch layer.
//
//   {
//     amp::AutocastGuard autocast(kNPU, kBFloat16);
//     Tensor loss = nn::functional::cross_entropy(model(x), y);   // matmuls in bf16, loss in fp32
//   }
//   loss.backward();   // fp32 master weights get fp32 gradients
//
// Note [Autocast policies]
// Each op declares its policy (AmpPolicy, in its declaration: dispatch/op_decl.h, or the op
// tables' amp column; a user op with m.def(schema, {OpTag::AutocastFloat32})), and the dispatcher
// routes the op's Autocast key to the policy's kernel, registered once here (nn/amp/autocast.cpp).
// The lists follow PyTorch's (autocast_mode.h, its CUDA / PrivateUse1 ones).
// While a guard is active, ops on tensors of its device type go through their Autocast kernel:
//   lower precision  matmul, mm, bmm, linear: floating float32 inputs cast to the guard's dtype
//   float32          norms (rms_norm, dispersion_correction), softmax, log_softmax, losses
//                    (cross_entropy, mse_loss), exp, log, pow, sum, mean, var, norm: fp16/bf16
//                    inputs cast to float32
//   promote          cat, stack, where: floating inputs cast to the widest of them (binary
//                    arithmetic promotes by itself: bf16 + f32 is f32)
// Other ops run in their inputs' dtypes. Casts of leaf tensors that require grad (weights) are
// cached until the outermost guard exits, so a weight used several times is cast once.
#pragma once

#include <cstddef>

#include "ember/tensor/tensor.h"

namespace ember {
namespace amp {

class AutocastGuard {
 public:
  // dtype defaults to bfloat16 (the NPU's and the CPU's fast 16-bit type); float16 also works.
  explicit AutocastGuard(DeviceType device, DType dtype = DType::BFloat16, bool enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DeviceType device_;
  bool prev_enabled_;
  DType prev_dtype_;
  bool prev_key_;
};

bool is_autocast_enabled(DeviceType device);
DType autocast_dtype(DeviceType device);
// Number of cached weight casts and rounded weight copies (for tests).
size_t autocast_cache_size();

}  // namespace amp
}  // namespace ember
