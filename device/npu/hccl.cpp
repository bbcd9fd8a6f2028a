// The emulated NPU's HCCL (CANN's hccl/hccl.h): the collectives, enqueued on streams like kernels
// (the communicators over device/comm's transports are in hccl_comm.cpp).
//
// A call checks its arguments as phase 1 of an op does (device memory of the communicator's
// device, ranges inside one live allocation, counts that fit, a stream of that device), then
// enqueues a task that runs the collective when the stream reaches it. The task holds the
// communicator's transport, so HcclCommDestroy with work in flight is safe; a collective that fails
// on its stream (calls that differ between ranks, a timeout) faults the stream, named at the next
// synchronize, and is remembered for HcclGetCommAsyncError.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <thread>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ember/device/comm/collective.h"
#include "ember/device/env.h"
#include "ember/device/npu/hccl_comms.h"
#include "ember/device/npu/runtime.h"
#include "ember/core/error.h"
#include "hccl/hccl.h"

namespace ember {
namespace npu {
namespace detail {
namespace {

bool elem_of(HcclDataType t, comm::Elem* e) {
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
thread_local int tls_group_depth = 0;
thread_local std::vector<Launch> tls_grouped;

HcclResult Launch::enqueue() {
  if (tls_group_depth > 0) {
    tls_grouped.push_back(std::move(*this));
    return HCCL_SUCCESS;
  }
  auto self = std::make_shared<Launch>(std::move(*this));
  StreamPtr s = self->stream;
  AllocList u = std::move(self->uses);
  s->enqueue(Task(self->fn, [self] { self->run(); }), std::move(u));
  return HCCL_SUCCESS;
}

// One stream's share of a group: its sends and receives run side by side (each on a thread of
// its own, so a pair that waits for each other completes), its collectives in order.
void run_group(const std::vector<std::shared_ptr<Launch>>& ops) {
  std::vector<std::thread> p2p;
  std::mutex mu;
  std::exception_ptr first;
  auto guarded = [&](const Launch& l) {
    try {
      l.run();
    } catch (...) {
      std::lock_guard<std::mutex> g(mu);
      if (!first) first = std::current_exception();
    }
  };
  for (const auto& l : ops)
    if (l->call.kind == comm::Kind::Send || l->call.kind == comm::Kind::Recv) p2p.emplace_back(guarded, std::cref(*l));
  for (const auto& l : ops)
    if (l->call.kind != comm::Kind::Send && l->call.kind != comm::Kind::Recv) guarded(*l);
  for (std::thread& t : p2p) t.join();
  if (first) std::rethrow_exception(first);
}

// A buffer pair that must not overlap (AllToAll(V): every rank reads the others' send buffers
// while they write their receive buffers).
HcclResult disjoint(const Launch& l, const void* a, uint64_t a_elems, const void* b, uint64_t b_elems) {
  const size_t es = comm::elem_size(l.call.elem);
  const char *pa = static_cast<const char*>(a), *pb = static_cast<const char*>(b);
  if (!pa || !pb || !a_elems || !b_elems) return HCCL_SUCCESS;
  if (pa < pb + b_elems * es && pb < pa + a_elems * es)
    return fail(HCCL_E_PARA, std::string(l.fn) + ": sendBuf and recvBuf overlap (" + hex(a) + " and " + hex(b) + ")");
  return HCCL_SUCCESS;
}

}  // namespace
}  // namespace detail

using namespace detail;

extern "C" HcclResult HcclGroupStart(void) {
  ++tls_group_depth;
  return HCCL_SUCCESS;
}

extern "C" HcclResult HcclGroupEnd(void) {
  if (tls_group_depth == 0) return fail(HCCL_E_PARA, "HcclGroupEnd: no HcclGroupStart of this thread is open");
  if (--tls_group_depth > 0) return HCCL_SUCCESS;
  std::vector<Launch> grouped = std::move(tls_grouped);
  tls_grouped.clear();
  // One task per stream, in the order the streams were first used.
  std::vector<std::pair<StreamPtr, std::vector<std::shared_ptr<Launch>>>> by_stream;
  for (Launch& l : grouped) {
    auto it = std::find_if(by_stream.begin(), by_stream.end(), [&](const auto& e) { return e.first == l.stream; });
    if (it == by_stream.end()) it = by_stream.insert(by_stream.end(), {l.stream, {}});
    it->second.push_back(std::make_shared<Launch>(std::move(l)));
  }
  for (auto& [stream, ops] : by_stream) {
    AllocList uses;
    for (auto& l : ops) uses.merge(l->uses);
    stream->enqueue(Task("HcclGroup", [group = ops] { run_group(group); }), std::move(uses));
  }
  return HCCL_SUCCESS;
}

extern "C" HcclResult HcclAllReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType,
                                    HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  Launch l{"HcclAllReduce", nullptr, {}, nullptr, {}, nullptr};
  l.call.kind = comm::Kind::AllReduce;
  l.call.count = count;
  EMBER_HCCL_TRY(l.begin(comm, stream));
  EMBER_HCCL_TRY(l.elem(dataType));
  EMBER_HCCL_TRY(l.op(op));
  EMBER_HCCL_TRY(l.buffer("sendBuf", sendBuf, count, &l.call.send));
  EMBER_HCCL_TRY(l.buffer("recvBuf", recvBuf, count, &l.call.recv));
  return l.enqueue();
}

extern "C" HcclResult HcclBroadcast(void* buf, uint64_t count, HcclDataType dataType, uint32_t root, HcclComm comm,
                                    aclrtStream stream) {
  Launch l{"HcclBroadcast", nullptr, {}, nullptr, {}, nullptr};
  l.call.kind = comm::Kind::Broadcast;
  l.call.count = count;
  EMBER_HCCL_TRY(l.begin(comm, stream));
  EMBER_HCCL_TRY(l.elem(dataType));
  EMBER_HCCL_TRY(l.rank_arg("root", root));
  EMBER_HCCL_TRY(l.buffer("buf", buf, count, &l.call.recv));
  return l.enqueue();
}

extern "C" HcclResult HcclAllGather(void* sendBuf, void* recvBuf, uint64_t sendCount, HcclDataType dataType,
                                    HcclComm comm, aclrtStream stream) {
  Launch l{"HcclAllGather", nullptr, {}, nullptr, {}, nullptr};
  l.call.kind = comm::Kind::AllGather;
  l.call.count = sendCount;
  uint64_t total = 0;
  EMBER_HCCL_TRY(l.begin(comm, stream));
  EMBER_HCCL_TRY(l.elem(dataType));
  EMBER_HCCL_TRY(l.times_ranks(sendCount, &total));
  EMBER_HCCL_TRY(l.buffer("sendBuf", sendBuf, sendCount, &l.call.send));
  EMBER_HCCL_TRY(l.buffer("recvBuf", recvBuf, total, &l.call.recv));
  return l.enqueue();
}

extern "C" HcclResult HcclReduceScatter(void* sendBuf, void* recvBuf, uint64_t recvCount, HcclDataType dataType,
                                        HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  Launch l{"HcclReduceScatter", nullptr, {}, nullptr, {}, nullptr};
  l.call.kind = comm::Kind::ReduceScatter;
  l.call.count = recvCount;
  uint64_t total = 0;
  EMBER_HCCL_TRY(l.begin(comm, stream));
  EMBER_HCCL_TRY(l.elem(dataType));
  EMBER_HCCL_TRY(l.op(op));
  EMBER_HCCL_TRY(l.times_ranks(recvCount, &total));
  EMBER_HCCL_TRY(l.buffer("sendBuf", sendBuf, total, &l.call.send));
  EMBER_HCCL_TRY(l.buffer("recvBuf", recvBuf, recvCount, &l.call.recv));
  return l.enqueue();
}

extern "C" HcclResult HcclSend(void* sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank,
                               HcclComm comm, aclrtStream stream) {
  Launch l{"HcclSend", nullptr, {}, nullptr, {}, nullptr};
  l.call.kind = comm::Kind::Send;
  l.call.count = count;
  EMBER_HCCL_TRY(l.begin(comm, stream));
  EMBER_HCCL_TRY(l.elem(dataType));
  EMBER_HCCL_TRY(l.rank_arg("destRank", destRank));
  if (destRank == static_cast<uint32_t>(l.comm->transport->rank()))
    return fail(HCCL_E_PARA, "HcclSend: destRank " + std::to_string(destRank) + " is the sender's own rank");
  EMBER_HCCL_TRY(l.buffer("sendBuf", sendBuf, count, &l.call.send));
  return l.enqueue();
}

extern "C" HcclResult HcclRecv(void* recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank,
                               HcclComm comm, aclrtStream stream) {
  Launch l{"HcclRecv", nullptr, {}, nullptr, {}, nullptr};
  l.call.kind = comm::Kind::Recv;
  l.call.count = count;
  EMBER_HCCL_TRY(l.begin(comm, stream));
  EMBER_HCCL_TRY(l.elem(dataType));
  EMBER_HCCL_TRY(l.rank_arg("srcRank", srcRank));
  if (srcRank == static_cast<uint32_t>(l.comm->transport->rank()))
    return fail(HCCL_E_PARA, "HcclRecv: srcRank " + std::to_string(srcRank) + " is the receiver's own rank");
  EMBER_HCCL_TRY(l.buffer("recvBuf", recvBuf, count, &l.call.recv));
  return l.enqueue();
}

extern "C" HcclResult HcclReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType,
                                 HcclReduceOp op, uint32_t root, HcclComm comm, aclrtStream stream) {
  Launch l{"HcclReduce", nullptr, {}, nullptr, {}, nullptr};
  l.call.kind = comm::Kind::Reduce;
  l.call.count = count;
  EMBER_HCCL_TRY(l.begin(comm, stream));
  EMBER_HCCL_TRY(l.elem(dataType));
  EMBER_HCCL_TRY(l.op(op));
  EMBER_HCCL_TRY(l.rank_arg("root", root));
  EMBER_HCCL_TRY(l.buffer("sendBuf", sendBuf, count, &l.call.send));
  const bool is_root = root == static_cast<uint32_t>(l.comm->transport->rank());
  EMBER_HCCL_TRY(l.buffer("recvBuf", recvBuf, is_root ? count : 0, &l.call.recv));
  return l.enqueue();
}

extern "C" HcclResult HcclScatter(void* sendBuf, void* recvBuf, uint64_t recvCount, HcclDataType dataType,
                                  uint32_t root, HcclComm comm, aclrtStream stream) {
  Launch l{"HcclScatter", nullptr, {}, nullptr, {}, nullptr};
  l.call.kind = comm::Kind::Scatter;
  l.call.count = recvCount;
  uint64_t total = 0;
  EMBER_HCCL_TRY(l.begin(comm, stream));
  EMBER_HCCL_TRY(l.elem(dataType));
  EMBER_HCCL_TRY(l.rank_arg("root", root));
  EMBER_HCCL_TRY(l.times_ranks(recvCount, &total));
  const bool is_root = root == static_cast<uint32_t>(l.comm->transport->rank());
  EMBER_HCCL_TRY(l.buffer("sendBuf", sendBuf, is_root ? total : 0, &l.call.send));
  EMBER_HCCL_TRY(l.buffer("recvBuf", recvBuf, recvCount, &l.call.recv));
  if (is_root) {  // the root's own block may be its recvBuf exactly; any other overlap is refused
    const char* own = static_cast<const char*>(sendBuf) + root * recvCount * comm::elem_size(l.call.elem);
    if (own != recvBuf) EMBER_HCCL_TRY(disjoint(l, sendBuf, total, recvBuf, recvCount));
  }
  return l.enqueue();
}

extern "C" HcclResult HcclAlltoAll(const void* sendBuf, uint64_t sendCount, HcclDataType sendType, const void* recvBuf,
                                   uint64_t recvCount, HcclDataType recvType, HcclComm comm, aclrtStream stream) {
  Launch l{"HcclAlltoAll", nullptr, {}, nullptr, {}, nullptr};
  l.call.kind = comm::Kind::AllToAll;
  l.call.count = sendCount;
  uint64_t total = 0;
  EMBER_HCCL_TRY(l.begin(comm, stream));
  EMBER_HCCL_TRY(l.elem(sendType));
  if (recvType != sendType || recvCount != sendCount)
    return fail(HCCL_E_PARA, "HcclAlltoAll: sendCount " + std::to_string(sendCount) + " / sendType " +
                                 std::to_string(static_cast<int>(sendType)) + " and recvCount " + std::to_string(recvCount) +
                                 " / recvType " + std::to_string(static_cast<int>(recvType)) + " must agree");
  EMBER_HCCL_TRY(l.times_ranks(sendCount, &total));
  EMBER_HCCL_TRY(l.buffer("sendBuf", const_cast<void*>(sendBuf), total, &l.call.send));
  EMBER_HCCL_TRY(l.buffer("recvBuf", const_cast<void*>(recvBuf), total, &l.call.recv));
  EMBER_HCCL_TRY(disjoint(l, sendBuf, total, recvBuf, total));
  return l.enqueue();
}

extern "C" HcclResult HcclAlltoAllV(const void* sendBuf, const void* sendCounts, const void* sdispls,
                                    HcclDataType sendType, const void* recvBuf, const void* recvCounts,
                                    const void* rdispls, HcclDataType recvType, HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclAlltoAllV";
  Launch l{fn, nullptr, {}, nullptr, {}, nullptr};
  l.call.kind = comm::Kind::AllToAllV;
  EMBER_HCCL_TRY(l.begin(comm, stream));
  EMBER_HCCL_TRY(l.elem(sendType));
  if (recvType != sendType)
    return fail(HCCL_E_PARA, std::string(fn) + ": sendType " + std::to_string(static_cast<int>(sendType)) +
                                 " and recvType " + std::to_string(static_cast<int>(recvType)) + " must agree");
  if (!sendCounts || !sdispls || !recvCounts || !rdispls)
    return fail(HCCL_E_PTR, std::string(fn) + ": sendCounts, sdispls, recvCounts and rdispls must not be null");
  const size_t n = static_cast<size_t>(l.comm->transport->size());
  l.table = std::make_shared<std::vector<uint64_t>>(4 * n);
  uint64_t* t = l.table->data();
  std::memcpy(t, sendCounts, n * 8);
  std::memcpy(t + n, sdispls, n * 8);
  std::memcpy(t + 2 * n, recvCounts, n * 8);
  std::memcpy(t + 3 * n, rdispls, n * 8);
  // Each buffer spans the furthest block it names (count + offset, checked for overflow).
  auto extent = [&](const uint64_t* counts, const uint64_t* displs, const char* what, uint64_t* out) -> HcclResult {
    *out = 0;
    for (size_t k = 0; k < n; ++k) {
      if (!counts[k]) continue;
      if (displs[k] > std::numeric_limits<uint64_t>::max() - counts[k])
        return fail(HCCL_E_PARA, std::string(fn) + ": " + what + " block " + std::to_string(k) + " overflows");
      *out = std::max(*out, displs[k] + counts[k]);
    }
    return HCCL_SUCCESS;
  };
  uint64_t send_extent = 0, recv_extent = 0;
  EMBER_HCCL_TRY(extent(t, t + n, "sendBuf", &send_extent));
  EMBER_HCCL_TRY(extent(t + 2 * n, t + 3 * n, "recvBuf", &recv_extent));
  EMBER_HCCL_TRY(l.buffer("sendBuf", const_cast<void*>(sendBuf), send_extent, &l.call.send));
  EMBER_HCCL_TRY(l.buffer("recvBuf", const_cast<void*>(recvBuf), recv_extent, &l.call.recv));
  EMBER_HCCL_TRY(disjoint(l, sendBuf, send_extent, recvBuf, recv_extent));
  l.call.send_counts = t;
  l.call.send_displs = t + n;
  l.call.recv_counts = t + 2 * n;
  l.call.recv_displs = t + 3 * n;
  return l.enqueue();
}

extern "C" HcclResult HcclAlltoAllVC(const void* sendBuf, const void* sendCountMatrix, HcclDataType sendType,
                                     const void* recvBuf, HcclDataType recvType, HcclComm comm, aclrtStream stream) {
  if (!comm) return fail(HCCL_E_PTR, "HcclAlltoAllVC: comm is null");
  auto c = find_comm(comm);
  if (!c) return fail(HCCL_E_PARA, "HcclAlltoAllVC: comm " + hex(comm) + " is not a live communicator");
  if (!sendCountMatrix) return fail(HCCL_E_PTR, "HcclAlltoAllVC: sendCountMatrix is null");
  const size_t n = static_cast<size_t>(c->transport->size()), me = static_cast<size_t>(c->transport->rank());
  const uint64_t* m = static_cast<const uint64_t*>(sendCountMatrix);
  std::vector<uint64_t> sc(n), sd(n), rc(n), rd(n);
  uint64_t s_at = 0, r_at = 0;
  for (size_t k = 0; k < n; ++k) {
    sc[k] = m[me * n + k];
    rc[k] = m[k * n + me];
    if (s_at > std::numeric_limits<uint64_t>::max() - sc[k] || r_at > std::numeric_limits<uint64_t>::max() - rc[k])
      return fail(HCCL_E_PARA, "HcclAlltoAllVC: the counts of sendCountMatrix overflow");
    sd[k] = s_at;
    rd[k] = r_at;
    s_at += sc[k];
    r_at += rc[k];
  }
  return HcclAlltoAllV(sendBuf, sc.data(), sd.data(), sendType, recvBuf, rc.data(), rd.data(), recvType, comm, stream);
}

extern "C" HcclResult HcclBatchSendRecv(HcclSendRecvItem* sendRecvInfo, uint32_t itemNum, HcclComm comm,
                                        aclrtStream stream) {
  if (!sendRecvInfo && itemNum) return fail(HCCL_E_PTR, "HcclBatchSendRecv: sendRecvInfo is null");
  for (uint32_t i = 0; i < itemNum; ++i)
    if (sendRecvInfo[i].sendRecvType != HCCL_SEND && sendRecvInfo[i].sendRecvType != HCCL_RECV)
      return fail(HCCL_E_PARA, "HcclBatchSendRecv: item " + std::to_string(i) + " is neither HCCL_SEND nor HCCL_RECV");
  HcclGroupStart();
  const size_t mark = tls_grouped.size();  // (inside a group of the caller's: its launches stay)
  HcclResult r = HCCL_SUCCESS;
  for (uint32_t i = 0; i < itemNum && r == HCCL_SUCCESS; ++i) {
    const HcclSendRecvItem& it = sendRecvInfo[i];
    r = it.sendRecvType == HCCL_SEND ? HcclSend(it.buf, it.count, it.dataType, it.remoteRank, comm, stream)
                                     : HcclRecv(it.buf, it.count, it.dataType, it.remoteRank, comm, stream);
  }
  if (r != HCCL_SUCCESS) {  // nothing of the batch is issued
    const std::string why = aclGetRecentErrMsg() ? aclGetRecentErrMsg() : "";
    tls_grouped.erase(tls_grouped.begin() + static_cast<std::ptrdiff_t>(mark), tls_grouped.end());
    --tls_group_depth;
    return fail(r, "HcclBatchSendRecv: " + why);
  }
  return HcclGroupEnd();
}

extern "C" HcclResult HcclBarrier(HcclComm comm, aclrtStream stream) {
  Launch l{"HcclBarrier", nullptr, {}, nullptr, {}, nullptr};
  l.call.kind = comm::Kind::Barrier;
  EMBER_HCCL_TRY(l.begin(comm, stream));
  return l.enqueue();
}

}  // namespace npu
}  // namespace ember
