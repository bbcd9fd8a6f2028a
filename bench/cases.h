// ember's benchmark cases, shared by the ember-only target and the libtorch side-by-side one.
// Names: BM_<what>/<device>/<dtype>/<shape>; rates are FLOP/s (matmul) or bytes/s (add).
#pragma once

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include <ember/device/roofline.h>
#include <ember/ember.h>

namespace ember_bench {

struct Case {
  std::string name;
  void (*fn)(benchmark::State&, int64_t);
  int64_t arg;
  bool manual_time = false;
};

// Every ember case, in the order they run.
std::vector<Case> ember_cases();
// BM_peak/cpu/<unit>: the measured peak of every arithmetic unit this CPU has (peak.cpp).
std::vector<Case> peak_cases();
void register_cases(const std::vector<Case>& cases);

// tokens/s, of_peak and of_bound of a BM_llama_mlp_step case (d_model 1024, d_ff 2816, AdamW) that
// ran state.iterations() steps in `seconds` of wall time; the label names the bound's inputs.
// of_peak: the block's GEMM FLOPs at the measured peak of the unit its GEMMs run on; of_bound:
// the bound of ember/device/roofline.h (those FLOPs at the fastest unit that can run them, plus
// the element-wise passes' and AdamW's bytes at the measured bandwidth) over the measured step.
void set_llama_step_counters(benchmark::State& state, int64_t tokens, ember::DType compute, double seconds);
// The bound's inputs for that step (GEMM FLOPs and the bytes of AdamW and the element-wise passes).
ember::roofline::Cost llama_step_cost(int64_t tokens, ember::DType compute);
// A unit's peak FLOP/s on all intra-op threads: the best its BM_peak case measured in this run,
// else measured now (0 if the CPU lacks it).
double peak_flops(const std::string& unit);
// The unit a GEMM in this dtype runs on here (within EMBER_MAX_CPU_ISA and oneDNN's ISA):
// "f32_fma/avx2", "f32_fma/avx512", "bf16_dot/avx512_bf16" or "bf16_tile/amx".
std::string gemm_peak_unit(ember::DType dtype);
// Context lines both benchmark programs print: the CPU model and ISA, caps, oneDNN's ISA, and
// the bf16 GEMM path.
void add_cpu_context();

inline void set_flops(benchmark::State& state, double flops_per_iter) {
  state.counters["FLOP/s"] = benchmark::Counter(flops_per_iter, benchmark::Counter::kIsIterationInvariantRate);
}
// FLOP/s plus "of_peak": the fraction of the matching unit's measured peak (named in the label);
// `seconds` is the wall time of the timed loop (the cases use real time).
void set_gemm_flops(benchmark::State& state, double flops_per_iter, ember::DType dtype, double seconds);

}  // namespace ember_bench
