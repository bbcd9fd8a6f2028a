// ascendc::swiglu: SwiGLU's gate, silu(gate) * up, as a custom op whose NPU kernels are the Ascend C
// kernels of swiglu_kernels.cpp (forward and backward), registered through ember's dispatcher with
// a CPU kernel and autograd like any op (examples/ascendc/README section in the project README).
#pragma once

#include <ember/ember.h>

namespace ascendc_example {

// silu(gate) * up for gate and up of one shape, dtype (float32, float16, bfloat16) and device.
ember::Tensor swiglu(const ember::Tensor& gate, const ember::Tensor& up);

// The kernels' tile (elements a core moves per step) and core count for n elements of dtype.
struct Tiling {
  uint32_t tile;
  uint32_t block_dim;
};
Tiling tiling_for(int64_t n, ember::DType dtype, bool backward);

}  // namespace ascendc_example
