// The CPU's arithmetic peaks, measured: independent accumulator chains of one instruction per
// thread, on every intra-op thread, for each unit this CPU has (whatever EMBER_MAX_CPU_ISA says:
// the cap chooses which peak a GEMM is compared with, not what the hardware does):
//   f32_fma/avx2          vfmadd231ps ymm (8 lanes x 2 FLOP), every x86-64-v3 CPU
//   f32_fma/avx512        vfmadd231ps zmm (16 x 2)
//   bf16_dot/avx512_bf16  vdpbf16ps zmm (16 lanes x 2 products x 2), oneDNN's bf16 GEMM without AMX
//   bf16_tile/amx         tdpbf16ps on 16x32 bf16 tiles (16 x 16 x 32 x 2 FLOP), oneDNN's with AMX
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <ember/device/cpu/gemm.h>
#include <ember/device/cpu/isa.h>

#include "cases.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ember_bench {
namespace {

using ember::cpu::Isa;

#if defined(__x86_64__)
constexpr int64_t kInner = 1 << 20;  // loop trips per thread and measurement (12 instructions each)

// One chains function: 12 accumulators of ACC, each updated by STEP(acc, x) every trip (the
// compiler unrolls the 12 and keeps them in registers), summed at the end so none is dead.
#define EMBER_PEAK_CHAINS_FN(NAME, TARGET, ACC, X, X_INIT, ZERO, STEP, ADD, STORE, LANES) \
  __attribute__((target(TARGET))) float NAME() {                                       \
    ACC acc[12];                                                                       \
    for (ACC& v : acc) v = ZERO;                                                       \
    const X x = X_INIT;                                                                \
    for (int64_t i = 0; i < kInner; ++i)                                               \
      for (ACC& v : acc) v = STEP(v, x);                                               \
    ACC s = ZERO;                                                                      \
    for (ACC& v : acc) s = ADD(s, v);                                                  \
    alignas(64) float lanes[LANES];                                                    \
    STORE(lanes, s);                                                                   \
    return lanes[0];                                                                   \
  }

#define EMBER_FMA256(v, x) _mm256_fmadd_ps(x, x, v)
#define EMBER_FMA512(v, x) _mm512_fmadd_ps(x, x, v)
#define EMBER_DPBF16(v, x) _mm512_dpbf16_ps(v, x, x)
EMBER_PEAK_CHAINS_FN(fma_ymm_chains, "avx2,fma", __m256, __m256, _mm256_set1_ps(1e-9f), _mm256_setzero_ps(), EMBER_FMA256,
                     _mm256_add_ps, _mm256_store_ps, 8)
EMBER_PEAK_CHAINS_FN(fma_zmm_chains, "avx512f", __m512, __m512, _mm512_set1_ps(1e-9f), _mm512_setzero_ps(), EMBER_FMA512,
                     _mm512_add_ps, _mm512_store_ps, 16)
// x: bf16 pairs (1.0, 1.0)
EMBER_PEAK_CHAINS_FN(bf16_dot_chains, "avx512f,avx512bf16", __m512, __m512bh, (__m512bh)_mm512_set1_epi32(0x3f803f80),
                     _mm512_setzero_ps(), EMBER_DPBF16, _mm512_add_ps, _mm512_store_ps, 16)
#undef EMBER_FMA256
#undef EMBER_FMA512
#undef EMBER_DPBF16
#undef EMBER_PEAK_CHAINS_FN

// AMX: six accumulator tiles (16 x 16 fp32) fed from one A and one B tile (16 rows x 32 bf16).
// Linux hands out the tile data state only on request (arch_prctl ARCH_REQ_XCOMP_PERM).
constexpr int64_t kAmxInner = kInner / 8;  // a tile op is ~16 cycles: keep the run near the others'
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Linux grants it to the whole process; asked once, before the first tile instruction.
bool amx_permitted() {
  static const bool ok = [] {
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return ok;
}

__attribute__((target("amx-tile,amx-bf16"))) float amx_chains() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = 16;
  }
  alignas(64) static const uint16_t ones[16 * 32] = {};  // the values do not matter for the rate
  alignas(64) float out[16 * 16];
  _tile_loadconfig(&cfg);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_zero(4);
  _tile_zero(5);
  _tile_loadd(6, ones, 64);
  _tile_loadd(7, ones, 64);
  for (int64_t i = 0; i < kAmxInner; ++i) {
    _tile_dpbf16ps(0, 6, 7);
    _tile_dpbf16ps(1, 6, 7);
    _tile_dpbf16ps(2, 6, 7);
    _tile_dpbf16ps(3, 6, 7);
    _tile_dpbf16ps(4, 6, 7);
    _tile_dpbf16ps(5, 6, 7);
  }
  _tile_stored(0, out, 64);
  _tile_release();
  return out[0];
}

struct Unit {
  const char* name;     // BM_peak/cpu/<name>
  Isa needs;            // hardware level that has it
  float (*chains)();
  double flops_per_run;  // per thread
};

const std::vector<Unit>& units() {
  static const std::vector<Unit> u = {
      {"f32_fma/avx2", Isa::Avx2, fma_ymm_chains, double(kInner) * 12 * 16},
      {"f32_fma/avx512", Isa::Avx512, fma_zmm_chains, double(kInner) * 12 * 32},
      {"bf16_dot/avx512_bf16", Isa::Avx512Bf16, bf16_dot_chains, double(kInner) * 12 * 64},
      {"bf16_tile/amx", Isa::Amx, amx_chains, double(kAmxInner) * 6 * 16 * 16 * 32 * 2},
  };
  return u;
}

bool hardware_has(const Unit& u) {
  if (ember::cpu::cpu_info().detected < u.needs) return false;
  return u.needs != Isa::Amx || amx_permitted();
}

// One run of the chains on every intra-op thread; returns seconds. The chains run on the OpenMP
// team itself: threads of our own would compete for the cores with OpenMP's (and OpenBLAS's)
// workers still spinning after a GEMM, and measure half the peak.
double run_once(const Unit& u) {
  const int threads = ember::get_num_threads();
  std::vector<float> sink(static_cast<size_t>(threads));
  auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
  {
    if (u.needs == Isa::Amx) amx_permitted();
    sink[static_cast<size_t>(omp_get_thread_num())] = u.chains();
  }
  benchmark::DoNotOptimize(sink.data());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::mutex g_mu;
std::map<std::string, double> g_measured;  // unit -> best FLOP/s seen in this process

void record(const std::string& unit, double flops) {
  std::lock_guard<std::mutex> g(g_mu);
  double& best = g_measured[unit];
  best = std::max(best, flops);
}

// BM_peak cases run first (ember_cases()), so GEMM cases compare with a peak measured over many
// iterations of the same run.
void peak_case(benchmark::State& state, int64_t index) {
  const Unit& u = units()[static_cast<size_t>(index)];
  const double flops = double(ember::get_num_threads()) * u.flops_per_run;
  double seconds = 0;
  for (auto _ : state) seconds += run_once(u);
  set_flops(state, flops);
  if (seconds > 0) record(u.name, flops * static_cast<double>(state.iterations()) / seconds);
}
#endif

}  // namespace

double peak_flops(const std::string& unit) {
#if defined(__x86_64__)
  {
    std::lock_guard<std::mutex> g(g_mu);
    auto it = g_measured.find(unit);
    if (it != g_measured.end()) return it->second;
  }
  double best = 0;
  for (const Unit& u : units()) {
    if (unit != u.name || !hardware_has(u)) continue;
    // Best run over a quarter of a second: the first runs start the OpenMP team and find the
    // cores at a low clock, and the machine is shared.
    double spent = 0;
    for (int rep = 0; rep < 3 || spent < 0.25; ++rep) {
      double s = run_once(u);
      spent += s;
      best = std::max(best, double(ember::get_num_threads()) * u.flops_per_run / s);
    }
  }
  record(unit, best);
  return best;
#else
  (void)unit;
  return 0;
#endif
}

std::string gemm_peak_unit(ember::DType dtype) {
  using ember::cpu::cpu_has;
  if (dtype == ember::kBFloat16 && ember::cpu::gemm_native_bf16())
    return cpu_has(Isa::Amx) && ember::cpu::onednn_isa() == "avx512_core_amx" ? "bf16_tile/amx" : "bf16_dot/avx512_bf16";
  return cpu_has(Isa::Avx512) ? "f32_fma/avx512" : "f32_fma/avx2";
}

std::vector<Case> peak_cases() {
  std::vector<Case> c;
#if defined(__x86_64__)
  for (size_t i = 0; i < units().size(); ++i)
    if (hardware_has(units()[i])) c.push_back({std::string("BM_peak/cpu/") + units()[i].name, peak_case, int64_t(i)});
#endif
  return c;
}

}  // namespace ember_bench
