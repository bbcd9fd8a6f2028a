// ember (internal to device/npu): the emulated runtime's state: devices with their address
// ranges and allocations, streams, events, the per-thread error messages.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "ember/device/npu/aclnn_ops.h"

namespace ember {
namespace npu {
namespace detail {

// ---- errors: aclGetRecentErrMsg's per-thread buffer ----
// kind: error_kind_of the ember::Error behind the message (0: none), so a framework caller
// (EXEC_NPU_CMD) rethrows a phase-1 failure with its class (recent_error_kind).
void push_error(const std::string& msg, int kind = 0);
int recent_error_kind();  // of the last push_error on this thread
std::string hex(const void* p);  // an address as messages print it
// Records msg (with its kind) for aclGetRecentErrMsg and returns code (for `return fail(code, ...)`).
template <class Code>
Code fail(Code code, const std::string& msg, int kind = 0) {
  push_error(msg, kind);
  return code;
}

// ---- devices and memory ----
class Stream;
using StreamPtr = std::shared_ptr<Stream>;  // held by handles, snapshots and launches in flight

// Note [In-flight uses]
// aclrtFree of an allocation that unfinished work reads or writes is caught (EMBER_NPU_FREE_IN_USE
// says what happens then). Two kinds of work use an allocation:
//  - planned: an executor made by phase 1 and not yet run lists the allocations (by base address)
//    its kernel reaches; phase 1 notes them on the planning thread (translate_planned, note_planned)
//    and make_executor takes the notes;
//  - queued: an enqueued task (kernel, async copy or memset) carries that list, which its stream
//    keeps until the task has run.
// The launch path only moves plain address lists under locks it takes anyway (no reference
// counts, no atomics); aclrtFree, which is rare, searches the live executors and the streams'
// unfinished tasks. Lock order: DeviceState::mu, then the executor registry, then the stream list,
// then a stream's own lock.
class AllocList {
 public:
  void add(uintptr_t a);      // once per address
  void add_new(uintptr_t a);  // a not in the list yet
  bool has(uintptr_t a) const;
  bool empty() const { return n_ == 0; }
  AllocList copy() const;  // (a repeatable executor's list, for each of its runs)
  void merge(const AllocList& o);  // adds o's addresses (HcclGroupEnd's task: its launches' lists)

 private:
  // Small on purpose: an executor holding one stays within malloc's fast bins (<= 120 bytes with
  // shared_ptr's count), which matters because executors are made on the host thread and freed
  // on the stream's worker. Most kernels reach one allocation (a cache segment).
  static constexpr uint32_t kInline = 3;
  uintptr_t inline_[kInline] = {};
  uint32_t n_ = 0;
  std::unique_ptr<std::vector<uintptr_t>> more_;
};

struct Allocation {
  uintptr_t addr = 0;
  size_t size = 0;    // requested bytes
  size_t extent = 0;  // bytes reserved: round_up(size, 32) + 32, rounded to 64
  bool freed = false;  // aclrtFree deferred until its in-flight work is done (EMBER_NPU_FREE_IN_USE=defer)
  bool mapped = false;  // a run of aclrtMapMem'ed physical memory (vmm.cpp), not aclrtFree's to free
};

struct DeviceState {
  int index = 0;
  // Device addresses [base, base + span), mapped PROT_NONE: aclrtMalloc's heap at [0, capacity),
  // then the window aclrtReserveMemAddress hands out (vmm.cpp) at [capacity, span).
  uintptr_t base = 0;
  char* shadow = nullptr;  // the bytes, host-accessible to the runtime and kernels only
  size_t capacity = 0;     // the device's memory (aclrtGetMemInfo's total)
  size_t span = 0;
  std::mutex mu;
  std::map<uintptr_t, Allocation> live;      // by address
  std::map<uintptr_t, size_t> free_ranges;   // offset -> size (coalesced)
  std::vector<uintptr_t> deferred_frees;     // freed while in use (EMBER_NPU_FREE_IN_USE=defer)
  size_t used = 0;                           // extent bytes in live allocations, and physical memory (vmm.cpp)
  std::map<size_t, size_t> va_free;          // the reservation window's free ranges: offset -> size
  std::map<uintptr_t, size_t> reservations;  // aclrtReserveMemAddress: address -> size
  std::set<int> peers;                       // aclrtDeviceEnablePeerAccess from this device
  StreamPtr default_stream;
  std::set<StreamPtr> streams;                // all streams of the device (default included)
};

// The live (not freed) allocation holding address a, or nullptr (d.mu held).
inline const Allocation* live_at(const DeviceState& d, uintptr_t a) {
  auto it = d.live.upper_bound(a);
  if (it == d.live.begin()) return nullptr;
  --it;
  const Allocation& al = it->second;
  return al.freed || a >= al.addr + al.extent ? nullptr : &al;
}
// Installs the SIGSEGV handler that names host accesses to these devices' memory (segv.cpp).
void watch_device_ranges(const std::vector<std::unique_ptr<DeviceState>>& devices);

int device_count();
DeviceState& device(int index);  // index must be valid
// EMBER_NPU_MALLOC_FILL's byte: what new device memory holds (0xFF, or 0).
unsigned char malloc_fill();
// EMBER_NPU_WORKSPACE_POISON=full: every workspace byte is poisoned before each kernel (default:
// sparse above 64 KiB, executor.cpp).
bool full_workspace_poison();
// Adds [off, off + len) to free ranges (offset -> size), merged with the ranges it touches (the
// device's lock held).
void add_free_range(std::map<size_t, size_t>& ranges, size_t off, size_t len);

// Note [Runtime lifecycle]
// Every runtime entry point starts with one of these: after aclFinalize (until the next aclInit)
// ACL_ERROR_UNINITIALIZE; for a device that does not exist (an index out of range, or none at all
// when EMBER_NPU_DEVICES / EMBER_NPU_MEMORY were malformed) ACL_ERROR_RT_INVALID_DEVICEID naming
// why. A null stream means the current device's default stream, so the device is checked then.
// aclnn phase 1 and 2 return ACLNN_ERR_RUNTIME_ERROR after aclFinalize (make_executor,
// run_executor). ember itself never calls aclInit: a process that never does works as if it had.
bool finalized();
aclError check_runtime(const char* api);
aclError check_runtime(const char* api, int dev);
aclError check_runtime_stream(const char* api, aclrtStream stream);
// Why there are this many devices, for messages: "set EMBER_NPU_DEVICES", or the configuration
// error that left none (e.g. "EMBER_NPU_MEMORY='1e30': expected a byte count ...").
std::string devices_note();
int current_device();            // the calling thread's device (aclrtSetDevice), default 0
// The calling thread's device (current_device()) and context (aclrtSetCurrentContext /
// aclrtCreateContext, context.cpp; 0 for none yet).
extern __attribute__((tls_model("initial-exec"))) thread_local int tls_device;
extern __attribute__((tls_model("initial-exec"))) thread_local uintptr_t tls_context;
// The device owning a device address, or -1 for anything else (host memory, null).
int device_of(const void* p);
// If [p, p + bytes) lies inside one live allocation, returns its host (shadow) address and
// fills *alloc; else nullptr. p may point inside an allocation.
void* translate(const void* p, size_t bytes, Allocation* alloc = nullptr);
// The base address of the live allocation holding p, or 0.
uintptr_t allocation_base(const void* p);
// The host view of a device address known to be valid (kernels, after phase-1 checks).
inline char* host(const DeviceState& d, const void* p) {
  return d.shadow + (reinterpret_cast<uintptr_t>(p) - d.base);
}
char* host_ptr(const void* device_ptr);
// Phase 1: translate(p, bytes) for p on device dev (device_of(p) >= 0), also noting the allocation
// for the executor planned next on this thread, which then holds it in use until its kernel has
// run (Note [In-flight uses]).
void* translate_planned(const void* p, size_t bytes, int dev);
// The allocations phase 1 noted on this thread: trivially destructible, so the launch path reaches
// it at a fixed offset from the thread pointer (initial-exec), with no guard or wrapper call. Small:
// initial-exec TLS comes out of the static TLS block, which a dlopen'ed libember shares.
struct PlannedNotes {
  static constexpr uint32_t kMax = 16;
  struct Range {
    uintptr_t addr, end;
  } r[kMax];
  uint32_t n;
  bool has(uintptr_t a) const {
    for (uint32_t i = 0; i < n; ++i)
      if (a >= r[i].addr && a < r[i].end) return true;
    return false;
  }
};
extern __attribute__((tls_model("initial-exec"))) thread_local PlannedNotes tls_planned;
bool note_planned_slow(const void* p);
// Notes the allocation holding p unless already noted. True if phase 1 checked it already
// (translate_planned): the kernel may then reach it without a lookup.
inline bool note_planned(const void* p) {
  return tls_planned.has(reinterpret_cast<uintptr_t>(p)) || note_planned_slow(p);
}
// Moves the allocations noted on this thread since the last take/drop into *out.
void take_planned(AllocList* out);
void drop_planned();  // phase 1 failed
// Whether unfinished work uses the allocation at base address a: an executor not yet run
// (*planned = true) or a queued task; *op names that work's op (d.mu held).
bool in_use(uintptr_t a, const char** op, bool* planned);
// The executor registry's part of in_use (executor.cpp).
bool planned_use(uintptr_t a, const char** op);
// Every Stream object is on the list in_use searches, from construction to destruction.
class Stream;
void register_stream(Stream* s);
void unregister_stream(Stream* s);
bool is_pinned(const void* p, size_t bytes);
// The caching allocator's live block (an ember tensor's memory) holding device address p, if any.
bool cached_block_of(int device, uintptr_t p, uintptr_t* start, size_t* size);

// ---- kernel faults keep their error class ----
// A kernel that throws an ember::Error subclass (IndexError for an index out of range, ...)
// faults its stream; the synchronize that reports the fault on this thread remembers the class,
// and check_acl throws that class, so a fault reads the same on npu as the error on cpu.
int error_kind_of(const std::exception& e);
[[noreturn]] void throw_error_of_kind(int kind, const std::string& msg);

// ---- streams ----
struct Task {
  Task() = default;
  Task(const char* op, std::function<void()> fn) : name(op), run(std::move(fn)) {}
  const char* name = "";  // the op, for error messages: a literal or an interned name, never freed
  std::function<void()> run;
  uint64_t flow = 0;  // set at enqueue while the profiler records: links the launch to the execution
};

// How long a stream worker stays idle before it hands its OpenMP team back (parallel.h): long
// enough that the gaps between a training loop's steps keep it (rebuilding it costs a thread
// start inside the next kernel), short enough that the host's own regions soon run unthrottled.
constexpr std::chrono::milliseconds kTeamIdle{100};

class Stream {
 public:
  Stream(int device, bool is_default);
  ~Stream();
  // Returns the task's sequence number: it has run once completed() reaches it. uses: the
  // allocations it reads or writes (Note [In-flight uses]).
  uint64_t enqueue(Task&& task, AllocList&& uses = AllocList());
  uint64_t completed() const { return completed_.load(std::memory_order_acquire); }
  // Whether a task enqueued here and not yet run uses the allocation at a; *op: the latest such.
  bool pending_use(uintptr_t a, const char** op);
  // Waits for everything enqueued so far; returns the first asynchronous error (code, msg, and
  // *kind: error_kind_of the kernel's exception, when asked) raised since the last synchronize,
  // and clears it.
  aclError synchronize(std::string* msg, int* kind = nullptr);
  bool idle();
  // Waits for everything enqueued so far without taking the error (it stays for synchronize).
  void wait_idle();
  // The same, for at most timeout; false if the work is not done by then.
  bool wait_done_for(std::chrono::milliseconds timeout);
  int device() const { return device_; }
  bool is_default() const { return is_default_; }
  uint64_t id() const { return id_; }
  // Process exit (Note [Orderly shutdown]): waits until everything queued has run, then closes
  // the queue: a task enqueued later runs at once on the enqueuing thread.
  void close_for_exit();

 private:
  void loop();
  void wait_done();
  // Waits until `target` tasks have completed, or the deadline (if any) passes: whether they have.
  bool wait_until_done(uint64_t target, const std::chrono::steady_clock::time_point* deadline);
  void run_task(Task& t);  // runs t, records a fault, counts it completed
  int device_;
  bool is_default_;
  uint64_t id_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Task> queue_;
  struct Uses {
    uint64_t seq;
    const char* op;
    AllocList allocs;
  };
  // The uses of the tasks not yet run, from uses_[uses_begin_] on (under mu_). A vector pruned at
  // enqueue, not a deque: the launch path then allocates nothing for it once warm.
  std::vector<Uses> uses_;
  size_t uses_begin_ = 0;
  std::atomic<uint64_t> enqueued_{0}, completed_{0};
  // The lowest completion count a thread in wait_done waits for (UINT64_MAX: none). The worker
  // wakes waiters only once it is reached, not at every task: a host waiting for a step of a
  // hundred kernels is woken once, not a hundred times (each a futex round trip on the stream's
  // mutex, which the worker then contends for).
  std::atomic<uint64_t> wake_at_{UINT64_MAX};
  bool stop_ = false, sleeping_ = false;
  bool closed_ = false;  // close_for_exit ran (under mu_)
  aclError error_code_ = ACL_SUCCESS;
  int error_kind_ = 0;  // error_kind_of the kernel's exception
  std::string error_msg_;
  std::thread worker_;
};

// Note [Orderly shutdown]
// Stream workers run kernels (oneDNN's among them) on threads of their own; if the process exits
// with work queued, static destructors of the libraries those kernels use would run while a worker
// is inside them. So before any static destructor runs, every stream finishes its queue and closes
// (work enqueued after that runs inline, on the enqueuing thread). Three hooks do it, whichever
// comes first: a thread_local of the main thread, made when the library loads (a thread's
// thread_local destructors run at exit before the atexit handlers and static destructors: glibc's
// exit, reached by returning from main); exit() itself, for a call from any thread (stream.cpp
// defines it and goes on to the C library's); an atexit handler registered with the first stream
// (when neither ran, e.g. libember opened with dlopen). shutdown_streams() is idempotent.
void shutdown_streams();
bool streams_shut_down();

// The stream a handle names (nullptr: the current device's default stream), or nullptr if
// the handle is not a live stream.
StreamPtr resolve_stream(aclrtStream s);
// A new stream of device dev and its handle; unregister_stream forgets it (aclrtDestroyStream).
aclrtStream register_stream(int dev);
void unregister_stream(aclrtStream handle, const StreamPtr& s);
// Stream and event handles: opaque ids, never reused, so a stale handle (destroyed stream or
// event) is always recognised as dead, even after the object's memory is reused by a new one.
// g_registry_mu guards the live-handle maps.
extern std::mutex g_registry_mu;
uintptr_t new_handle();
StreamPtr default_stream(int device);
// The handle of a device's default context (made on first use; aclrtSetDevice makes it current).
uintptr_t default_context(int device);
// A snapshot of a device's streams (safe against a concurrent aclrtDestroyStream).
std::vector<StreamPtr> streams_of(int device);
// Waits for all of a device's streams without consuming their errors.
void wait_device_idle(int device);

}  // namespace detail
}  // namespace npu
}  // namespace ember
