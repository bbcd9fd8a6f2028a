// ember's benchmark cases, shared by the ember-only target and the libtorch side-by-side one.
// Names: BM_<what>/<device>/<dtype>/<shape>; rates are FLOP/s (matmul) or bytes/s (add).
#pragma once

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

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
// The CPU's measured f32 FMA and bf16 dot-product peaks (x86-64 with AVX-512; empty elsewhere).
std::vector<Case> peak_cases();
void register_cases(const std::vector<Case>& cases);

inline void set_flops(benchmark::State& state, double flops_per_iter) {
  state.counters["FLOP/s"] = benchmark::Counter(flops_per_iter, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace ember_bench
