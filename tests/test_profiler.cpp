// The profiler (issue 15): what it records on a known program, and the structure of the Chrome
// trace it exports, checked against the trace event format.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <map>
#include <set>
#include <thread>

#include <unistd.h>

#include "ember/core/json.h"
#include "ember/device/cpu/gemm.h"
#include "ember/device/npu/acl.h"
#include "ember/device/profiler.h"
#include "test_util.h"

using namespace ember;
using ember_test::expect_error;

namespace {

// The kernel the demo step's autocast GEMMs run as on the NPU: the rounded product where the
// CPU's bf16 GEMM computes in fp32 (nn/amp/autocast.cpp), else aclnnMatmul.
std::string gemm_kernel() {
  return cpu::gemm_rounded_available() && !cpu::gemm_native_bf16() ? "aclnnEmberMatmulRoundedV2" : "aclnnMatmul";
}

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
    for (int i = 0; i < 40; ++i) a = (a.matmul(a) * 0.01).relu();  // ~0.5 ms: the marks' own cost is noise
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
  profiler::detail::reread_environment();  // steps count from 1 again (other tests mark steps too)
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

namespace {
// A step of the demo's model (llama_mlp_lm's sizes: d_model 256, d_ff 1024, 512 tokens), one block:
// a LLaMA MLP block and a head on npu:0 under bf16 autocast, cross entropy, AdamW; synchronized at
// its end, so the step's wall time holds its device work.
struct DemoStep {
  Device dev{"npu:0"};
  std::shared_ptr<nn::LlamaMLPBlock> block = std::make_shared<nn::LlamaMLPBlock>(256, 1024);
  std::shared_ptr<nn::Linear> head = std::make_shared<nn::Linear>(256, 64);
  std::unique_ptr<optim::AdamW> opt;
  Tensor x, y;
  DemoStep() {
    manual_seed(11);
    block->to(dev);
    head->to(dev);
    auto params = block->parameters();
    for (auto& p : head->parameters()) params.push_back(p);
    opt = std::make_unique<optim::AdamW>(params, optim::AdamWOptions{1e-3});
    x = randn({512, 256}).to(dev);
    y = randint(0, 64, {512}).to(dev);
  }
  void operator()() {
    opt->zero_grad();
    {
      amp::AutocastGuard g(DeviceType::NPU, kBFloat16);
      Tensor loss = nn::functional::cross_entropy((*head)((*block)(x)).to(kFloat32), y);
      loss.backward();
    }
    opt->step();
    npu::synchronize();
  }
};
}  // namespace

// torch's sort keys: by self device time the demo step's GEMMs come first; by count the most
// called op; an unknown key is refused with the list of keys.
TEST(Profiler, TableSortsByTorchsKeysAndDeviceTimeRanksTheMatmulFirst) {
  DemoStep step;
  step();  // warm: allocations and caches
  // Device times are the kernels' wall times: another process on the machine (ctest -j) can stretch
  // any kernel; the ranking is asked of one of three profiles, each of two steps.
  profiler::KeyAverages k;
  for (int attempt = 0; attempt < 3; ++attempt) {
    profiler::Profile prof;
    for (int i = 0; i < 2; ++i) step();
    prof.stop();
    k = prof.key_averages();
    if (k.sorted_by("self_device_time_total").rows.at(0).name == gemm_kernel()) break;
  }
  // Which op ranks first is a property of optimized builds: under a sanitizer the instrumented
  // elementwise kernels, not oneDNN's GEMMs, take the time. The sort itself is checked everywhere.
  for (const char* key : {"self_device_time_total", "self_npu_time_total", "self_cuda_time_total"}) {
    profiler::KeyAverages d = k.sorted_by(key);
    ASSERT_FALSE(d.rows.empty());
    for (size_t i = 1; i < d.rows.size(); ++i) EXPECT_GE(d.rows[i - 1].self_device_us, d.rows[i].self_device_us);
    if (!ember_test::kSanitized) {
      EXPECT_EQ(d.rows[0].name, gemm_kernel()) << key << "\n" << k.table({key, 10});
    }
  }
  const std::string table = k.table({"self_device_time_total", 5});
  const std::string first = k.sorted_by("self_device_time_total").rows[0].name;
  EXPECT_EQ(table.find(first), table.find('\n', table.find("---")) + 1) << table;  // the first row
  EXPECT_NE(table.find("Self device time total"), std::string::npos) << table;
  profiler::KeyAverages c = k.sorted_by("count");
  for (size_t i = 1; i < c.rows.size(); ++i) EXPECT_GE(c.rows[i - 1].calls, c.rows[i].calls);
  profiler::KeyAverages t = k.sorted_by("device_time_total");
  for (size_t i = 1; i < t.rows.size(); ++i) EXPECT_GE(t.rows[i - 1].total_device_us, t.rows[i].total_device_us);
  profiler::KeyAverages h = k.sorted_by("cpu_time_total");
  for (size_t i = 1; i < h.rows.size(); ++i) EXPECT_GE(h.rows[i - 1].total_host_us, h.rows[i].total_host_us);
  expect_error<ValueError>([&] { (void)k.table({"cpu_memory_usage", 3}); },
                           {"unknown sort_by 'cpu_memory_usage'", "self_cpu_time_total", "device_time_total", "count"});
}

// The per-step summary: wall time as the program's own clock sees the step (within 5%), the
// device's work of the step, and the memory peak.
TEST(Profiler, StepSummaryMatchesTheStepsOwnClock) {
  DemoStep step;
  step();
  profiler::ProfileOptions opts;
  opts.memory = true;
  profiler::Profile prof(opts);
  profiler::step();  // the steps below run from one mark to the next
  std::vector<double> measured;
  for (int i = 0; i < 3; ++i) {
    auto t = std::chrono::steady_clock::now();
    step();
    measured.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count());
    profiler::step();
  }
  prof.stop();
  std::vector<profiler::StepSummary> s = prof.step_summaries();
  ASSERT_EQ(s.size(), 3u) << prof.step_table();
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(s[i].step, s[0].step + static_cast<int64_t>(i));
    EXPECT_NEAR(s[i].wall_us, measured[i], 0.05 * measured[i]) << prof.step_table();
    EXPECT_GT(s[i].host_busy_us, 0.0);
    EXPECT_LE(s[i].host_busy_us, s[i].wall_us);
    ASSERT_TRUE(s[i].has_device);
    EXPECT_GT(s[i].device_busy_us, 0.0);
    EXPECT_LE(s[i].device_busy_us, s[i].device_span_us + 1e-3);
    EXPECT_NEAR(s[i].device_idle_us, s[i].device_span_us - s[i].device_busy_us, 1e-3);
    EXPECT_LE(s[i].device_span_us, s[i].wall_us * 1.001);  // synchronized: the work ends inside the step
    EXPECT_EQ(s[i].device_lag_us, 0.0);
    bool npu_peak = false;
    for (const auto& [d, bytes] : s[i].memory_peak) npu_peak = npu_peak || (d == 0 && bytes > 0);
    EXPECT_TRUE(npu_peak) << prof.step_table();
  }
  const std::string t = prof.step_table();
  for (const char* part : {"Wall", "Host busy", "Device busy", "Idle gaps", "Memory peak", "npu:0"})
    EXPECT_NE(t.find(part), std::string::npos) << part << " not in\n" << t;
}

// torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=2): two traces through
// on_trace_ready, each of the two active steps only; nothing is recorded outside them.
TEST(Profiler, ScheduleWaitWarmupActiveRepeatGivesTwoTraces) {
  EXPECT_EQ(profiler::schedule(1, 1, 2, 2)(0), profiler::ProfilerAction::None);
  EXPECT_EQ(profiler::schedule(1, 1, 2, 2)(1), profiler::ProfilerAction::Warmup);
  EXPECT_EQ(profiler::schedule(1, 1, 2, 2)(2), profiler::ProfilerAction::Record);
  EXPECT_EQ(profiler::schedule(1, 1, 2, 2)(3), profiler::ProfilerAction::RecordAndSave);
  EXPECT_EQ(profiler::schedule(1, 1, 2, 2)(8), profiler::ProfilerAction::None);
  EXPECT_EQ(profiler::schedule(0, 0, 1, 0, 2)(1), profiler::ProfilerAction::None);
  EXPECT_EQ(profiler::schedule(0, 0, 1, 0, 2)(2), profiler::ProfilerAction::RecordAndSave);
  expect_error<ValueError>([] { (void)profiler::schedule(1, 1, 0); }, {"schedule", "active=0"});

  std::vector<std::vector<std::string>> traces;  // per trace: its ProfilerStep names
  std::vector<int64_t> adds;
  profiler::ProfileOptions opts;
  opts.schedule = profiler::schedule(/*wait=*/1, /*warmup=*/1, /*active=*/2, /*repeat=*/2);
  opts.on_trace_ready = [&](profiler::Profile& p) {
    traces.emplace_back();
    for (const auto& e : p.events())
      if (std::strcmp(e.category, "step") == 0) traces.back().push_back(e.name);
    adds.push_back(calls_of(p.key_averages(), "ember::add"));
  };
  Tensor a = ones({8});
  {
    profiler::Profile prof(opts);
    EXPECT_FALSE(prof.running());  // step 0 waits
    for (int i = 0; i < 10; ++i) {
      for (int k = 0; k <= i; ++k) (void)(a + a);  // step i: i + 1 adds
      EXPECT_EQ(prof.running(), (i >= 1 && i <= 3) || (i >= 5 && i <= 7)) << i;  // warmup and active
      prof.step();
    }
    EXPECT_EQ(prof.step_num(), 10);
  }
  ASSERT_EQ(traces.size(), 2u);
  EXPECT_EQ(adds, (std::vector<int64_t>{3 + 4, 7 + 8}));  // steps 2, 3 and 6, 7; not the warmup steps
  for (const auto& t : traces) EXPECT_EQ(t.size(), 2u);
  // A window still recording when the profile ends is saved then, as torch does on exit.
  int saved = 0;
  profiler::ProfileOptions once;
  once.schedule = profiler::schedule(0, 0, 3);
  once.on_trace_ready = [&](profiler::Profile&) { ++saved; };
  {
    profiler::Profile prof(once);
    prof.step();
  }
  EXPECT_EQ(saved, 1);
  // Stopped between windows, a scheduled profile starts no other.
  {
    profiler::Profile prof(opts);  // step 0 waits
    prof.stop();
    for (int i = 0; i < 4; ++i) {
      prof.step();
      EXPECT_FALSE(prof.running()) << i;
    }
  }
  EXPECT_EQ(traces.size(), 2u);
}

namespace {
// Whether the SVG labels a box with `name` (its "aclnn" left out), in full or cut to fit ("Ember~").
bool svg_labels(const std::string& svg, std::string name) {
  if (name.rfind("aclnn", 0) == 0) name.erase(0, 5);
  const std::string start = ">" + name.substr(0, 3);
  for (size_t at = svg.find(start); at != std::string::npos; at = svg.find(start, at + 1)) {
    const size_t end = svg.find('<', at);
    if (end == std::string::npos) break;
    const std::string text = svg.substr(at + 1, end - at - 1);
    if (text == name || (text.size() >= 4 && text.back() == '~' && name.rfind(text.substr(0, text.size() - 1), 0) == 0))
      return true;
  }
  return false;
}
}  // namespace

// The timeline of one step, zoomed: op names on the host and device tracks, the step's mark and
// the legends.
TEST(Profiler, SvgOfOneStepLabelsOpsMarksStepsAndHasALegend) {
  DemoStep step;
  step();
  const std::string path = ::testing::TempDir() + "ember_step.svg";
  std::string svg;
  int64_t n = 0;
  std::unique_ptr<profiler::Profile> prof;
  for (int attempt = 0; attempt < 5; ++attempt) {  // (as above: a wide Matmul box, unless another process
    step();  // stretched some other kernel; a step right before, so the NPU's OpenMP team is warm)
    prof = std::make_unique<profiler::Profile>();
    profiler::step();
    step();
    profiler::step();
    prof->stop();
    n = prof->step_summaries().at(0).step;
    prof->export_svg_timeline(path, {n});
    svg = slurp(path);
    if (ember_test::kSanitized || svg_labels(svg, gemm_kernel())) break;
  }
  EXPECT_NE(svg.find("fill=\"white\">"), std::string::npos) << "no label on the device track";
  std::vector<std::string> parts = {"legend:",      "device time:", gemm_kernel(),
                                    "npu:0 stream", "host thread",  "step " + std::to_string(n)};
  for (const std::string& part : parts)
    EXPECT_NE(svg.find(part), std::string::npos) << part;
  // The GEMMs' boxes are the widest (see above): labelled, in full or cut to fit.
  if (!ember_test::kSanitized) {
    EXPECT_TRUE(svg_labels(svg, gemm_kernel())) << gemm_kernel();
  }
  expect_error<ValueError>([&] { prof->export_svg_timeline(path, {n + 100}); }, {"no ProfilerStep#"});
  std::remove(path.c_str());
}

// CANN's profiling API (acl/acl_prof.h) as a CANN program calls it: aclprofInit, a config,
// aclprofStart, work and msproftx marks and ranges, aclprofStop: the trace written is one this
// file's checks accept, with the aclnn calls, their kernels and the ranges in it.
TEST(Profiler, AclProfWritesATraceTheProfilerChecksAccept) {
  const std::string dir = "/tmp/ember_aclprof_" + std::to_string(::getpid());
  std::string cmd = "rm -rf '" + dir + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  ASSERT_EQ(aclprofInit(dir.c_str(), dir.size()), ACL_SUCCESS) << aclGetRecentErrMsg();
  EXPECT_EQ(aclprofInit(dir.c_str(), dir.size()), ACL_ERROR_REPEAT_INITIALIZE);
  uint32_t devs[1] = {0};
  aclprofConfig* cfg = aclprofCreateConfig(devs, 1, ACL_AICORE_NONE, nullptr,
                                           ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_MSPROFTX);
  ASSERT_NE(cfg, nullptr) << aclGetRecentErrMsg();
  EXPECT_EQ(aclprofStop(cfg), ACL_ERROR_PROF_NOT_RUN);
  ASSERT_EQ(aclprofStart(cfg), ACL_SUCCESS) << aclGetRecentErrMsg();
  EXPECT_EQ(aclprofStart(cfg), ACL_ERROR_PROF_ALREADY_RUN);

  void* stamp = aclprofCreateStamp();
  ASSERT_NE(stamp, nullptr);
  ASSERT_EQ(aclprofSetStampTraceMessage(stamp, "train_step", 10), ACL_SUCCESS);
  void* across = aclprofCreateStamp();
  ASSERT_EQ(aclprofSetStampTraceMessage(across, "loader_wait", 11), ACL_SUCCESS);
  uint32_t range = 0;
  ASSERT_EQ(aclprofRangeStart(across, &range), ACL_SUCCESS);
  std::thread([range] { EXPECT_EQ(aclprofRangeStop(range), ACL_SUCCESS); }).join();  // ended on another thread
  EXPECT_EQ(aclprofRangeStop(range), ACL_ERROR_INVALID_PARAM);
  ASSERT_EQ(aclprofPush(stamp), ACL_SUCCESS);
  Tensor x = ones({32, 32}, Device("npu:0")), w = ones({32, 32}, Device("npu:0"));
  Tensor y = x.matmul(w).relu();
  ASSERT_EQ(aclprofMark(stamp), ACL_SUCCESS);
  ASSERT_EQ(aclprofMarkEx("after_relu", 10, nullptr), ACL_SUCCESS);
  npu::synchronize();
  ASSERT_EQ(aclprofPop(), ACL_SUCCESS);
  EXPECT_EQ(aclprofPop(), ACL_ERROR_INVALID_PARAM);  // nothing open
  aclprofDestroyStamp(stamp);
  aclprofDestroyStamp(across);
  EXPECT_EQ(aclprofMark(stamp), ACL_ERROR_INVALID_PARAM);  // destroyed

  aclprofConfig* other = aclprofCreateConfig(devs, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME);
  EXPECT_EQ(aclprofStop(other), ACL_ERROR_INVALID_PROFILING_CONFIG);
  ASSERT_EQ(aclprofStop(cfg), ACL_SUCCESS) << aclGetRecentErrMsg();
  EXPECT_EQ(aclprofDestroyConfig(other), ACL_SUCCESS);
  EXPECT_EQ(aclprofDestroyConfig(cfg), ACL_SUCCESS);
  EXPECT_EQ(aclprofDestroyConfig(cfg), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclprofFinalize(), ACL_SUCCESS);
  EXPECT_EQ(aclprofFinalize(), ACL_ERROR_UNINITIALIZE);

  const std::string path = dir + "/ember_prof_" + std::to_string(::getpid()) + "_1.json";
  json::Value root = json::parse(slurp(path), path);
  auto by_phase = check_trace(root);
  std::set<std::pair<std::string, std::string>> named;  // (name, category) of the X events
  std::set<std::string> on_device;                       // names of X events on an npu process
  for (const json::Value* e : by_phase["X"]) {
    named.insert({e->find("name")->str, e->find("cat")->str});
    if (e->find("pid")->num != "0") on_device.insert(e->find("name")->str);
  }
  EXPECT_TRUE(named.count({"train_step", "msproftx"}));
  EXPECT_TRUE(named.count({"loader_wait", "msproftx"}));
  EXPECT_TRUE(named.count({"aclnnMatmul", "aclnn"})) << "the host's phases of the call";
  EXPECT_TRUE(on_device.count("aclnnMatmul")) << "the kernel on the stream's track";
  EXPECT_TRUE(on_device.count("after_relu")) << "aclprofMarkEx's mark on the stream";
  EXPECT_NE(slurp(dir + "/ember_prof_" + std::to_string(::getpid()) + "_1.txt").find("aclnnMatmul"), std::string::npos);
  std::system(cmd.c_str());
}

// Misuse is refused with CANN's codes and a reason: no aclprofInit, a bad config.
TEST(Profiler, AclProfRefusesCallsOutOfOrder) {
  uint32_t devs[2] = {0, 0}, bad[1] = {99};
  aclprofConfig* cfg = aclprofCreateConfig(devs, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME);
  ASSERT_NE(cfg, nullptr);
  EXPECT_EQ(aclprofStart(cfg), ACL_ERROR_UNINITIALIZE);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("aclprofInit first"), std::string::npos);
  EXPECT_EQ(aclprofCreateConfig(devs, 2, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME), nullptr);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("listed twice"), std::string::npos);
  EXPECT_EQ(aclprofCreateConfig(bad, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME), nullptr);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("is not a device"), std::string::npos);
  EXPECT_EQ(aclprofCreateConfig(devs, 1, ACL_AICORE_NONE, nullptr, 1ULL << 40), nullptr);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("unknown dataTypeConfig bits"), std::string::npos);
  EXPECT_EQ(aclprofCreateConfig(nullptr, 0, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME), nullptr);
  EXPECT_EQ(aclprofCreateStamp(), nullptr);  // no profile running
  EXPECT_EQ(aclprofInit(nullptr, 4), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclprofInit("/proc/no/such/dir", 17), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclprofDestroyConfig(cfg), ACL_SUCCESS);
}
