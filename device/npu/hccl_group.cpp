// The emulated HCCL's groups (HcclGroupStart/End, HcclBatchSendRecv) and the enqueueing of every
// call (Launch::enqueue): a call made while a group of its thread is open waits for the group's
// end, where each stream gets one task running the group's sends and receives side by side.
#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>

#include "ember/device/npu/hccl_launch.h"

namespace ember {
namespace npu {
namespace detail {

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
static void run_group(const std::vector<std::shared_ptr<Launch>>& ops) {
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

HcclResult disjoint(const Launch& l, const void* a, uint64_t a_elems, const void* b, uint64_t b_elems) {
  const size_t es = comm::elem_size(l.call.elem);
  const char *pa = static_cast<const char*>(a), *pb = static_cast<const char*>(b);
  if (!pa || !pb || !a_elems || !b_elems) return HCCL_SUCCESS;
  if (pa < pb + b_elems * es && pb < pa + a_elems * es)
    return fail(HCCL_E_PARA, std::string(l.fn) + ": sendBuf and recvBuf overlap (" + hex(a) + " and " + hex(b) + ")");
  return HCCL_SUCCESS;
}

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

}  // namespace npu
}  // namespace ember
