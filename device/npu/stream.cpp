// Streams: in-order queues, each run by its own worker thread (their aclrt* functions are in
// stream_api.cpp, events in event.cpp).
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "ember/device/npu/runtime.h"
#include "ember/device/parallel.h"
#include "ember/device/profiler.h"
#include "ember/core/error.h"

namespace ember {
namespace npu {
namespace detail {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

std::map<uintptr_t, StreamPtr>& live_streams() {
  static auto* s = new std::map<uintptr_t, StreamPtr>();
  return *s;
}
std::atomic<uint64_t> g_stream_ids{0};
std::atomic<uintptr_t> g_next_handle{1};

// Note [Orderly shutdown]
std::atomic<bool> g_shut_down{false};
std::atomic<pid_t> g_owner_pid{::getpid()};  // the process whose threads run the streams
struct ExitHook {
  ~ExitHook() {
    // A thread_local's destructor runs when its thread ends: for the main thread, that is exit.
    if (::syscall(SYS_gettid) == ::getpid()) shutdown_streams();
  }
};
void touch_exit_hook() {
  static thread_local ExitHook hook;
  (void)&hook;
}
const bool g_main_thread_hooked = (touch_exit_hook(), true);  // at load, on the loading (main) thread
void register_atexit_once() {
  static const bool once = (std::atexit(shutdown_streams), true);
  (void)once;
}


}  // namespace

thread_local const Stream* tls_worker_of = nullptr;  // set on a stream's worker thread

void shutdown_streams() {
  // A child forked without exec has the streams but not their workers: nothing to wait for.
  if (::getpid() != g_owner_pid.load()) return;
  if (g_shut_down.exchange(true)) return;
  std::vector<StreamPtr> all;
  {
    std::lock_guard<std::mutex> g(g_registry_mu);
    for (const auto& kv : live_streams()) all.push_back(kv.second);
  }
  // (exit called by a task itself: its own stream cannot finish first)
  for (const StreamPtr& s : all)
    if (s.get() != tls_worker_of) s->close_for_exit();
}
bool streams_shut_down() { return g_shut_down.load(); }

std::mutex g_registry_mu;
uintptr_t new_handle() { return 0x7e000000ull + g_next_handle.fetch_add(1) * 16; }

int error_kind_of(const std::exception& e) {
  if (dynamic_cast<const ShapeError*>(&e)) return 1;
  if (dynamic_cast<const DTypeError*>(&e)) return 2;
  if (dynamic_cast<const DeviceError*>(&e)) return 3;
  if (dynamic_cast<const IndexError*>(&e)) return 4;
  if (dynamic_cast<const NotImplementedError*>(&e)) return 5;
  if (dynamic_cast<const OutOfMemoryError*>(&e)) return 6;
  if (dynamic_cast<const ValueError*>(&e)) return 7;
  if (dynamic_cast<const TypeError*>(&e)) return 8;
  return 0;
}

void throw_error_of_kind(int kind, const std::string& msg) {
  switch (kind) {
    case 1: throw ShapeError(msg);
    case 2: throw DTypeError(msg);
    case 3: throw DeviceError(msg);
    case 4: throw IndexError(msg);
    case 5: throw NotImplementedError(msg);
    case 6: throw OutOfMemoryError(msg);
    case 7: throw ValueError(msg);
    case 8: throw TypeError(msg);
    default: throw Error(msg);
  }
}

Stream::Stream(int device, bool is_default)
    : device_(device), is_default_(is_default), id_(g_stream_ids.fetch_add(1)) {
  (void)g_main_thread_hooked;
  register_atexit_once();
  g_owner_pid = ::getpid();
  closed_ = g_shut_down.load();  // made during exit (a static destructor): runs its work inline
  worker_ = std::thread([this] {
    tls_worker_of = this;
    loop();
  });
  register_stream(this);
}

Stream::~Stream() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  work_cv_.notify_one();
  worker_.join();
  unregister_stream(this);  // after the last task ran: until then aclrtFree sees what it uses
}

namespace {
// The launch end of the profiler's arrow to the execution (out of line: off the launch path).
__attribute__((noinline)) void record_launch(Task* task) {
  task->flow = profiler::detail::next_flow();
  profiler::Event e;
  e.kind = profiler::Event::Launch;
  e.category = "launch";
  e.name = task->name;
  e.track = profiler::detail::host_track();
  e.start_ns = e.end_ns = profiler::detail::now_ns();
  e.flow = task->flow;
  profiler::detail::record(std::move(e));
}
}  // namespace

uint64_t Stream::enqueue(Task&& task, AllocList&& uses) {
  if (EMBER_UNLIKELY(profiler::detail::enabled())) record_launch(&task);
  bool wake;
  uint64_t seq;
  {
    std::unique_lock<std::mutex> g(mu_);
    if (EMBER_UNLIKELY(closed_)) {  // after close_for_exit: inline, on this thread
      seq = enqueued_.fetch_add(1) + 1;
      g.unlock();
      run_task(task);
      return seq;
    }
    seq = enqueued_.fetch_add(1) + 1;
    // What the task uses stays listed until it has run (Note [In-flight uses]); the entries of
    // tasks that have run are dropped here, so the list holds at most the unfinished ones.
    uint64_t done = completed_.load(std::memory_order_relaxed);
    while (uses_begin_ < uses_.size() && uses_[uses_begin_].seq <= done) ++uses_begin_;
    if (uses_begin_ == uses_.size()) {
      uses_.clear();
      uses_begin_ = 0;
    } else if (uses_begin_ >= 64 && uses_begin_ * 2 >= uses_.size()) {
      uses_.erase(uses_.begin(), uses_.begin() + static_cast<std::ptrdiff_t>(uses_begin_));
      uses_begin_ = 0;
    }
    if (!uses.empty()) uses_.push_back(Uses{seq, task.name, std::move(uses)});
    queue_.push_back(std::move(task));
    wake = sleeping_;
  }
  if (wake) work_cv_.notify_one();
  return seq;
}

void Stream::loop() {
  using clock = std::chrono::steady_clock;
  std::deque<Task> batch;
  uint64_t taken = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lk(mu_);
      if (queue_.empty() && !stop_) {
        // Stay awake briefly, watching the counter without the lock: hosts launch kernels back
        // to back, and waking a sleeping thread costs more than the launch itself.
        lk.unlock();
        auto until = clock::now() + std::chrono::microseconds(50);
        for (int spins = 0; enqueued_.load() == taken; ++spins) {
          if ((spins & 63) == 63 && clock::now() >= until) break;
          cpu_relax();
        }
        lk.lock();
        if (queue_.empty() && !stop_) {
          sleeping_ = true;
          auto has_work = [this] { return !queue_.empty() || stop_; };
          if (!work_cv_.wait_for(lk, kTeamIdle, has_work)) {
            // Idle: hand the OpenMP team back, so the host's own regions are not slowed by a
            // team nobody uses (parallel.h); the next kernel that needs one builds it again.
            lk.unlock();
            ember::detail::release_team();
            lk.lock();
            work_cv_.wait(lk, has_work);
          }
          sleeping_ = false;
        }
      }
      if (queue_.empty() && stop_) break;
      batch.swap(queue_);  // run everything queued so far without holding the lock
    }
    taken += batch.size();
    for (Task& t : batch) run_task(t);
    batch.clear();
  }
}

void Stream::run_task(Task& t) {
  const int64_t start_ns = EMBER_UNLIKELY(t.flow != 0) ? profiler::detail::now_ns() : 0;
  try {
    t.run();
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> g(mu_);
    if (error_code_ == ACL_SUCCESS) {
      error_code_ = ACL_ERROR_RT_AICORE_EXCEPTION;
      error_kind_ = error_kind_of(e);
      error_msg_ = "npu:" + std::to_string(device_) + " stream " + std::to_string(id_) + ": kernel fault in " +
                   std::string(t.name) + ": " + e.what();
    }
  }
  if (EMBER_UNLIKELY(t.flow != 0)) {  // the execution, on this stream's own track
    profiler::Event pe;
    pe.start_ns = start_ns;
    pe.end_ns = profiler::detail::now_ns();
    pe.kind = profiler::Event::Kernel;
    pe.category = std::strncmp(t.name, "aclrt", 5) == 0 ? "runtime" : "kernel";
    pe.name = t.name;
    pe.device = device_;
    pe.track = id_;
    pe.flow = t.flow;
    profiler::detail::record(std::move(pe));
  }
  t = Task();  // release what the task holds (executors, staging buffers) now
  // seq_cst, as wait_until_done's store and load: either the waiter sees this count or this
  // thread sees its wake_at_, so no wake-up is lost.
  const uint64_t done = completed_.fetch_add(1) + 1;
  if (done >= wake_at_.load()) {
    std::lock_guard<std::mutex> g(mu_);
    wake_at_.store(UINT64_MAX);  // the waiters still short of their target set theirs again
    done_cv_.notify_all();
  }
}

void Stream::close_for_exit() {
  for (;;) {
    wait_done();
    std::lock_guard<std::mutex> g(mu_);
    // Nothing queued and nothing running: from now on enqueue runs tasks inline.
    if (queue_.empty() && completed_.load() == enqueued_.load()) {
      closed_ = true;
      return;
    }
  }
}

bool Stream::wait_until_done(uint64_t target, const std::chrono::steady_clock::time_point* deadline) {
  if (completed_.load() >= target) return true;
  ember::detail::release_team_if_shared();  // this thread's team would only slow the worker's down
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    if (target < wake_at_.load()) wake_at_.store(target);  // under mu_, as the worker's reset
    if (completed_.load() >= target) return true;
    if (!deadline) {
      done_cv_.wait(lk);
    } else if (done_cv_.wait_until(lk, *deadline) == std::cv_status::timeout) {
      return completed_.load() >= target;
    }
  }
}

void Stream::wait_done() { wait_until_done(enqueued_.load(), nullptr); }

aclError Stream::synchronize(std::string* msg, int* kind) {
  wait_done();
  std::lock_guard<std::mutex> lk(mu_);
  aclError code = error_code_;
  if (code != ACL_SUCCESS) {
    *msg = error_msg_;
    if (kind) *kind = error_kind_;
    error_code_ = ACL_SUCCESS;
    error_kind_ = 0;
    error_msg_.clear();
  }
  return code;
}

void Stream::wait_idle() { wait_done(); }

bool Stream::wait_done_for(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  return wait_until_done(enqueued_.load(), &deadline);
}

bool Stream::pending_use(uintptr_t a, const char** op) {
  std::lock_guard<std::mutex> g(mu_);
  uint64_t done = completed_.load(std::memory_order_acquire);
  for (size_t i = uses_.size(); i-- > uses_begin_ && uses_[i].seq > done;) {  // the latest first
    if (uses_[i].allocs.has(a)) {
      *op = uses_[i].op;
      return true;
    }
  }
  return false;
}

bool Stream::idle() { return completed_.load() == enqueued_.load(); }

std::vector<StreamPtr> streams_of(int dev) {
  default_stream(dev);
  DeviceState& d = device(dev);
  std::lock_guard<std::mutex> g(d.mu);
  return std::vector<StreamPtr>(d.streams.begin(), d.streams.end());
}

void wait_device_idle(int dev) {
  for (const StreamPtr& s : streams_of(dev)) s->wait_idle();
}

StreamPtr default_stream(int dev) {
  DeviceState& d = device(dev);
  std::lock_guard<std::mutex> g(g_registry_mu);
  if (!d.default_stream) {
    d.default_stream = std::make_shared<Stream>(dev, true);  // lives as long as the process
    live_streams()[new_handle()] = d.default_stream;
    std::lock_guard<std::mutex> dg(d.mu);
    d.streams.insert(d.default_stream);
  }
  return d.default_stream;
}

StreamPtr resolve_stream(aclrtStream s) {
  if (!s) return current_device() < device_count() ? default_stream(current_device()) : nullptr;
  std::lock_guard<std::mutex> g(g_registry_mu);
  auto it = live_streams().find(reinterpret_cast<uintptr_t>(s));
  return it == live_streams().end() ? nullptr : it->second;
}

// A new stream of device dev, registered under a handle of its own.
aclrtStream register_stream(int dev) {
  auto s = std::make_shared<Stream>(dev, false);
  uintptr_t h = new_handle();
  {
    std::lock_guard<std::mutex> g(g_registry_mu);
    live_streams()[h] = s;
  }
  std::lock_guard<std::mutex> g(device(dev).mu);
  device(dev).streams.insert(s);
  return reinterpret_cast<aclrtStream>(h);
}

// The handle stops resolving and the device forgets the stream.
void unregister_stream(aclrtStream handle, const StreamPtr& s) {
  {
    std::lock_guard<std::mutex> g(g_registry_mu);
    live_streams().erase(reinterpret_cast<uintptr_t>(handle));
  }
  std::lock_guard<std::mutex> g(device(s->device()).mu);
  device(s->device()).streams.erase(s);
}

}  // namespace detail

}  // namespace npu
}  // namespace ember

// Note [Orderly shutdown]: exit() called from any thread (return from main reaches glibc's exit
// internally, and the main thread's hook covers it) finishes the streams first, then goes on to
// the C library's exit. A program's call resolves here because libember comes before libc in its
// search order; the C library's own is found with RTLD_NEXT.
extern "C" void exit(int status) noexcept {
  ember::npu::detail::shutdown_streams();
  using ExitFn = void (*)(int);
  static const ExitFn next = reinterpret_cast<ExitFn>(::dlsym(RTLD_NEXT, "exit"));
  if (next) next(status);
  ::_exit(status);  // (no C library exit found: cannot happen with glibc)
}
