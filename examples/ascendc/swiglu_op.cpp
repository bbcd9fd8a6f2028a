// ascendc::swiglu, a custom op backed by Ascend C kernels on the NPU:
//
//   1. the declarations   EMBER_DECLARE_OP: swiglu(gate, up), swiglu_backward(grad, gate, up), defined
//                         in EMBER_LIBRARY(ascendc, m)
//   2. the CPU kernels    ember's own silu_mul and its backward (the reference)
//   3. the NPU kernels    swiglu_forward_<dtype> / swiglu_backward_<dtype> (swiglu_kernels.cpp),
//                         launched with ACLRT_LAUNCH_KERNEL on the current stream of the device
//   4. the backward       a one-line autograd::OpSpec calling swiglu_backward
#include "swiglu_op.h"

#include <algorithm>
#include <string>

#include "aclrtlaunch_swiglu_backward_bf16.h"
#include "aclrtlaunch_swiglu_backward_float.h"
#include "aclrtlaunch_swiglu_backward_half.h"
#include "aclrtlaunch_swiglu_forward_bf16.h"
#include "aclrtlaunch_swiglu_forward_float.h"
#include "aclrtlaunch_swiglu_forward_half.h"
#include "ember/autograd/op_spec.h"
#include "ember/dispatch/library.h"
#include "ember/ops/npu_exec.h"

namespace ascendc_example {

using ember::DType;
using ember::Tensor;

// Each op's name, schema, C++ signature and autocast policy, written once; the compiler checks
// the kernels registered below against them.
namespace op {
EMBER_DECLARE_OP(swiglu, Keep, "ascendc::swiglu(Tensor gate, Tensor up) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(swiglu_backward, Keep,
                 "ascendc::swiglu_backward(Tensor grad, Tensor gate, Tensor up) -> (Tensor, Tensor)",
                 std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&));
}  // namespace op

Tiling tiling_for(int64_t n, DType dtype, bool backward) {
  // UB per core, bytes per element of the tile (swiglu_kernels.cpp's InitBuffer calls): forward
  // 24 (float) / 20 (16-bit), backward 44 / 36; within 192 KiB, the largest power of two.
  (void)dtype;  // the same tile fits both
  const uint32_t tile = backward ? 4096 : 8192;
  const int64_t tiles = (n + tile - 1) / tile;
  return {tile, static_cast<uint32_t>(std::clamp<int64_t>(tiles, 1, 40))};  // 40: an A2's vector cores in use
}

namespace {

void check_args(const char* op, const Tensor& gate, const Tensor& up) {
  EMBER_CHECK_SHAPE(gate.sizes() == up.sizes(), op, ": gate ", gate.sizes(), " and up ", up.sizes(),
                    " must have one shape (the kernel does not broadcast)");
  EMBER_CHECK_DTYPE(gate.dtype() == up.dtype(), op, ": gate is ", gate.dtype(), " but up is ", up.dtype());
  EMBER_CHECK_DTYPE(gate.dtype() == DType::Float32 || gate.dtype() == DType::Float16 || gate.dtype() == DType::BFloat16,
                    op, ": expects float32, float16 or bfloat16, got ", gate.dtype());
}

void launched(uint32_t status, const char* kernel) {
  if (status != 0)
    EMBER_THROW(ember::Error, "ascendc::swiglu: launching ", kernel, " failed (", status, "): ",
                ember::npu::aclGetRecentErrMsg());
}

aclrtStream stream_of(const Tensor& t) {
  return ember::npu::raw_stream(ember::npu::current_stream(static_cast<int>(t.device().index())));
}

Tensor swiglu_cpu(const Tensor& gate, const Tensor& up) {
  check_args("ascendc::swiglu", gate, up);
  return ember::silu_mul(gate, up);
}

Tensor swiglu_npu(const Tensor& gate_in, const Tensor& up_in) {
  check_args("ascendc::swiglu", gate_in, up_in);
  Tensor gate = gate_in.contiguous(), up = up_in.contiguous(), out = ember::empty_like(gate);
  const int64_t n = gate.numel();
  if (n == 0) return out;
  const Tiling t = tiling_for(n, gate.dtype(), false);
  void *g = ember::npu::device_ptr(gate), *u = ember::npu::device_ptr(up), *o = ember::npu::device_ptr(out);
  const uint64_t count = static_cast<uint64_t>(n);
  aclrtStream s = stream_of(gate);
  switch (gate.dtype()) {
    case DType::Float32: launched(ACLRT_LAUNCH_KERNEL(swiglu_forward_float)(t.block_dim, s, g, u, o, count, t.tile), "swiglu_forward_float"); break;
    case DType::Float16: launched(ACLRT_LAUNCH_KERNEL(swiglu_forward_half)(t.block_dim, s, g, u, o, count, t.tile), "swiglu_forward_half"); break;
    default: launched(ACLRT_LAUNCH_KERNEL(swiglu_forward_bf16)(t.block_dim, s, g, u, o, count, t.tile), "swiglu_forward_bf16"); break;
  }
  return out;
}

std::tuple<Tensor, Tensor> swiglu_backward_cpu(const Tensor& grad, const Tensor& gate, const Tensor& up) {
  check_args("ascendc::swiglu_backward", gate, up);
  static const auto bw = ember::Dispatcher::singleton()
                             .find_schema("ember::silu_mul_backward")
                             .typed<std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&)>();
  return bw.call(grad, gate, up);
}

std::tuple<Tensor, Tensor> swiglu_backward_npu(const Tensor& grad_in, const Tensor& gate_in, const Tensor& up_in) {
  check_args("ascendc::swiglu_backward", gate_in, up_in);
  EMBER_CHECK_SHAPE(grad_in.sizes() == gate_in.sizes(), "ascendc::swiglu_backward: grad ", grad_in.sizes(),
                    " for gate ", gate_in.sizes());
  Tensor grad = grad_in.to(gate_in.dtype()).contiguous(), gate = gate_in.contiguous(), up = up_in.contiguous();
  Tensor d_gate = ember::empty_like(gate), d_up = ember::empty_like(up);
  const int64_t n = gate.numel();
  if (n == 0) return {d_gate, d_up};
  const Tiling t = tiling_for(n, gate.dtype(), true);
  void *dy = ember::npu::device_ptr(grad), *g = ember::npu::device_ptr(gate), *u = ember::npu::device_ptr(up);
  void *dg = ember::npu::device_ptr(d_gate), *du = ember::npu::device_ptr(d_up);
  const uint64_t count = static_cast<uint64_t>(n);
  aclrtStream s = stream_of(gate);
  switch (gate.dtype()) {
    case DType::Float32: launched(ACLRT_LAUNCH_KERNEL(swiglu_backward_float)(t.block_dim, s, dy, g, u, dg, du, count, t.tile), "swiglu_backward_float"); break;
    case DType::Float16: launched(ACLRT_LAUNCH_KERNEL(swiglu_backward_half)(t.block_dim, s, dy, g, u, dg, du, count, t.tile), "swiglu_backward_half"); break;
    default: launched(ACLRT_LAUNCH_KERNEL(swiglu_backward_bf16)(t.block_dim, s, dy, g, u, dg, du, count, t.tile), "swiglu_backward_bf16"); break;
  }
  return {d_gate, d_up};
}

// autograd: d(gate), d(up) from swiglu_backward
using Sig = Tensor(const Tensor&, const Tensor&);
std::vector<Tensor> swiglu_bw(const ember::autograd::BackwardCtx<Sig>& c) {
  auto [d_gate, d_up] = op::swiglu_backward::call(c.grad(), c.arg<0>(), c.arg<1>());
  return {d_gate, d_up};
}
const auto kSwiGlu =
    ember::autograd::spec_of<op::swiglu>("AscendCSwiGluBackward", &swiglu_bw).saving(ember::autograd::saves(0, 1));

}  // namespace

EMBER_LIBRARY(ascendc, m) {
  m.def(op::swiglu());
  m.def(op::swiglu_backward());
}
EMBER_LIBRARY_IMPL(ascendc, CPU, m) {
  m.impl(op::swiglu(), &swiglu_cpu);
  m.impl(op::swiglu_backward(), &swiglu_backward_cpu);
}
EMBER_LIBRARY_IMPL(ascendc, NPU, m) {
  m.impl(op::swiglu(), &swiglu_npu);
  m.impl(op::swiglu_backward(), &swiglu_backward_npu);
}
EMBER_LIBRARY_IMPL(ascendc, Autograd, m) {
  m.impl(op::swiglu(), ember::autograd::autograd_kernel<&kSwiGlu>());
  ember::autograd::impl_no_double_backward(m, op::swiglu_backward());
}

Tensor swiglu(const Tensor& gate, const Tensor& up) { return op::swiglu::call(gate, up); }

}  // namespace ascendc_example
