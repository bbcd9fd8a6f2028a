// profiler::step() and the profiles it schedules (EMBER_PROFILE, profile_steps).
#include <algorithm>
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

// Note [EMBER_PROFILE]: set, it records from the moment ember loads. A program that never calls
// profiler::step() is recorded whole and written at exit. At its first step() the schedule of
// EMBER_PROFILE_STEPS (default 10..20) takes over: what was recorded so far is kept if the window
// starts at step 1 and dropped otherwise. At exit a window never reached is reported with its
// reason, and under a launcher with more than one rank (mpirun, torchrun) each rank writes files
// of its own: trace.json becomes trace.rank<R>.json.
thread_local bool tls_scheduling = false;  // the schedule itself is starting a Profile

struct StepSchedule {
  std::mutex mu;
  bool env_read = false;
  std::string path;  // empty: nothing scheduled
  // What was asked ("EMBER_PROFILE=trace.json" or "profiler::profile_steps(...)"), said on exit
  // when nothing was written, with why.
  std::string request;
  bool from_env = false;
  int64_t first = 0, last = 0;
  ProfileOptions options;
  int64_t marks = 0;          // step() calls so far: step k runs from mark k-1 to mark k
  int64_t last_mark_ns = -1;  // the last mark, in the clock of session mark_session
  uint64_t mark_session = 0;

  void set_mark() {
    last_mark_ns = detail::enabled() ? detail::now_ns() : -1;
    mark_session = detail::session_id();
  }
  std::unique_ptr<Profile> prof;
  bool whole_run = false;  // recording since ember loaded, before any step()
  bool written = false;
  std::string not_recorded;  // why the window was not profiled, if a start failed

  ~StepSchedule() {  // the program ended: write what was recorded, or say why nothing was
    try {
      if (prof) finish();
      else if (!request.empty() && !written) report_nothing_recorded();
    } catch (const std::exception& e) {
      std::cerr << "ember: profiler: " << e.what() << "\n";
    }
  }

  void report_nothing_recorded() const {
    std::cerr << "ember: profiler: " << request << ": nothing recorded: ";
    if (!not_recorded.empty()) {
      std::cerr << not_recorded << "\n";
      return;
    }
    std::cerr << "the program marked " << marks << " step" << (marks == 1 ? "" : "s") << " (profiler::step()) and the "
              << "window is steps " << first << ".." << last;
    if (from_env) std::cerr << "; set EMBER_PROFILE_STEPS=1.." << std::max<int64_t>(marks, 1) << " (or run more steps)";
    std::cerr << "\n";
  }

  void finish() {
    std::unique_ptr<Profile> p = std::move(prof);
    p->stop();
    p->export_chrome_trace(path);
    const KeyAverages k = p->key_averages();
    std::ofstream(path + ".txt") << "By self host time:\n"
                                 << k.table() << "\nBy self device time (first 30):\n"
                                 << k.table({"self_device_time_total", 30}) << "\nSteps:\n"
                                 << p->step_table();
    p->export_svg_timeline(path + ".svg");
    const std::vector<StepSummary> steps = p->step_summaries();
    if (!steps.empty()) {  // the last step alone, zoomed
      const std::string one = path + ".step" + std::to_string(steps.back().step) + ".svg";
      p->export_svg_timeline(one, {steps.back().step});
      std::cerr << "ember: one step's timeline in " << one << "\n";
    }
    written = true;
    std::cerr << "ember: profiled ";
    if (whole_run) std::cerr << "the whole run";
    else std::cerr << "steps " << first << ".." << std::min(last, marks);
    std::cerr << " into " << path << " (the table in " << path << ".txt, the timeline in " << path << ".svg)\n";
  }

  void start() {
    try {
      tls_scheduling = true;
      struct Reset {
        ~Reset() { tls_scheduling = false; }
      } reset;
      prof = std::make_unique<Profile>(options);
    } catch (const ValueError& e) {  // the user records a profile of their own
      not_recorded = "steps " + std::to_string(first) + ".." + std::to_string(last) + " not profiled: " + e.what();
      std::cerr << "ember: profiler: " << not_recorded << "\n";
      path.clear();
    }
  }
};

StepSchedule& step_schedule() {
  static StepSchedule s;
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

// The launcher's rank when it runs more than one (OpenMPI, MPICH/PMI, torchrun), else -1.
int64_t launcher_rank() {
  const std::pair<const char*, const char*> vars[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"}, {"RANK", "WORLD_SIZE"}};
  for (const auto& [rank, size] : vars) {
    const char* r = std::getenv(rank);
    const char* n = std::getenv(size);
    if (!r || !n) continue;
    char* end = nullptr;
    const long long rv = std::strtoll(r, &end, 10), nv = std::strtoll(n, nullptr, 10);
    if (end != r && *end == '\0' && rv >= 0 && nv > 1) return rv;
  }
  return -1;
}

// trace.json -> trace.rank1.json (a rank's own file), or the path as it is outside a launcher.
std::string path_of_rank(const std::string& path) {
  const int64_t rank = launcher_rank();
  if (rank < 0) return path;
  const size_t slash = path.rfind('/'), dot = path.rfind('.');
  const bool ext = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  const std::string tag = ".rank" + std::to_string(rank);
  return ext ? path.substr(0, dot) + tag + path.substr(dot) : path + tag;
}

void schedule_window(StepSchedule& s, const std::string& path, int64_t first, int64_t last, ProfileOptions options) {
  s.path = path;
  s.first = s.marks + first;
  s.last = s.marks + last;
  s.options = std::move(options);
  s.written = false;
  s.not_recorded.clear();
}

}  // namespace

void profile_steps(const std::string& path, int64_t first, int64_t last, ProfileOptions options) {
  EMBER_CHECK_VALUE(!path.empty(), "profiler::profile_steps: the path is empty");
  EMBER_CHECK_VALUE(first >= 1 && first <= last, "profiler::profile_steps: steps ", first, "..", last,
                    " (expected 1 <= first <= last)");
  StepSchedule& s = step_schedule();
  std::lock_guard<std::mutex> g(s.mu);
  s.env_read = true;  // code takes precedence over EMBER_PROFILE
  if (s.prof && s.whole_run) s.prof.reset();  // EMBER_PROFILE's whole-run recording gives way
  EMBER_CHECK_VALUE(!s.prof, "profiler::profile_steps: a scheduled profile is recording");
  s.whole_run = s.from_env = false;
  schedule_window(s, path, first, last, std::move(options));
  s.request = "profiler::profile_steps(\"" + path + "\", " + std::to_string(first) + ", " + std::to_string(last) + ")";
  if (s.first == s.marks + 1) {
    s.start();
    s.set_mark();
  }
}

void detail::yield_whole_run() {
  if (tls_scheduling) return;
  StepSchedule& s = step_schedule();
  std::lock_guard<std::mutex> g(s.mu);
  if (!s.prof || !s.whole_run) return;
  s.prof.reset();
  s.whole_run = false;
  s.not_recorded = "the program records a profiler::Profile of its own (one Profile records at a time)";
  s.path.clear();
}

void detail::mark_step_start() {
  StepSchedule& s = step_schedule();
  std::lock_guard<std::mutex> g(s.mu);
  s.set_mark();
}

void detail::reread_environment() {
  StepSchedule& s = step_schedule();
  std::lock_guard<std::mutex> g(s.mu);
  if (s.prof && !s.whole_run) return;
  s.prof.reset();
  s.env_read = false;
  s.path.clear();
  s.request.clear();
  s.whole_run = s.from_env = false;
  s.marks = 0;  // as in a fresh process
}

namespace {
// EMBER_PROFILE, read once (s.mu held): see Note [EMBER_PROFILE].
void read_environment(StepSchedule& s) {
  s.env_read = true;
  const char* path = std::getenv("EMBER_PROFILE");
  if (!path || !*path) return;
  int64_t first = 10, last = 20;
  const char* steps = std::getenv("EMBER_PROFILE_STEPS");
  if (steps && *steps) parse_steps(steps, &first, &last);
  schedule_window(s, path_of_rank(path), first, last, ProfileOptions{true, true, false});
  s.request = "EMBER_PROFILE=" + s.path;
  s.from_env = true;
  s.start();
  s.whole_run = s.prof != nullptr;
  s.set_mark();
}

// At load time, so that the whole run (or step 1) is recorded; a bad value is reported by the
// first step() (a throw here, during static initialisation, would abort the program).
const bool g_env_at_load = [] {
  StepSchedule& s = step_schedule();
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
  const int64_t entered = detail::enabled() ? detail::now_ns() : -1;  // the step ends here, before the lock
  StepSchedule& s = step_schedule();
  std::lock_guard<std::mutex> g(s.mu);
  if (!s.env_read) read_environment(s);
  ++s.marks;
  // the step that just ended, around its ops (if its start was marked in this session)
  if (entered >= 0 && detail::enabled() && s.last_mark_ns >= 0 && s.mark_session == detail::session_id()) {
    Event e;
    e.category = "step";
    e.name = "ProfilerStep#" + std::to_string(s.marks);
    e.track = detail::host_track();
    e.start_ns = s.last_mark_ns;
    e.end_ns = std::max(entered, s.last_mark_ns);
    detail::record(std::move(e));
  }
  if (s.whole_run) {  // the program counts steps: the window takes over
    s.whole_run = false;
    if (s.first != 1) s.prof.reset();
  }
  if (s.prof && s.marks >= s.last) s.finish();
  if (!s.path.empty() && !s.prof && s.marks + 1 == s.first) s.start();
  s.set_mark();
}

}  // namespace profiler
}  // namespace ember
