// The profiler's reports: the Chrome trace and key_averages.
#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "ember/device/profiler.h"
#include "ember/core/error.h"
#include "ember/core/json.h"

namespace ember {
namespace profiler {
namespace {

constexpr int kNpuPidBase = 100;  // pid of npu:d's tracks; the host is pid 0

std::string us(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%03d", ns / 1000, static_cast<int>(ns % 1000));
  return buf;
}

int pid_of(const Event& e) { return e.device < 0 ? 0 : kNpuPidBase + e.device; }

// Host ranges with their nesting: parent index, time in direct children, launches made directly.
struct Nesting {
  std::vector<size_t> ranges;          // indices into events
  std::vector<long> parent;            // per range: index into ranges, or -1
  std::vector<int64_t> child_ns;       // per range
  std::unordered_map<uint64_t, long> launcher;  // flow -> the innermost range around its launch
};

Nesting nest(const std::vector<Event>& events) {
  Nesting n;
  std::map<uint64_t, std::vector<long>> stacks;  // per host track: open ranges
  for (size_t i = 0; i < events.size(); ++i) {  // sorted by start, parents first
    const Event& e = events[i];
    if (e.device >= 0 || (e.kind != Event::Range && e.kind != Event::Launch)) continue;
    auto& st = stacks[e.track];
    while (!st.empty()) {
      const Event& top = events[n.ranges[static_cast<size_t>(st.back())]];
      if (e.start_ns >= top.start_ns && e.end_ns <= top.end_ns) break;
      st.pop_back();
    }
    long parent = st.empty() ? -1 : st.back();
    if (e.kind == Event::Launch) {
      n.launcher[e.flow] = parent;
      continue;
    }
    long idx = static_cast<long>(n.ranges.size());
    n.ranges.push_back(i);
    n.parent.push_back(parent);
    n.child_ns.push_back(0);
    if (parent >= 0) n.child_ns[static_cast<size_t>(parent)] += e.end_ns - e.start_ns;
    st.push_back(idx);
  }
  return n;
}

// An Ascend C core's slice: in the Chrome trace (a row per core), not in the SVG (one row per stream).
bool is_core(const Event& e) { return e.device >= 0 && (e.track >> kCoreTrackShift) != 0; }

// A row's name: "thread T", "stream S", or "stream S core C" (an Ascend C launch's core).
std::string track_name(bool host, uint64_t tid) {
  if (host) return "thread " + std::to_string(tid);
  const uint64_t core = tid >> kCoreTrackShift;
  const uint64_t stream = tid & ((uint64_t(1) << kCoreTrackShift) - 1);
  return "stream " + std::to_string(stream) + (core ? " core " + std::to_string(core - 1) : std::string());
}

}  // namespace

std::string Profile::chrome_trace() const {
  const std::vector<Event>& ev = events();
  std::ostringstream os;
  os << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) os << ",\n";
    first = false;
  };
  std::set<std::pair<int, uint64_t>> tracks;
  for (const Event& e : ev) {
    const int pid = pid_of(e);
    if (e.kind == Event::Memory) {  // a counter track of the device's process
      sep();
      os << "{\"name\":" << json::quote(e.name) << ",\"cat\":\"memory\",\"ph\":\"C\",\"ts\":" << us(e.start_ns)
         << ",\"pid\":" << pid << ",\"tid\":0,\"args\":{\"allocated\":" << e.allocated << ",\"reserved\":" << e.reserved
         << "}}";
      continue;
    }
    tracks.insert({pid, e.track});
    if (e.kind == Event::Launch) {
      sep();
      os << "{\"name\":\"launch\",\"cat\":\"launch\",\"ph\":\"s\",\"id\":" << e.flow << ",\"ts\":" << us(e.start_ns)
         << ",\"pid\":" << pid << ",\"tid\":" << e.track << "}";
      continue;
    }
    sep();
    os << "{\"name\":" << json::quote(e.name) << ",\"cat\":\"" << e.category << "\",\"ph\":\"X\",\"ts\":"
       << us(e.start_ns) << ",\"dur\":" << us(e.end_ns - e.start_ns) << ",\"pid\":" << pid << ",\"tid\":" << e.track;
    os << ",\"args\":{";
    bool arg = false;
    if (!e.shapes.empty()) {
      os << "\"shapes\":" << json::quote(e.shapes);
      arg = true;
    }
    if (e.sequence_nr >= 0) os << (arg ? "," : "") << "\"sequence_nr\":" << e.sequence_nr, arg = true;
    if (e.flow) os << (arg ? "," : "") << "\"flow\":" << e.flow;
    os << "}}";
    if (e.kind == Event::Kernel && e.flow) {  // the arrow's head, bound to this slice
      sep();
      os << "{\"name\":\"launch\",\"cat\":\"launch\",\"ph\":\"f\",\"bp\":\"e\",\"id\":" << e.flow
         << ",\"ts\":" << us(e.start_ns) << ",\"pid\":" << pid << ",\"tid\":" << e.track << "}";
    }
  }
  std::set<int> pids;
  for (const auto& [pid, tid] : tracks) {
    if (pids.insert(pid).second) {
      sep();
      os << "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":" << pid << ",\"tid\":0,\"args\":{\"name\":\""
         << (pid == 0 ? std::string("host") : "npu:" + std::to_string(pid - kNpuPidBase)) << "\"}}";
    }
    sep();
    os << "{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":" << pid << ",\"tid\":" << tid
       << ",\"args\":{\"name\":\"" << track_name(pid == 0, tid) << "\"}}";
  }
  os << "\n]}\n";
  return os.str();
}

void Profile::export_chrome_trace(const std::string& path) const {
  std::string text = chrome_trace();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  EMBER_CHECK_VALUE(f.good(), "profiler::Profile::export_chrome_trace: cannot open '", path, "' for writing");
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  f.close();
  EMBER_CHECK_VALUE(f.good(), "profiler::Profile::export_chrome_trace: writing '", path, "' failed");
}

KeyAverages Profile::key_averages(bool group_by_shape) const {
  const std::vector<Event>& ev = events();
  Nesting n = nest(ev);
  std::vector<int64_t> self_dev(n.ranges.size(), 0), total_dev(n.ranges.size(), 0);
  for (const Event& e : ev) {
    if (e.kind != Event::Kernel || !e.flow) continue;
    auto it = n.launcher.find(e.flow);
    if (it == n.launcher.end() || it->second < 0) continue;  // launched outside any range
    int64_t d = e.end_ns - e.start_ns;
    self_dev[static_cast<size_t>(it->second)] += d;
    for (long r = it->second; r >= 0; r = n.parent[static_cast<size_t>(r)]) total_dev[static_cast<size_t>(r)] += d;
  }
  std::map<std::pair<std::string, std::string>, KeyAverage> rows;
  for (size_t r = 0; r < n.ranges.size(); ++r) {
    const Event& e = ev[n.ranges[r]];
    KeyAverage& k = rows[{e.name, group_by_shape ? e.shapes : std::string()}];
    k.name = e.name;
    if (group_by_shape) k.shapes = e.shapes;
    ++k.calls;
    const int64_t dur = e.end_ns - e.start_ns;
    k.total_host_us += static_cast<double>(dur) / 1e3;
    k.self_host_us += static_cast<double>(dur - n.child_ns[r]) / 1e3;
    k.self_device_us += static_cast<double>(self_dev[r]) / 1e3;
    k.total_device_us += static_cast<double>(total_dev[r]) / 1e3;
  }
  KeyAverages out;
  for (auto& [key, k] : rows) out.rows.push_back(std::move(k));
  std::stable_sort(out.rows.begin(), out.rows.end(),
                   [](const KeyAverage& a, const KeyAverage& b) { return a.self_host_us > b.self_host_us; });
  return out;
}

std::string KeyAverages::table(size_t row_limit) const {
  double self_sum = 0;
  for (const KeyAverage& k : rows) self_sum += k.self_host_us;
  size_t name_w = 4;
  for (const KeyAverage& k : rows) name_w = std::max(name_w, std::min<size_t>(k.name.size(), 48));
  bool shapes = std::any_of(rows.begin(), rows.end(), [](const KeyAverage& k) { return !k.shapes.empty(); });
  std::ostringstream os;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-*s %12s %8s %12s %12s %12s %8s %12s", static_cast<int>(name_w), "Name",
                "Self host", "Self %", "Host total", "Self device", "Device total", "Calls", "Host avg");
  os << buf << (shapes ? "  Shapes" : "") << "\n" << std::string(name_w + 86, '-') << "\n";
  auto t = [](double v) {
    char b[32];
    if (v >= 1e6) std::snprintf(b, sizeof b, "%.3f s", v / 1e6);
    else if (v >= 1e3) std::snprintf(b, sizeof b, "%.3f ms", v / 1e3);
    else std::snprintf(b, sizeof b, "%.3f us", v);
    return std::string(b);
  };
  size_t shown = 0;
  for (const KeyAverage& k : rows) {
    if (row_limit && shown++ == row_limit) break;
    std::string name = k.name.size() > 48 ? k.name.substr(0, 45) + "..." : k.name;
    std::snprintf(buf, sizeof buf, "%-*s %12s %7.2f%% %12s %12s %12s %8" PRId64 " %12s", static_cast<int>(name_w),
                  name.c_str(), t(k.self_host_us).c_str(), self_sum > 0 ? 100.0 * k.self_host_us / self_sum : 0.0,
                  t(k.total_host_us).c_str(), t(k.self_device_us).c_str(), t(k.total_device_us).c_str(), k.calls,
                  t(k.total_host_us / static_cast<double>(k.calls)).c_str());
    os << buf << (shapes ? "  " + k.shapes : "") << "\n";
  }
  os << std::string(name_w + 86, '-') << "\nSelf host time total: " << t(self_sum) << "\n";
  return os.str();
}

namespace {
std::string xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}
const char* color_of(const std::string& category) {
  static const std::pair<const char*, const char*> colors[] = {
      {"op", "#4c78a8"},       {"aclnn", "#f58518"},  {"autograd", "#54a24b"}, {"user", "#b279a2"},
      {"step", "#d8b5a5"},     {"optimizer", "#e45756"}, {"kernel", "#72b7b2"}, {"runtime", "#9d755d"}};
  for (const auto& [c, col] : colors)
    if (category == c) return col;
  return "#bab0ac";
}

// The allocated-memory plot of a timeline: one line per device, scaled to the highest peak, at
// y = top .. top + h; labels at label_x.
template <class XOf>
void svg_memory(std::ostream& os, const std::vector<Event>& ev, const std::map<int, int64_t>& mem_peak, double top,
                double h, double label_x, XOf x_of) {
  int64_t peak = 1;
  for (const auto& [d, p] : mem_peak) peak = std::max(peak, p);
  os << "<text x=\"6\" y=\"" << top + 12 << "\">allocated</text><text x=\"6\" y=\"" << top + 26
     << "\" fill=\"#666\">peak " << peak / 1024 << " KiB</text>\n";
  const char* lines[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  int li = 0;
  for (const auto& [d, p] : mem_peak) {
    os << "<polyline fill=\"none\" stroke=\"" << lines[li++ % 4] << "\" points=\"";
    for (const Event& e : ev) {
      if (e.kind != Event::Memory || e.device != d) continue;
      os << x_of(e.start_ns) << "," << top + h - h * static_cast<double>(e.allocated) / static_cast<double>(peak) << " ";
    }
    os << "\"/><text x=\"" << label_x << "\" y=\"" << top + 12 + 12 * (li - 1) << "\" fill=\"" << lines[(li - 1) % 4]
       << "\">" << (d < 0 ? "cpu" : "npu:" + std::to_string(d)) << "</text>\n";
  }
}

// What the timeline draws: the time span, each host range's nesting depth (its row inside its
// thread's band), the bands ((device, track) -> levels; host: by depth) and each device's
// memory peak.
struct Layout {
  int64_t t0 = INT64_MAX, t1 = 0;
  std::unordered_map<size_t, int> depth;
  std::map<std::pair<int, uint64_t>, int> bands;
  std::map<int, int64_t> mem_peak;
};
Layout layout_of(const std::vector<Event>& ev) {
  Layout l;
  Nesting n = nest(ev);
  for (size_t r = 0; r < n.ranges.size(); ++r) {
    long p = n.parent[r];
    l.depth[n.ranges[r]] = p < 0 ? 0 : l.depth[n.ranges[static_cast<size_t>(p)]] + 1;
  }
  for (size_t i = 0; i < ev.size(); ++i) {
    const Event& e = ev[i];
    l.t0 = std::min(l.t0, e.start_ns);
    l.t1 = std::max(l.t1, e.end_ns);
    if (e.kind == Event::Memory) {
      l.mem_peak[e.device] = std::max(l.mem_peak[e.device], e.allocated);
    } else if (e.kind != Event::Launch && !is_core(e)) {
      int& levels = l.bands[{e.device, e.track}];
      levels = std::max(levels, e.device < 0 ? std::min(l.depth[i], 7) + 1 : 1);
    }
  }
  if (l.t1 <= l.t0) l.t1 = l.t0 + 1;
  return l;
}
}  // namespace

void Profile::export_svg_timeline(const std::string& path) const {
  const std::vector<Event>& ev = events();
  Layout l = layout_of(ev);
  const int64_t t0 = l.t0, t1 = l.t1;
  auto& depth = l.depth;
  const auto& bands = l.bands;
  const auto& mem_peak = l.mem_peak;
  const double left = 150, width = 1100, level_h = 12, mem_h = 70;
  std::map<std::pair<int, uint64_t>, double> band_y;
  double y = 40;
  for (const auto& [key, levels] : bands) {
    band_y[key] = y;
    y += levels * level_h + 8;
  }
  const double mem_y = y + 10;
  const double height = mem_y + (mem_peak.empty() ? 0 : mem_h + 30) + 20;
  auto x_of = [&](int64_t t) { return left + width * static_cast<double>(t - t0) / static_cast<double>(t1 - t0); };
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + 20 << "\" height=\"" << height
     << "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << "<text x=\"" << left << "\" y=\"18\" font-size=\"13\">ember profile: " << us(t1 - t0)
     << " us; host threads, NPU streams" << (mem_peak.empty() ? "" : ", allocated memory") << "</text>\n";
  for (int k = 0; k <= 4; ++k) {  // time axis
    double x = left + width * k / 4.0;
    os << "<line x1=\"" << x << "\" y1=\"26\" x2=\"" << x << "\" y2=\"" << mem_y - 6
       << "\" stroke=\"#ddd\"/><text x=\"" << x << "\" y=\"34\" text-anchor=\"middle\" fill=\"#666\">"
       << us((t1 - t0) * k / 4) << " us</text>\n";
  }
  for (const auto& [key, by] : band_y) {
    os << "<text x=\"6\" y=\"" << by + 10 << "\">" << (key.first < 0 ? "host thread " : "npu:" + std::to_string(key.first) + " stream ")
       << key.second << "</text>\n";
  }
  for (size_t i = 0; i < ev.size(); ++i) {
    const Event& e = ev[i];
    if (e.kind == Event::Memory || e.kind == Event::Launch || is_core(e)) continue;
    double yy = band_y[{e.device, e.track}] + (e.device < 0 ? std::min(depth[i], 7) * level_h : 0);
    double x = x_of(e.start_ns), w = std::max(0.5, x_of(e.end_ns) - x);
    os << "<rect x=\"" << x << "\" y=\"" << yy << "\" width=\"" << w << "\" height=\"" << level_h - 1 << "\" fill=\""
       << color_of(e.category) << "\"><title>" << xml(e.name) << " (" << us(e.end_ns - e.start_ns)
       << " us)</title></rect>\n";
  }
  if (!mem_peak.empty()) svg_memory(os, ev, mem_peak, mem_y, mem_h, left + width - 80, x_of);
  os << "</svg>\n";
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  EMBER_CHECK_VALUE(f.good(), "profiler::Profile::export_svg_timeline: cannot open '", path, "' for writing");
  f << os.str();
  f.close();
  EMBER_CHECK_VALUE(f.good(), "profiler::Profile::export_svg_timeline: writing '", path, "' failed");
}

}  // namespace profiler
}  // namespace ember
