// Host access to device memory: device addresses are PROT_NONE, so a host dereference faults; the
// SIGSEGV handler says so, naming the device, the address and the allocation, before the fault
// takes its course (the previous handler, or the default action, runs on the retried access).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "ember/device/npu/runtime.h"

namespace ember {
namespace npu {
namespace detail {
namespace {

struct DeviceRange {
  uintptr_t base = 0, end = 0;
  int index = 0;
  DeviceState* state = nullptr;
};
constexpr int kMaxRanges = 64;
DeviceRange g_ranges[kMaxRanges];
std::atomic<int> g_range_count{0};
struct sigaction g_prev_segv;

void put(const char* s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    ssize_t w = ::write(2, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}
void put_u64(uint64_t v, int base) {
  char buf[32];
  int i = 31;
  buf[i] = '\0';
  do {
    buf[--i] = "0123456789abcdef"[v % static_cast<uint64_t>(base)];
    v /= static_cast<uint64_t>(base);
  } while (v && i > 0);
  if (base == 16) put("0x");
  put(buf + i);
}

void on_segv(int, siginfo_t* info, void*) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(info->si_addr);
  const int n = g_range_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    const DeviceRange& r = g_ranges[i];
    if (a < r.base || a >= r.end) continue;
    put("ember: host access to npu:");
    put_u64(static_cast<uint64_t>(r.index), 10);
    put(" memory at ");
    put_u64(a, 16);
    // The allocation, if the device lock is free: a handler must not wait for it (the thread
    // holding it may be the one that faulted, or wait on this one), and without it another
    // thread may be changing the table. try_lock is a compare-and-swap, safe here.
    if (r.state->mu.try_lock()) {
      const Allocation* al = live_at(*r.state, a);
      if (al) {
        put(" (inside the allocation of ");
        put_u64(al->size, 10);
        put(" bytes at ");
        put_u64(al->addr, 16);
        put(")");
      } else {
        put(" (no live allocation there: freed, or never allocated)");
      }
      r.state->mu.unlock();
    } else {
      put(" (the allocation table is busy: another thread holds it)");
    }
    put(": device memory is not host memory; copy it with aclrtMemcpy or Tensor::cpu()\n");
    break;
  }
  sigaction(SIGSEGV, &g_prev_segv, nullptr);  // the retried access takes the previous course
}

}  // namespace

void watch_device_ranges(const std::vector<std::unique_ptr<DeviceState>>& devices) {
  int n = 0;
  for (const auto& d : devices) {
    if (n == kMaxRanges) break;
    g_ranges[n++] = DeviceRange{d->base, d->base + d->span, d->index, d.get()};
  }
  g_range_count.store(n, std::memory_order_release);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = &on_segv;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &g_prev_segv);
}

}  // namespace detail
}  // namespace npu
}  // namespace ember
