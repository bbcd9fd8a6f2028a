// ember: the one intra-op thread pool (OpenMP, shared with oneDNN and the NPU's emulated cores).
//
// Only one parallel region runs at a time: a thread that finds the pool busy (e.g. an NPU
// stream worker while the host thread runs a CPU op) runs its work inline, so two callers never
// put more threads than cores to work (two pools fighting over two cores is what slows libtorch
// down when its intra-op pool and oneDNN's run at once).
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace ember {

// Sets the number of intra-op threads (default: OMP_NUM_THREADS, else the CPUs this process may
// run on: its affinity mask, which mpirun narrows to each rank's cores).
void set_num_threads(int n);
int get_num_threads();

template <class Fn>
class FunctionRef;
template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F, std::enable_if_t<!std::is_same<std::decay_t<F>, FunctionRef>::value, int> = 0>
  FunctionRef(F&& f)  // NOLINT
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, Args... a) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(a)...); }) {}
  R operator()(Args... a) const { return call_(obj_, std::forward<Args>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, Args...);
};

namespace detail {
void parallel_for_impl(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> f);

// OpenMP teams. libgomp keeps a team (parked threads) for every thread that has started a
// parallel region, and counts all of them against the cores: once they outnumber the cores it
// stops spinning at its barriers, and every region wakes its threads through the kernel. The
// pool above lets one region run at a time, but a host thread and an NPU stream worker that both
// ran one would each keep a team: on 2 cores that made every kernel of an NPU step pay futex
// wake-ups (1.2-1.4x the CPU step). So a thread hands its team back when it no longer needs it:
//  - release_team_if_shared: a thread about to block on work another thread runs (a host waiting
//    for a stream, a stream waiting for an event), if another thread holds a team;
//  - release_team: a stream worker that has been idle for a while.
// The next region the thread starts builds a new team (one thread start per region's worker).
// With an OpenMP runtime other than libgomp (clang's libomp shares one pool between threads)
// both do nothing.
void release_team_if_shared();
void release_team();
int team_holders();          // threads holding a team started through this pool
bool thread_holds_team();    // whether the calling thread holds one
bool teams_releasable();     // false when the OpenMP runtime is not libgomp
}  // namespace detail

// Runs f(begin, end) over [0, n) in contiguous chunks of at least `grain` items, on the pool.
// Exceptions thrown by f are rethrown on the calling thread (the first one wins).
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
  if (n <= grain) {
    f(int64_t(0), n);
    return;
  }
  detail::parallel_for_impl(n, grain, FunctionRef<void(int64_t, int64_t)>(f));
}

// RAII: reserves the pool for a call into a library that runs its own OpenMP regions (oneDNN,
// Eigen's GEMM). threads() is how many threads the call may use (1 if the pool was busy).
class PoolReservation {
 public:
  PoolReservation();
  ~PoolReservation();
  PoolReservation(const PoolReservation&) = delete;
  PoolReservation& operator=(const PoolReservation&) = delete;
  int threads() const { return threads_; }

 private:
  bool owned_ = false;
  int threads_ = 1;
};

bool in_parallel_region();

// RAII: this thread never takes the intra-op pool while the guard lives: its parallel_for calls
// and PoolReservations run inline, on this thread alone. For helper threads that work beside
// the main computation (DataLoader workers), so the pool's threads and theirs never outnumber
// the cores the pool was sized for by more than the helpers themselves.
class SerialGuard {
 public:
  SerialGuard();
  ~SerialGuard();
  SerialGuard(const SerialGuard&) = delete;
  SerialGuard& operator=(const SerialGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace ember
