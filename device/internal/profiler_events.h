// The profiler's event analysis shared by its reports (device/profiler_*.cpp); not installed.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ember/device/profiler.h"

namespace ember {
namespace profiler {
namespace detail {

std::string us(int64_t ns);  // "12.345": microseconds with three decimals
// "12.345 us", "1.234 ms" or "1.234 s" for a time in microseconds (us_decimals below 1 ms).
std::string time_text(double us, int us_decimals = 3);

// Host ranges with their nesting: parent index, time in direct children, launches made directly.
struct Nesting {
  std::vector<size_t> ranges;                   // indices into events
  std::vector<long> parent;                     // per range: index into ranges, or -1
  std::vector<int64_t> child_ns;                // per range
  std::unordered_map<uint64_t, long> launcher;  // flow -> the innermost range around its launch
};
Nesting nest(const std::vector<Event>& events);  // events sorted by start, parents first

// An Ascend C core's slice: in the Chrome trace (a row per core), not in the SVG (one row per stream).
inline bool is_core(const Event& e) { return e.device >= 0 && (e.track >> kCoreTrackShift) != 0; }

// N of a "ProfilerStep#N" range (profiler::step()), -1 for any other event.
int64_t step_number(const Event& e);
// [start, end) of the ProfilerStep#N range; false if there is none.
bool step_window(const std::vector<Event>& events, int64_t step, int64_t* start, int64_t* end);
// A step's NPU work: the flows of the launches in [start, end) on any host thread, and the
// [start, end) of the kernels they launched (their whole-launch slices), by start. The host runs
// ahead, so that work may run long after the step.
std::unordered_set<uint64_t> flows_launched(const std::vector<Event>& events, int64_t start, int64_t end);
std::vector<std::pair<int64_t, int64_t>> kernels_of(const std::vector<Event>& events,
                                                    const std::unordered_set<uint64_t>& flows);

}  // namespace detail
}  // namespace profiler
}  // namespace ember
