// The profiler's recording: sessions, per-thread event buffers, host ranges.
//
// Each thread appends to a buffer of its own: a list of fixed-size chunks that never move. The
// writer fills a slot and then publishes it by a release store of the chunk's count; stop()
// reads each chunk up to its acquired count. So recording takes no lock, and a writer that is
// still finishing an event when stop() runs can only be missed, never half read.
#include "ember/device/profiler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>

#include "ember/core/error.h"

namespace ember {
namespace profiler {
namespace detail {

std::atomic<bool> g_enabled{false};
std::atomic<bool> g_memory{false};

namespace {

struct Chunk {
  static constexpr size_t kEvents = 256;
  Event events[kEvents];
  std::atomic<size_t> count{0};
  std::atomic<Chunk*> next{nullptr};
};

struct ThreadBuffer {
  uint64_t session = 0;
  Chunk* head = nullptr;
  Chunk* tail = nullptr;  // the writer's
  ~ThreadBuffer() {
    for (Chunk* c = head; c;) {
      Chunk* n = c->next.load(std::memory_order_relaxed);
      delete c;
      c = n;
    }
  }
  void append(Event&& e) {
    size_t n = tail->count.load(std::memory_order_relaxed);
    if (n == Chunk::kEvents) {
      Chunk* c = new Chunk();
      tail->next.store(c, std::memory_order_release);
      tail = c;
      n = 0;
    }
    tail->events[n] = std::move(e);
    tail->count.store(n + 1, std::memory_order_release);
  }
};

struct Registry {
  std::mutex mu;
  uint64_t session = 0;       // the running session, 0: none
  uint64_t last_session = 0;
  // Read by recording threads without the lock (a stream worker may record a kernel of the last
  // session while the next one starts): atomics.
  std::atomic<bool> record_shapes{false};
  std::atomic<int64_t> origin_ns{0};  // the session's time zero
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;  // of the running session
};
Registry& registry() {
  static auto* r = new Registry();
  return *r;
}

std::atomic<uint64_t> g_next_track{1};
std::atomic<uint64_t> g_next_flow{1};
std::atomic<uint64_t> g_session{0};  // the running session, read by writers without the lock

thread_local std::shared_ptr<ThreadBuffer> tls_buffer;  // kept alive by its thread after stop()
// Set once the thread's tls_buffer is destroyed: after main returns, a recording still running
// (EMBER_PROFILE writes at exit) may see events from static destructors, which must not touch it.
// A trivially destructible flag stays readable until the thread ends.
thread_local bool tls_buffer_gone = false;
struct BufferGone {
  ~BufferGone() { tls_buffer_gone = true; }
};
thread_local BufferGone tls_buffer_guard;  // made with tls_buffer, so destroyed before it
thread_local uint64_t tls_track = 0;

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

namespace {
std::mutex g_hooks_mu;
std::vector<void (*)()>& stop_hooks() {
  static auto* v = new std::vector<void (*)()>();
  return *v;
}
}  // namespace

void on_stop(void (*hook)()) {
  std::lock_guard<std::mutex> g(g_hooks_mu);
  stop_hooks().push_back(hook);
}

uint64_t session_id() { return g_session.load(std::memory_order_acquire); }

bool record_shapes() { return registry().record_shapes.load(std::memory_order_relaxed); }

void record_memory(int device, size_t allocated, size_t reserved) {
  Event e;
  e.kind = Event::Memory;
  e.category = "memory";
  e.name = device < 0 ? "memory cpu" : "memory npu:" + std::to_string(device);
  e.device = device;
  e.start_ns = e.end_ns = now_ns();
  e.allocated = static_cast<int64_t>(allocated);
  e.reserved = static_cast<int64_t>(reserved);
  record(std::move(e));
}

int64_t now_ns() { return steady_ns() - registry().origin_ns.load(std::memory_order_relaxed); }

uint64_t host_track() {
  if (!tls_track) tls_track = g_next_track.fetch_add(1);
  return tls_track;
}

uint64_t next_flow() { return g_next_flow.fetch_add(1); }

void record(Event&& e) {
  uint64_t session = g_session.load(std::memory_order_acquire);
  if (!session) return;
  if (EMBER_UNLIKELY(tls_buffer_gone)) return;
  if (!tls_buffer || tls_buffer->session != session) {  // the thread's first event of this session
    static_cast<void>(&tls_buffer_guard);  // made now: destroyed before tls_buffer, at the thread's end
    auto b = std::make_shared<ThreadBuffer>();
    b->session = session;
    b->head = b->tail = new Chunk();
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mu);
    if (r.session != session) return;  // stopped meanwhile
    r.buffers.push_back(b);
    tls_buffer = std::move(b);
  }
  tls_buffer->append(std::move(e));
}

void Scope::begin(const char* category, std::string name, std::string shapes, int64_t sequence_nr) {
  Event& e = e_.emplace();
  e.kind = Event::Range;
  e.category = category;
  e.name = std::move(name);
  e.shapes = std::move(shapes);
  e.sequence_nr = sequence_nr;
  e.track = host_track();
  e.start_ns = now_ns();
}

void Scope::end() {
  e_->end_ns = now_ns();
  record(std::move(*e_));
}

}  // namespace detail

RecordFunction::RecordFunction(std::string name)
    : scope_(detail::enabled() ? new detail::Scope("user", std::move(name)) : nullptr) {}
RecordFunction::~RecordFunction() { delete scope_; }
RecordFunction::RecordFunction(RecordFunction&& o) noexcept : scope_(o.scope_) { o.scope_ = nullptr; }

ScheduleFn schedule(int64_t wait, int64_t warmup, int64_t active, int64_t repeat, int64_t skip_first) {
  EMBER_CHECK_VALUE(wait >= 0 && warmup >= 0 && active >= 1 && repeat >= 0 && skip_first >= 0,
                    "profiler::schedule(wait=", wait, ", warmup=", warmup, ", active=", active, ", repeat=", repeat,
                    ", skip_first=", skip_first, "): expected active >= 1 and the others >= 0");
  return [=](int64_t step) {
    if (step < skip_first) return ProfilerAction::None;
    step -= skip_first;
    const int64_t cycle = wait + warmup + active;
    if (repeat > 0 && step / cycle >= repeat) return ProfilerAction::None;
    const int64_t at = step % cycle;
    if (at < wait) return ProfilerAction::None;
    if (at < wait + warmup) return ProfilerAction::Warmup;
    return at < cycle - 1 ? ProfilerAction::Record : ProfilerAction::RecordAndSave;
  };
}

namespace {
bool recording(ProfilerAction a) { return a == ProfilerAction::Record || a == ProfilerAction::RecordAndSave; }
}  // namespace

Profile::Profile(ProfileOptions options) : options_(std::move(options)) {
  detail::yield_whole_run();
  action_ = options_.schedule ? options_.schedule(0) : ProfilerAction::Record;
  if (action_ != ProfilerAction::None) start_session();
}

Profile::~Profile() {
  try {
    stop();
  } catch (const std::exception& e) {  // on_trace_ready threw: a destructor must not
    std::fprintf(stderr, "ember: profiler: %s\n", e.what());
  }
}

void Profile::start_session() {
  detail::Registry& r = detail::registry();
  std::lock_guard<std::mutex> g(r.mu);
  EMBER_CHECK_VALUE(r.session == 0, "profiler::Profile: a profile is already recording (session ", r.session,
                    "); stop it first: one Profile records at a time");
  session_ = r.session = ++r.last_session;
  r.record_shapes.store(options_.record_shapes, std::memory_order_relaxed);
  r.origin_ns.store(detail::steady_ns(), std::memory_order_relaxed);
  r.buffers.clear();
  events_.clear();
  detail::g_session.store(session_, std::memory_order_release);
  detail::g_memory.store(options_.memory, std::memory_order_release);
  detail::g_enabled.store(true, std::memory_order_release);
  running_ = true;
}

void Profile::stop() {
  schedule_over_ = true;  // also between windows: step() starts none after stop()
  if (!running_) return;
  stop_session();
  const bool save = recording(action_);
  action_ = ProfilerAction::None;
  if (save && options_.on_trace_ready) options_.on_trace_ready(*this);
}

// torch.profiler's transitions: a session runs through warmup and active steps; warmup's events
// are dropped when recording starts; an active window ends by saving (on_trace_ready).
void Profile::step() {
  profiler::step();
  if (!options_.schedule || schedule_over_) return;
  const ProfilerAction prev = action_, next = options_.schedule(++step_num_);
  const bool window_ends = prev == ProfilerAction::RecordAndSave || (recording(prev) && !recording(next));
  if (window_ends || (prev == ProfilerAction::Warmup && next != ProfilerAction::Warmup)) {
    stop_session();
    if (window_ends && options_.on_trace_ready) options_.on_trace_ready(*this);
  }
  action_ = next;
  if (next != ProfilerAction::None && !running_) {
    start_session();
    detail::mark_step_start();
  }
}

void Profile::stop_session() {
  running_ = false;
  {
    std::lock_guard<std::mutex> g(detail::g_hooks_mu);
    for (auto hook : detail::stop_hooks()) hook();  // queued work finishes (and records) first
  }
  std::vector<std::shared_ptr<detail::ThreadBuffer>> buffers;
  {
    detail::Registry& r = detail::registry();
    std::lock_guard<std::mutex> g(r.mu);
    detail::g_enabled.store(false, std::memory_order_release);
    detail::g_memory.store(false, std::memory_order_release);
    detail::g_session.store(0, std::memory_order_release);
    r.session = 0;
    buffers.swap(r.buffers);
  }
  for (const auto& b : buffers) {
    for (detail::Chunk* c = b->head; c; c = c->next.load(std::memory_order_acquire)) {
      size_t n = c->count.load(std::memory_order_acquire);
      for (size_t i = 0; i < n; ++i) events_.push_back(c->events[i]);
    }
  }
  std::stable_sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;  // parents first
  });
}

const std::vector<Event>& Profile::events() const {
  EMBER_CHECK_VALUE(!running_, "profiler::Profile::events: the profile is still recording; call stop() first");
  return events_;
}

}  // namespace profiler
}  // namespace ember
