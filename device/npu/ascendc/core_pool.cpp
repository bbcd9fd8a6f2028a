// The cores of Ascend C launches: a pool of host threads, each core with its own Unified Buffer;
// faults and (in race mode) the GM accesses of every core are gathered per launch.
#include "ember/device/npu/ascendc/core_pool.h"

#include "ember/device/profiler.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

namespace ember {
namespace npu {
namespace ascendc {
namespace {

// One GM access of race mode: kind 0 read, 1 write, 2 atomic add (SetAtomicAdd).
struct Access {
  uintptr_t lo, hi;
  uint32_t core;
  int kind;
  const char* call;
};

struct Launch {
  const char* kernel = "";
  uint32_t block_dim = 0;
  ember_ascendc_body body = nullptr;
  void* args = nullptr;
  bool race = false;
  const std::vector<Region>* regions = nullptr;
  int device = -1;
  uint64_t stream = 0;
  std::atomic<uint32_t> next{0};
  std::mutex mu;
  std::condition_variable cv;
  uint32_t done = 0;  // under mu
  uint32_t failed = 0;
  uint32_t first_core = 0;
  std::string first_msg;
  std::vector<std::vector<Access>> accesses;  // per core (race mode)
};

// A thread's core: its Unified Buffer, and the core it is running now.
struct CoreSlot {
  std::unique_ptr<char[]> ub{new char[kUbBytes]};
  ember_ascendc_core core{};
  std::vector<Access>* accesses = nullptr;
};
thread_local std::unique_ptr<CoreSlot> tls_slot;
thread_local ember_ascendc_core* tls_core = nullptr;
thread_local const std::vector<Region>* tls_regions = nullptr;

// Read at each launch (a launch costs far more than a getenv), so a program may turn it on for
// the launches it suspects.
bool race_mode() {
  const char* v = std::getenv("EMBER_ASCENDC_RACE");
  return v && *v && std::strcmp(v, "0") != 0;
}

void run_core(Launch& l, uint32_t idx) {
  if (!tls_slot) tls_slot.reset(new CoreSlot());  // one per thread, for the thread's life
  CoreSlot& s = *tls_slot;
  ember_ascendc_core& c = s.core;
  std::memset(&c, 0, sizeof(c));
  c.block_idx = idx;
  c.block_num = l.block_dim;
  c.ub = s.ub.get();
  c.ub_size = kUbBytes;
  c.kernel = l.kernel;
  c.race = l.race ? 1 : 0;
  c.atomic = -1;
  // Poison: a read of UB the kernel never wrote gives NaN (0xFFFF..), not the last core's data.
  std::memset(c.ub, 0xFF, kUbBytes);
  s.accesses = l.race ? &l.accesses[idx] : nullptr;
  tls_core = &c;
  tls_regions = l.regions;
  const bool profiled = l.device >= 0 && profiler::detail::enabled();
  const int64_t start_ns = profiled ? profiler::detail::now_ns() : 0;
  std::string msg;
  try {
    l.body(l.args);
  } catch (const std::exception& e) {
    msg = e.what();
  } catch (...) {
    msg = "a non-standard exception";
  }
  if (profiled) {  // the core, on its own row under the stream
    profiler::Event pe;
    pe.kind = profiler::Event::Range;
    pe.category = "core";
    pe.name = std::string(l.kernel) + " core " + std::to_string(idx);
    pe.device = l.device;
    pe.track = profiler::core_track(l.stream, idx);
    pe.start_ns = start_ns;
    pe.end_ns = profiler::detail::now_ns();
    profiler::detail::record(std::move(pe));
  }
  tls_core = nullptr;
  tls_regions = nullptr;
  s.accesses = nullptr;
  std::lock_guard<std::mutex> g(l.mu);
  if (!msg.empty()) {
    if (l.failed == 0 || idx < l.first_core) {
      l.first_core = idx;
      l.first_msg = std::move(msg);
    }
    ++l.failed;
  }
  if (++l.done == l.block_dim) l.cv.notify_all();
}

// Takes cores of l until none is left; true if it ran any.
bool take_cores(Launch& l) {
  bool ran = false;
  for (uint32_t i; (i = l.next.fetch_add(1)) < l.block_dim; ran = true) run_core(l, i);
  return ran;
}

class Pool {
 public:
  // Lets up to `helpers` pool threads take cores of l (the caller takes them too).
  void offer(const std::shared_ptr<Launch>& l, uint32_t helpers) {
    std::lock_guard<std::mutex> g(mu_);
    while (threads_ < helpers && threads_ < kMaxThreads) {
      std::thread([this] { work(); }).detach();  // lives as long as the process
      ++threads_;
    }
    open_.push_back(l);
    cv_.notify_all();
  }

 private:
  static constexpr uint32_t kMaxThreads = 47;  // with the caller: 48, an A2's vector cores
  void work() {
    std::unique_lock<std::mutex> lk(mu_);
    while (true) {
      cv_.wait(lk, [this] { return !open_.empty(); });
      std::shared_ptr<Launch> l = open_.front();
      if (l->next.load() >= l->block_dim) {  // all of it taken: the next launch
        open_.pop_front();
        continue;
      }
      lk.unlock();
      take_cores(*l);
      lk.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Launch>> open_;
  uint32_t threads_ = 0;
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: its threads outlive static destruction
  return *p;
}

std::string where(uintptr_t a) {
  std::ostringstream os;
  os << "0x" << std::hex << a;
  return os.str();
}

const char* kind_name(int kind) { return kind == 0 ? "reads" : kind == 1 ? "writes" : "atomically adds to"; }

// The first pair of accesses by two cores to the same GM bytes, at least one a write (two atomic
// adds do not conflict), as a message; "" if none.
std::string find_race(const Launch& l) {
  std::vector<Access> all;
  for (const auto& v : l.accesses) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end(), [](const Access& a, const Access& b) { return a.lo < b.lo; });
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = i + 1; j < all.size() && all[j].lo < all[i].hi; ++j) {
      const Access &a = all[i], &b = all[j];
      if (a.core == b.core || (a.kind == 0 && b.kind == 0) || (a.kind == 2 && b.kind == 2)) continue;
      const Access& w = a.kind != 0 ? a : b;
      const Access& o = a.kind != 0 ? b : a;
      const uintptr_t lo = std::max(a.lo, b.lo), hi = std::min(a.hi, b.hi);
      std::ostringstream os;
      os << "race between cores (EMBER_ASCENDC_RACE): core " << w.core << " " << kind_name(w.kind) << " global memory ["
         << where(lo) << ", " << where(hi) << ") in " << w.call << ", which core " << o.core << " "
         << kind_name(o.kind) << " in " << o.call
         << " in the same launch; the cores run in no fixed order, so the result depends on timing";
      return os.str();
    }
  }
  return "";
}

}  // namespace

const std::vector<Region>* current_regions() { return tls_regions; }

std::string run_cores(const char* kernel, uint32_t block_dim, ember_ascendc_body body, void* args,
                      const std::vector<Region>* regions, int device, uint64_t stream) {
  auto l = std::make_shared<Launch>();
  l->regions = regions;
  l->device = device;
  l->stream = stream;
  l->kernel = kernel;
  l->block_dim = block_dim;
  l->body = body;
  l->args = args;
  l->race = race_mode();
  if (l->race) l->accesses.resize(block_dim);
  if (block_dim > 1) pool().offer(l, block_dim - 1);
  take_cores(*l);
  {
    std::unique_lock<std::mutex> lk(l->mu);
    l->cv.wait(lk, [&] { return l->done == l->block_dim; });
  }
  std::ostringstream os;
  if (l->failed) {
    os << "kernel " << kernel << ", core " << l->first_core << " of " << block_dim << ": " << l->first_msg;
    if (l->failed > 1) os << " (and " << l->failed - 1 << " more of the " << block_dim << " cores failed)";
    return os.str();
  }
  if (l->race) {
    std::string r = find_race(*l);
    if (!r.empty()) return "kernel " + std::string(kernel) + ": " + r;
  }
  return "";
}

void note_access(uintptr_t addr, uint64_t bytes, int kind, const char* call) {
  if (!tls_slot || !tls_slot->accesses || !tls_core) return;
  std::vector<Access>& v = *tls_slot->accesses;
  if (!v.empty() && v.back().hi == addr && v.back().kind == kind && v.back().call == call) {
    v.back().hi += bytes;
    return;
  }
  v.push_back(Access{addr, addr + bytes, tls_core->block_idx, kind, call});
}

}  // namespace ascendc
}  // namespace npu
}  // namespace ember

extern "C" ember_ascendc_core* ember_ascendc_current_core(void) { return ember::npu::ascendc::tls_core; }
