// ascendc_swiglu: your own NPU kernels in Ascend C, behind an ember op.
//
// The fused SwiGLU gate silu(gate) * up, written as two Ascend C kernels (swiglu_kernels.cpp:
// forward and backward, float / half / bfloat16_t), built with CANN's ascendc_library and launched
// with ACLRT_LAUNCH_KERNEL from the op's NPU kernel (swiglu_op.cpp), shown working:
//
//   1. the forward kernel against ember's built-in silu_mul, float32 and bfloat16
//   2. the backward kernel: gradcheck through the NPU kernels (float64 finite differences of a
//      float32 kernel, so at float32's resolution), and against the built-in backward
//   3. a LlamaMLPBlock on npu:0 trained with the op as its gate, side by side with the built-in
//      gate: the same losses to float32 / bfloat16 rounding
//   4. the emulator's checks: a launch that reads past its tensor is a named fault
//
// Run: build/examples/ascendc_swiglu [--steps N] [--check]
#include <ember/ember.h>

#include <cmath>
#include <iomanip>
#include <iostream>

#include "../common.h"
#include "aclrtlaunch_swiglu_forward_float.h"
#include "swiglu_op.h"

using namespace ember;

namespace {
void check(bool ok, const std::string& what) {
  std::cout << (ok ? "  ok    " : "  FAIL  ") << what << "\n";
  if (!ok) throw std::runtime_error("check failed: " + what);
}
double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a.cpu().to(kFloat64) - b.cpu().to(kFloat64)).abs().max().item<double>();
}

// Trains a block on npu:0 for `steps` AdamW steps on fixed random data; returns the losses.
std::vector<double> train(nn::GateFn gate, int64_t steps, bool bf16) {
  manual_seed(7);
  auto block = std::make_shared<nn::LlamaMLPBlock>(64, 176, nullptr, std::move(gate));
  block->to(Device("npu:0"));
  optim::AdamWOptions o;
  o.lr = 1e-3;
  optim::AdamW opt(block->parameters(), o);
  Tensor x = randn({32, 64}).npu(), target = randn({32, 64}).npu();
  std::vector<double> losses;
  for (int64_t s = 0; s < steps; ++s) {
    opt.zero_grad();
    Tensor loss;
    {
      amp::AutocastGuard ac(DeviceType::NPU, kBFloat16, bf16);
      loss = ((*block)(x).to(kFloat32) - target).square().mean();
    }
    loss.backward();
    opt.step();
    losses.push_back(loss.item<double>());
  }
  return losses;
}
}  // namespace

int main(int argc, char** argv) {
  try {
    demo::Args args(argc, argv,
                    "usage: ascendc_swiglu [--steps N]\n"
                    "  An op whose NPU kernels are Ascend C kernels (fused SwiGLU, forward and backward):\n"
                    "  values, gradients and LlamaMLPBlock training against ember's built-in silu_mul.");
    int64_t steps = args.get("steps", int64_t(30), "training steps of part 3");
    if (!args.finish()) return 0;
    std::cout << std::setprecision(4);
    manual_seed(0);

    std::cout << "1. The forward kernel (swiglu_forward_<dtype>) against ember's silu_mul\n";
    Tensor g = randn({37, 1000}), u = randn({37, 1000});  // 37000 elements: a ragged last tile
    for (DType dt : {kFloat32, kBFloat16, kFloat16}) {
      Tensor gn = g.to(dt).npu(), un = u.to(dt).npu();
      Tensor mine = ascendc_example::swiglu(gn, un), ref = silu_mul(gn, un);
      const double tol = dt == kFloat32 ? 1e-6 : dt == kBFloat16 ? 1.0 / 128 : 1.0 / 1024;  // relative, one rounding
      const double err = ((mine.cpu().to(kFloat64) - ref.cpu().to(kFloat64)).abs() /
                          (ref.cpu().to(kFloat64).abs() + 1e-3)).max().item<double>();
      std::ostringstream what;
      what << dt << ": largest relative difference " << err << " (bound " << tol << ", the dtype's rounding)";
      check(err <= tol, what.str());
    }

    std::cout << "\n2. The backward kernel (swiglu_backward_<dtype>)\n";
    Tensor g64 = randn({6, 40}, kFloat64).requires_grad_(), u64 = randn({6, 40}, kFloat64).requires_grad_();
    auto via_npu = [](const std::vector<Tensor>& in) {
      return ascendc_example::swiglu(in[0].to(kFloat32).npu(), in[1].to(kFloat32).npu()).cpu().to(kFloat64);
    };
    // float32 kernels: finite differences with eps 1e-3 (error ~ 1e-7 / 1e-3 + 1e-6), float32's resolution.
    check(autograd::gradcheck(via_npu, {g64, u64}, 1e-3, 1e-3, 1e-2), "gradcheck of d/dgate and d/dup through the NPU kernels");
    for (DType dt : {kFloat32, kBFloat16}) {
      Tensor ga = g.to(dt).npu().requires_grad_(), ua = u.to(dt).npu().requires_grad_();
      Tensor gb = g.to(dt).npu().requires_grad_(), ub = u.to(dt).npu().requires_grad_();
      Tensor dy = randn({37, 1000}).to(dt).npu();
      ascendc_example::swiglu(ga, ua).backward(dy);
      silu_mul(gb, ub).backward(dy);
      const double scale = gb.grad().abs().max().item<double>();
      const double tol = dt == kFloat32 ? 1e-5 : 1.0 / 64;
      const double err = std::max(max_abs_diff(ga.grad(), gb.grad()), max_abs_diff(ua.grad(), ub.grad())) / scale;
      std::ostringstream what;
      what << dt << ": gradients match silu_mul's backward, largest difference " << err << " of the largest gradient";
      check(err <= tol, what.str());
    }

    std::cout << "\n3. A LlamaMLPBlock on npu:0 with the op as its gate (" << steps << " AdamW steps)\n";
    for (bool bf16 : {false, true}) {
      std::vector<double> mine = train(ascendc_example::swiglu, steps, bf16), ref = train(nullptr, steps, bf16);
      double worst = 0;
      for (size_t i = 0; i < mine.size(); ++i) worst = std::max(worst, std::fabs(mine[i] - ref[i]) / ref[i]);
      std::ostringstream what;
      what << (bf16 ? "bf16 autocast" : "float32") << ": loss " << ref.front() << " -> " << mine.back()
           << " (built-in gate: " << ref.back() << "), largest relative difference " << worst;
      check(mine.back() < 0.9 * mine.front() && worst <= (bf16 ? 2e-2 : 1e-4), what.str());
    }

    std::cout << "\n4. The emulator's checks: a launch told n is larger than the tensors (1000 floats, told 4096)\n";
    Tensor small = randn({1000}).npu(), out = empty_like(small);
    void* p = npu::device_ptr(small);
    aclrtStream s = npu::raw_stream(npu::current_stream(0));
    ACLRT_LAUNCH_KERNEL(swiglu_forward_float)(1, s, p, p, npu::device_ptr(out), 4096, 4096);
    try {
      npu::current_stream(0).synchronize();
      check(false, "the fault must be reported");
    } catch (const Error& e) {
      std::string m = e.what();
      check(m.find("swiglu_forward_float, core 0 of 1") != std::string::npos &&
                m.find("outside its block of ember's caching allocator") != std::string::npos,
            "reported at synchronize: " + m.substr(0, m.find('\n')));
    }
    std::cout << "\n== summary ==\nascendc::swiglu: Ascend C forward and backward kernels behind an ember op match "
                 "silu_mul, gradcheck, and train LlamaMLPBlock on npu:0. Sources: examples/ascendc/\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "\nascendc_swiglu: " << e.what() << "\n";
    return 1;
  }
}
