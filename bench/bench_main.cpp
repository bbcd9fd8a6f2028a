// ember's benchmarks. Run: build/bench/ember_bench [--benchmark_filter=...]
#include "cases.h"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  ember_bench::add_cpu_context();
  ember_bench::register_cases(ember_bench::ember_cases());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
