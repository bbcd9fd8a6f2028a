// The Ascend C SwiGLU kernels (examples/ascendc) against ember's built-in silu_mul on the emulated
// NPU, forward, 4096 x 11008 elements (one LLaMA-7B MLP's gate at 4096 tokens), float32 and
// bfloat16, interleaved. Rates are bytes/s of the op's traffic (two inputs read, one output).
// Run: build/bench/ascendc_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <ember/ember.h>

#include "swiglu_op.h"

using namespace ember;

namespace {

template <bool kAscendC>
void swiglu(benchmark::State& state, DType dt) {
  manual_seed(0);
  Tensor g = randn({4096, 11008}).to(dt).npu(), u = randn({4096, 11008}).to(dt).npu();
  npu::synchronize(0);
  for (auto _ : state) {
    Tensor out = kAscendC ? ascendc_example::swiglu(g, u) : silu_mul(g, u);
    npu::synchronize(0);
    benchmark::DoNotOptimize(out.impl());
  }
  state.SetBytesProcessed(state.iterations() * 3 * g.numel() * static_cast<int64_t>(element_size(dt)));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (DType dt : {kFloat32, kBFloat16}) {
    const std::string d = dt == kFloat32 ? "f32" : "bf16";
    benchmark::RegisterBenchmark(("BM_ascendc_swiglu/npu/" + d + "/4096x11008").c_str(),
                                 [dt](benchmark::State& s) { swiglu<true>(s, dt); })->UseRealTime()->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_silu_mul/npu/" + d + "/4096x11008").c_str(),
                                 [dt](benchmark::State& s) { swiglu<false>(s, dt); })->UseRealTime()->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
