// The aclrt* functions of streams: create, destroy, synchronize (with a timeout), query, and
// synchronize the device (the streams themselves: stream.cpp).
#include <chrono>
#include <string>

#include "ember/device/npu/runtime.h"

namespace ember {
namespace npu {

using namespace detail;

extern "C" aclError aclrtCreateStream(aclrtStream* stream) {
  if (aclError e = check_runtime("aclrtCreateStream", current_device())) return e;
  if (!stream) return fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: stream is null");
  *stream = register_stream(current_device());
  return ACL_SUCCESS;
}

// priority and flag (ACL_STREAM_FAST_LAUNCH, ACL_STREAM_FAST_SYNC) are scheduling hints for the
// hardware; the emulated streams have one behaviour, so they are checked and otherwise ignored.
extern "C" aclError aclrtCreateStreamWithConfig(aclrtStream* stream, uint32_t priority, uint32_t flag) {
  if (aclError e = check_runtime("aclrtCreateStreamWithConfig", current_device())) return e;
  if (flag & ~(ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC))
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStreamWithConfig: unsupported flag bits " + std::to_string(flag) +
                                             " (ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC are known)");
  (void)priority;
  return aclrtCreateStream(stream);
}

extern "C" aclError aclrtDestroyStream(aclrtStream stream) {
  if (aclError e = check_runtime("aclrtDestroyStream")) return e;
  if (!stream) return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream: stream is null");
  StreamPtr s = resolve_stream(stream);
  if (!s) return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream: not a live stream (destroyed twice?)");
  if (s->is_default()) return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream: the default stream cannot be destroyed");
  std::string msg;
  int kind = 0;
  const aclError fault = s->synchronize(&msg, &kind);  // reported below: the stream goes all the same
  unregister_stream(stream, s);
  // The worker stops when the last holder (a concurrent synchronize or launch) lets go.
  if (fault)
    return fail(fault, "aclrtDestroyStream: the stream is destroyed, but work queued on it failed: " + msg, kind);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtSynchronizeStream(aclrtStream stream) {
  if (aclError e = check_runtime_stream("aclrtSynchronizeStream", stream)) return e;
  StreamPtr s = resolve_stream(stream);
  if (!s) return fail(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeStream: not a live stream");
  std::string msg;
  int kind = 0;
  aclError e = s->synchronize(&msg, &kind);
  return e ? fail(e, msg, kind) : ACL_SUCCESS;
}

// timeout in milliseconds, -1 to wait as long as it takes; ACL_ERROR_RT_STREAM_SYNC_TIMEOUT when
// the stream's work has not finished by then (it keeps running).
extern "C" aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
  if (aclError e = check_runtime_stream("aclrtSynchronizeStreamWithTimeout", stream)) return e;
  if (timeout < -1)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeStreamWithTimeout: timeout must be -1 or >= 0, got " +
                                             std::to_string(timeout));
  StreamPtr s = resolve_stream(stream);
  if (!s) return fail(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeStreamWithTimeout: not a live stream");
  if (timeout >= 0 && !s->wait_done_for(std::chrono::milliseconds(timeout)))
    return fail(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "aclrtSynchronizeStreamWithTimeout: the stream's work did not "
                                                  "finish within " + std::to_string(timeout) + " ms");
  std::string msg;
  int kind = 0;
  aclError e = s->synchronize(&msg, &kind);
  return e ? fail(e, msg, kind) : ACL_SUCCESS;
}

// COMPLETE once everything enqueued so far has run (a fault is reported by the next synchronize).
extern "C" aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus* status) {
  if (aclError e = check_runtime_stream("aclrtStreamQuery", stream)) return e;
  if (!status) return fail(ACL_ERROR_INVALID_PARAM, "aclrtStreamQuery: status is null");
  StreamPtr s = resolve_stream(stream);
  if (!s) return fail(ACL_ERROR_INVALID_PARAM, "aclrtStreamQuery: not a live stream");
  *status = s->idle() ? ACL_STREAM_STATUS_COMPLETE : ACL_STREAM_STATUS_NOT_READY;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtSynchronizeDevice() {
  if (aclError e = check_runtime("aclrtSynchronizeDevice", current_device())) return e;
  DeviceState& d = device(current_device());
  aclError first = ACL_SUCCESS;
  std::string first_msg;
  int first_kind = 0;
  for (const StreamPtr& s : streams_of(d.index)) {
    std::string msg;
    int kind = 0;
    aclError e = s->synchronize(&msg, &kind);
    if (e && !first) {
      first = e;
      first_msg = msg;
      first_kind = kind;
    }
  }
  return first ? fail(first, first_msg, first_kind) : ACL_SUCCESS;
}

}  // namespace npu
}  // namespace ember
