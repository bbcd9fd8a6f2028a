// The profiler's SVG timeline: host threads with nested ranges, NPU streams, step marks, a legend
// and the allocated memory, readable without a trace viewer.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <iterator>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "ember/core/error.h"
#include "ember/device/internal/profiler_events.h"
#include "ember/device/profiler.h"

namespace ember {
namespace profiler {
namespace {

using detail::us;

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

// The colour of each category, in the legend's order.
constexpr std::pair<const char*, const char*> kColors[] = {
    {"step", "#d8b5a5"}, {"user", "#b279a2"},   {"op", "#4c78a8"},     {"autograd", "#54a24b"},
    {"optimizer", "#e45756"}, {"aclnn", "#f58518"}, {"kernel", "#72b7b2"}, {"runtime", "#9d755d"}};
const char* color_of(const char* category) {
  for (const auto& [c, col] : kColors)
    if (std::strcmp(category, c) == 0) return col;
  return "#bab0ac";
}

// The allocated-memory plot of a timeline: one line per device, scaled to the highest peak, at
// y = top .. top + h; labels at label_x.
template <class XOf>
void svg_memory(std::ostream& os, const std::vector<Event>& ev, const std::map<int, int64_t>& mem_peak, double top,
                double h, double label_x, int64_t t0, int64_t t1, XOf x_of) {
  int64_t peak = 1;
  for (const auto& [d, p] : mem_peak) peak = std::max(peak, p);
  os << "<text x=\"6\" y=\"" << top + 12 << "\">allocated</text><text x=\"6\" y=\"" << top + 26
     << "\" fill=\"#666\">peak " << peak / 1024 << " KiB</text>\n";
  const char* lines[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  int li = 0;
  for (const auto& [d, p] : mem_peak) {
    os << "<polyline fill=\"none\" stroke=\"" << lines[li++ % 4] << "\" points=\"";
    for (const Event& e : ev) {
      if (e.kind != Event::Memory || e.device != d || e.start_ns < t0 || e.start_ns > t1) continue;
      os << x_of(e.start_ns) << "," << top + h - h * static_cast<double>(e.allocated) / static_cast<double>(peak) << " ";
    }
    os << "\"/><text x=\"" << label_x << "\" y=\"" << top + 12 + 12 * (li - 1) << "\" fill=\"" << lines[(li - 1) % 4]
       << "\">" << (d < 0 ? "cpu" : "npu:" + std::to_string(d)) << "</text>\n";
  }
}

// What the timeline draws: the host span and the device span (one and the same, except for one
// step: the step on the host, and the NPU work it launched on the device, which may run later),
// each host range's nesting depth (its row inside its thread's band), the bands ((device, track)
// -> levels; host: by depth) and each device's memory peak inside the span.
struct Layout {
  int64_t t0 = INT64_MAX, t1 = 0;  // host
  int64_t d0 = 0, d1 = 0;          // device
  bool step = false;
  std::unordered_set<uint64_t> flows;  // step: the kernels it launched
  std::unordered_map<size_t, int> depth;
  std::map<std::pair<int, uint64_t>, int> bands;
  std::map<int, int64_t> mem_peak;
  bool shown(const Event& e) const {
    if (e.device >= 0 && e.kind == Event::Kernel && step) return flows.count(e.flow) != 0;
    const bool dev = e.device >= 0 && e.kind != Event::Memory;  // memory changes happen on the host's clock
    const int64_t a = dev ? d0 : t0, b = dev ? d1 : t1;
    return e.end_ns >= a && e.start_ns <= b;
  }
};
bool drawn(const Event& e) { return e.kind != Event::Memory && e.kind != Event::Launch && !detail::is_core(e); }

Layout layout_of(const std::vector<Event>& ev, const SvgOptions& o) {
  Layout l;
  detail::Nesting n = detail::nest(ev);
  for (size_t r = 0; r < n.ranges.size(); ++r) {
    long p = n.parent[r];
    l.depth[n.ranges[r]] = p < 0 ? 0 : l.depth[n.ranges[static_cast<size_t>(p)]] + 1;
  }
  int64_t w0 = 0, w1 = 0;
  l.step = o.step >= 1 && detail::step_window(ev, o.step, &w0, &w1);
  EMBER_CHECK_VALUE(o.step < 1 || l.step, "profiler::Profile::export_svg_timeline: no ProfilerStep#", o.step,
                    " in this profile (steps are marked by profiler::step())");
  if (l.step) {
    l.t0 = w0, l.t1 = w1;
    l.flows = detail::flows_launched(ev, w0, w1);
    const auto kernels = detail::kernels_of(ev, l.flows);
    l.d0 = w0, l.d1 = w1;
    if (!kernels.empty()) {
      l.d0 = kernels.front().first, l.d1 = kernels.front().second;
      for (const auto& k : kernels) l.d1 = std::max(l.d1, k.second);
    }
  }
  for (size_t i = 0; i < ev.size(); ++i) {
    const Event& e = ev[i];
    if (l.step && !l.shown(e)) continue;
    if (!l.step) l.t0 = std::min(l.t0, e.start_ns), l.t1 = std::max(l.t1, e.end_ns);
    if (e.kind == Event::Memory) {
      l.mem_peak[e.device] = std::max(l.mem_peak[e.device], e.allocated);
    } else if (drawn(e)) {
      int& levels = l.bands[{e.device, e.track}];
      levels = std::max(levels, e.device < 0 ? std::min(l.depth[i], 7) + 1 : 1);
    }
  }
  if (l.t1 <= l.t0) l.t1 = l.t0 + 1;
  if (!l.step) l.d0 = l.t0, l.d1 = l.t1;
  if (l.d1 <= l.d0) l.d1 = l.d0 + 1;
  return l;
}

// A box's label: as much of the name as fits (about 6 px a character at font-size 10), or none;
// "ember::" and "aclnn" are left out (the box's tooltip has the full name).
std::string label_of(std::string name, double w) {
  if (name.rfind("ember::", 0) == 0) name.erase(0, 7);
  if (name.rfind("aclnn", 0) == 0 && name.size() > 5) name.erase(0, 5);
  const size_t fits = static_cast<size_t>(std::max(0.0, (w - 4) / 6.0));
  if (fits < 3) return std::string();
  if (name.size() <= fits) return name;
  return name.substr(0, fits - 1) + "~";
}

// The legend (colours of the categories drawn) at y, from x; returns its height.
void svg_legend(std::ostream& os, const std::set<std::string>& categories, double x, double y) {
  os << "<text x=\"" << x << "\" y=\"" << y + 9 << "\" fill=\"#444\">legend:</text>\n";
  x += 50;
  for (const auto& [c, col] : kColors) {
    if (!categories.count(c)) continue;
    os << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"10\" height=\"10\" fill=\"" << col << "\"/><text x=\""
       << x + 14 << "\" y=\"" << y + 9 << "\">" << c << "</text>\n";
    x += 24 + 6.5 * static_cast<double>(std::strlen(c));
  }
}

// The kernels that take the most device time in [t0, t1] get colours of their own (the rest
// keep their category's), listed in a second legend with their share.
constexpr const char* kKernelColors[] = {"#3366cc", "#ff9900", "#109618", "#990099", "#dc3912", "#0099c6",
                                         "#dd4477", "#66aa00", "#b82e2e", "#316395"};
std::vector<std::pair<std::string, double>> top_kernels(const std::vector<Event>& ev, const Layout& l) {
  std::map<std::string, double> time;
  double total = 0;
  for (const Event& e : ev) {
    if (e.kind != Event::Kernel || e.device < 0 || detail::is_core(e) || !l.shown(e)) continue;
    const double d = static_cast<double>(std::min(e.end_ns, l.d1) - std::max(e.start_ns, l.d0));
    time[e.name] += d;
    total += d;
  }
  std::vector<std::pair<std::string, double>> v(time.begin(), time.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (v.size() > std::size(kKernelColors)) v.resize(std::size(kKernelColors));
  for (auto& [name, t] : v) t = total > 0 ? t / total : 0;
  return v;
}

void svg_kernel_legend(std::ostream& os, const std::vector<std::pair<std::string, double>>& top, double x, double y) {
  if (top.empty()) return;
  os << "<text x=\"" << x << "\" y=\"" << y + 9 << "\" fill=\"#444\">device time:</text>\n";
  x += 72;
  for (size_t i = 0; i < top.size(); ++i) {
    char share[16];
    std::snprintf(share, sizeof share, " %.0f%%", 100 * top[i].second);
    const std::string text = top[i].first + share;
    os << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"10\" height=\"10\" fill=\"" << kKernelColors[i]
       << "\"/><text x=\"" << x + 14 << "\" y=\"" << y + 9 << "\">" << xml(text) << "</text>\n";
    x += 24 + 6 * static_cast<double>(text.size());
  }
}

}  // namespace

namespace {
// A time axis over [a, b] at y (its labels above), its grid lines down to y_end.
void svg_axis(std::ostream& os, double left, double width, int64_t a, int64_t b, double y, double y_end,
              const std::string& what) {
  os << "<text x=\"6\" y=\"" << y - 8 << "\" fill=\"#666\">" << xml(what) << "</text>\n";
  for (int k = 0; k <= 4; ++k) {
    const double x = left + width * k / 4.0;
    os << "<line x1=\"" << x << "\" y1=\"" << y - 4 << "\" x2=\"" << x << "\" y2=\"" << y_end << "\" stroke=\"#e4e4e4\"/>"
       << "<text x=\"" << x << "\" y=\"" << y - 8 << "\" text-anchor=\"" << (k == 0 ? "start" : k == 4 ? "end" : "middle")
       << "\" fill=\"#666\">" << us((b - a) * k / 4) << " us</text>\n";
  }
}
}  // namespace

namespace {
// Where everything goes: the bands' rows, the two time axes (one if the host and device spans
// are the same), the memory plot's top and the picture's size.
struct Canvas {
  const Layout& l;
  double left = 160, width = 1400, level_h = 14, mem_h = 70, top = 84;
  bool two_axes = false;
  std::map<std::pair<int, uint64_t>, double> band_y;
  double host_end = 0, dev_top = 0, mem_y = 0, height = 0;
  Canvas(const Layout& layout, const SvgOptions& o) : l(layout), width(std::max(200.0, o.width)) {
    two_axes = l.d0 != l.t0 || l.d1 != l.t1;
    double y = top;
    host_end = dev_top = top;
    for (const auto& [key, levels] : l.bands) {
      if (key.first >= 0 && dev_top == top) {
        if (two_axes) y += 28;  // the device's own axis
        dev_top = y;
      }
      band_y[key] = y;
      y += levels * level_h + 10;
      if (key.first < 0) host_end = y;
    }
    mem_y = y + 10;
    height = mem_y + (l.mem_peak.empty() ? 0 : mem_h + 30) + 20;
  }
  double x_host(int64_t t) const { return left + width * static_cast<double>(t - l.t0) / static_cast<double>(l.t1 - l.t0); }
  double x_dev(int64_t t) const { return left + width * static_cast<double>(t - l.d0) / static_cast<double>(l.d1 - l.d0); }
};

void svg_frame(std::ostream& os, const Canvas& c, const SvgOptions& options) {
  const Layout& l = c.l;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << c.left + c.width + 20 << "\" height=\"" << c.height
     << "\" font-family=\"sans-serif\" font-size=\"10\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << "<text x=\"6\" y=\"16\" font-size=\"13\">ember profile"
     << (l.step ? ", step " + std::to_string(options.step) : std::string()) << ": host threads (nested ranges), NPU "
     << "streams (kernels" << (l.step ? " the step launched" : "") << ")" << (l.mem_peak.empty() ? "" : ", allocated memory")
     << "</text>\n";
  if (c.two_axes) {
    svg_axis(os, c.left, c.width, l.t0, l.t1, c.top, c.host_end, "host: the step");
    char lag[64];
    std::snprintf(lag, sizeof lag, "device: from %+.2f ms", static_cast<double>(l.d0 - l.t0) / 1e6);
    svg_axis(os, c.left, c.width, l.d0, l.d1, c.dev_top, c.mem_y - 6, lag);
  } else {
    svg_axis(os, c.left, c.width, l.t0, l.t1, c.top, c.mem_y - 6, "time");
  }
  for (const auto& [key, by] : c.band_y) {
    os << "<text x=\"6\" y=\"" << by + 11 << "\">"
       << (key.first < 0 ? "host thread " : "npu:" + std::to_string(key.first) + " stream ") << key.second << "</text>\n";
  }
}

// A box per range and kernel (skipping those inside a pixel already drawn, so the file stays
// small), labelled where it is wide enough; returns the categories drawn.
std::set<std::string> svg_boxes(std::ostream& os, const std::vector<Event>& ev, const Canvas& c,
                                const std::vector<std::pair<std::string, double>>& hot) {
  const Layout& l = c.l;
  auto fill_of = [&](const Event& e) {
    if (e.kind == Event::Kernel)
      for (size_t k = 0; k < hot.size(); ++k)
        if (hot[k].first == e.name) return kKernelColors[k];
    return color_of(e.category);
  };
  std::set<std::string> categories;
  std::map<std::pair<double, int>, double> painted_to;  // per row (band y, level): x drawn up to
  for (size_t i = 0; i < ev.size(); ++i) {
    const Event& e = ev[i];
    if (!drawn(e) || !l.shown(e)) continue;
    const auto d = l.depth.find(i);
    const bool host = e.device < 0;
    const int level = host && d != l.depth.end() ? std::min(d->second, 7) : 0;
    const double yy = c.band_y.at({e.device, e.track}) + level * c.level_h;
    const int64_t a = host ? l.t0 : l.d0, b = host ? l.t1 : l.d1;
    auto xf = [&](int64_t t) { return host ? c.x_host(t) : c.x_dev(t); };
    const double x = xf(std::max(e.start_ns, a)), w = std::max(0.5, xf(std::min(e.end_ns, b)) - x);
    double& painted = painted_to[{yy, level}];
    if (x + w <= painted + 0.25) continue;
    painted = x + w;
    categories.insert(e.category);
    os << "<rect x=\"" << x << "\" y=\"" << yy << "\" width=\"" << w << "\" height=\"" << c.level_h - 1
       << "\" fill=\"" << fill_of(e) << "\" stroke=\"white\" stroke-width=\"0.3\"><title>" << xml(e.name)
       << " (" << us(e.end_ns - e.start_ns) << " us)</title></rect>\n";
    const std::string label = label_of(e.name, w);
    if (!label.empty())
      os << "<text x=\"" << x + 2 << "\" y=\"" << yy + c.level_h - 4 << "\" fill=\"" << (host ? "black" : "white")
         << "\">" << xml(label) << "</text>\n";
  }
  return categories;
}

// A dashed line at each step's start, its number above the tracks.
void svg_step_marks(std::ostream& os, const std::vector<Event>& ev, const Canvas& c) {
  for (const Event& e : ev) {
    const int64_t n = detail::step_number(e);
    if (n < 0 || e.start_ns < c.l.t0 || e.start_ns > c.l.t1) continue;
    const double x = c.x_host(e.start_ns);
    os << "<line x1=\"" << x << "\" y1=\"" << c.top - 32 << "\" x2=\"" << x << "\" y2=\""
       << (c.two_axes ? c.host_end : c.mem_y - 6) << "\" stroke=\"#c0392b\" stroke-dasharray=\"4,3\"/><text x=\""
       << x + 3 << "\" y=\"" << c.top - 22 << "\" fill=\"#c0392b\">step " << n << "</text>\n";
  }
}
}  // namespace

void Profile::export_svg_timeline(const std::string& path, const SvgOptions& options) const {
  const std::vector<Event>& ev = events();
  const Layout l = layout_of(ev, options);
  const Canvas c(l, options);
  std::ostringstream os;
  svg_frame(os, c, options);
  const auto hot = top_kernels(ev, l);
  const std::set<std::string> categories = svg_boxes(os, ev, c, hot);
  svg_step_marks(os, ev, c);
  svg_legend(os, categories, 6, 24);
  svg_kernel_legend(os, hot, 6, 40);
  if (!l.mem_peak.empty())
    svg_memory(os, ev, l.mem_peak, c.mem_y, c.mem_h, c.left + c.width - 80, l.t0, l.t1,
               [&](int64_t t) { return c.x_host(t); });
  os << "</svg>\n";
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  EMBER_CHECK_VALUE(f.good(), "profiler::Profile::export_svg_timeline: cannot open '", path, "' for writing");
  f << os.str();
  f.close();
  EMBER_CHECK_VALUE(f.good(), "profiler::Profile::export_svg_timeline: writing '", path, "' failed");
}

}  // namespace profiler
}  // namespace ember
