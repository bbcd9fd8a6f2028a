// The in-flight uses of device allocations (runtime.h, AllocationUse): what phase 1 plans on,
// what executors hold until they are enqueued, and what queued work uses until its stream has run
// it. aclrtFree asks in_use() before it frees.
#include <algorithm>

#include "ember/device/npu/runtime.h"

namespace ember {
namespace npu {
namespace detail {

void AllocationUse::queued(const StreamPtr& s, uint64_t seq, const char* op) {
  last_op.store(op, std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(mu_);
  for (Pending& p : pending_) {
    if (!p.stream.owner_before(s) && !s.owner_before(p.stream)) {  // the same stream
      if (seq > p.seq) p.seq = seq;
      return;
    }
  }
  pending_.push_back(Pending{s, seq});
}

bool AllocationUse::queued_work_pending() {
  std::lock_guard<std::mutex> g(mu_);
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [](const Pending& p) {
                                  StreamPtr s = p.stream.lock();  // a destroyed stream finished first
                                  return !s || s->completed() >= p.seq;
                                }),
                 pending_.end());
  return !pending_.empty();
}

bool in_use(const Allocation& al) { return al.use.use_count() > 1 || al.use->queued_work_pending(); }

UsePtr use_of(const void* p) {
  int dev = device_of(p);
  if (dev < 0) return nullptr;
  DeviceState& d = device(dev);
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> g(d.mu);
  const Allocation* al = live_at(d, a);
  return al ? al->use : nullptr;
}

namespace {
struct PlannedUse {
  uintptr_t addr = 0, end = 0;
  std::weak_ptr<AllocationUse> use;  // weak: a phase 1 that ends without an executor holds nothing
};
// initial-exec: a plain thread-pointer offset on the launch path, not a __tls_get_addr call.
__attribute__((tls_model("initial-exec"))) thread_local std::vector<PlannedUse> tls_planned;

bool planned_has(uintptr_t a) {
  for (const PlannedUse& u : tls_planned)
    if (a >= u.addr && a < u.end) return true;
  return false;
}

// d.mu held; al a live allocation.
void note_locked(const Allocation& al) {
  if (!planned_has(al.addr)) tls_planned.push_back(PlannedUse{al.addr, al.addr + al.extent, al.use});
}
}  // namespace

void* translate_planned(const void* p, size_t bytes) {
  int dev = device_of(p);
  if (dev < 0) return nullptr;
  DeviceState& d = device(dev);
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> g(d.mu);
  const Allocation* al = live_at(d, a);
  if (!al || bytes > al->addr + al->extent - a) return nullptr;
  note_locked(*al);
  return host(d, p);
}

bool note_planned(const void* p) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (planned_has(a)) return true;  // the usual case: check_tensor noted it
  int dev = device_of(p);
  if (dev < 0) return false;
  DeviceState& d = device(dev);
  std::lock_guard<std::mutex> g(d.mu);
  const Allocation* al = live_at(d, a);
  if (!al) return false;
  note_locked(*al);
  return false;  // held, but its range was not checked: the kernel's view checks it
}

void HeldUses::queued(const StreamPtr& s, uint64_t seq, const char* op) {
  if (!first) return;
  first->queued(s, seq, op);
  first.reset();
  for (UsePtr& u : rest) u->queued(s, seq, op);
  rest.clear();
}

void HeldUses::add(UsePtr u) {
  if (!first) {
    first = std::move(u);
  } else {
    rest.push_back(std::move(u));
  }
}

void take_planned(const char* op, HeldUses* held) {
  for (const PlannedUse& p : tls_planned) {
    if (UsePtr u = p.use.lock()) {
      u->last_op.store(op, std::memory_order_relaxed);
      held->add(std::move(u));
    }
  }
  tls_planned.clear();
}

void drop_planned() { tls_planned.clear(); }

}  // namespace detail
}  // namespace npu
}  // namespace ember
