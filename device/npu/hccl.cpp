// The emulated NPU's HCCL (CANN's hccl/hccl.h): communicators over device/comm's transports,
// collectives enqueued on streams like kernels.
//
// A call checks its arguments as phase 1 of an op does (device memory of the communicator's
// device, ranges inside one live allocation, counts that fit, a stream of that device), then
// enqueues a task that runs the collective when the stream reaches it. The task holds the
// communicator's transport, so HcclCommDestroy with work in flight is safe; a collective that fails
// on its stream (calls that differ between ranks, a timeout) faults the stream, named at the next
// synchronize, and is remembered for HcclGetCommAsyncError.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>
#include <unistd.h>

#include "ember/device/comm/collective.h"
#include "ember/device/comm/mpi.h"
#include "ember/device/env.h"
#include "ember/device/npu/hccl_ext.h"
#include "ember/device/npu/runtime.h"
#include "ember/core/error.h"
#include "hccl/hccl.h"

namespace ember {
namespace npu {
namespace detail {
namespace {

struct CommImpl {
  std::shared_ptr<comm::Transport> transport;
  int device = 0;
  std::string name;
  std::atomic<int> async_error{HCCL_SUCCESS};
};

std::mutex g_comms_mu;
std::map<HcclComm, std::shared_ptr<CommImpl>>& live_comms() {
  static auto* m = new std::map<HcclComm, std::shared_ptr<CommImpl>>();
  return *m;
}
std::atomic<uint64_t> g_comm_ids{0};

HcclComm add_comm(std::shared_ptr<CommImpl> c) {
  c->name = "ember_hccl_" + std::to_string(getpid()) + "_" + std::to_string(g_comm_ids.fetch_add(1));
  HcclComm h = c.get();
  std::lock_guard<std::mutex> g(g_comms_mu);
  live_comms()[h] = std::move(c);
  return h;
}

std::shared_ptr<CommImpl> find_comm(HcclComm h) {
  std::lock_guard<std::mutex> g(g_comms_mu);
  auto it = live_comms().find(h);
  return it == live_comms().end() ? nullptr : it->second;
}

// HCCL_EXEC_TIMEOUT (seconds), as on CANN, whose default is 1836 s.
std::chrono::milliseconds exec_timeout() {
  auto s = env_int("HCCL_EXEC_TIMEOUT", 0, 24 * 3600);
  return std::chrono::milliseconds(1000 * (s ? *s : 1836));
}

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
  HcclResult enqueue() {
    std::shared_ptr<CommImpl> c = comm;
    comm::Call k = call;
    stream->enqueue(Task(fn,
                         [c, k] {
                           try {
                             c->transport->run(k);
                           } catch (const Error&) {
                             int none = HCCL_SUCCESS;
                             c->async_error.compare_exchange_strong(
                                 none, c->transport->broken().empty() ? HCCL_E_PARA : HCCL_E_TIMEOUT);
                             throw;
                           }
                         }),
                    std::move(uses));
    return HCCL_SUCCESS;
  }
};

#define EMBER_HCCL_TRY(expr)             \
  do {                                   \
    if (HcclResult r_ = (expr)) return r_; \
  } while (0)

constexpr char kRootMagic[] = "ember-hccl-root-v1";

}  // namespace
}  // namespace detail

using namespace detail;

HcclResult hccl_set_timeout(HcclComm comm, std::chrono::milliseconds timeout) {
  auto c = find_comm(comm);
  if (!c) return fail(HCCL_E_PARA, "hccl_set_timeout: comm " + hex(comm) + " is not a live communicator");
  c->transport->set_timeout(timeout);
  return HCCL_SUCCESS;
}

extern "C" HcclResult HcclGetRootInfo(HcclRootInfo* rootInfo) {
  if (!rootInfo) return fail(HCCL_E_PTR, "HcclGetRootInfo: rootInfo is null");
  std::memset(rootInfo->internal, 0, sizeof rootInfo->internal);
  std::random_device rd;
  std::snprintf(rootInfo->internal, sizeof rootInfo->internal, "%s %ld %u%u", kRootMagic, static_cast<long>(getpid()),
                rd(), rd());
  return HCCL_SUCCESS;
}

extern "C" HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank,
                                                 const HcclCommConfig* config, HcclComm* comm) {
  (void)config;  // buffer size and determinism do not apply: every reduction is deterministic here
  const char* fn = "HcclCommInitRootInfo";
  if (!rootInfo || !comm) return fail(HCCL_E_PTR, std::string(fn) + ": rootInfo and comm must not be null");
  if (check_runtime(fn, current_device()) != ACL_SUCCESS) return HCCL_E_RUNTIME;  // Note [Runtime lifecycle]
  if (std::strncmp(rootInfo->internal, kRootMagic, sizeof kRootMagic - 1) != 0)
    return fail(HCCL_E_PARA, std::string(fn) + ": rootInfo was not made by HcclGetRootInfo");
  if (nRanks == 0 || rank >= nRanks)
    return fail(HCCL_E_PARA, std::string(fn) + ": rank " + std::to_string(rank) + " is not below nRanks " +
                                 std::to_string(nRanks));
  auto c = std::make_shared<CommImpl>();
  if (nRanks == 1) {
    c->transport = comm::make_local_group(1)[0];
  } else {
    // Several processes: one rank each, over MPI; every process of the mpirun job takes part.
    if (!comm::mpi::built())
      return fail(HCCL_E_NOT_SUPPORT, std::string(fn) + ": " + std::to_string(nRanks) +
                                          " ranks need MPI, and this ember was built without it (EMBER_WITH_MPI)");
    if (!comm::mpi::launched())
      return fail(HCCL_E_PARA, std::string(fn) + ": " + std::to_string(nRanks) +
                                   " ranks, but this process was not started by mpirun (one rank per process)");
    try {
      c->transport = comm::mpi::world_group(static_cast<int>(rank), fn);
    } catch (const Error& e) {
      return fail(HCCL_E_PARA, e.what());
    }
    // Every rank checks that all passed the same nRanks and rootInfo.
    struct Id {
      uint64_t n;
      char root[64];
    } mine{nRanks, {}};
    std::memcpy(mine.root, rootInfo->internal, sizeof mine.root);
    std::vector<Id> ids(static_cast<size_t>(c->transport->size()));
    comm::Call k;
    k.kind = comm::Kind::AllGather;
    k.name = fn;
    k.elem = comm::Elem::U8;
    k.count = sizeof(Id);
    k.send = &mine;
    k.recv = ids.data();
    c->transport->set_timeout(exec_timeout());
    try {
      c->transport->run(k);
    } catch (const Error& e) {
      return fail(HCCL_E_PARA, e.what());
    }
    for (size_t p = 0; p < ids.size(); ++p) {
      if (ids[p].n != nRanks)
        return fail(HCCL_E_PARA, std::string(fn) + ": the processes passed different nRanks: " +
                                     std::to_string(ids[p].n) + " at rank " + std::to_string(p) + ", " +
                                     std::to_string(nRanks) + " here");
      if (std::memcmp(ids[p].root, mine.root, sizeof mine.root) != 0)
        return fail(HCCL_E_PARA, std::string(fn) + ": rank " + std::to_string(p) +
                                     " passed a different rootInfo (each process must use the one HcclGetRootInfo "
                                     "made on the root, e.g. sent with MPI_Bcast)");
    }
    if (static_cast<uint32_t>(c->transport->size()) != nRanks)
      return fail(HCCL_E_PARA, std::string(fn) + ": nRanks " + std::to_string(nRanks) + ", but the MPI job has " +
                                   std::to_string(c->transport->size()) + " processes");
  }
  c->transport->set_timeout(exec_timeout());
  c->device = current_device();
  *comm = add_comm(std::move(c));
  return HCCL_SUCCESS;
}

extern "C" HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank,
                                           HcclComm* comm) {
  return HcclCommInitRootInfoConfig(nRanks, rootInfo, rank, nullptr, comm);
}

extern "C" HcclResult HcclCommInitAll(uint32_t ndev, int32_t* devices, HcclComm* comms) {
  if (!devices || !comms) return fail(HCCL_E_PTR, "HcclCommInitAll: devices and comms must not be null");
  if (ndev == 0) return fail(HCCL_E_PARA, "HcclCommInitAll: ndev is 0");
  const int count = device_count();
  std::set<int32_t> seen;
  for (uint32_t i = 0; i < ndev; ++i) {
    if (devices[i] < 0 || devices[i] >= count)
      return fail(HCCL_E_PARA, "HcclCommInitAll: devices[" + std::to_string(i) + "] = " + std::to_string(devices[i]) +
                                   " is not a device (npu:0 .. npu:" + std::to_string(count - 1) + "; " +
                                   devices_note() + ")");
    if (!seen.insert(devices[i]).second)
      return fail(HCCL_E_PARA, "HcclCommInitAll: device " + std::to_string(devices[i]) +
                                   " is listed twice (one rank per device)");
  }
  auto group = comm::make_local_group(static_cast<int>(ndev));
  const auto timeout = exec_timeout();
  for (uint32_t i = 0; i < ndev; ++i) {
    auto c = std::make_shared<CommImpl>();
    c->transport = group[i];
    c->transport->set_timeout(timeout);
    c->device = devices[i];
    comms[i] = add_comm(std::move(c));
  }
  return HCCL_SUCCESS;
}

extern "C" HcclResult HcclCommDestroy(HcclComm comm) {
  if (!comm) return fail(HCCL_E_PTR, "HcclCommDestroy: comm is null");
  std::lock_guard<std::mutex> g(g_comms_mu);
  if (!live_comms().erase(comm))
    return fail(HCCL_E_PARA, "HcclCommDestroy: comm " + hex(comm) + " is not a live communicator");
  return HCCL_SUCCESS;  // collectives still queued hold what they use
}

extern "C" HcclResult HcclGetRankSize(HcclComm comm, uint32_t* rankSize) {
  if (!comm || !rankSize) return fail(HCCL_E_PTR, "HcclGetRankSize: comm and rankSize must not be null");
  auto c = find_comm(comm);
  if (!c) return fail(HCCL_E_PARA, "HcclGetRankSize: comm " + hex(comm) + " is not a live communicator");
  *rankSize = static_cast<uint32_t>(c->transport->size());
  return HCCL_SUCCESS;
}

extern "C" HcclResult HcclGetRankId(HcclComm comm, uint32_t* rank) {
  if (!comm || !rank) return fail(HCCL_E_PTR, "HcclGetRankId: comm and rank must not be null");
  auto c = find_comm(comm);
  if (!c) return fail(HCCL_E_PARA, "HcclGetRankId: comm " + hex(comm) + " is not a live communicator");
  *rank = static_cast<uint32_t>(c->transport->rank());
  return HCCL_SUCCESS;
}

extern "C" HcclResult HcclGetCommName(HcclComm comm, char* commName) {
  if (!comm || !commName) return fail(HCCL_E_PTR, "HcclGetCommName: comm and commName must not be null");
  auto c = find_comm(comm);
  if (!c) return fail(HCCL_E_PARA, "HcclGetCommName: comm " + hex(comm) + " is not a live communicator");
  std::snprintf(commName, COMM_NAME_MAX_LENGTH, "%s", c->name.c_str());
  return HCCL_SUCCESS;
}

extern "C" HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult* asyncError) {
  if (!comm || !asyncError) return fail(HCCL_E_PTR, "HcclGetCommAsyncError: comm and asyncError must not be null");
  auto c = find_comm(comm);
  if (!c) return fail(HCCL_E_PARA, "HcclGetCommAsyncError: comm " + hex(comm) + " is not a live communicator");
  *asyncError = static_cast<HcclResult>(c->async_error.load());
  return HCCL_SUCCESS;
}

extern "C" const char* HcclGetErrorString(HcclResult code) {
  switch (code) {
    case HCCL_SUCCESS: return "success";
    case HCCL_E_PARA: return "parameter error";
    case HCCL_E_PTR: return "empty pointer";
    case HCCL_E_MEMORY: return "memory error";
    case HCCL_E_INTERNAL: return "internal error";
    case HCCL_E_NOT_SUPPORT: return "not support feature";
    case HCCL_E_NOT_FOUND: return "not found specific resource";
    case HCCL_E_UNAVAIL: return "resource unavailable";
    case HCCL_E_SYSCALL: return "call system interface error";
    case HCCL_E_TIMEOUT: return "timeout";
    case HCCL_E_OPEN_FILE_FAILURE: return "open file fail";
    case HCCL_E_TCP_CONNECT: return "tcp connect fail";
    case HCCL_E_ROCE_CONNECT: return "roce connect fail";
    case HCCL_E_TCP_TRANSFER: return "tcp transfer fail";
    case HCCL_E_ROCE_TRANSFER: return "roce transfer fail";
    case HCCL_E_RUNTIME: return "call runtime api fail";
    case HCCL_E_DRV: return "call driver api fail";
    case HCCL_E_PROFILING: return "call profiling api fail";
    case HCCL_E_CCE: return "call cce api fail";
    case HCCL_E_NETWORK: return "call network api fail";
    case HCCL_E_AGAIN: return "try again";
    case HCCL_E_REMOTE: return "error cqe";
    default: return "unknown HcclResult";
  }
}

extern "C" HcclResult HcclAllReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType,
                                    HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  Launch l{"HcclAllReduce", nullptr, {}, nullptr, {}};
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
  Launch l{"HcclBroadcast", nullptr, {}, nullptr, {}};
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
  Launch l{"HcclAllGather", nullptr, {}, nullptr, {}};
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
  Launch l{"HcclReduceScatter", nullptr, {}, nullptr, {}};
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
  Launch l{"HcclSend", nullptr, {}, nullptr, {}};
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
  Launch l{"HcclRecv", nullptr, {}, nullptr, {}};
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

extern "C" HcclResult HcclBarrier(HcclComm comm, aclrtStream stream) {
  Launch l{"HcclBarrier", nullptr, {}, nullptr, {}};
  l.call.kind = comm::Kind::Barrier;
  EMBER_HCCL_TRY(l.begin(comm, stream));
  return l.enqueue();
}

}  // namespace npu
}  // namespace ember
