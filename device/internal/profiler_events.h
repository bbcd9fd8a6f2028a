// The profiler's event analysis shared by its reports (device/profiler_*.cpp); not installed.
#pragma once

#include <string>
#include <unordered_map>
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

// [start, end) of the ProfilerStep#N range, with_device: and of the NPU work it launched (which
// may end later: the host runs ahead); false if there is none.
bool step_window(const std::vector<Event>& events, int64_t step, int64_t* start, int64_t* end, bool with_device = true);

}  // namespace detail
}  // namespace profiler
}  // namespace ember
