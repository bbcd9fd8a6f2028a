#include "ember/device/roofline.h"

#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "ember/core/error.h"
#include "ember/device/cpu/gemm.h"
#include "ember/device/cpu/isa.h"
#include "ember/device/parallel.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ember {
namespace roofline {
namespace {

using cpu::Isa;

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

#if defined(__x86_64__)
// One chains function: 12 accumulators of ACC, each updated by STEP(acc, x) every trip (the
// compiler unrolls the 12 and keeps them in registers), summed at the end so none is dead.
#define EMBER_CHAINS_FN(NAME, TARGET, ACC, X, X_INIT, ZERO, STEP, ADD, STORE, LANES) \
  __attribute__((target(TARGET))) float NAME(int64_t trips) {                        \
    ACC acc[12];                                                                     \
    for (ACC & v : acc) v = ZERO;                                                    \
    const X x = X_INIT;                                                              \
    for (int64_t i = 0; i < trips; ++i)                                              \
      for (ACC & v : acc) v = STEP(v, x);                                            \
    ACC s = ZERO;                                                                    \
    for (ACC & v : acc) s = ADD(s, v);                                               \
    alignas(64) float lanes[LANES];                                                  \
    STORE(lanes, s);                                                                 \
    return lanes[0];                                                                 \
  }

#define EMBER_FMA256(v, x) _mm256_fmadd_ps(x, x, v)
#define EMBER_FMA512(v, x) _mm512_fmadd_ps(x, x, v)
#define EMBER_DPBF16(v, x) _mm512_dpbf16_ps(v, x, x)
EMBER_CHAINS_FN(fma_ymm_chains, "avx2,fma", __m256, __m256, _mm256_set1_ps(1e-9f), _mm256_setzero_ps(), EMBER_FMA256,
                _mm256_add_ps, _mm256_store_ps, 8)
EMBER_CHAINS_FN(fma_zmm_chains, "avx512f", __m512, __m512, _mm512_set1_ps(1e-9f), _mm512_setzero_ps(), EMBER_FMA512,
                _mm512_add_ps, _mm512_store_ps, 16)
// x: bf16 pairs (1.0, 1.0)
EMBER_CHAINS_FN(bf16_dot_chains, "avx512f,avx512bf16", __m512, __m512bh, (__m512bh)_mm512_set1_epi32(0x3f803f80),
                _mm512_setzero_ps(), EMBER_DPBF16, _mm512_add_ps, _mm512_store_ps, 16)
#undef EMBER_FMA256
#undef EMBER_FMA512
#undef EMBER_DPBF16
#undef EMBER_CHAINS_FN

// AMX: six accumulator tiles (16 x 16 fp32) fed from one A and one B tile (16 rows x 32 bf16);
// a trip is 6 tile products (a tile op is ~16 cycles, so trips are 8x fewer than the others').
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Linux hands out the tile data state only on request (arch_prctl ARCH_REQ_XCOMP_PERM), to the
// whole process; asked once, before the first tile instruction.
bool amx_permitted() {
  static const bool ok = [] {
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return ok;
}

__attribute__((target("amx-tile,amx-bf16"))) float amx_chains(int64_t trips) {
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
  for (int64_t i = 0; i < trips / 8; ++i) {
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
#endif

struct UnitInfo {
  const char* name;
  Isa needs;              // hardware level that has it
  double flops_per_trip;  // per thread
};

const UnitInfo& info(Unit u) {
  static const UnitInfo k[] = {
      {"f32_fma/avx2", Isa::Avx2, 12.0 * 16},
      {"f32_fma/avx512", Isa::Avx512, 12.0 * 32},
      {"bf16_dot/avx512_bf16", Isa::Avx512Bf16, 12.0 * 64},
      {"bf16_tile/amx", Isa::Amx, 6.0 * 16 * 16 * 32 * 2 / 8},
  };
  return k[static_cast<int>(u)];
}

float run_chains(Unit u, int64_t trips) {
#if defined(__x86_64__)
  switch (u) {
    case Unit::F32FmaAvx2:
      return fma_ymm_chains(trips);
    case Unit::F32FmaAvx512:
      return fma_zmm_chains(trips);
    case Unit::Bf16DotAvx512:
      return bf16_dot_chains(trips);
    case Unit::Bf16TileAmx:
      return amx_permitted() ? amx_chains(trips) : 0.0f;
  }
#endif
  (void)u;
  (void)trips;
  return 0;
}

constexpr int64_t kTrips = 1 << 17;  // per thread and measurement: ~1-2 ms

std::mutex g_mu;
std::map<int, double> g_best;  // Unit -> FLOP/s; -1 -> bytes/s

double record(int key, double v) {
  std::lock_guard<std::mutex> g(g_mu);
  double& best = g_best[key];
  best = std::max(best, v);
  return v;
}
bool recorded(int key, double* v) {
  std::lock_guard<std::mutex> g(g_mu);
  auto it = g_best.find(key);
  if (it == g_best.end()) return false;
  *v = it->second;
  return true;
}
constexpr int kBandwidthKey = -1;

// The bandwidth arrays, kept for the process once made (512 MiB, first touched by the threads
// that stream them).
constexpr int64_t kStreamElems = int64_t(64) << 20;
struct StreamArrays {
  std::unique_ptr<float[]> a, b;
  StreamArrays() : a(new float[kStreamElems]), b(new float[kStreamElems]) {
    float *pa = a.get(), *pb = b.get();
#pragma omp parallel for num_threads(get_num_threads()) schedule(static)
    for (int64_t i = 0; i < kStreamElems; ++i) pa[i] = 1.0f, pb[i] = 1e-7f;
  }
};

}  // namespace

const std::vector<Unit>& all_units() {
  static const std::vector<Unit> u = {Unit::F32FmaAvx2, Unit::F32FmaAvx512, Unit::Bf16DotAvx512, Unit::Bf16TileAmx};
  return u;
}

const char* unit_name(Unit unit) { return info(unit).name; }

bool has_unit(Unit unit) {
#if defined(__x86_64__)
  if (cpu::cpu_info().detected < info(unit).needs) return false;
  return unit != Unit::Bf16TileAmx || amx_permitted();
#else
  (void)unit;
  return false;
#endif
}

Unit gemm_unit(DType dtype) {
  if (dtype == DType::BFloat16 && cpu::gemm_native_bf16())
    return cpu::cpu_has(Isa::Amx) && cpu::onednn_isa() == "avx512_core_amx" ? Unit::Bf16TileAmx : Unit::Bf16DotAvx512;
  return cpu::cpu_has(Isa::Avx512) ? Unit::F32FmaAvx512 : Unit::F32FmaAvx2;
}

double time_unit_on_this_thread(Unit unit, int64_t trips) {
  if (!has_unit(unit)) return 0;
  double t0 = now();
  volatile float sink = run_chains(unit, trips);
  (void)sink;
  return now() - t0;
}

double measure_flops(Unit unit) {
  if (!has_unit(unit)) return 0;
  // On the OpenMP team itself: threads of our own would compete for the cores with OpenMP's (and
  // OpenBLAS's) workers still spinning after a GEMM, and measure half the peak.
  const int threads = get_num_threads();
  std::vector<float> sink(static_cast<size_t>(threads));
  double t0 = now();
#pragma omp parallel num_threads(threads)
  sink[static_cast<size_t>(omp_get_thread_num())] = run_chains(unit, kTrips);
  double s = now() - t0;
  volatile float keep = sink[0];
  (void)keep;
  return record(static_cast<int>(unit), threads * info(unit).flops_per_trip * kTrips / s);
}

double peak_flops(Unit unit) {
  if (!has_unit(unit)) return 0;
  double v = 0;
  if (recorded(static_cast<int>(unit), &v)) return v;
  // Best run over a quarter of a second: the first runs start the OpenMP team and find the
  // cores at a low clock, and the machine is shared.
  double best = 0;
  for (double t0 = now(); now() - t0 < 0.25;) best = std::max(best, measure_flops(unit));
  return best;
}

double measure_bandwidth() {
  static StreamArrays arrays;  // (a function-local static: made once, thread-safely)
  float* a = arrays.a.get();
  const float* b = arrays.b.get();
  double t0 = now();
#pragma omp parallel for simd num_threads(get_num_threads()) schedule(static)
  for (int64_t i = 0; i < kStreamElems; ++i) a[i] += 0.5f * b[i];
  double s = now() - t0;
  return record(kBandwidthKey, 12.0 * static_cast<double>(kStreamElems) / s);
}

double peak_bandwidth() {
  double v = 0;
  if (recorded(kBandwidthKey, &v)) return v;
  double best = 0;
  for (int i = 0; i < 5; ++i) best = std::max(best, measure_bandwidth());
  return best;
}

double gemm_peak_flops(DType dtype) {
  double best = peak_flops(gemm_unit(dtype));
  if (dtype == DType::BFloat16) best = std::max(best, peak_flops(gemm_unit(DType::Float32)));
  return best;
}

double bound_seconds(const Cost& cost, DType gemm_dtype) {
  double flops = gemm_peak_flops(gemm_dtype), bw = peak_bandwidth();
  EMBER_CHECK_VALUE(flops > 0 && bw > 0, "roofline::bound_seconds: no peak was measured on this CPU (",
                    cpu::cpu_summary(), ")");
  return cost.gemm_flops / flops + cost.bytes / bw;
}

Cost llama_mlp_block(int64_t tokens, int64_t d_model, int64_t d_ff, DType compute) {
  const double t = static_cast<double>(tokens), d = static_cast<double>(d_model), f = static_cast<double>(d_ff);
  const double s = static_cast<double>(element_size(compute));
  Cost c;
  c.gemm_flops = 18.0 * t * d * f;
  c.bytes = t * (d * (16.0 + 3.0 * s) + 8.0 * s * f);
  return c;
}

Cost linear_layer(int64_t rows, int64_t in_features, int64_t out_features) {
  Cost c;
  c.gemm_flops = 6.0 * static_cast<double>(rows) * static_cast<double>(in_features) * static_cast<double>(out_features);
  return c;
}

Cost adamw(int64_t params) {
  Cost c;
  c.bytes = 28.0 * static_cast<double>(params);
  return c;
}

}  // namespace roofline
}  // namespace ember
