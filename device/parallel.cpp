#include "ember/device/parallel.h"

#include <omp.h>
#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

#include "ember/core/error.h"

namespace ember {
namespace {

int default_threads() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  // The CPUs this process may run on: a launcher such as mpirun binds each rank to its share of
  // the cores, and a pool sized to the whole machine would then oversubscribe them.
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  unsigned hc = std::thread::hardware_concurrency();
  return hc ? static_cast<int>(hc) : 1;
}

std::atomic<int>& num_threads() {
  static std::atomic<int> n{default_threads()};
  return n;
}

std::atomic<bool> g_pool_busy{false};
thread_local bool tls_serial = false;

// Which threads hold an OpenMP team (Note in parallel.h): a thread's team ends with the thread.
std::atomic<int> g_team_holders{0};
struct TeamHold {
  bool held = false;
  ~TeamHold() {
    if (held) g_team_holders.fetch_sub(1);
  }
};
thread_local TeamHold tls_team;

void note_team() {
  if (!tls_team.held) {
    tls_team.held = true;
    g_team_holders.fetch_add(1);
  }
}

bool try_acquire() {
  if (tls_serial) return false;
  bool expected = false;
  return g_pool_busy.compare_exchange_strong(expected, true, std::memory_order_acquire);
}
void release() { g_pool_busy.store(false, std::memory_order_release); }

}  // namespace

void set_num_threads(int n) {
  EMBER_CHECK_VALUE(n >= 1, "set_num_threads: expected a positive thread count, got ", n);
  num_threads().store(n);
}

int get_num_threads() { return num_threads().load(std::memory_order_relaxed); }

bool in_parallel_region() { return omp_in_parallel() != 0; }

namespace detail {
void parallel_for_impl(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> f) {
  int nt = get_num_threads();
  if (grain < 1) grain = 1;
  int64_t max_chunks = (n + grain - 1) / grain;
  int chunks = static_cast<int>(max_chunks < nt ? max_chunks : nt);
  if (chunks <= 1 || omp_in_parallel() || !try_acquire()) {
    f(0, n);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mu;
  note_team();
#pragma omp parallel num_threads(chunks)
  {
    int tid = omp_get_thread_num();
    int team = omp_get_num_threads();
    int64_t begin = n * tid / team, end = n * (tid + 1) / team;
    try {
      if (begin < end) f(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> g(error_mu);
      if (!error) error = std::current_exception();
    }
  }
  release();
  if (error) std::rethrow_exception(error);
}

#ifdef _LIBGOMP_OMP_LOCK_DEFINED  // libgomp's omp.h
bool teams_releasable() { return true; }
#else
bool teams_releasable() { return false; }
#endif

void release_team() {
  if (!tls_team.held || omp_get_level() != 0 || !teams_releasable()) return;
  // libgomp: ends the calling thread's team (its threads exit) and takes them off the count of
  // managed threads; the other threads' teams are left alone.
  omp_pause_resource_all(omp_pause_soft);
  tls_team.held = false;
  g_team_holders.fetch_sub(1);
}

void release_team_if_shared() {
  if (tls_team.held && g_team_holders.load(std::memory_order_relaxed) > 1) release_team();
}

int team_holders() { return g_team_holders.load(); }
bool thread_holds_team() { return tls_team.held; }
}  // namespace detail

PoolReservation::PoolReservation() {
  if (!omp_in_parallel() && try_acquire()) {
    owned_ = true;
    threads_ = get_num_threads();
    if (threads_ > 1) note_team();  // the library's regions start one
  }
  omp_set_num_threads(threads_);
}

PoolReservation::~PoolReservation() {
  if (owned_) release();
}

SerialGuard::SerialGuard() : prev_(tls_serial) { tls_serial = true; }
SerialGuard::~SerialGuard() { tls_serial = prev_; }

}  // namespace ember
