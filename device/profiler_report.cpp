// The profiler's reports: the Chrome trace and key_averages.
#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "ember/device/profiler.h"
#include "ember/core/error.h"
#include "ember/core/json.h"
#include "ember/device/internal/profiler_events.h"

namespace ember {
namespace profiler {
namespace detail {

std::string us(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%03d", ns / 1000, static_cast<int>(ns % 1000));
  return buf;
}

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

}  // namespace detail

namespace {
using detail::time_text;
using detail::us;
using detail::nest;
using detail::Nesting;

constexpr int kNpuPidBase = 100;  // pid of npu:d's tracks; the host is pid 0

int pid_of(const Event& e) { return e.device < 0 ? 0 : kNpuPidBase + e.device; }

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

namespace {
// torch's sort keys (and ember's spellings: host for cpu, device/npu/cuda for the device).
double sort_value(const KeyAverage& k, const std::string& key) {
  std::string s = key;
  auto respell = [&](const char* from, const char* to) {
    const size_t at = s.find(from);
    if (at != std::string::npos) s.replace(at, std::strlen(from), to);
  };
  respell("host_", "cpu_");
  respell("cuda_", "device_");
  respell("npu_", "device_");
  const double calls = static_cast<double>(std::max<int64_t>(k.calls, 1));
  if (s == "self_cpu_time_total") return k.self_host_us;
  if (s == "cpu_time_total") return k.total_host_us;
  if (s == "cpu_time") return k.total_host_us / calls;
  if (s == "self_device_time_total") return k.self_device_us;
  if (s == "device_time_total") return k.total_device_us;
  if (s == "device_time") return k.total_device_us / calls;
  if (s == "count") return static_cast<double>(k.calls);
  EMBER_THROW(ValueError, "profiler::KeyAverages: unknown sort_by '", key,
              "'; expected one of self_cpu_time_total, cpu_time_total, cpu_time, self_device_time_total, "
              "device_time_total, device_time, count (cuda/npu for device and host for cpu are accepted too)");
}

}  // namespace

std::string detail::time_text(double us, int us_decimals) {
  char b[32];
  if (us >= 1e6) std::snprintf(b, sizeof b, "%.3f s", us / 1e6);
  else if (us >= 1e3) std::snprintf(b, sizeof b, "%.3f ms", us / 1e3);
  else std::snprintf(b, sizeof b, "%.*f us", us_decimals, us);
  return b;
}

KeyAverages KeyAverages::sorted_by(const std::string& sort_by) const {
  std::vector<std::pair<double, size_t>> keyed;
  keyed.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) keyed.push_back({sort_value(rows[i], sort_by), i});
  if (rows.empty()) (void)sort_value(KeyAverage(), sort_by);  // an unknown key is refused all the same
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  KeyAverages out;
  for (const auto& [v, i] : keyed) out.rows.push_back(rows[i]);
  return out;
}

std::string KeyAverages::table(size_t row_limit) const { return table(TableOptions{"self_cpu_time_total", row_limit}); }

std::string KeyAverages::table(const TableOptions& options) const {
  const KeyAverages sorted = sorted_by(options.sort_by);
  double self_sum = 0, dev_sum = 0;
  for (const KeyAverage& k : rows) self_sum += k.self_host_us, dev_sum += k.self_device_us;
  size_t name_w = 4;
  for (const KeyAverage& k : rows) name_w = std::max(name_w, std::min<size_t>(k.name.size(), 48));
  bool shapes = std::any_of(rows.begin(), rows.end(), [](const KeyAverage& k) { return !k.shapes.empty(); });
  std::ostringstream os;
  char buf[320];
  const int w = static_cast<int>(name_w);
  std::snprintf(buf, sizeof buf, "%-*s %12s %8s %12s %12s %12s %8s %12s %12s %8s", w, "Name", "Self host", "Self %",
                "Host total", "Host avg", "Self device", "Self %", "Device total", "Device avg", "Calls");
  const std::string rule(name_w + 108, '-');
  os << buf << (shapes ? "  Shapes" : "") << "\n" << rule << "\n";
  auto share = [](double v, double sum) { return sum > 0 ? 100.0 * v / sum : 0.0; };
  size_t shown = 0;
  for (const KeyAverage& k : sorted.rows) {
    if (options.row_limit && shown++ == options.row_limit) break;
    const std::string name = k.name.size() > 48 ? k.name.substr(0, 45) + "..." : k.name;
    const double calls = static_cast<double>(std::max<int64_t>(k.calls, 1));
    std::snprintf(buf, sizeof buf, "%-*s %12s %7.2f%% %12s %12s %12s %7.2f%% %12s %12s %8" PRId64, w, name.c_str(),
                  time_text(k.self_host_us).c_str(), share(k.self_host_us, self_sum), time_text(k.total_host_us).c_str(),
                  time_text(k.total_host_us / calls).c_str(), time_text(k.self_device_us).c_str(),
                  share(k.self_device_us, dev_sum), time_text(k.total_device_us).c_str(),
                  time_text(k.total_device_us / calls).c_str(), k.calls);
    os << buf << (shapes ? "  " + k.shapes : "") << "\n";
  }
  os << rule << "\nSelf host time total: " << time_text(self_sum) << "\nSelf device time total: " << time_text(dev_sum)
     << "\n";
  return os.str();
}

}  // namespace profiler
}  // namespace ember
