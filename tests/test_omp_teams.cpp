// The OpenMP teams of host threads and NPU stream workers (parallel.h): a thread that blocks on a
// stream hands its team back, an idle worker hands its own back, and waiters on a stream are woken
// when their own work is done.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "ember/device/npu/runtime.h"
#include "ember/device/parallel.h"
#include "ember/ember.h"

using namespace ember;
namespace nd = ember::npu::detail;
using namespace std::chrono_literals;

namespace {

// Restores the intra-op thread count a test changes.
struct ThreadCount {
  explicit ThreadCount(int n) : saved(get_num_threads()) { set_num_threads(n); }
  ~ThreadCount() { set_num_threads(saved); }
  int saved;
};

// A stream made through the runtime (registered, destroyed at the end) and its Stream object,
// so a test can queue tasks of its own on the worker.
struct RawStream {
  RawStream() : api(npu::Stream::create(0)), s(nd::resolve_stream(api.raw())) {}
  ~RawStream() {
    s.reset();
    api.destroy();
  }
  npu::Stream api;
  nd::StreamPtr s;
};

// Sums 0..n-1 with parallel_for (so on a team when the pool is free and has 2+ threads).
int64_t parallel_sum(int64_t n) {
  std::vector<int64_t> part(2, 0);
  std::atomic<int> chunks{0};
  parallel_for(n, n / 2, [&](int64_t b, int64_t e) {
    int64_t s = 0;
    for (int64_t i = b; i < e; ++i) s += i;
    part[static_cast<size_t>(chunks.fetch_add(1))] = s;
  });
  return part[0] + part[1];
}

}  // namespace

TEST(OmpTeams, AHostBlockedOnAStreamHandsItsTeamToTheWorkerAndAnIdleWorkerHandsItsBack) {
  ThreadCount two(2);
  const int64_t n = 1 << 16, sum = n * (n - 1) / 2;
  const bool releasable = detail::teams_releasable();
  // On a thread of its own: its team is then known to be the one this test made.
  std::thread host([&] {
    ASSERT_EQ(parallel_sum(n), sum);
    ASSERT_TRUE(detail::thread_holds_team());
    RawStream rs;
    std::atomic<int> worker_held{-1};
    uint64_t ran = rs.s->enqueue({"test_worker_region", [&] {
                                    EXPECT_EQ(parallel_sum(n), sum);
                                    worker_held = detail::thread_holds_team() ? 1 : 0;
                                  }});
    while (rs.s->completed() < ran) std::this_thread::yield();
    EXPECT_EQ(worker_held.load(), 1);  // the worker holds a team too now
    EXPECT_GE(detail::team_holders(), 2);
    // The host blocks on work still to run: it hands its team back (libgomp) before it sleeps.
    std::promise<void> gate;
    std::shared_future<void> open = gate.get_future().share();
    rs.s->enqueue({"test_gate", [open] { open.wait(); }});
    std::thread opener([&] {
      std::this_thread::sleep_for(20ms);
      gate.set_value();
    });
    rs.s->wait_idle();
    opener.join();
    EXPECT_EQ(detail::thread_holds_team(), !releasable);
    // The worker, idle for kTeamIdle, hands its team back; a probe task sees it (the probe itself
    // starts no region, and each probe restarts the idle time).
    bool worker_released = false;
    for (int tries = 0; tries < (releasable ? 20 : 1) && !worker_released; ++tries) {
      std::this_thread::sleep_for(nd::kTeamIdle * 2 + 50ms);
      std::atomic<int> held{-1};
      rs.s->enqueue({"test_probe", [&] { held = detail::thread_holds_team() ? 1 : 0; }});
      rs.s->wait_idle();
      worker_released = held.load() == 0;
    }
    EXPECT_EQ(worker_released, releasable);
    // Both build a team again at their next region, with the same results.
    EXPECT_EQ(parallel_sum(n), sum);
    EXPECT_TRUE(detail::thread_holds_team());
    rs.s->enqueue({"test_worker_region_again", [&] {
                     EXPECT_EQ(parallel_sum(n), sum);
                     EXPECT_TRUE(detail::thread_holds_team());
                   }});
    rs.s->wait_idle();
  });
  host.join();
}

TEST(OmpTeams, ReleasingTeamsBetweenNpuStepsKeepsResultsExact) {
  ThreadCount two(2);
  // A CPU op and an NPU op per round, each big enough for a team; every synchronize may release
  // the host's team and the next CPU op builds one again.
  Tensor x = arange(1 << 18).to(kFloat64);
  Tensor xn = x.to(Device("npu:0"));
  const double want = (double(1 << 18) - 1) * double(1 << 18);  // sum of 2*i
  for (int round = 0; round < 20; ++round) {
    EXPECT_EQ((x + x).sum().item<double>(), want) << round;
    EXPECT_EQ((xn + xn).sum().item<double>(), want) << round;
  }
}

TEST(NpuRuntime, EachWaiterOnAStreamIsWokenWhenItsOwnWorkIsDone) {
  RawStream rs;
  std::promise<void> gate1, gate2;
  std::shared_future<void> open1 = gate1.get_future().share(), open2 = gate2.get_future().share();
  rs.s->enqueue({"test_gate1", [open1] { open1.wait(); }});
  std::atomic<bool> a_done{false}, b_done{false};
  std::thread a([&] {  // waits for gate 1 only
    rs.s->wait_idle();
    a_done = true;
  });
  std::this_thread::sleep_for(20ms);  // a is (most likely) asleep with its target
  rs.s->enqueue({"test_gate2", [open2] { open2.wait(); }});
  std::thread b([&] {  // waits for gate 2
    rs.s->wait_idle();
    b_done = true;
  });
  EXPECT_FALSE(rs.s->wait_done_for(10ms));  // a timed wait gives up
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(a_done.load());
  gate1.set_value();
  for (int i = 0; i < 500 && !a_done.load(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(a_done.load());  // woken although b's target is still ahead
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(b_done.load());
  gate2.set_value();
  a.join();
  b.join();
  EXPECT_TRUE(b_done.load());
  EXPECT_TRUE(rs.s->wait_done_for(0ms));
}
