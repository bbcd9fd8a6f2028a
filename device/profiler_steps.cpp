// profiler::step() and the profiles it schedules (EMBER_PROFILE, profile_steps).
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>

#include "ember/device/profiler.h"
#include "ember/core/error.h"

namespace ember {
namespace profiler {
namespace {

struct Schedule {
  std::mutex mu;
  bool env_read = false;
  std::string path;  // empty: nothing scheduled
  int64_t first = 0, last = 0;
  ProfileOptions options;
  int64_t marks = 0;          // step() calls so far: step k runs from mark k-1 to mark k
  int64_t last_mark_ns = -1;  // of the running session
  std::unique_ptr<Profile> prof;

  ~Schedule() {  // the program ended inside the scheduled steps: write what was recorded
    if (!prof) return;
    try {
      finish();
    } catch (const std::exception& e) {
      std::cerr << "ember: profiler: " << e.what() << "\n";
    }
  }

  void finish() {
    std::unique_ptr<Profile> p = std::move(prof);
    p->stop();
    p->export_chrome_trace(path);
    std::ofstream(path + ".txt") << p->key_averages().table();
    p->export_svg_timeline(path + ".svg");
    std::cerr << "ember: profiled steps " << first << ".." << std::min(last, marks) << " into " << path << " (the table in "
              << path << ".txt, the timeline in " << path << ".svg)\n";
  }

  void start() {
    try {
      prof = std::make_unique<Profile>(options);
    } catch (const ValueError& e) {  // the user records a profile of their own
      std::cerr << "ember: profiler: steps " << first << ".." << last << " not profiled: " << e.what() << "\n";
      path.clear();
    }
  }
};

Schedule& schedule() {
  static Schedule s;
  return s;
}

// "FIRST..LAST", 1 <= FIRST <= LAST, both whole numbers.
void parse_steps(const char* text, int64_t* first, int64_t* last) {
  std::string s(text);
  size_t dots = s.find("..");
  auto number = [](const std::string& t, int64_t* out) {
    if (t.empty() || t.size() > 15 || t.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::stoll(t);
    return true;
  };
  bool ok = dots != std::string::npos && number(s.substr(0, dots), first) && number(s.substr(dots + 2), last) &&
            *first >= 1 && *first <= *last;
  EMBER_CHECK_VALUE(ok, "EMBER_PROFILE_STEPS='", s, "': expected FIRST..LAST with 1 <= FIRST <= LAST (e.g. 10..20)");
}

}  // namespace

void profile_steps(const std::string& path, int64_t first, int64_t last, ProfileOptions options) {
  EMBER_CHECK_VALUE(!path.empty(), "profiler::profile_steps: the path is empty");
  EMBER_CHECK_VALUE(first >= 1 && first <= last, "profiler::profile_steps: steps ", first, "..", last,
                    " (expected 1 <= first <= last)");
  Schedule& s = schedule();
  std::lock_guard<std::mutex> g(s.mu);
  s.env_read = true;  // code takes precedence over EMBER_PROFILE
  EMBER_CHECK_VALUE(!s.prof, "profiler::profile_steps: a scheduled profile is recording");
  s.path = path;
  s.first = s.marks + first;
  s.last = s.marks + last;
  s.options = options;
  if (s.first == s.marks + 1) {
    s.start();
    s.last_mark_ns = detail::enabled() ? detail::now_ns() : -1;
  }
}

void detail::reread_environment() {
  Schedule& s = schedule();
  std::lock_guard<std::mutex> g(s.mu);
  if (s.prof) return;
  s.env_read = false;
  s.path.clear();
  s.marks = 0;  // as in a fresh process
}

namespace {
// EMBER_PROFILE, read once (s.mu held). Step 1 runs from the start of the program to the first
// mark, so a schedule from step 1 starts recording here.
void read_environment(Schedule& s) {
  s.env_read = true;
  const char* path = std::getenv("EMBER_PROFILE");
  if (!path || !*path) return;
  int64_t first = 10, last = 20;
  const char* steps = std::getenv("EMBER_PROFILE_STEPS");
  if (steps && *steps) parse_steps(steps, &first, &last);
  s.path = path;
  s.first = s.marks + first;
  s.last = s.marks + last;
  s.options = ProfileOptions{true, true, false};
  if (s.first == s.marks + 1) {
    s.start();
    s.last_mark_ns = detail::enabled() ? detail::now_ns() : -1;
  }
}

// At load time, so that EMBER_PROFILE_STEPS=1..N records the first step; a bad value is reported
// by the first step() (a throw here, during static initialisation, would abort the program).
const bool g_env_at_load = [] {
  Schedule& s = schedule();
  std::lock_guard<std::mutex> g(s.mu);
  try {
    read_environment(s);
  } catch (const ValueError&) {
    s.env_read = false;
  }
  return true;
}();
}  // namespace

void step() {
  Schedule& s = schedule();
  std::lock_guard<std::mutex> g(s.mu);
  if (!s.env_read) read_environment(s);
  ++s.marks;
  if (detail::enabled() && s.last_mark_ns >= 0) {  // the step that just ended, around its ops
    Event e;
    e.category = "step";
    e.name = "ProfilerStep#" + std::to_string(s.marks);
    e.track = detail::host_track();
    e.start_ns = s.last_mark_ns;
    e.end_ns = detail::now_ns();
    detail::record(std::move(e));
  }
  if (s.prof && s.marks >= s.last) s.finish();
  if (!s.path.empty() && !s.prof && s.marks + 1 == s.first) s.start();
  s.last_mark_ns = detail::enabled() ? detail::now_ns() : -1;
}

}  // namespace profiler
}  // namespace ember
