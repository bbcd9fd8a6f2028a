// The in-flight uses of device allocations (Note [In-flight uses] in runtime.h): what phase 1
// notes, what executors and queued tasks carry, and the search aclrtFree makes before it frees.
#include <algorithm>

#include "ember/device/npu/runtime.h"
#include "ember/device/profiler.h"

namespace ember {
namespace npu {
namespace detail {

void AllocList::add(uintptr_t a) {
  if (!has(a)) add_new(a);
}

void AllocList::add_new(uintptr_t a) {
  if (n_ < kInline) {
    inline_[n_++] = a;
  } else {
    if (!more_) more_ = std::make_unique<std::vector<uintptr_t>>();
    more_->push_back(a);
    ++n_;
  }
}

bool AllocList::has(uintptr_t a) const {
  for (uint32_t i = 0; i < std::min(n_, kInline); ++i)
    if (inline_[i] == a) return true;
  return n_ > kInline && std::find(more_->begin(), more_->end(), a) != more_->end();
}

void AllocList::merge(const AllocList& o) {
  for (uint32_t i = 0; i < std::min(o.n_, kInline); ++i) add(o.inline_[i]);
  if (o.n_ > kInline)
    for (uintptr_t a : *o.more_) add(a);
}

AllocList AllocList::copy() const {
  AllocList c;
  for (uint32_t i = 0; i < std::min(n_, kInline); ++i) c.add_new(inline_[i]);
  if (n_ > kInline)
    for (uintptr_t a : *more_) c.add_new(a);
  return c;
}

__attribute__((tls_model("initial-exec"))) thread_local PlannedNotes tls_planned;

namespace {

// d.mu held; al a live allocation. When the list is full (more than kMax allocations in one phase
// 1) the allocation is not held: a free before the kernel runs is then caught by the kernel's view,
// which checks the range at run time (the tensor's ref is not `tracked`).
void note_locked(const Allocation& al) {
  if (tls_planned.has(al.addr) || tls_planned.n == PlannedNotes::kMax) return;
  tls_planned.r[tls_planned.n++] = {al.addr, al.addr + al.extent};
}

}  // namespace

void* translate_planned(const void* p, size_t bytes, int dev) {
  DeviceState& d = device(dev);
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> g(d.mu);
  const Allocation* al = live_at(d, a);
  if (!al || bytes > al->addr + al->extent - a) return nullptr;
  note_locked(*al);
  return host(d, p);
}

bool note_planned_slow(const void* p) {  // not noted by check_tensor
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  int dev = device_of(p);
  if (dev < 0) return false;
  DeviceState& d = device(dev);
  std::lock_guard<std::mutex> g(d.mu);
  const Allocation* al = live_at(d, a);
  if (al) note_locked(*al);
  return false;  // held (if there was room), but its range was not checked: the kernel's view checks it
}

void take_planned(AllocList* out) {
  for (uint32_t i = 0; i < tls_planned.n; ++i) out->add_new(tls_planned.r[i].addr);  // noted once each
  tls_planned.n = 0;
}

void drop_planned() { tls_planned.n = 0; }

// ---- the streams' unfinished tasks ----

namespace {
// Every stream object (default, created, destroyed but still held), for the search at free time:
// a copy between devices runs on one device's stream and uses the other device's memory.
std::mutex g_streams_mu;
std::vector<Stream*>& all_streams() {
  static auto* v = new std::vector<Stream*>();
  return *v;
}
}  // namespace

void register_stream(Stream* s) {
  std::lock_guard<std::mutex> g(g_streams_mu);
  all_streams().push_back(s);
}

void unregister_stream(Stream* s) {
  std::lock_guard<std::mutex> g(g_streams_mu);
  auto& v = all_streams();
  v.erase(std::remove(v.begin(), v.end(), s), v.end());
}

namespace {
// The profiler's stop waits for every stream, so that kernels launched while it recorded run (and
// are recorded) before it collects. Errors stay for the user's next synchronize.
void wait_all_streams() {
  std::lock_guard<std::mutex> g(g_streams_mu);
  for (Stream* s : all_streams()) s->wait_idle();
}
const bool g_profiler_hook = (profiler::detail::on_stop(&wait_all_streams), true);
}  // namespace

bool in_use(uintptr_t a, const char** op, bool* planned) {
  *planned = planned_use(a, op);
  if (*planned) return true;
  std::lock_guard<std::mutex> g(g_streams_mu);
  for (Stream* s : all_streams())
    if (s->pending_use(a, op)) return true;
  return false;
}

}  // namespace detail
}  // namespace npu
}  // namespace ember
