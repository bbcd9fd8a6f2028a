#include "cases.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <ember/device/cpu/gemm.h>
#include <ember/device/cpu/isa.h>
#include <ember/device/cpu/packed_gemm.h>
#include <ember/device/roofline.h>

using namespace ember;

namespace ember_bench {
namespace {

// Waits for the device's queued work, so NPU timings cover execution, not just the launch.
void finish(const Device& dev) {
  if (dev.is_npu()) npu::synchronize(dev.index());
}

template <DeviceType DT, DType D>
void matmul(benchmark::State& state, int64_t n) {
  Device dev(DT, 0);
  manual_seed(0);
  Tensor a = randn({n, n}).to(D).to(dev), b = randn({n, n}).to(D).to(dev);
  finish(dev);
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    Tensor c = a.matmul(b);
    finish(dev);
    benchmark::DoNotOptimize(c.impl());
  }
  set_gemm_flops(state, 2.0 * n * n * n, D, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

// `a + b` allocating a new output each time, as user code does.
template <DeviceType DT>
void add_f32(benchmark::State& state, int64_t n) {
  Device dev(DT, 0);
  Tensor a = ones({n}, dev), b = ones({n}, dev);
  finish(dev);
  for (auto _ : state) {
    Tensor c = a + b;
    finish(dev);
    benchmark::DoNotOptimize(c.impl());
  }
  state.SetBytesProcessed(state.iterations() * 3 * 4 * n);
}

// Host cost of one launch as CANN programs make it: aclnnAddGetWorkspaceSize (phase 1) plus
// aclnnAdd (enqueue) on 1-element tensors, without waiting. The queue is drained every 4096
// launches outside the timing.
void npu_launch(benchmark::State& state, int64_t) {
  using namespace npu;
  Tensor a = ones({1}, Device("npu:0")), b = ones({1}, Device("npu:0")), c = empty({1}, Device("npu:0"));
  aclTensor *ta = to_acl_tensor(a), *tb = to_acl_tensor(b), *tc = to_acl_tensor(c);
  float one = 1.0f;
  aclScalar* alpha = aclCreateScalar(&one, ACL_FLOAT);
  aclrtStream stream = raw_stream(current_stream(0));
  int64_t n = 0;
  for (auto _ : state) {
    uint64_t ws = 0;
    aclOpExecutor* ex = nullptr;
    if (aclnnAddGetWorkspaceSize(ta, tb, alpha, tc, &ws, &ex) != ACLNN_SUCCESS || aclnnAdd(nullptr, 0, ex, stream) != ACLNN_SUCCESS) {
      state.SkipWithError(aclGetRecentErrMsg());
      break;
    }
    if (++n % 4096 == 0) {
      state.PauseTiming();
      synchronize(0);
      state.ResumeTiming();
    }
  }
  synchronize(0);
  aclDestroyScalar(alpha);
  for (aclTensor* t : {ta, tb, tc}) aclDestroyTensor(t);
}

// The same through ember: `a + b` on npu tensors (allocation, conversion, EXEC_NPU_CMD).
void npu_tiny_add(benchmark::State& state, int64_t) {
  Tensor a = ones({1}, Device("npu:0")), b = ones({1}, Device("npu:0"));
  int64_t n = 0;
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c.impl());
    if (++n % 4096 == 0) {
      state.PauseTiming();
      npu::synchronize(0);
      state.ResumeTiming();
    }
  }
  npu::synchronize(0);
}

void tiny_add_f32(benchmark::State& state, int64_t) {
  Tensor a = ones({1}), b = ones({1});
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c.impl());
  }
}

// The same with the profiler recording (record_shapes off): its cost per recorded op. The
// session is restarted every 65536 adds outside the timing, so its buffers stay bounded.
void tiny_add_profiled(benchmark::State& state, int64_t) {
  Tensor a = ones({1}), b = ones({1});
  auto prof = std::make_unique<profiler::Profile>();
  int64_t n = 0;
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c.impl());
    if (++n % 65536 == 0) {
      state.PauseTiming();
      prof.reset();
      prof = std::make_unique<profiler::Profile>();
      state.ResumeTiming();
    }
  }
}

// Recording cost: a 1-element add whose inputs require grad (a graph node per call).
void autograd_tiny(benchmark::State& state, int64_t) {
  Tensor a = ones({1}).requires_grad_(), b = ones({1}).requires_grad_();
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c.impl());
  }
}

// (a * b + a).sum().backward() on 1-element tensors: recording plus the engine.
void autograd_small_graph(benchmark::State& state, int64_t) {
  Tensor a = ones({1}).requires_grad_(), b = ones({1}).requires_grad_();
  for (auto _ : state) {
    (a * b + a).sum().backward();
  }
}

// One training step of a LLaMA MLP block (d_model 1024, d_ff 2816) on `tokens` rows: forward,
// backward of mean(y^2), AdamW update; bf16 runs the block under autocast (fp32 master weights).
template <DeviceType DT, bool BF16>
void llama_mlp_step(benchmark::State& state, int64_t tokens) {
  Device dev(DT, 0);
  manual_seed(0);
  nn::LlamaMLPBlock block(1024, 2816);
  block.to(dev);
  Tensor x = randn({tokens, 1024}).to(dev);
  optim::AdamW opt(block.parameters(), {1e-4});
  auto step = [&] {
    opt.zero_grad();
    Tensor y;
    {
      amp::AutocastGuard g(DT, kBFloat16, BF16);
      y = block(x);
    }
    y.square().mean().backward();
    opt.step();
    finish(dev);
  };
  step();  // first step: primitives, optimizer state, allocator
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) step();
  set_llama_step_counters(state, tokens, BF16 ? kBFloat16 : kFloat32,
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

// Conv2d forward + backward (issue 14's case): batch 64, 3 -> 64 channels, 56x56, 3x3, padding
// 1, bias; the loss is sum(y) so the backward computes the input, weight and bias gradients.
// bf16 runs under autocast (fp32 master weights).
template <DeviceType DT, bool BF16>
void conv2d_step(benchmark::State& state, int64_t) {
  Device dev(DT, 0);
  manual_seed(0);
  nn::Conv2d conv(nn::Conv2dOptions(3, 64, 3).padding(1));
  conv.to(dev);
  Tensor x = randn({64, 3, 56, 56}).to(dev).requires_grad_();
  auto step = [&] {
    conv.zero_grad();
    x.set_grad(Tensor());
    Tensor y;
    {
      amp::AutocastGuard g(DT, kBFloat16, BF16);
      y = conv.forward(x);
    }
    y.sum().backward();
    finish(dev);
  };
  step();
  for (auto _ : state) step();
  // forward 2 N O C k^2 H W FLOP, backward twice that
  set_flops(state, 3.0 * 2 * 64 * 64 * 3 * 9 * 56 * 56);
}

// ConvTranspose2d forward + backward as in DCGAN's generator: batch 64, 128 -> 64 channels,
// 14x14 -> 28x28 (4x4 kernel, stride 2, padding 1), bias, fp32; the loss is sum(y).
template <DeviceType DT>
void conv_transpose2d_step(benchmark::State& state, int64_t) {
  Device dev(DT, 0);
  manual_seed(0);
  nn::ConvTranspose2d conv(nn::ConvTranspose2dOptions(128, 64, 4).stride(2).padding(1));
  conv.to(dev);
  Tensor x = randn({64, 128, 14, 14}).to(dev).requires_grad_();
  auto step = [&] {
    conv.zero_grad();
    x.set_grad(Tensor());
    conv.forward(x).sum().backward();
    finish(dev);
  };
  step();
  for (auto _ : state) step();
  set_flops(state, 3.0 * 2 * 64 * 128 * 64 * 16 * 14 * 14);
}

// A pooling step as in a CNN's stem: max_pool2d 3x3, stride 2, padding 1 over [32, 64, 112, 112]
// fp32, forward and backward (sum as the loss), then a global average pool of the result.
template <DeviceType DT>
void pool2d_step(benchmark::State& state, int64_t) {
  Device dev(DT, 0);
  manual_seed(0);
  Tensor x = randn({32, 64, 112, 112}).to(dev).requires_grad_();
  auto step = [&] {
    x.set_grad(Tensor());
    Tensor y = adaptive_avg_pool2d(max_pool2d(x, {3}, {2}, {1}), {1});
    y.sum().backward();
    finish(dev);
  };
  step();
  for (auto _ : state) step();
  state.counters["B/s"] = benchmark::Counter(2.0 * 4 * 32 * 64 * 112 * 112, benchmark::Counter::kIsIterationInvariantRate);
}

// One AdamW step over the LLaMA MLP block's parameters (3 x 2816 x 1024 fp32, grads set):
// memory-bound, ~240 MB of traffic (read p, g, m, v; write p, m, v).
void adamw_step(benchmark::State& state, int64_t) {
  manual_seed(0);
  std::vector<Tensor> params;
  for (int i = 0; i < 3; ++i) {
    Tensor p = randn({2816, 1024}).requires_grad_();
    p.set_grad(randn({2816, 1024}));
    params.push_back(p);
  }
  optim::AdamW opt(params, {1e-4});
  opt.step();  // state allocation
  for (auto _ : state) opt.step();
  state.SetBytesProcessed(state.iterations() * 7 * 4 * 3 * 2816 * 1024);
}

// The forward GEMM of one LLaMA MLP weight (2816 x 1024) at `tokens` rows: the fp32 linear
// (Kind::F32), the rounded linear autocast runs for bf16 where 16-bit GEMMs compute in fp32, on
// the f32 weight (Kind::Rounded: on AVX-512 the weight is rounded into an fp32 copy as it is
// staged, at every call) and on the weight rounded once beforehand by _round_to, as autocast now
// does once per forward (Kind::PreRounded: read in place there).
enum class WeightKind { F32, Rounded, PreRounded };
template <WeightKind Kind>
void weight_gemm(benchmark::State& state, int64_t tokens) {
  manual_seed(0);
  Tensor x = randn({tokens, 1024}), w = randn({2816, 1024});
  if (Kind == WeightKind::PreRounded) w = _round_to(w, kBFloat16);
  NoGradGuard no_grad;
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    Tensor y = Kind == WeightKind::F32 ? linear(x, w) : _linear_rounded(x, w, kBFloat16);
    benchmark::DoNotOptimize(y.impl());
  }
  set_gemm_flops(state, 2.0 * static_cast<double>(tokens) * 1024 * 2816, Kind == WeightKind::F32 ? kFloat32 : kBFloat16,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace

std::vector<Case> ember_cases() {
  std::vector<Case> c = peak_cases();  // first: GEMM cases report against these
  constexpr DeviceType CPU = DeviceType::CPU, NPU = DeviceType::NPU;
  for (int64_t n : {256, 512, 1024, 2048}) c.push_back({"BM_matmul/cpu/f32/" + std::to_string(n), matmul<CPU, kFloat32>, n});
  for (int64_t n : {1024, 2048}) {
    std::string s = std::to_string(n);
    c.push_back({"BM_matmul/cpu/bf16/" + s, matmul<CPU, kBFloat16>, n});
    c.push_back({"BM_matmul/cpu/f16/" + s, matmul<CPU, kFloat16>, n});
    c.push_back({"BM_matmul/npu/f32/" + s, matmul<NPU, kFloat32>, n});
    c.push_back({"BM_matmul/npu/bf16/" + s, matmul<NPU, kBFloat16>, n});
    c.push_back({"BM_matmul/npu/f16/" + s, matmul<NPU, kFloat16>, n});
  }
  c.push_back({"BM_add/cpu/f32/16M", add_f32<CPU>, int64_t(16) << 20});
  c.push_back({"BM_add/npu/f32/16M", add_f32<NPU>, int64_t(16) << 20});
  for (int64_t t : {64, 128, 256, 512, 2048}) {
    std::string s = "/" + std::to_string(t);
    c.push_back({"BM_llama_mlp_step/cpu/f32" + s, llama_mlp_step<CPU, false>, t});
    c.push_back({"BM_llama_mlp_step/npu/f32" + s, llama_mlp_step<NPU, false>, t});
    c.push_back({"BM_llama_mlp_step/cpu/bf16" + s, llama_mlp_step<CPU, true>, t});
    c.push_back({"BM_llama_mlp_step/npu/bf16" + s, llama_mlp_step<NPU, true>, t});
  }
  for (int64_t t : {64, 512}) {
    c.push_back({"BM_weight_gemm/cpu/f32/" + std::to_string(t), weight_gemm<WeightKind::F32>, t});
    c.push_back({"BM_weight_gemm/cpu/rounded_bf16/" + std::to_string(t), weight_gemm<WeightKind::Rounded>, t});
    c.push_back({"BM_weight_gemm/cpu/prerounded_bf16/" + std::to_string(t), weight_gemm<WeightKind::PreRounded>, t});
  }
  c.push_back({"BM_adamw_step/cpu/f32/8.65M", adamw_step, 1});
  c.push_back({"BM_conv2d_step/cpu/f32", conv2d_step<CPU, false>, 1});
  c.push_back({"BM_conv2d_step/cpu/bf16", conv2d_step<CPU, true>, 1});
  c.push_back({"BM_conv2d_step/npu/f32", conv2d_step<NPU, false>, 1});
  c.push_back({"BM_conv2d_step/npu/bf16", conv2d_step<NPU, true>, 1});
  c.push_back({"BM_conv_transpose2d_step/cpu/f32", conv_transpose2d_step<CPU>, 1});
  c.push_back({"BM_conv_transpose2d_step/npu/f32", conv_transpose2d_step<NPU>, 1});
  c.push_back({"BM_pool2d_step/cpu/f32", pool2d_step<CPU>, 1});
  c.push_back({"BM_pool2d_step/npu/f32", pool2d_step<NPU>, 1});
  c.push_back({"BM_npu_launch", npu_launch, 1});
  c.push_back({"BM_tiny_add/npu/f32", npu_tiny_add, 1});
  c.push_back({"BM_tiny_add/cpu/f32", tiny_add_f32, 1});
  c.push_back({"BM_tiny_add/cpu/f32/profiled", tiny_add_profiled, 1});
  c.push_back({"BM_autograd_tiny/cpu", autograd_tiny, 1});
  c.push_back({"BM_autograd_small_graph/cpu", autograd_small_graph, 1});
  return c;
}

void set_gemm_flops(benchmark::State& state, double flops_per_iter, DType dtype, double seconds) {
  set_flops(state, flops_per_iter);
  std::string unit = gemm_peak_unit(dtype);
  double peak = peak_flops(unit);
  if (peak > 0 && seconds > 0) {
    state.counters["of_peak"] = flops_per_iter * static_cast<double>(state.iterations()) / seconds / peak;
    state.SetLabel("peak " + unit);
  }
}

ember::roofline::Cost llama_step_cost(int64_t tokens, DType compute) {
  using namespace ember::roofline;
  const int64_t d = 1024, f = 2816, params = 3 * d * f + d;
  Cost cost = llama_mlp_block(tokens, d, f, compute);
  cost += adamw(params);
  return cost;
}

void set_llama_step_counters(benchmark::State& state, int64_t tokens, DType compute, double seconds) {
  using namespace ember::roofline;
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsIterationInvariantRate);
  const Cost cost = llama_step_cost(tokens, compute);
  const double per_step = seconds / static_cast<double>(std::max<int64_t>(1, state.iterations()));
  const double peak = peak_flops(gemm_unit(compute)), best = gemm_peak_flops(compute), bw = peak_bandwidth();
  if (peak <= 0 || bw <= 0 || per_step <= 0) return;
  const double bound = bound_seconds(cost, compute);
  state.counters["of_peak"] = cost.gemm_flops / peak / per_step;
  state.counters["of_bound"] = bound / per_step;
  char label[192];
  std::snprintf(label, sizeof label, "bound %.2f ms: %.2f GFLOP at %.0f G/s + %.1f MB at %.1f GB/s; GEMMs on %s",
                bound * 1e3, cost.gemm_flops / 1e9, best / 1e9, cost.bytes / 1e6, bw / 1e9,
                unit_name(gemm_unit(compute)));
  state.SetLabel(label);
}

void add_cpu_context() {
  benchmark::AddCustomContext("cpu", cpu::cpu_summary());
  const char* onednn_cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (!onednn_cap) onednn_cap = std::getenv("DNNL_MAX_CPU_ISA");
  benchmark::AddCustomContext("onednn_isa", cpu::onednn_isa() + (onednn_cap ? std::string(" (ONEDNN_MAX_CPU_ISA=") + onednn_cap + ")" : ""));
  benchmark::AddCustomContext("bf16_gemm", cpu::gemm_native_bf16() ? "native (oneDNN bf16)"
                                           : cpu::packed_gemm_enabled()
                                               ? "ember's packed fp32 kernel (AVX2), converting while packing"
                                               : "staged through oneDNN fp32");
  if (double r = cpu::bf16_dot_to_fma_ratio(); r > 0)
    benchmark::AddCustomContext("bf16_units", "vdpbf16ps at " + std::to_string(r).substr(0, 4) +
                                                  "x fp32 FMA's FLOP rate (bf16 runs on them from 0.75x)");
}

void register_cases(const std::vector<Case>& cases) {
  for (const Case& k : cases) {
    auto* b = benchmark::RegisterBenchmark(k.name.c_str(), [k](benchmark::State& s) { k.fn(s, k.arg); });
    b->Unit(benchmark::kMicrosecond)->UseRealTime();  // multithreaded: rates per wall time
    if (k.manual_time) b->UseManualTime();
  }
}

}  // namespace ember_bench
