// ember: framework-level NPU helpers (torch_npu's torch.npu.*): streams, events, memory stats.
#pragma once

#include <cstdint>
#include <string>

#include "acl/acl.h"

namespace ember {
namespace npu {

int device_count();
// Whether any NPU is there (torch_npu's torch.npu.is_available(); the emulator's count comes from
// EMBER_NPU_DEVICES, 2 by default).
bool is_available();

// A stream of one device. Streams made with Stream::create live until destroy() (or process
// exit); the default stream always exists and cannot be destroyed. After destroy(), every use
// of the Stream or of its copies throws "not a live stream".
class Stream {
 public:
  Stream() = default;
  Stream(int device, aclrtStream raw) : device_(device), raw_(raw) {}
  static Stream create(int device = -1);
  // Waits for the stream's work; throws ember::Error naming the failing kernel on a fault.
  void synchronize() const;
  // Makes this stream wait (on the device) for the work queued on `other` so far
  // (torch.cuda.Stream.wait_stream). Cross-stream ordering is the caller's job, as on CUDA/NPU.
  void wait_stream(const Stream& other) const;
  bool query() const;  // true when all its work is done
  void destroy();
  bool alive() const;  // false once destroyed (by any copy); the default stream is always alive
  int device() const { return device_; }
  aclrtStream raw() const { return raw_; }
  friend bool operator==(const Stream& a, const Stream& b) { return a.device_ == b.device_ && a.raw_ == b.raw_; }
  friend bool operator!=(const Stream& a, const Stream& b) { return !(a == b); }

 private:
  int device_ = 0;
  aclrtStream raw_ = nullptr;  // nullptr: the device's default stream
};

// device -1: the calling thread's current device.
Stream current_stream(int device = -1);
Stream default_stream(int device = -1);
aclrtStream raw_stream(const Stream& s);
// Makes s the calling thread's current stream of its device for the guard's scope.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& s);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream prev_;
};

// Sets the calling thread's current device for the guard's scope (aclrtSetDevice).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(const Stream& s);
  void record();  // on the current stream
  // Makes s wait (on the device) until this event's last record has completed.
  void wait(const Stream& s) const;
  void synchronize() const;
  bool query() const;
  // Milliseconds between this event and end (both recorded and completed).
  float elapsed_time(const Event& end) const;
  aclrtEvent raw() const { return raw_; }

 private:
  aclrtEvent raw_ = nullptr;
};

// Waits for every stream of the device (-1: the current one); throws on a kernel fault.
void synchronize(int device = -1);
int current_device();

// ---- the caching allocator behind NPU tensors (one per device) ----
size_t memory_allocated(int device = -1);      // bytes held by live tensors
size_t memory_reserved(int device = -1);       // allocated + cached
size_t max_memory_allocated(int device = -1);  // peak of memory_allocated
uint64_t num_raw_allocations(int device = -1); // aclrtMalloc calls made by the allocator
void reset_peak_memory_stats(int device = -1);
void empty_cache();                            // returns every cached block (all devices)
std::string memory_summary(int device = -1);
// Marks the allocation starting at `data` (a tensor's storage on s's device) as used by stream
// s: once freed, it is reused only after the work s had queued by then has completed (torch's
// Tensor.record_stream; the Tensor form is in ember/ops/npu_exec.h).
void record_stream(const void* data, const Stream& s);

// Throws ember::Error for a failed CANN call, with aclGetRecentErrMsg's text.
void check_acl(aclError code, const char* what);

}  // namespace npu
}  // namespace ember
