// The same cases with ember and with libtorch in one process, interleaved, so ratios come from
// one run. Configures libtorch as is fair to it on these machines (README, "Benchmarks"):
// intra-op threads = cores, OpenBLAS's spinning pool bounded (OPENBLAS_THREAD_TIMEOUT=4), and
// OpenBLAS on the kernels for this CPU: its own choice where it recognises the CPU, a forced
// OPENBLAS_CORETYPE only where its choice is below what the CPU (within EMBER_MAX_CPU_ISA) can do.
// Under EMBER_MAX_CPU_ISA, libtorch's own kernels are capped the same way (ATEN_CPU_CAPABILITY).
// Those variables are read when the libraries load, so the program re-executes itself with them
// set. It refuses to run on the reference BLAS (libtorch-dev without libopenblas0), whose fp32
// GEMM is ~4 GFLOP/s and makes every comparison meaningless.
#include <ATen/autocast_mode.h>
#include <dlfcn.h>
#include <link.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <exception>
#include <cstdlib>
#include <iostream>
#include <map>
#include <thread>

#include <ember/device/cpu/gemm.h>
#include <ember/device/cpu/isa.h>

#include "cases.h"

namespace {

void torch_matmul_f32(benchmark::State& state, int64_t n) {
  torch::manual_seed(0);
  auto a = torch::randn({n, n}), b = torch::randn({n, n});
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    auto c = a.matmul(b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  ember_bench::set_gemm_flops(state, 2.0 * n * n * n, ember::kFloat32,
                              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
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
void torch_llama_mlp_step(benchmark::State& state, int64_t tokens) {
  torch::manual_seed(0);
  const int64_t d = 1024, ff = 2816;
  auto w_norm = torch::ones({d}, torch::requires_grad());
  auto make = [](int64_t out, int64_t in) {
    return (torch::rand({out, in}) * 2 - 1).mul_(1.0 / std::sqrt(static_cast<double>(in))).requires_grad_();
  };
  auto gate = make(ff, d), up = make(ff, d), down = make(d, ff);
  auto x = torch::randn({tokens, d});
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
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) step();
  ember_bench::set_llama_step_counters(state, tokens, BF16 ? ember::kBFloat16 : ember::kFloat32,
                                       std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

// The same Conv2d step in libtorch: forward (bf16 through CPU autocast), sum, backward.
template <bool BF16>
void torch_conv2d_step(benchmark::State& state, int64_t) {
  torch::manual_seed(0);
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 64, 3).padding(1));
  auto x = torch::randn({64, 3, 56, 56}, torch::requires_grad());
  auto step = [&] {
    conv->zero_grad();
    x.mutable_grad() = torch::Tensor();
    at::autocast::set_cpu_enabled(BF16);
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    auto y = conv->forward(x);
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
    y.to(torch::kFloat).sum().backward();
  };
  step();
  for (auto _ : state) step();
  state.counters["FLOP/s"] = benchmark::Counter(3.0 * 2 * 64 * 64 * 3 * 9 * 56 * 56,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

// The same ConvTranspose2d step in libtorch.
void torch_conv_transpose2d_step(benchmark::State& state, int64_t) {
  torch::manual_seed(0);
  torch::nn::ConvTranspose2d conv(torch::nn::ConvTranspose2dOptions(128, 64, 4).stride(2).padding(1));
  auto x = torch::randn({64, 128, 14, 14}, torch::requires_grad());
  auto step = [&] {
    conv->zero_grad();
    x.mutable_grad() = torch::Tensor();
    conv->forward(x).sum().backward();
  };
  step();
  for (auto _ : state) step();
  state.counters["FLOP/s"] = benchmark::Counter(3.0 * 2 * 64 * 128 * 64 * 16 * 14 * 14,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

// The same pooling step in libtorch.
void torch_pool2d_step(benchmark::State& state, int64_t) {
  torch::manual_seed(0);
  auto x = torch::randn({32, 64, 112, 112}, torch::requires_grad());
  auto step = [&] {
    x.mutable_grad() = torch::Tensor();
    auto y = torch::adaptive_avg_pool2d(torch::max_pool2d(x, {3, 3}, {2, 2}, {1, 1}), {1, 1});
    y.sum().backward();
  };
  step();
  for (auto _ : state) step();
  state.counters["B/s"] = benchmark::Counter(2.0 * 4 * 32 * 64 * 112 * 112, benchmark::Counter::kIsIterationInvariantRate);
}

// A twin whose libtorch call throws reports the error on its line instead of ending the run.
template <void (*F)(benchmark::State&, int64_t)>
void guarded(benchmark::State& state, int64_t n) {
  try {
    F(state, n);
  } catch (const std::exception& e) {
    state.SkipWithError((std::string("libtorch: ") + e.what()).c_str());
  }
}

// libtorch twin of each ember case, by ember case name prefix.
std::map<std::string, void (*)(benchmark::State&, int64_t)> torch_twins() {
  return {{"BM_matmul/cpu/f32", guarded<torch_matmul_f32>},
          {"BM_matmul/cpu/bf16", guarded<torch_matmul_bf16>},
          {"BM_add/cpu/f32", guarded<torch_add_f32>},
          {"BM_tiny_add/cpu/f32", guarded<torch_tiny_add_f32>},
          {"BM_autograd_tiny/cpu", guarded<torch_autograd_tiny>},
          {"BM_autograd_small_graph/cpu", guarded<torch_autograd_small_graph>},
          {"BM_llama_mlp_step/cpu/f32", guarded<torch_llama_mlp_step<false>>},
          {"BM_llama_mlp_step/cpu/bf16", guarded<torch_llama_mlp_step<true>>},
          {"BM_conv2d_step/cpu/f32", guarded<torch_conv2d_step<false>>},
          {"BM_conv2d_step/cpu/bf16", guarded<torch_conv2d_step<true>>},
          {"BM_conv_transpose2d_step/cpu/f32", guarded<torch_conv_transpose2d_step>},
          {"BM_pool2d_step/cpu/f32", guarded<torch_pool2d_step>}};
}

// Under a cap below this CPU's bf16 units (EMBER_MAX_CPU_ISA or ONEDNN_MAX_CPU_ISA), libtorch
// would still choose oneDNN's bf16 matmul (it asks the hardware, not the cap) and oneDNN would
// refuse it. On a CPU without those units libtorch takes its own bf16 GEMM; make it do so here.
void libtorch_as_on_capped_cpu() {
  const ember::cpu::CpuInfo& cpu = ember::cpu::cpu_info();
  const std::string onednn = ember::cpu::onednn_isa();
  const bool onednn_bf16 = onednn.find("bf16") != std::string::npos || onednn.find("amx") != std::string::npos;
  if (cpu.detected < ember::cpu::Isa::Avx512Bf16 || (cpu.effective() >= ember::cpu::Isa::Avx512Bf16 && onednn_bf16))
    return;
  at::globalContext().setUserEnabledMkldnn(false);
  benchmark::AddCustomContext("libtorch_mkldnn", "off: bf16 as on a CPU without bf16 units (the ISA is capped)");
}

using ember::cpu::Isa;

// What the loaded BLAS is: its file, and for OpenBLAS the core it runs.
struct Blas {
  std::string path;  // real path of the loaded libblas / libopenblas
  bool openblas = false;
  std::string core;  // openblas_get_corename()
};

Blas loaded_blas() {
  Blas b;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.find("blas") != std::string::npos) {
          char real[PATH_MAX];
          static_cast<Blas*>(out)->path = realpath(name.c_str(), real) ? real : name;
          return 1;
        }
        return 0;
      },
      &b);
  if (auto corename = reinterpret_cast<char* (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_corename"))) {
    b.openblas = true;
    b.core = corename();
  }
  return b;
}

// The ISA class of an OpenBLAS core (0.3.21's x86-64 names).
Isa core_class(const std::string& core) {
  std::string c;
  for (char ch : core) c += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* k : {"skylakex", "cooperlake", "sapphirerapids"})
    if (c == k) return Isa::Avx512;
  for (const char* k : {"haswell", "zen", "skylake"})
    if (c == k) return Isa::Avx2;
  return Isa::Baseline;
}

// The OpenBLAS core for what this CPU may use, or nullptr below AVX2.
const char* wanted_core(Isa isa, const std::string& model) {
  if (isa >= Isa::Avx512Bf16) return "Cooperlake";
  if (isa >= Isa::Avx512) return "SkylakeX";
  if (isa >= Isa::Avx2) return model.find("AMD") != std::string::npos ? "Zen" : "Haswell";
  return nullptr;
}

void reexec_with_env(char** argv) {
  if (std::getenv("EMBER_BENCH_ENV_SET")) return;
  setenv("EMBER_BENCH_ENV_SET", "1", 1);
  const ember::cpu::CpuInfo& cpu = ember::cpu::cpu_info();
  Isa isa = cpu.effective();
  Blas blas = loaded_blas();  // OpenBLAS chose its core when it loaded, before main
  if (blas.openblas && !std::getenv("OPENBLAS_CORETYPE") && core_class(blas.core) != std::min(isa, Isa::Avx512)) {
    if (const char* core = wanted_core(isa, cpu.model)) setenv("OPENBLAS_CORETYPE", core, 1);
  }
  if (cpu.capped && !std::getenv("ATEN_CPU_CAPABILITY"))
    setenv("ATEN_CPU_CAPABILITY", isa >= Isa::Avx512 ? "avx512" : isa >= Isa::Avx2 ? "avx2" : "default", 1);
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
  setenv("OPENBLAS_NUM_THREADS", std::to_string(std::thread::hardware_concurrency()).c_str(), 0);
  execv("/proc/self/exe", argv);  // returns only on failure: run as is
}

// Context lines naming libtorch's BLAS; false (with the reason on stderr) for the reference BLAS.
bool check_blas() {
  Blas b = loaded_blas();
  if (!b.openblas) {
    std::cerr << "ember_vs_libtorch: libtorch's BLAS is " << (b.path.empty() ? "not loaded" : b.path)
              << ", the reference BLAS: its fp32 GEMM runs at a few GFLOP/s, so no comparison would mean "
                 "anything.\nInstall OpenBLAS (apt-get install libopenblas0) and run again.\n";
    return false;
  }
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  benchmark::AddCustomContext("libtorch_blas", b.path + ", OpenBLAS core " + b.core +
                                                   (forced ? std::string(" (OPENBLAS_CORETYPE=") + forced + ")" : " (its own choice)"));
  if (const char* cap = std::getenv("ATEN_CPU_CAPABILITY")) benchmark::AddCustomContext("libtorch_cpu_capability", cap);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  reexec_with_env(argv);
  if (!check_blas()) return 2;
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  torch::set_num_threads(threads);
  ember::set_num_threads(threads);
  benchmark::Initialize(&argc, argv);
  ember_bench::add_cpu_context();
  libtorch_as_on_capped_cpu();
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
