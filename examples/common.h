// Helpers shared by the example programs: --key value flags with --help, a one-line progress
// bar (step, loss, rate, ETA), and CSV / SVG writers for loss curves. Header-only, examples only.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace demo {

// Flags: --name value (or --name=value); --help prints the usage and exits 0.
class Args {
 public:
  Args(int argc, char** argv, std::string usage) : usage_(std::move(usage)) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--help" || a == "-h") {
        help_ = true;
        continue;
      }
      if (a.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument '" + a + "' (try --help)");
      auto eq = a.find('=');
      if (eq != std::string::npos) {
        values_[a.substr(2, eq - 2)] = a.substr(eq + 1);
      } else if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
        values_[a.substr(2)] = argv[++i];
      } else {
        values_[a.substr(2)] = "true";
      }
    }
  }
  // Call after declaring every flag with get(): prints help or rejects unknown flags.
  bool finish() {
    if (help_) {
      const std::string options = options_.str();
      std::cout << usage_ << "\n\noptions:\n" << (options.empty() ? "  (none)\n" : options);
      return false;
    }
    for (const auto& kv : values_)
      if (!known_.count(kv.first)) throw std::invalid_argument("unknown option --" + kv.first + " (try --help)");
    return true;
  }
  std::string get(const std::string& name, const std::string& def, const std::string& help) {
    note(name, def, help);
    auto it = values_.find(name);
    return it == values_.end() ? def : it->second;
  }
  double get(const std::string& name, double def, const std::string& help) {
    std::string s = get(name, fmt(def), help);
    try {
      return std::stod(s);
    } catch (const std::exception&) {
      throw std::invalid_argument("--" + name + " expects a number, got '" + s + "'");
    }
  }
  int64_t get(const std::string& name, int64_t def, const std::string& help) {
    return static_cast<int64_t>(get(name, static_cast<double>(def), help));
  }
  int64_t get(const std::string& name, int def, const std::string& help) { return get(name, int64_t(def), help); }
  // A switch: --name (or --name=true / --name=false).
  bool flag(const std::string& name, const std::string& help) {
    std::string s = get(name, std::string("false"), help);
    if (s != "true" && s != "false") throw std::invalid_argument("--" + name + " is a switch: true or false, got '" + s + "'");
    return s == "true";
  }
  static std::string fmt(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
  }

 private:
  void note(const std::string& name, const std::string& def, const std::string& help) {
    known_[name] = true;
    options_ << "  --" << name << std::string(name.size() < 16 ? 16 - name.size() : 1, ' ') << help << " (default "
             << (def.empty() ? "none" : def) << ")\n";
  }
  std::string usage_;
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> known_;
  std::ostringstream options_;
  bool help_ = false;
};

inline double now_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

inline std::string hms(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--";
  int t = static_cast<int>(s + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d", t / 60, t % 60);
  return buf;
}

// [#####.....] step 120/400  loss 1.234  45.1k tok/s  elapsed 0:12  ETA 0:28
// On a terminal the bar redraws in place (\r) at most 5 times a second; into a pipe or a log it
// prints a line per tenth of the run (every 10 s while the total is unknown) and the last step,
// so a log holds a few readable lines instead of one line of redraws.
class ProgressBar {
 public:
  ProgressBar(int64_t total, std::string unit)
      : total_(total), unit_(std::move(unit)), start_(now_seconds()), tty_(::isatty(STDOUT_FILENO) == 1) {}
  void set_total(int64_t total) { total_ = total; }
  // items: what this step processed (tokens, samples) for the rate.
  void update(int64_t step, double loss, int64_t items) {
    items_ += items;
    double t = now_seconds();
    if (!due(step, t)) return;
    last_ = t;
    double elapsed = t - start_;
    double frac = total_ > 0 ? static_cast<double>(step) / static_cast<double>(total_) : 0.0;
    int filled = static_cast<int>(frac * 24);
    double rate = elapsed > 0 ? static_cast<double>(items_) / elapsed : 0.0;
    char buf[256];
    std::string of = total_ > 0 ? "/" + std::to_string(total_) : " (measuring speed)";
    char loss_s[32] = "-";
    if (std::isfinite(loss)) std::snprintf(loss_s, sizeof loss_s, "%.4f", loss);
    std::snprintf(buf, sizeof buf, "%s[%s%s] step %lld%s  loss %s  %.1fk %s/s  elapsed %s  ETA %s ", tty_ ? "\r" : "",
                  std::string(static_cast<size_t>(filled), '#').c_str(),
                  std::string(static_cast<size_t>(24 - filled), '.').c_str(), static_cast<long long>(step), of.c_str(),
                  loss_s, rate / 1000.0, unit_.c_str(), hms(elapsed).c_str(),
                  hms(frac > 0 ? elapsed * (1 - frac) / frac : -1).c_str());
    std::string line = buf;
    if (!tty_) line.erase(line.find_last_not_of(' ') + 1);  // (the padding only covers a redraw)
    std::cout << line << (tty_ ? "" : "\n") << std::flush;
  }
  void finish() {
    if (tty_) std::cout << "\n";
  }
  double elapsed() const { return now_seconds() - start_; }
  double rate() const { return elapsed() > 0 ? static_cast<double>(items_) / elapsed() : 0.0; }

 private:
  // Whether step, at time t, gets drawn (see the class comment); in a log, a step is drawn once.
  bool due(int64_t step, double t) {
    if (tty_) return (step >= total_ && total_ > 0) || t - last_ >= 0.2;
    if (step == last_step_) return false;
    last_step_ = step;
    if (step >= total_ && total_ > 0) return true;
    if (total_ <= 0) return t - last_ >= 10;
    const int64_t tenth = step * 10 / total_;
    if (tenth == last_tenth_) return false;
    last_tenth_ = tenth;
    return true;
  }

  int64_t total_;
  std::string unit_;
  double start_, last_ = 0;
  bool tty_;
  int64_t last_tenth_ = -1, last_step_ = -1;
  int64_t items_ = 0;
};

struct Series {
  std::string name, color;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

inline void write_csv(const std::string& path, const std::string& header, const std::vector<std::vector<double>>& rows) {
  std::ofstream f(path);
  f << header << "\n";
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) f << (i ? "," : "") << r[i];
    f << "\n";
  }
}

// A line plot as a standalone SVG (no dependencies).
inline void write_svg(const std::string& path, const std::string& title, const std::string& xlabel,
                      const std::string& ylabel, const std::vector<Series>& series) {
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (const auto& s : series)
    for (auto [x, y] : s.points) {
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  const double W = 720, H = 420, L = 70, R = 20, T = 40, B = 50;
  auto px = [&](double x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
  auto py = [&](double y) { return H - B - (y - y0) / (y1 - y0) * (H - T - B); };
  std::ofstream f(path);
  f << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H << "' font-family='sans-serif' font-size='12'>\n"
    << "<rect width='100%' height='100%' fill='white'/>\n"
    << "<text x='" << W / 2 << "' y='22' text-anchor='middle' font-size='15'>" << title << "</text>\n"
    << "<line x1='" << L << "' y1='" << H - B << "' x2='" << W - R << "' y2='" << H - B << "' stroke='black'/>\n"
    << "<line x1='" << L << "' y1='" << T << "' x2='" << L << "' y2='" << H - B << "' stroke='black'/>\n";
  for (int i = 0; i <= 5; ++i) {
    double y = y0 + (y1 - y0) * i / 5, x = x0 + (x1 - x0) * i / 5;
    f << "<text x='" << L - 6 << "' y='" << py(y) + 4 << "' text-anchor='end'>" << Args::fmt(std::round(y * 100) / 100)
      << "</text>\n<line x1='" << L << "' y1='" << py(y) << "' x2='" << W - R << "' y2='" << py(y)
      << "' stroke='#ddd'/>\n<text x='" << px(x) << "' y='" << H - B + 16 << "' text-anchor='middle'>"
      << Args::fmt(std::round(x)) << "</text>\n";
  }
  f << "<text x='" << (L + W - R) / 2 << "' y='" << H - 12 << "' text-anchor='middle'>" << xlabel << "</text>\n"
    << "<text x='16' y='" << (T + H - B) / 2 << "' transform='rotate(-90 16 " << (T + H - B) / 2
    << ")' text-anchor='middle'>" << ylabel << "</text>\n";
  int k = 0;
  for (const auto& s : series) {
    f << "<polyline fill='none' stroke='" << s.color << "' stroke-width='1.5' points='";
    for (auto [x, y] : s.points) f << px(x) << "," << py(y) << " ";
    f << "'/>\n<text x='" << W - R - 150 << "' y='" << T + 16 * (k + 1) << "' fill='" << s.color << "'>" << s.name
      << "</text>\n";
    ++k;
  }
  f << "</svg>\n";
}

}  // namespace demo
