// The emulated NPU's HCCL (CANN's hccl/hccl.h): the collectives, enqueued on streams like kernels
// (the communicators over device/comm's transports are in hccl_comm.cpp).
//
// A call checks its arguments as phase 1 of an op does (device memory of the communicator's
// device, ranges inside one live allocation, counts that fit, a stream of that device), then
// enqueues a task that runs the collective when the stream reaches it. The task holds the
// communicator's transport, so HcclCommDestroy with work in flight is safe; a collective that fails
// on its stream (calls that differ between ranks, a timeout) faults the stream, named at the next
// synchronize, and is remembered for HcclGetCommAsyncError.
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ember/device/npu/hccl_launch.h"

namespace ember {
namespace npu {

using namespace detail;

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

extern "C" HcclResult HcclBarrier(HcclComm comm, aclrtStream stream) {
  Launch l{"HcclBarrier", nullptr, {}, nullptr, {}, nullptr};
  l.call.kind = comm::Kind::Barrier;
  EMBER_HCCL_TRY(l.begin(comm, stream));
  return l.enqueue();
}

}  // namespace npu
}  // namespace ember
