// How fast oneDNN's fp32 GEMM runs the LLaMA MLP step's products on this machine: the ceiling
// of any step built on it, measured against the FMA peak of the same run (issue 35). Built when
// oneDNN is found:
//   build/bench/onednn_gemm_bench [--benchmark_filter=...]
//
// The block (d_model 1024, d_ff 2816, T tokens) runs nine products per step, on six shapes:
//   fwd_up    X[T,1024] W[2816,1024]^T      (gate and up: two)   "NT", the weight transposed
//   fwd_down  H[T,2816] Wd[1024,2816]^T     (one)                "NT"
//   dx_up     dG[T,2816] W[2816,1024]       (two)                "NN"
//   dx_down   dY[T,1024] Wd[1024,2816]      (one)                "NN"
//   dw_up     dG^T[2816,T] X[T,1024]        (two)                "TN", K = T
//   dw_down   dY^T[1024,T] H[T,2816]        (one)                "TN", K = T
// Each runs as oneDNN's matmul on the operands' own strides ("plain", what ember's GEMM does),
// and for the products that read a weight also on the weight reordered beforehand into the
// layout the primitive prefers ("prepacked": the reorder is not timed; BM_onednn_reorder times
// it). BM_onednn_step_gemms runs the step's nine products in sequence and prints
// `of_bound_ceiling`: the bound of ember/device/roofline.h (the f32 step's, as BM_llama_mlp_step
// computes it) over the GEMMs' measured time plus the bound's byte term, i.e. the of_bound a step
// would reach whose GEMMs run as here and whose every other pass runs at the measured bandwidth.
// ember's BM_llama_mlp_step/cpu/f32 cases run here too, after the peaks, for the comparison.
#include <benchmark/benchmark.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cases.h"

namespace {

using dt = dnnl::memory::data_type;
using dims = dnnl::memory::dims;

constexpr int64_t kModel = 1024, kFf = 2816;

enum class Form { NT, NN, TN };
struct Shape {
  const char* name;
  Form form;
  int64_t k_or_m, n;  // NT / NN: K and N (M = T); TN: M and N (K = T)
  int count;          // products of this shape per step
};
const Shape kShapes[] = {{"fwd_up", Form::NT, kModel, kFf, 2}, {"fwd_down", Form::NT, kFf, kModel, 1},
                         {"dx_up", Form::NN, kFf, kModel, 2},  {"dx_down", Form::NN, kModel, kFf, 1},
                         {"dw_up", Form::TN, kFf, kModel, 2},  {"dw_down", Form::TN, kModel, kFf, 1}};

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// One product C[M,N] = A[M,K] B[K,N] with its buffers and primitive.
struct Gemm {
  int64_t M = 0, K = 0, N = 0;
  std::vector<float> a, b, c;
  dnnl::memory am, bm, cm, packed;
  dnnl::matmul prim;
  dnnl::reorder pack;

  Gemm(const Shape& s, int64_t tokens, bool prepacked) {
    const bool tn = s.form == Form::TN;
    M = tn ? s.k_or_m : tokens;
    K = tn ? tokens : s.k_or_m;
    N = s.n;
    a.assign(static_cast<size_t>(M * K), 0.5f);
    b.assign(static_cast<size_t>(K * N), 0.25f);
    c.assign(static_cast<size_t>(M * N), 0.f);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000.f - 0.5f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 40503u) % 1000) / 1000.f - 0.5f;
    // NT: B = W^T, W row-major [N, K]; TN: A = G^T, G row-major [K, M].
    dnnl::memory::desc ad({M, K}, dt::f32, tn ? dims{1, M} : dims{K, 1});
    dnnl::memory::desc bd({K, N}, dt::f32, s.form == Form::NT ? dims{1, K} : dims{N, 1});
    dnnl::memory::desc cd({M, N}, dt::f32, dims{N, 1});
    dnnl::memory::desc wd = prepacked ? dnnl::memory::desc({K, N}, dt::f32, dnnl::memory::format_tag::any) : bd;
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(ad, wd, cd), engine());
    prim = dnnl::matmul(pd);
    am = dnnl::memory(ad, engine(), a.data());
    bm = dnnl::memory(bd, engine(), b.data());
    cm = dnnl::memory(cd, engine(), c.data());
    packed = prepacked ? dnnl::memory(pd.weights_desc(), engine()) : bm;
    if (prepacked) {
      pack = dnnl::reorder(bm, packed);
      reorder();
    }
  }
  static dnnl::stream& stream() {
    static dnnl::stream s(engine());
    return s;
  }
  void run() {
    prim.execute(stream(), {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, packed}, {DNNL_ARG_DST, cm}});
    stream().wait();
  }
  void reorder() {
    pack.execute(stream(), bm, packed);
    stream().wait();
  }
  double flops() const { return 2.0 * static_cast<double>(M) * static_cast<double>(K) * static_cast<double>(N); }
};

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void gemm_case(benchmark::State& state, const Shape& s, int64_t tokens, bool prepacked) {
  Gemm g(s, tokens, prepacked);
  g.run();
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) g.run();
  ember_bench::set_gemm_flops(state, g.flops(), ember::kFloat32, since(t0));
}

void reorder_case(benchmark::State& state, const Shape& s) {
  Gemm g(s, 64, true);
  for (auto _ : state) g.reorder();
  state.SetBytesProcessed(state.iterations() * 2 * 4 * s.k_or_m * s.n);
}

void step_case(benchmark::State& state, int64_t tokens, bool prepacked) {
  std::vector<std::unique_ptr<Gemm>> gemms;
  double flops = 0;
  for (const Shape& s : kShapes) {
    auto g = std::make_unique<Gemm>(s, tokens, prepacked && s.form != Form::TN);
    g->run();
    flops += s.count * g->flops();
    gemms.push_back(std::move(g));
  }
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state)
    for (size_t i = 0; i < gemms.size(); ++i)
      for (int r = 0; r < kShapes[i].count; ++r) gemms[i]->run();
  const double seconds = since(t0);
  ember_bench::set_gemm_flops(state, flops, ember::kFloat32, seconds);
  using namespace ember::roofline;
  const Cost cost = ember_bench::llama_step_cost(tokens, ember::kFloat32);
  const double per_step = seconds / static_cast<double>(std::max<int64_t>(1, state.iterations()));
  const double bw = peak_bandwidth();
  if (bw <= 0 || per_step <= 0) return;
  const double bound = bound_seconds(cost, ember::kFloat32), bytes_time = cost.bytes / bw;
  state.counters["of_bound_ceiling"] = bound / (per_step + bytes_time);
  char label[160];
  std::snprintf(label, sizeof label, "bound %.2f ms; GEMMs %.2f ms + %.1f MB at %.1f GB/s = %.2f ms", bound * 1e3,
                per_step * 1e3, cost.bytes / 1e6, bw / 1e9, (per_step + bytes_time) * 1e3);
  state.SetLabel(label);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  ember_bench::add_cpu_context();
  ember_bench::register_cases(ember_bench::peak_cases());
  // ember's own f32 steps, in the same run (same peaks) as the ceiling they are compared with.
  std::vector<ember_bench::Case> steps;
  for (const auto& c : ember_bench::ember_cases())
    if (c.name.rfind("BM_llama_mlp_step/cpu/f32/", 0) == 0) steps.push_back(c);
  ember_bench::register_cases(steps);
  for (const Shape& s : kShapes) {
    for (int64_t t : {64, 512, 2048}) {
      const std::string tail = std::string(s.name) + "/" + std::to_string(t);
      benchmark::RegisterBenchmark(("BM_onednn_gemm/plain/" + tail).c_str(),
                                   [&s, t](benchmark::State& st) { gemm_case(st, s, t, false); })
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
      if (s.form != Form::TN)
        benchmark::RegisterBenchmark(("BM_onednn_gemm/prepacked/" + tail).c_str(),
                                     [&s, t](benchmark::State& st) { gemm_case(st, s, t, true); })
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
    }
    if (s.form != Form::TN)
      benchmark::RegisterBenchmark((std::string("BM_onednn_reorder/") + s.name).c_str(),
                                   [&s](benchmark::State& st) { reorder_case(st, s); })
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
  }
  for (int64_t t : {64, 128, 256, 512, 2048})
    for (bool prepacked : {false, true})
      benchmark::RegisterBenchmark(
          ("BM_onednn_step_gemms/" + std::string(prepacked ? "prepacked/" : "plain/") + std::to_string(t)).c_str(),
          [t, prepacked](benchmark::State& st) { step_case(st, t, prepacked); })
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
