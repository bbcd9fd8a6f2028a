#include "cases.h"

using namespace ember;

namespace ember_bench {
namespace {

void matmul_f32(benchmark::State& state, int64_t n) {
  manual_seed(0);
  Tensor a = randn({n, n}), b = randn({n, n});
  for (auto _ : state) {
    Tensor c = a.matmul(b);
    benchmark::DoNotOptimize(c.impl());
  }
  set_flops(state, 2.0 * n * n * n);
}

// `a + b` allocating a new output each time, as user code does.
void add_f32(benchmark::State& state, int64_t n) {
  Tensor a = ones({n}), b = ones({n});
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c.impl());
  }
  state.SetBytesProcessed(state.iterations() * 3 * 4 * n);
}

void tiny_add_f32(benchmark::State& state, int64_t) {
  Tensor a = ones({1}), b = ones({1});
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c.impl());
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

}  // namespace

std::vector<Case> ember_cases() {
  std::vector<Case> c;
  for (int64_t n : {256, 512, 1024, 2048}) c.push_back({"BM_matmul/cpu/f32/" + std::to_string(n), matmul_f32, n});
  c.push_back({"BM_add/cpu/f32/16M", add_f32, int64_t(16) << 20});
  c.push_back({"BM_tiny_add/cpu/f32", tiny_add_f32, 1});
  c.push_back({"BM_autograd_tiny/cpu", autograd_tiny, 1});
  c.push_back({"BM_autograd_small_graph/cpu", autograd_small_graph, 1});
  return c;
}

void register_cases(const std::vector<Case>& cases) {
  for (const Case& k : cases) {
    auto* b = benchmark::RegisterBenchmark(k.name.c_str(), [k](benchmark::State& s) { k.fn(s, k.arg); });
    b->Unit(benchmark::kMicrosecond)->UseRealTime();  // multithreaded: rates per wall time
    if (k.manual_time) b->UseManualTime();
  }
}

}  // namespace ember_bench
