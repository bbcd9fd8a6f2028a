// The emulated NPU's events: records and waits are tasks on a stream; an event's state outlives
// aclrtDestroyEvent while records or waits on it are queued.
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>

#include "ember/device/npu/runtime.h"
#include "ember/device/parallel.h"
#include "ember/core/error.h"

namespace ember {
namespace npu {
namespace detail {
namespace {

struct EventState {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0;  // records issued
  uint64_t done = 0;      // records completed
  std::chrono::steady_clock::time_point stamp;
  bool ex = false;  // made by aclrtCreateEventExWithFlag: complete before its first record

  // Blocks until record `target` has completed (lk holds mu). A thread that will block hands its
  // OpenMP team back first: the stream whose record it waits for runs meanwhile (parallel.h).
  void wait_done(std::unique_lock<std::mutex>& lk, uint64_t target) {
    if (done >= target) return;
    lk.unlock();
    ember::detail::release_team_if_shared();
    lk.lock();
    cv.wait(lk, [&] { return done >= target; });
  }
};
// Shared: queued records and waits keep the state alive past aclrtDestroyEvent, as on CANN
// where destroying an event does not cancel the waits already enqueued on it.
using EventPtr = std::shared_ptr<EventState>;
std::map<uintptr_t, EventPtr>& live_events() {
  static auto* s = new std::map<uintptr_t, EventPtr>();
  return *s;
}
EventPtr resolve_event(aclrtEvent e) {
  std::lock_guard<std::mutex> g(g_registry_mu);
  auto it = live_events().find(reinterpret_cast<uintptr_t>(e));
  return it == live_events().end() ? nullptr : it->second;
}

}  // namespace
}  // namespace detail

using namespace detail;

namespace {
aclError create_event(const char* api, aclrtEvent* event, uint32_t flag, bool ex) {
  if (aclError e = check_runtime(api)) return e;
  if (!event) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": event is null");
  if (flag & ~(ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | ACL_EVENT_TIME_LINE))
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": unsupported flag bits " + std::to_string(flag) +
                                             " (ACL_EVENT_SYNC, ACL_EVENT_CAPTURE_STREAM_PROGRESS, "
                                             "ACL_EVENT_TIME_LINE are known)");
  auto e = std::make_shared<EventState>();
  e->ex = ex;
  uintptr_t h = new_handle();
  std::lock_guard<std::mutex> g(g_registry_mu);
  live_events()[h] = e;
  *event = reinterpret_cast<aclrtEvent>(h);
  return ACL_SUCCESS;
}
}  // namespace

// Every emulated event can be waited on and timed, whatever its flags (they select hardware
// resources); the flags are checked.
extern "C" aclError aclrtCreateEvent(aclrtEvent* event) { return create_event("aclrtCreateEvent", event, 0, false); }

extern "C" aclError aclrtCreateEventWithFlag(aclrtEvent* event, uint32_t flag) {
  return create_event("aclrtCreateEventWithFlag", event, flag, false);
}

extern "C" aclError aclrtCreateEventExWithFlag(aclrtEvent* event, uint32_t flag) {
  return create_event("aclrtCreateEventExWithFlag", event, flag, true);
}

extern "C" aclError aclrtDestroyEvent(aclrtEvent event) {
  if (aclError e = check_runtime("aclrtDestroyEvent")) return e;
  if (!event) return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyEvent: event is null");
  EventPtr e = resolve_event(event);
  if (!e) return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyEvent: not a live event (destroyed twice?)");
  {
    std::lock_guard<std::mutex> g(g_registry_mu);
    live_events().erase(reinterpret_cast<uintptr_t>(event));
  }
  return ACL_SUCCESS;
}

extern "C" aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  if (aclError e = check_runtime_stream("aclrtRecordEvent", stream)) return e;
  if (!event) return fail(ACL_ERROR_INVALID_PARAM, "aclrtRecordEvent: event is null");
  EventPtr e = resolve_event(event);
  if (!e) return fail(ACL_ERROR_INVALID_PARAM, "aclrtRecordEvent: not a live event");
  StreamPtr s = resolve_stream(stream);
  if (!s) return fail(ACL_ERROR_INVALID_PARAM, "aclrtRecordEvent: not a live stream");
  uint64_t seq;
  {
    std::lock_guard<std::mutex> g(e->mu);
    seq = ++e->recorded;
  }
  s->enqueue({"aclrtRecordEvent", [e, seq] {
                std::lock_guard<std::mutex> g(e->mu);
                e->stamp = std::chrono::steady_clock::now();
                if (seq > e->done) e->done = seq;
                e->cv.notify_all();
              }});
  return ACL_SUCCESS;
}

extern "C" aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  if (aclError e = check_runtime_stream("aclrtStreamWaitEvent", stream)) return e;
  if (!event) return fail(ACL_ERROR_INVALID_PARAM, "aclrtStreamWaitEvent: event is null");
  EventPtr e = resolve_event(event);
  if (!e) return fail(ACL_ERROR_INVALID_PARAM, "aclrtStreamWaitEvent: not a live event");
  StreamPtr s = resolve_stream(stream);
  if (!s) return fail(ACL_ERROR_INVALID_PARAM, "aclrtStreamWaitEvent: not a live stream");
  uint64_t target;
  {
    std::lock_guard<std::mutex> g(e->mu);
    target = e->recorded;
  }
  if (target == 0) return ACL_SUCCESS;  // never recorded: nothing to wait for
  s->enqueue({"aclrtStreamWaitEvent", [e, target] {
                std::unique_lock<std::mutex> lk(e->mu);
                e->wait_done(lk, target);
              }});
  return ACL_SUCCESS;
}

extern "C" aclError aclrtSynchronizeEvent(aclrtEvent event) {
  if (aclError e = check_runtime("aclrtSynchronizeEvent")) return e;
  if (!event) return fail(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeEvent: event is null");
  EventPtr e = resolve_event(event);
  if (!e) return fail(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeEvent: not a live event");
  std::unique_lock<std::mutex> lk(e->mu);
  e->wait_done(lk, e->recorded);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus* status) {
  if (aclError e = check_runtime("aclrtQueryEventStatus")) return e;
  if (!event || !status) return fail(ACL_ERROR_INVALID_PARAM, "aclrtQueryEventStatus: event and status must not be null");
  EventPtr e = resolve_event(event);
  if (!e) return fail(ACL_ERROR_INVALID_PARAM, "aclrtQueryEventStatus: not a live event");
  std::lock_guard<std::mutex> g(e->mu);
  // An event never recorded is not ready (CANN's documented status for aclrtCreateEvent events),
  // except one made by aclrtCreateEventExWithFlag, which CANN reports complete.
  *status = (e->recorded > 0 || e->ex) && e->done >= e->recorded ? ACL_EVENT_RECORDED_STATUS_COMPLETE
                                                                 : ACL_EVENT_RECORDED_STATUS_NOT_READY;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtEventElapsedTime(float* ms, aclrtEvent start, aclrtEvent end) {
  if (aclError e = check_runtime("aclrtEventElapsedTime")) return e;
  if (!ms || !start || !end) return fail(ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime: null argument");
  EventPtr a = resolve_event(start);
  EventPtr b = resolve_event(end);
  if (!a || !b) return fail(ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime: not a live event");
  std::chrono::steady_clock::time_point ta, tb;
  {
    std::lock_guard<std::mutex> g(a->mu);
    if (a->recorded == 0 || a->done < a->recorded)
      return fail(ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime: the start event has not completed (record it and "
                                           "synchronize first)");
    ta = a->stamp;
  }
  {
    std::lock_guard<std::mutex> g(b->mu);
    if (b->recorded == 0 || b->done < b->recorded)
      return fail(ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime: the end event has not completed (record it and "
                                           "synchronize first)");
    tb = b->stamp;
  }
  *ms = std::chrono::duration<float, std::milli>(tb - ta).count();
  return ACL_SUCCESS;
}

}  // namespace npu
}  // namespace ember
