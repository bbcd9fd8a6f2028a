// The CPU's arithmetic peak, measured: 12 independent accumulator chains of one vector
// instruction per thread, on every intra-op thread. GEMM efficiency figures are quoted against
// these (BM_peak/cpu/f32_fma: vfmadd231ps zmm; BM_peak/cpu/bf16_dot: vdpbf16ps zmm, the
// instruction oneDNN's bf16 GEMM uses on CPUs without AMX).
#include <string>
#include <thread>
#include <vector>

#include "cases.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ember_bench {
#if defined(__x86_64__)
namespace {

constexpr int64_t kInner = 1 << 20;  // loop trips per thread and iteration (12 instructions each)

#define EMBER_PEAK_CHAINS(OP) OP(0) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7) OP(8) OP(9) OP(10) OP(11)

__attribute__((target("avx512f"))) float fma_chains() {
#define DECL(k) __m512 a##k = _mm512_setzero_ps();
  EMBER_PEAK_CHAINS(DECL)
#undef DECL
  __m512 x = _mm512_set1_ps(1e-9f);
  for (int64_t i = 0; i < kInner; ++i) {
#define STEP(k) a##k = _mm512_fmadd_ps(x, x, a##k);
    EMBER_PEAK_CHAINS(STEP)
#undef STEP
  }
  __m512 s = _mm512_setzero_ps();
#define SUM(k) s = _mm512_add_ps(s, a##k);
  EMBER_PEAK_CHAINS(SUM)
#undef SUM
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  return lanes[0];
}

__attribute__((target("avx512f,avx512bf16"))) float bf16_dot_chains() {
#define DECL(k) __m512 a##k = _mm512_setzero_ps();
  EMBER_PEAK_CHAINS(DECL)
#undef DECL
  __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80);  // bf16 pairs (1.0, 1.0)
  for (int64_t i = 0; i < kInner; ++i) {
#define STEP(k) a##k = _mm512_dpbf16_ps(a##k, x, x);
    EMBER_PEAK_CHAINS(STEP)
#undef STEP
  }
  __m512 s = _mm512_setzero_ps();
#define SUM(k) s = _mm512_add_ps(s, a##k);
  EMBER_PEAK_CHAINS(SUM)
#undef SUM
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  return lanes[0];
}

#undef EMBER_PEAK_CHAINS

// flops_per_op: 16 lanes x 2 (fma) or 16 lanes x 2 products x 2 (bf16 dot).
void peak(benchmark::State& state, bool supported, const char* feature, float (*chains)(), double flops_per_op) {
  if (!supported) {
    state.SkipWithError((std::string("this CPU has no ") + feature).c_str());
    return;
  }
  int threads = ember::get_num_threads();
  std::vector<float> sink(static_cast<size_t>(threads));
  for (auto _ : state) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sink[static_cast<size_t>(t)] = chains(); });
    for (auto& th : pool) th.join();
    benchmark::DoNotOptimize(sink.data());
  }
  set_flops(state, double(threads) * kInner * 12 * flops_per_op);
}

void peak_f32_fma(benchmark::State& state, int64_t) {
  peak(state, __builtin_cpu_supports("avx512f"), "avx512f", fma_chains, 32);
}
void peak_bf16_dot(benchmark::State& state, int64_t) {
  peak(state, __builtin_cpu_supports("avx512bf16"), "avx512bf16", bf16_dot_chains, 64);
}

}  // namespace

std::vector<Case> peak_cases() {
  return {{"BM_peak/cpu/f32_fma", peak_f32_fma, 0}, {"BM_peak/cpu/bf16_dot", peak_bf16_dot, 0}};
}
#else
std::vector<Case> peak_cases() { return {}; }
#endif

}  // namespace ember_bench
