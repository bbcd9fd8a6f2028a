// ember: the profiler. Where a step's time goes, on the host and on every NPU stream, as
// torch.profiler shows it: a Chrome/Perfetto trace and a key_averages() table.
//
//   profiler::ProfileOptions opts;
//   opts.record_shapes = true;
//   profiler::Profile prof(opts);                      // recording from here...
//   { auto r = profiler::record_function("step"); train_step(); }
//   prof.stop();                                       // ...to here (or the destructor)
//   prof.export_chrome_trace("trace.json");            // chrome://tracing, ui.perfetto.dev
//   std::cout << prof.key_averages().table();
//
// What is recorded: every dispatcher op call (with shapes and dtypes if asked), autograd backward
// nodes (with the sequence number of the forward op that made them), optimizer steps, both
// phases of each aclnn call ember makes, user ranges (record_function), and on each NPU stream
// its own track: kernel, copy and event tasks from the start to the end of their execution, each
// linked by a flow arrow to the host call that launched it.
//
// Cost: off, one relaxed atomic load and a predictable branch per op. On, events go to a buffer
// of the recording thread (no lock): about a microsecond per op. One Profile records at a time.
// This layer sees no Tensor: the dispatcher and the runtime call into it (device/ is below both).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ember/core/error.h"

namespace ember {
namespace profiler {

class Profile;

// What a scheduled profile does during a step (torch.profiler.ProfilerAction).
enum class ProfilerAction { None, Warmup, Record, RecordAndSave };
using ScheduleFn = std::function<ProfilerAction(int64_t step)>;

// torch.profiler.schedule: after skip_first steps, cycles of `wait` idle steps, `warmup` steps
// recorded and dropped, and `active` steps recorded, the last of which saves (on_trace_ready);
// `repeat` cycles (0: until the program ends). Steps count from 0, advanced by Profile::step().
ScheduleFn schedule(int64_t wait, int64_t warmup, int64_t active, int64_t repeat = 0, int64_t skip_first = 0);

struct ProfileOptions {
  bool record_shapes = false;  // argument shapes and dtypes of each op ("[2, 3] float32, [3] float32")
  bool memory = false;         // allocated and reserved bytes per device, after every change
  bool with_stack = false;     // call stacks (not recorded yet)
  // torch.profiler's schedule and on_trace_ready: with a schedule, the profile records only in the
  // steps it says and calls on_trace_ready(prof) at the end of each active window (prof.events(),
  // key_averages() and the exports then show that window). Without one: from construction to stop().
  ScheduleFn schedule = nullptr;
  std::function<void(Profile&)> on_trace_ready = nullptr;
};

// The track of core `core` of an Ascend C launch on stream `stream`: a row of its own under the
// stream's device (Chrome trace: "stream S core C").
constexpr uint64_t kCoreTrackShift = 40;
inline uint64_t core_track(uint64_t stream, uint32_t core) {
  return stream | (static_cast<uint64_t>(core) + 1) << kCoreTrackShift;
}

// One recorded event. Times are nanoseconds of the steady clock since the session started.
struct Event {
  enum Kind : uint8_t { Range, Kernel, Launch, Memory };
  Kind kind = Range;
  std::string name;
  const char* category = "";  // op, user, autograd, optimizer, aclnn, kernel, launch
  int64_t start_ns = 0, end_ns = 0;
  int device = -1;       // -1: a host thread; >= 0: a stream of npu:device
  uint64_t track = 0;    // host thread number (1, 2, ...) or stream id
  uint64_t flow = 0;     // Launch and Kernel: the link between a launch and its execution
  int64_t sequence_nr = -1;  // autograd: the node's sequence number
  std::string shapes;    // record_shapes
  int64_t allocated = 0, reserved = 0;  // Memory: the device's bytes after the change
};

// A row of key_averages: all ranges with one name (and shapes, if grouped by them).
struct KeyAverage {
  std::string name, shapes;
  int64_t calls = 0;
  double self_host_us = 0, total_host_us = 0;      // total includes nested ranges
  double self_device_us = 0, total_device_us = 0;  // kernels launched directly / also by nested ranges
};

// KeyAverages::table's options: torch's sort_by keys ("self_cpu_time_total", "cpu_time_total",
// "cpu_time" (the average), "self_device_time_total", "device_time_total", "device_time", "count";
// "cuda"/"npu" for "device" and "host" for "cpu" are accepted too) and row_limit (0: all rows).
struct TableOptions {
  std::string sort_by = "self_cpu_time_total";
  size_t row_limit = 0;
};

class KeyAverages {
 public:
  std::vector<KeyAverage> rows;  // by self host time, largest first
  // torch's table: name, self and total host and device time with their shares, averages, calls.
  std::string table(size_t row_limit = 0) const;
  std::string table(const TableOptions& options) const;  // e.g. table({"device_time_total", 10})
  // The rows by a sort key, largest first (ValueError naming the keys for an unknown one).
  KeyAverages sorted_by(const std::string& sort_by) const;
};

// One training step of a profile (a "ProfilerStep#N" range of profiler::step()). Device figures
// are of the NPU work the step launched, wherever it ran: the host may run ahead of the device.
struct StepSummary {
  int64_t step = 0;
  double wall_us = 0;         // from the step's mark to the next
  double host_busy_us = 0;    // the step's thread inside recorded ranges (ops, user ranges, ...)
  bool has_device = false;    // the step launched NPU work
  double device_busy_us = 0;  // its kernels executing (union over streams and devices)
  double device_span_us = 0;  // from its first kernel's start to its last kernel's end
  double device_idle_us = 0;  // span minus busy: the device waiting inside the step's work
  int64_t idle_gaps = 0;      // idle stretches of 10 us or more inside the span
  double longest_gap_us = 0;
  double device_lag_us = 0;   // its last kernel ended this long after the step's end mark (0: before)
  std::vector<std::pair<int, int64_t>> memory_peak;  // (device, bytes allocated at most; -1 cpu), with memory
};

// export_svg_timeline's options: step >= 1 draws only that ProfilerStep (zoomed to it).
struct SvgOptions {
  int64_t step = -1;
  double width = 1400;  // of the time axis, in pixels
};

class Profile {
 public:
  // Starts recording (with a schedule: when the schedule says); ValueError if another records.
  explicit Profile(ProfileOptions options = {});
  ~Profile();
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  void stop();  // idempotent; collects every thread's events (and saves an active window)
  bool running() const { return running_; }
  // torch's prof.step(): marks a step's end (profiler::step()) and advances the schedule.
  void step();
  int64_t step_num() const { return step_num_; }
  const std::vector<Event>& events() const;  // after stop, sorted by start
  // Chrome trace event format: X (complete) events per host thread and per NPU stream, s/f flow
  // events from launches to executions, M metadata naming processes and threads.
  void export_chrome_trace(const std::string& path) const;
  std::string chrome_trace() const;
  KeyAverages key_averages(bool group_by_shape = false) const;
  // Per ProfilerStep: wall, host busy, device busy and idle, memory peak; and as a table.
  std::vector<StepSummary> step_summaries() const;
  std::string step_table() const;
  // A timeline picture: one row per host thread and per NPU stream, a box per range and kernel
  // (labelled where it is wide enough), step marks, a legend of the colours, and each device's
  // allocated memory as a line (with ProfileOptions::memory).
  void export_svg_timeline(const std::string& path, const SvgOptions& options = {}) const;

 private:
  void start_session();
  void stop_session();
  ProfileOptions options_;
  uint64_t session_ = 0;
  bool running_ = false;
  int64_t step_num_ = 0;
  bool schedule_over_ = false;  // stopped: step() no longer starts windows
  ProfilerAction action_ = ProfilerAction::Record;
  std::vector<Event> events_;
};

namespace detail {
extern std::atomic<bool> g_enabled;
inline bool enabled() { return g_enabled.load(std::memory_order_relaxed); }
bool record_shapes();
int64_t now_ns();
uint64_t session_id();  // the running session, 0: none
// Appends to the calling thread's buffer of the running session (dropped if none runs).
void record(Event&& e);
// The allocators call this after every change while memory is recorded (device -1: the CPU).
extern std::atomic<bool> g_memory;
inline bool memory_enabled() { return g_memory.load(std::memory_order_relaxed); }
void record_memory(int device, size_t allocated, size_t reserved);
uint64_t host_track();  // the calling thread's number
uint64_t next_flow();
// Called by stop() before it collects: the NPU runtime registers a wait for its streams, so the
// kernels launched while recording are recorded too (as torch's profiler synchronizes CUDA).
void on_stop(void (*hook)());
// A Profile of the program's own is starting: EMBER_PROFILE's whole-run recording stops for it.
void yield_whole_run();
// A session just started inside a step (a scheduled Profile): the running step counts from now.
void mark_step_start();
// Tests: step() reads EMBER_PROFILE again at its next call and counts steps from 1, as in a fresh
// process (it reads it once per process).
void reread_environment();

// A host range, recorded when it ends (if a session was running when it began).
// Off, it costs a load and a branch each way: the event is built only while recording.
class Scope {
 public:
  Scope(const char* category, std::string name, std::string shapes = std::string(), int64_t sequence_nr = -1) {
    if (EMBER_UNLIKELY(enabled())) begin(category, std::move(name), std::move(shapes), sequence_nr);
  }
  ~Scope() {
    if (EMBER_UNLIKELY(e_.has_value())) end();
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  void begin(const char* category, std::string name, std::string shapes, int64_t sequence_nr);
  void end();
  std::optional<Event> e_;
};
}  // namespace detail

// A user range (torch.profiler.record_function): recorded from construction to destruction.
class RecordFunction {
 public:
  explicit RecordFunction(std::string name);
  ~RecordFunction();
  RecordFunction(const RecordFunction&) = delete;
  RecordFunction& operator=(const RecordFunction&) = delete;
  RecordFunction(RecordFunction&& o) noexcept;

 private:
  detail::Scope* scope_;
};
inline RecordFunction record_function(std::string name) { return RecordFunction(std::move(name)); }

// Marks the end of a training step (torch.profiler's prof.step()). While a profile records, each
// step is a range "ProfilerStep#N" from the previous mark. Any program can be profiled without
// code changes:
//   EMBER_PROFILE=trace.json EMBER_PROFILE_STEPS=10..20 ./prog
// records steps 10 to 20 (counting from 1; default 10..20) with shapes and memory, or the whole
// run if the program never calls step(), then writes the trace, trace.json.txt (the tables),
// trace.json.svg (the timeline) and trace.json.stepN.svg (the last step). Under a launcher with
// several ranks each writes its own (trace.rank1.json); a window never reached is said at exit.
void step();
// The same from code: profile steps [first, last] of the step() marks to come into path.
void profile_steps(const std::string& path, int64_t first, int64_t last, ProfileOptions options = {true, true, false});

}  // namespace profiler
}  // namespace ember
