// ember (internal to device/npu): an HCCL call being made (hccl.cpp's collectives, hccl_group.cpp's
// groups): its argument checks, the collective it runs, and its enqueueing on the stream, or its
// deferral while an HcclGroupStart of the calling thread is open.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ember/device/comm/collective.h"
#include "ember/device/npu/hccl_comms.h"
#include "ember/device/npu/runtime.h"
#include "ember/core/error.h"
#include "hccl/hccl.h"

namespace ember {
namespace npu {
namespace detail {

inline bool elem_of(HcclDataType t, comm::Elem* e) {
  using comm::Elem;
  switch (t) {
    case HCCL_DATA_TYPE_INT8: *e = Elem::I8; return true;
    case HCCL_DATA_TYPE_INT16: *e = Elem::I16; return true;
    case HCCL_DATA_TYPE_INT32: *e = Elem::I32; return true;
    case HCCL_DATA_TYPE_FP16: *e = Elem::F16; return true;
    case HCCL_DATA_TYPE_FP32: *e = Elem::F32; return true;
    case HCCL_DATA_TYPE_INT64: *e = Elem::I64; return true;
    case HCCL_DATA_TYPE_UINT64: *e = Elem::U64; return true;
    case HCCL_DATA_TYPE_UINT8: *e = Elem::U8; return true;
    case HCCL_DATA_TYPE_UINT16: *e = Elem::U16; return true;
    case HCCL_DATA_TYPE_UINT32: *e = Elem::U32; return true;
    case HCCL_DATA_TYPE_FP64: *e = Elem::F64; return true;
    case HCCL_DATA_TYPE_BFP16: *e = Elem::BF16; return true;
    default: return false;
  }
}

// The checks a collective makes before it is enqueued; each failure records its message for
// aclGetRecentErrMsg and returns HCCL's code.
struct Launch {
  const char* fn;
  std::shared_ptr<CommImpl> comm;
  comm::Call call;
  StreamPtr stream;
  AllocList uses;

  HcclResult begin(HcclComm h, aclrtStream s) {
    call.name = fn;
    if (!h) return fail(HCCL_E_PTR, std::string(fn) + ": comm is null");
    comm = find_comm(h);
    if (!comm)
      return fail(HCCL_E_PARA, std::string(fn) + ": comm " + hex(h) +
                                   " is not a live communicator (never made, or destroyed by HcclCommDestroy)");
    // Note [Runtime lifecycle]: after aclFinalize, or with no such device, the runtime's message stands
    if (check_runtime(fn, comm->device) != ACL_SUCCESS) return HCCL_E_RUNTIME;
    stream = s ? resolve_stream(s) : default_stream(comm->device);
    if (!stream) return fail(HCCL_E_PARA, std::string(fn) + ": stream " + hex(s) + " is not a live stream");
    if (stream->device() != comm->device)
      return fail(HCCL_E_PARA, std::string(fn) + ": the stream is on npu:" + std::to_string(stream->device()) +
                                   ", but rank " + std::to_string(comm->transport->rank()) + " of " + comm->name +
                                   " is on npu:" + std::to_string(comm->device));
    return HCCL_SUCCESS;
  }
  HcclResult elem(HcclDataType t) {
    if (!elem_of(t, &call.elem))
      return fail(HCCL_E_PARA, std::string(fn) + ": dataType " + std::to_string(static_cast<int>(t)) +
                                   " is not an HcclDataType (HCCL_DATA_TYPE_INT8 .. HCCL_DATA_TYPE_BFP16)");
    return HCCL_SUCCESS;
  }
  HcclResult op(HcclReduceOp o) {
    if (o < HCCL_REDUCE_SUM || o > HCCL_REDUCE_MIN)
      return fail(HCCL_E_PARA, std::string(fn) + ": op " + std::to_string(static_cast<int>(o)) +
                                   " is not an HcclReduceOp (HCCL_REDUCE_SUM, _PROD, _MAX or _MIN)");
    call.op = static_cast<comm::RedOp>(o);
    return HCCL_SUCCESS;
  }
  HcclResult rank_arg(const char* what, uint32_t r) {
    const int n = comm->transport->size();
    if (r >= static_cast<uint32_t>(n))
      return fail(HCCL_E_PARA, std::string(fn) + ": " + what + " " + std::to_string(r) + " is not a rank of " +
                                   comm->name + " (ranks 0 .. " + std::to_string(n - 1) + ")");
    call.peer = static_cast<int>(r);
    return HCCL_SUCCESS;
  }
  // A buffer of elems elements (times the call's element size) on the communicator's device; its
  // host view goes to *out.
  template <class P>
  HcclResult buffer(const char* what, void* p, uint64_t elems, P* out) {
    const size_t es = comm::elem_size(call.elem);
    if (elems > std::numeric_limits<size_t>::max() / es)
      return fail(HCCL_E_PARA, std::string(fn) + ": " + what + " of " + std::to_string(elems) + " " +
                                   comm::elem_name(call.elem) + " elements overflows the address space");
    if (elems == 0) {
      *out = nullptr;
      return HCCL_SUCCESS;
    }
    if (!p) return fail(HCCL_E_PTR, std::string(fn) + ": " + what + " is null");
    const int dev = device_of(p);
    if (dev < 0)
      return fail(HCCL_E_PARA, std::string(fn) + ": " + what + " " + hex(p) +
                                   " is not device memory (a host pointer where a device pointer is expected)");
    if (dev != comm->device)
      return fail(HCCL_E_PARA, std::string(fn) + ": " + what + " " + hex(p) + " is memory of npu:" + std::to_string(dev) +
                                   ", but rank " + std::to_string(comm->transport->rank()) + " of " + comm->name +
                                   " is on npu:" + std::to_string(comm->device));
    void* h = translate(p, elems * es, nullptr);
    if (!h)
      return fail(HCCL_E_PARA, std::string(fn) + ": " + what + " range [" + hex(p) + ", +" +
                                   std::to_string(elems * es) + " bytes) is not inside one live aclrtMalloc allocation");
    uses.add(allocation_base(p));
    *out = static_cast<P>(h);
    return HCCL_SUCCESS;
  }
  // count * ranks, checked.
  HcclResult times_ranks(uint64_t count, uint64_t* out) {
    const uint64_t n = static_cast<uint64_t>(comm->transport->size());
    if (count > std::numeric_limits<uint64_t>::max() / n)
      return fail(HCCL_E_PARA, std::string(fn) + ": count " + std::to_string(count) + " times " + std::to_string(n) +
                                   " ranks overflows");
    *out = count * n;
    return HCCL_SUCCESS;
  }
  // AllToAllV's counts and offsets, owned by the launch (the caller's arrays may go once the call
  // returns): send counts, send offsets, recv counts, recv offsets, size() each.
  std::shared_ptr<std::vector<uint64_t>> table;

  // Runs the call on the communicator (on its stream's worker); a failure is remembered for
  // HcclGetCommAsyncError and rethrown to fault the stream.
  void run() const {
    try {
      comm->transport->run(call);
    } catch (const Error&) {
      int none = HCCL_SUCCESS;
      comm->async_error.compare_exchange_strong(none, comm->transport->broken().empty() ? HCCL_E_PARA : HCCL_E_TIMEOUT);
      throw;
    }
  }
  HcclResult enqueue();
};

// HcclGroupStart/End: the launches of this thread's open group, issued at the outermost end.
extern thread_local int tls_group_depth;
extern thread_local std::vector<Launch> tls_grouped;

// A buffer pair that must not overlap (AllToAll(V): every rank reads the others' send buffers
// while they write their receive buffers).
HcclResult disjoint(const Launch& l, const void* a, uint64_t a_elems, const void* b, uint64_t b_elems);

}  // namespace detail
}  // namespace npu
}  // namespace ember
