// Framework-level NPU helpers: streams, guards, events, synchronize, error conversion.
#include "ember/device/npu/npu.h"

#include <map>

#include "ember/device/npu/runtime.h"
#include "ember/core/error.h"

namespace ember {
namespace npu {

namespace {
// The calling thread's current stream per device (absent: the default stream).
thread_local std::map<int, aclrtStream> tls_current;

int resolve_device(int device) {
  int d = device < 0 ? detail::current_device() : device;
  EMBER_CHECK_DEVICE(d >= 0 && d < detail::device_count(), "npu: device index ", d, " out of range (",
                     detail::device_count(), " NPU devices; ", detail::devices_note(), ")");
  return d;
}
}  // namespace

void check_acl(aclError code, const char* what) {
  if (code == ACL_SUCCESS) return;
  // A kernel fault keeps the class of the kernel's error (an IndexError stays an IndexError): the
  // kind recorded with the message, read before aclGetRecentErrMsg consumes both.
  int kind = detail::recent_error_kind();
  const char* msg = aclGetRecentErrMsg();
  detail::throw_error_of_kind(kind, ::ember::detail::str_cat(what, " failed with error ", code,
                                                              msg ? std::string(": ") + msg : std::string()));
}

int device_count() { return detail::device_count(); }
bool is_available() { return detail::device_count() > 0; }
int current_device() { return detail::current_device(); }

Stream Stream::create(int device) {
  int d = resolve_device(device);
  DeviceGuard g(d);
  aclrtStream s = nullptr;
  check_acl(aclrtCreateStream(&s), "npu::Stream::create");
  return Stream(d, s);
}

void Stream::synchronize() const {
  DeviceGuard g(device_);
  check_acl(aclrtSynchronizeStream(raw_), "npu stream synchronize");
}

bool Stream::query() const {
  DeviceGuard g(device_);
  detail::StreamPtr s = detail::resolve_stream(raw_);
  EMBER_CHECK_VALUE(s != nullptr, "npu::Stream::query: npu:", device_, " stream ", raw_,
                    " is not a live stream (destroyed?)");
  return s->idle();
}

bool Stream::alive() const {
  DeviceGuard g(device_);
  return detail::resolve_stream(raw_) != nullptr;
}

// The handle stays: stream handles are never reused, so any later use of this Stream (or of a
// copy) fails with "not a live stream" instead of silently running on the default stream.
void Stream::destroy() {
  EMBER_CHECK_VALUE(raw_ != nullptr, "npu::Stream::destroy: the default stream of npu:", device_,
                    " cannot be destroyed");
  check_acl(aclrtDestroyStream(raw_), "npu::Stream::destroy");
}

Stream current_stream(int device) {
  int d = resolve_device(device);
  auto it = tls_current.find(d);
  return Stream(d, it == tls_current.end() ? nullptr : it->second);
}
Stream default_stream(int device) { return Stream(resolve_device(device), nullptr); }
aclrtStream raw_stream(const Stream& s) { return s.raw(); }

StreamGuard::StreamGuard(const Stream& s) : prev_(current_stream(s.device())) { tls_current[s.device()] = s.raw(); }
StreamGuard::~StreamGuard() { tls_current[prev_.device()] = prev_.raw(); }

DeviceGuard::DeviceGuard(int device) : prev_(detail::current_device()) {
  if (device != prev_) check_acl(aclrtSetDevice(device), "npu::DeviceGuard");
}
DeviceGuard::~DeviceGuard() {
  if (detail::current_device() != prev_) aclrtSetDevice(prev_);
}

Event::Event() { check_acl(aclrtCreateEvent(&raw_), "npu::Event"); }
Event::~Event() {
  if (raw_) aclrtDestroyEvent(raw_);
}
void Event::record(const Stream& s) {
  DeviceGuard g(s.device());
  check_acl(aclrtRecordEvent(raw_, s.raw()), "npu::Event::record");
}
void Event::record() { record(current_stream()); }
void Event::wait(const Stream& s) const {
  DeviceGuard g(s.device());
  check_acl(aclrtStreamWaitEvent(s.raw(), raw_), "npu::Event::wait");
}
void Event::synchronize() const { check_acl(aclrtSynchronizeEvent(raw_), "npu::Event::synchronize"); }
bool Event::query() const {
  aclrtEventRecordedStatus st;
  check_acl(aclrtQueryEventStatus(raw_, &st), "npu::Event::query");
  return st == ACL_EVENT_RECORDED_STATUS_COMPLETE;
}
void Stream::wait_stream(const Stream& other) const {
  if (other == *this) return;
  Event e;
  e.record(other);
  e.wait(*this);
}

float Event::elapsed_time(const Event& end) const {
  synchronize();
  end.synchronize();
  float ms = 0;
  check_acl(aclrtEventElapsedTime(&ms, raw_, end.raw_), "npu::Event::elapsed_time");
  return ms;
}

void synchronize(int device) {
  DeviceGuard g(resolve_device(device));
  check_acl(aclrtSynchronizeDevice(), "npu::synchronize");
}

}  // namespace npu
}  // namespace ember
