// BM_peak/cpu/<unit>: the CPU's arithmetic peaks, and BM_peak/cpu/bandwidth: its memory
// bandwidth, measured by the library's roofline (device/roofline.h) over many iterations. They
// run first (ember_cases()), and every measurement raises the process's best figure, so the GEMM
// and step cases that follow compare with peaks measured over many iterations of the same run.
#include <ember/device/roofline.h>

#include <algorithm>

#include "cases.h"

namespace ember_bench {
namespace {

using ember::roofline::Unit;

void peak_case(benchmark::State& state, int64_t index) {
  const Unit u = ember::roofline::all_units()[static_cast<size_t>(index)];
  double best = 0;
  for (auto _ : state) best = std::max(best, ember::roofline::measure_flops(u));
  state.counters["FLOP/s"] = best;
}

void bandwidth_case(benchmark::State& state, int64_t) {
  double best = 0;
  ember::roofline::measure_bandwidth();  // first touch of the arrays
  for (auto _ : state) best = std::max(best, ember::roofline::measure_bandwidth());
  state.counters["bytes_per_second"] = best;
}

}  // namespace

double peak_flops(const std::string& unit) {
  for (Unit u : ember::roofline::all_units())
    if (unit == ember::roofline::unit_name(u)) return ember::roofline::peak_flops(u);
  return 0;
}

std::string gemm_peak_unit(ember::DType dtype) { return ember::roofline::unit_name(ember::roofline::gemm_unit(dtype)); }

std::vector<Case> peak_cases() {
  std::vector<Case> c;
  const auto& units = ember::roofline::all_units();
  for (size_t i = 0; i < units.size(); ++i)
    if (ember::roofline::has_unit(units[i]))
      c.push_back({std::string("BM_peak/cpu/") + ember::roofline::unit_name(units[i]), peak_case, int64_t(i)});
  c.push_back({"BM_peak/cpu/bandwidth", bandwidth_case, 0});
  return c;
}

}  // namespace ember_bench
