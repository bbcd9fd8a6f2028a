// The profiler's per-step summary: where each ProfilerStep's wall time went.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_set>
#include <sstream>

#include "ember/device/internal/profiler_events.h"
#include "ember/device/profiler.h"

namespace ember {
namespace profiler {
namespace {

constexpr int64_t kGapNs = 10000;  // a device idle stretch counts as a gap from 10 us


// The union of [start, end) intervals (sorted by start) clipped to [lo, hi): its length, and the
// gaps between its pieces (and the window's ends) of at least kGapNs.
struct Union {
  int64_t busy = 0, gaps = 0, longest_gap = 0;
};
Union union_of(const std::vector<std::pair<int64_t, int64_t>>& iv, int64_t lo, int64_t hi) {
  Union u;
  int64_t cur = lo;  // covered up to here
  auto gap = [&](int64_t g) {
    if (g >= kGapNs) ++u.gaps;
    u.longest_gap = std::max(u.longest_gap, g);
  };
  for (const auto& [a0, b0] : iv) {
    const int64_t a = std::max(a0, lo), b = std::min(b0, hi);
    if (b <= a || b <= cur) continue;
    if (a > cur) gap(a - cur);
    u.busy += b - std::max(a, cur);
    cur = b;
  }
  gap(hi - cur);
  return u;
}

std::string time_text(double us) { return detail::time_text(us, 1); }

std::string bytes_text(int64_t n) {
  char b[32];
  if (n >= (int64_t(1) << 20)) std::snprintf(b, sizeof b, "%.1f MiB", static_cast<double>(n) / 1048576.0);
  else std::snprintf(b, sizeof b, "%.1f KiB", static_cast<double>(n) / 1024.0);
  return b;
}

}  // namespace

int64_t detail::step_number(const Event& e) {
  static constexpr char kPrefix[] = "ProfilerStep#";
  if (e.kind != Event::Range || std::strcmp(e.category, "step") != 0 || e.name.rfind(kPrefix, 0) != 0) return -1;
  return std::strtoll(e.name.c_str() + sizeof kPrefix - 1, nullptr, 10);
}

std::unordered_set<uint64_t> detail::flows_launched(const std::vector<Event>& ev, int64_t start, int64_t end) {
  std::unordered_set<uint64_t> flows;
  for (const Event& e : ev)
    if (e.kind == Event::Launch && e.start_ns >= start && e.start_ns < end) flows.insert(e.flow);
  return flows;
}

std::vector<std::pair<int64_t, int64_t>> detail::kernels_of(const std::vector<Event>& ev,
                                                            const std::unordered_set<uint64_t>& flows) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const Event& e : ev)
    if (e.kind == Event::Kernel && e.device >= 0 && !is_core(e) && flows.count(e.flow)) out.push_back({e.start_ns, e.end_ns});
  std::sort(out.begin(), out.end());  // streams interleave: by start
  return out;
}

namespace {
using detail::step_number;

void summarize_device(StepSummary& s, const std::vector<std::pair<int64_t, int64_t>>& kernels, int64_t step_end) {
  s.has_device = !kernels.empty();
  if (!s.has_device) return;
  int64_t lo = kernels.front().first, hi = lo;
  for (const auto& k : kernels) hi = std::max(hi, k.second);
  const Union u = union_of(kernels, lo, hi);
  s.device_busy_us = static_cast<double>(u.busy) / 1e3;
  s.device_span_us = static_cast<double>(hi - lo) / 1e3;
  s.device_idle_us = s.device_span_us - s.device_busy_us;
  s.idle_gaps = u.gaps;
  s.longest_gap_us = static_cast<double>(u.longest_gap) / 1e3;
  s.device_lag_us = static_cast<double>(std::max<int64_t>(0, hi - step_end)) / 1e3;
}
}  // namespace

bool detail::step_window(const std::vector<Event>& events, int64_t step, int64_t* start, int64_t* end) {
  for (const Event& e : events) {
    if (step_number(e) != step) continue;
    *start = e.start_ns;
    *end = e.end_ns;
    return true;
  }
  return false;
}

std::vector<StepSummary> Profile::step_summaries() const {
  const std::vector<Event>& ev = events();
  std::vector<StepSummary> out;
  for (const Event& st : ev) {
    const int64_t n = step_number(st);
    if (n < 0) continue;
    StepSummary s;
    s.step = n;
    s.wall_us = static_cast<double>(st.end_ns - st.start_ns) / 1e3;
    std::vector<std::pair<int64_t, int64_t>> host;
    std::map<int, int64_t> mem_now, mem_peak;
    for (const Event& e : ev) {
      if (e.kind == Event::Memory) {
        if (e.start_ns < st.start_ns) mem_now[e.device] = e.allocated;
        else if (e.start_ns < st.end_ns) mem_peak[e.device] = std::max(mem_peak[e.device], e.allocated);
      } else if (e.kind == Event::Range && e.device < 0 && e.track == st.track && step_number(e) < 0) {
        host.push_back({e.start_ns, e.end_ns});
      }
    }
    for (const auto& [d, v] : mem_now) mem_peak[d] = std::max(mem_peak[d], v);  // held at the start
    s.host_busy_us = static_cast<double>(union_of(host, st.start_ns, st.end_ns).busy) / 1e3;
    summarize_device(s, detail::kernels_of(ev, detail::flows_launched(ev, st.start_ns, st.end_ns)), st.end_ns);
    for (const auto& [d, v] : mem_peak) s.memory_peak.push_back({d, v});
    out.push_back(std::move(s));
  }
  return out;
}

std::string Profile::step_table() const {
  const std::vector<StepSummary> steps = step_summaries();
  std::ostringstream os;
  if (steps.empty()) return "No steps recorded (profiler::step() marks them).\n";
  char buf[320];
  std::snprintf(buf, sizeof buf, "%-8s %11s %11s %7s %12s %12s %12s %9s %12s %12s  %s", "Step", "Wall", "Host busy",
                "Host %", "Device busy", "Device span", "Device idle", "Idle gaps", "Longest gap", "Device lag",
                "Memory peak");
  os << buf << "\n" << std::string(140, '-') << "\n";
  for (const StepSummary& s : steps) {
    std::string mem;
    for (const auto& [d, v] : s.memory_peak)
      mem += (mem.empty() ? "" : ", ") + (d < 0 ? std::string("cpu ") : "npu:" + std::to_string(d) + " ") + bytes_text(v);
    auto dev = [&](double v) { return s.has_device ? time_text(v) : std::string("-"); };
    std::snprintf(buf, sizeof buf, "#%-7" PRId64 " %11s %11s %6.1f%% %12s %12s %12s %9s %12s %12s  %s", s.step,
                  time_text(s.wall_us).c_str(), time_text(s.host_busy_us).c_str(),
                  s.wall_us > 0 ? 100.0 * s.host_busy_us / s.wall_us : 0.0, dev(s.device_busy_us).c_str(),
                  dev(s.device_span_us).c_str(), dev(s.device_idle_us).c_str(),
                  s.has_device ? std::to_string(s.idle_gaps).c_str() : "-", dev(s.longest_gap_us).c_str(),
                  dev(s.device_lag_us).c_str(), mem.empty() ? "-" : mem.c_str());
    os << buf << "\n";
  }
  os << "Wall: between the step's marks. Host busy: its thread inside recorded ranges. Device: the NPU work the "
        "step launched, wherever it ran: busy (any stream executing), span (first start to last end), idle and gaps "
        "(of 10 us or more) inside the span, lag (how long after the step's end mark its last kernel ended: the host "
        "ran ahead).\n";
  return os.str();
}

}  // namespace profiler
}  // namespace ember
