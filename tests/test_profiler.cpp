// The profiler (issue 15): what it records on a known program, and the structure of the Chrome
// trace it exports, checked against the trace event format.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <map>
#include <set>
#include <thread>

#include "ember/device/profiler.h"
#include "ember/core/json.h"
#include "test_util.h"

using namespace ember;
using ember_test::expect_error;

namespace {

int64_t calls_of(const profiler::KeyAverages& k, const std::string& name) {
  for (const auto& r : k.rows)
    if (r.name == name) return r.calls;
  return 0;
}

const profiler::KeyAverage* row_of(const profiler::KeyAverages& k, const std::string& name) {
  for (const auto& r : k.rows)
    if (r.name == name) return &r;
  return nullptr;
}

double number(const json::Value& v) { return std::stod(v.num); }

// Checks the trace against the trace event format and returns its events by phase.
std::map<std::string, std::vector<const json::Value*>> check_trace(const json::Value& root) {
  std::map<std::string, std::vector<const json::Value*>> by_phase;
  EXPECT_EQ(root.kind, json::Value::Object);
  const json::Value* events = root.find("traceEvents");
  EXPECT_TRUE(events && events->kind == json::Value::Array);
  if (!events) return by_phase;
  // Per track (pid, tid): the open X slices, to check that they nest.
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>> open;
  for (const json::Value& e : events->items) {
    for (const char* key : {"name", "ph", "ts", "pid", "tid"}) EXPECT_NE(e.find(key), nullptr) << "no " << key;
    const json::Value* ph = e.find("ph");
    if (!ph) continue;
    EXPECT_TRUE(ph->str == "X" || ph->str == "C" || ph->str == "s" || ph->str == "f" || ph->str == "M") << ph->str;
    by_phase[ph->str].push_back(&e);
    if (ph->str != "X") continue;
    double ts = number(*e.find("ts")), dur = number(*e.find("dur"));
    EXPECT_GE(dur, 0.0);
    auto& st = open[{std::stoll(e.find("pid")->num), std::stoll(e.find("tid")->num)}];
    while (!st.empty() && ts >= st.back().second) st.pop_back();  // slices that ended before this one
    if (!st.empty()) {
      EXPECT_LE(ts + dur, st.back().second + 1e-3) << e.find("name")->str << " overlaps its parent";
    }
    st.push_back({ts, ts + dur});
  }
  return by_phase;
}

}  // namespace

TEST(Profiler, CountsTheOpsOfAKnownProgramAndNestsThem) {
  Tensor a = ones({4, 8}), b = ones({8, 3});
  profiler::ProfileOptions opts;
  opts.record_shapes = true;
  profiler::Profile prof(opts);
  EXPECT_TRUE(prof.running());
  {
    auto step = profiler::record_function("step");
    for (int i = 0; i < 3; ++i) (void)(a + a);
    for (int i = 0; i < 2; ++i) (void)a.matmul(b);
  }
  prof.stop();
  EXPECT_FALSE(prof.running());
  profiler::KeyAverages k = prof.key_averages();
  EXPECT_EQ(calls_of(k, "ember::add"), 3);
  EXPECT_EQ(calls_of(k, "ember::matmul"), 2);
  EXPECT_EQ(calls_of(k, "step"), 1);
  // The step's total host time holds its ops; self times add up to it.
  const profiler::KeyAverage* step = row_of(k, "step");
  ASSERT_NE(step, nullptr);
  double self_sum = 0;
  for (const auto& r : k.rows) self_sum += r.self_host_us;
  EXPECT_NEAR(self_sum, step->total_host_us, 1e-6 * step->total_host_us + 1e-3);
  // Grouped by shapes: the matmul's operands.
  profiler::KeyAverages g = prof.key_averages(true);
  bool found = false;
  for (const auto& r : g.rows) found |= r.name == "ember::matmul" && r.shapes == "float32[4, 8], float32[8, 3]";
  EXPECT_TRUE(found) << g.table();
  std::string table = k.table();
  for (const char* part : {"Name", "Self host", "Calls", "ember::add", "step", "Self host time total"})
    EXPECT_NE(table.find(part), std::string::npos) << part << " not in\n" << table;
  // Nothing is recorded once stopped.
  (void)(a + a);
  EXPECT_EQ(prof.key_averages().rows.size(), k.rows.size());
  EXPECT_EQ(calls_of(prof.key_averages(), "ember::add"), 3);
}

TEST(Profiler, ChromeTraceFollowsTheTraceEventFormatAndLinksLaunchesToKernels) {
  Device npu("npu:0");
  Tensor x = ones({16, 16}, npu), w = ones({16, 16}, npu).requires_grad_();
  npu::synchronize();
  profiler::Profile prof;
  const int steps = 3;
  for (int i = 0; i < steps; ++i) {
    auto r = profiler::record_function("train_step");
    Tensor y = x.matmul(w).relu().sum();
    y.backward();
  }
  npu::synchronize();
  prof.stop();
  json::Value root = json::parse(prof.chrome_trace(), "trace");
  auto by_phase = check_trace(root);
  // Every launch has its execution, which starts after it, on an npu:0 stream track.
  std::map<std::string, const json::Value*> starts, ends;
  for (const json::Value* e : by_phase["s"]) starts[e->find("id")->num] = e;
  for (const json::Value* e : by_phase["f"]) ends[e->find("id")->num] = e;
  EXPECT_GE(starts.size(), static_cast<size_t>(steps * 3));  // matmul, relu, sum and more per step
  EXPECT_EQ(starts.size(), ends.size());
  for (const auto& [id, s] : starts) {
    auto it = ends.find(id);
    ASSERT_NE(it, ends.end()) << "launch " << id << " has no execution";
    EXPECT_GE(number(*it->second->find("ts")), number(*s->find("ts")));
    EXPECT_EQ(it->second->find("bp")->str, "e");
    EXPECT_EQ(s->find("pid")->num, "0");                 // launched on the host
    EXPECT_EQ(it->second->find("pid")->num, "100");      // run on npu:0
  }
  // Processes and threads are named.
  std::set<std::string> names;
  for (const json::Value* e : by_phase["M"]) names.insert(e->find("args")->find("name")->str);
  EXPECT_TRUE(names.count("host"));
  EXPECT_TRUE(names.count("npu:0"));
  // Backward nodes carry their sequence number; the ops and the aclnn phases are there.
  std::map<std::string, int> cats;
  for (const json::Value* e : by_phase["X"]) {
    cats[e->find("cat")->str]++;
    if (e->find("cat")->str == "autograd") {
      EXPECT_NE(e->find("args")->find("sequence_nr"), nullptr);
    }
  }
  for (const char* c : {"op", "aclnn", "kernel", "autograd", "user"}) EXPECT_GT(cats[c], 0) << c;
  // Per op: the device time of the kernels it launched lies inside the step's wall time.
  profiler::KeyAverages k = prof.key_averages();
  EXPECT_EQ(calls_of(k, "train_step"), steps);
  EXPECT_EQ(calls_of(k, "ember::matmul"), steps);
  const profiler::KeyAverage* mm = row_of(k, "aclnnMatmul");
  ASSERT_NE(mm, nullptr) << k.table();
  EXPECT_GT(mm->self_device_us, 0.0);
  const profiler::KeyAverage* step = row_of(k, "train_step");
  EXPECT_GE(step->total_device_us, mm->total_device_us);
}

TEST(Profiler, ThreadsRecordIntoTheirOwnBuffers) {
  profiler::Profile prof;
  std::atomic<int> go{0};
  auto work = [&go](int n) {
    go.fetch_add(1);
    while (go.load() < 2) std::this_thread::yield();
    Tensor a = ones({2});
    for (int i = 0; i < n; ++i) (void)(a * a);
  };
  std::thread t1(work, 300), t2(work, 200);
  t1.join();
  t2.join();
  prof.stop();
  EXPECT_EQ(calls_of(prof.key_averages(), "ember::mul"), 500);
  std::set<uint64_t> tracks;
  for (const auto& e : prof.events())
    if (e.name == "ember::mul") tracks.insert(e.track);
  EXPECT_EQ(tracks.size(), 2u);
}

TEST(Profiler, MisuseIsAClearError) {
  profiler::Profile prof;
  expect_error<ValueError>([] { profiler::Profile second; }, {"profiler::Profile", "already recording"});
  expect_error<ValueError>([&] { prof.events(); }, {"still recording", "stop()"});
  prof.stop();
  prof.stop();  // idempotent
  expect_error<ValueError>([&] { prof.export_chrome_trace("/nonexistent-dir/trace.json"); },
                           {"export_chrome_trace", "/nonexistent-dir/trace.json"});
  profiler::Profile next;  // the first one stopped: a new one may record
  EXPECT_TRUE(next.running());
}

TEST(Profiler, MemoryCountersFollowTheAllocators) {
  Device npu("npu:0");
  npu::synchronize();
  npu::reset_peak_memory_stats(0);
  profiler::ProfileOptions opts;
  opts.memory = true;
  profiler::Profile prof(opts);
  {
    Tensor a = ones({256, 256}, npu), b = ones({512, 512}, npu);
    Tensor c = (a.matmul(a) + 1.0).sum();
    Tensor h = ones({1000});  // a CPU tensor too
    npu::synchronize();
  }
  Tensor d = ones({64, 64}, npu);
  npu::synchronize();
  prof.stop();
  int64_t peak = 0, last = -1, cpu_events = 0;
  for (const auto& e : prof.events()) {
    if (e.kind != profiler::Event::Memory) continue;
    if (e.device < 0) {
      ++cpu_events;
      continue;
    }
    EXPECT_EQ(e.name, "memory npu:0");
    EXPECT_LE(e.allocated, e.reserved);
    peak = std::max(peak, e.allocated);
    last = e.allocated;
  }
  EXPECT_EQ(static_cast<size_t>(peak), npu::max_memory_allocated(0));
  EXPECT_EQ(static_cast<size_t>(last), npu::memory_allocated(0));
  EXPECT_GT(cpu_events, 0);
  json::Value root = json::parse(prof.chrome_trace(), "trace");
  auto by_phase = check_trace(root);  // points into root
  ASSERT_FALSE(by_phase["C"].empty());
  const json::Value* args = by_phase["C"].front()->find("args");
  EXPECT_NE(args->find("allocated"), nullptr);
  EXPECT_NE(args->find("reserved"), nullptr);
}

namespace {
std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs `marks` steps of real work with profiler::step() after each; returns the wall time of
// steps [first, last] as the caller's clock saw it (from one mark to the next, without the
// marks themselves: the last one writes the files), in microseconds.
double run_steps(int marks, int first, int last) {
  Tensor a = ones({96, 96});
  double us = 0;
  for (int m = 1; m <= marks; ++m) {
    auto t = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) a = (a.matmul(a) * 0.01).relu();
    if (m >= first && m <= last) us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
    profiler::step();
  }
  return us;
}

// The scheduled profile's files: a trace with ProfilerStep ranges around the ops, a table whose
// self times add up to the measured step time, and the SVG timeline.
void check_scheduled_profile(const std::string& path, int first, int last, double measured_us) {
  json::Value root = json::parse(slurp(path), path);
  auto by_phase = check_trace(root);
  std::set<std::string> steps;
  double step_us = 0;
  for (const json::Value* e : by_phase["X"]) {
    if (e->find("cat")->str == "step") {
      steps.insert(e->find("name")->str);
      step_us += number(*e->find("dur"));
    }
  }
  std::set<std::string> expected;
  for (int k = first; k <= last; ++k) expected.insert("ProfilerStep#" + std::to_string(k));
  EXPECT_EQ(steps, expected);
  EXPECT_NEAR(step_us, measured_us, 0.05 * measured_us);  // the table's time is the steps' time
  std::string table = slurp(path + ".txt");
  EXPECT_NE(table.find("ember::matmul"), std::string::npos) << table;
  EXPECT_NE(table.find("ProfilerStep#"), std::string::npos) << table;
  std::string svg = slurp(path + ".svg");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("host thread"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}
}  // namespace

TEST(Profiler, ProfileStepsWritesTraceTableAndTimeline) {
  std::string path = ::testing::TempDir() + "ember_profile_steps.json";
  profiler::profile_steps(path, 2, 4);
  double measured = run_steps(6, 2, 4);
  check_scheduled_profile(path, 2, 4, measured);
  expect_error<ValueError>([] { profiler::profile_steps("x.json", 3, 2); }, {"profile_steps", "3..2"});
}

// EMBER_PROFILE / EMBER_PROFILE_STEPS profile a program that only calls step().
TEST(Profiler, EnvironmentProfilesAProgramThatCallsStep) {
  std::string path = ::testing::TempDir() + "ember_profile_env.json";
  setenv("EMBER_PROFILE", path.c_str(), 1);
  setenv("EMBER_PROFILE_STEPS", "3..4", 1);
  profiler::detail::reread_environment();
  double measured = run_steps(5, 3, 4);
  check_scheduled_profile(path, 3, 4, measured);
  setenv("EMBER_PROFILE_STEPS", "4..x", 1);
  profiler::detail::reread_environment();
  expect_error<ValueError>([] { profiler::step(); }, {"EMBER_PROFILE_STEPS='4..x'", "FIRST..LAST"});
  unsetenv("EMBER_PROFILE");
  unsetenv("EMBER_PROFILE_STEPS");
  profiler::detail::reread_environment();
  profiler::step();  // nothing scheduled
}
