// The same cases with ember and with libtorch in one process, interleaved, so ratios come from
// one run. Configures libtorch as reference/libtorch-here.md says is fair: 2 intra-op threads,
// OpenBLAS forced to its AVX-512 kernels (OPENBLAS_CORETYPE=Cooperlake; it does not recognise
// this CPU), and OpenBLAS's spinning pool bounded (OPENBLAS_THREAD_TIMEOUT=4). Those variables
// are read when the libraries load, so the program re-executes itself with them set.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <thread>

#include "cases.h"

namespace {

void torch_matmul_f32(benchmark::State& state, int64_t n) {
  torch::manual_seed(0);
  auto a = torch::randn({n, n}), b = torch::randn({n, n});
  for (auto _ : state) {
    auto c = a.matmul(b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  ember_bench::set_flops(state, 2.0 * n * n * n);
}

void torch_matmul_bf16(benchmark::State& state, int64_t n) {
  torch::manual_seed(0);
  auto a = torch::randn({n, n}).to(torch::kBFloat16), b = torch::randn({n, n}).to(torch::kBFloat16);
  for (auto _ : state) {
    auto c = a.matmul(b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  ember_bench::set_flops(state, 2.0 * n * n * n);
}

void torch_add_f32(benchmark::State& state, int64_t n) {
  auto a = torch::ones({n}), b = torch::ones({n});
  for (auto _ : state) {
    auto c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * 3 * 4 * n);
}

void torch_tiny_add_f32(benchmark::State& state, int64_t) {
  auto a = torch::ones({1}), b = torch::ones({1});
  for (auto _ : state) {
    auto c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
}

void torch_autograd_tiny(benchmark::State& state, int64_t) {
  auto a = torch::ones({1}, torch::requires_grad()), b = torch::ones({1}, torch::requires_grad());
  for (auto _ : state) {
    auto c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
}

void torch_autograd_small_graph(benchmark::State& state, int64_t) {
  auto a = torch::ones({1}, torch::requires_grad()), b = torch::ones({1}, torch::requires_grad());
  for (auto _ : state) {
    (a * b + a).sum().backward();
  }
}

// The same LLaMA MLP block step in libtorch: rmsnorm, SwiGLU, residual, mean(y^2), AdamW; bf16
// through libtorch's CPU autocast.
template <bool BF16>
void torch_llama_mlp_step(benchmark::State& state, int64_t) {
  torch::manual_seed(0);
  const int64_t d = 1024, ff = 2816;
  auto w_norm = torch::ones({d}, torch::requires_grad());
  auto make = [](int64_t out, int64_t in) {
    return (torch::rand({out, in}) * 2 - 1).mul_(1.0 / std::sqrt(static_cast<double>(in))).requires_grad_();
  };
  auto gate = make(ff, d), up = make(ff, d), down = make(d, ff);
  auto x = torch::randn({512, d});
  torch::optim::AdamW opt({w_norm, gate, up, down}, torch::optim::AdamWOptions(1e-4));
  auto step = [&] {
    opt.zero_grad();
    at::autocast::set_cpu_enabled(BF16);
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    auto n = x * torch::rsqrt(x.pow(2).mean(-1, true) + 1e-6) * w_norm;
    auto h = torch::silu(torch::linear(n, gate)) * torch::linear(n, up);
    auto y = x + torch::linear(h, down);
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
    y.to(torch::kFloat).pow(2).mean().backward();
    opt.step();
  };
  step();
  for (auto _ : state) step();
  state.counters["tokens/s"] = benchmark::Counter(512, benchmark::Counter::kIsIterationInvariantRate);
}

// libtorch twin of each ember case, by ember case name prefix.
std::map<std::string, void (*)(benchmark::State&, int64_t)> torch_twins() {
  return {{"BM_matmul/cpu/f32", torch_matmul_f32}, {"BM_matmul/cpu/bf16", torch_matmul_bf16},
          {"BM_add/cpu/f32", torch_add_f32}, {"BM_tiny_add/cpu/f32", torch_tiny_add_f32},
          {"BM_autograd_tiny/cpu", torch_autograd_tiny}, {"BM_autograd_small_graph/cpu", torch_autograd_small_graph},
          {"BM_llama_mlp_step/cpu/f32", torch_llama_mlp_step<false>}, {"BM_llama_mlp_step/cpu/bf16", torch_llama_mlp_step<true>}};
}

void reexec_with_env(char** argv) {
  if (std::getenv("EMBER_BENCH_ENV_SET")) return;
  setenv("EMBER_BENCH_ENV_SET", "1", 1);
  setenv("OPENBLAS_CORETYPE", "Cooperlake", 0);
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
  setenv("OPENBLAS_NUM_THREADS", "2", 0);
  execv("/proc/self/exe", argv);  // returns only on failure: run as is
}

}  // namespace

int main(int argc, char** argv) {
  reexec_with_env(argv);
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  torch::set_num_threads(threads);
  ember::set_num_threads(threads);
  benchmark::Initialize(&argc, argv);
  auto twins = torch_twins();
  for (const auto& c : ember_bench::ember_cases()) {
    ember_bench::register_cases({c});
    for (const auto& [prefix, fn] : twins) {
      if (c.name.rfind(prefix, 0) == 0) {
        std::string name = c.name;
        name.replace(0, prefix.size(), prefix.substr(0, prefix.find('/')) + "/libtorch" + prefix.substr(prefix.find('/')));
        ember_bench::register_cases({{name, fn, c.arg}});
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
