// ember (internal to the library): collectives on raw host memory between the ranks of a group,
// the engine under the emulated HCCL (device/npu/hccl.cpp) and distributed/'s process groups.
//
// A Transport is one rank's end of a group. Two kinds exist:
//  - a local group: the ranks are threads of this process (HCCL's HcclCommInitAll over several
//    emulated NPUs); they meet in shared memory and each rank computes its share of the result;
//  - an MPI group: one rank per process, bytes carried by MPI (comm/mpi.cpp).
// Every call is matched with the same call on every other rank, in order, as in NCCL/HCCL. Before
// any byte moves, the ranks compare what each was asked to do (kind, count, element type,
// reduction, root): a mismatch fails on every rank with one message listing each rank's call,
// instead of a hang or a silently wrong result. Every call has a deadline: a rank that never
// comes fails the others with an error naming the collective and the missing ranks. Failures
// throw ember::Error; after a timeout the group is broken and every later call fails at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ember {
namespace comm {

// Element types (HCCL's list).
enum class Elem : uint8_t { I8, U8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64 };
size_t elem_size(Elem e);
const char* elem_name(Elem e);
enum class RedOp : uint8_t { Sum, Prod, Max, Min };
const char* redop_name(RedOp op);

// dst[i] = op over k of srcs[k][i], k in order, for i in [0, n). For fp16/bf16 the reduction runs
// in fp32 and rounds once (to nearest even); integers wrap. dst may be one of srcs (element i is
// read from every source before it is written).
void reduce(Elem e, RedOp op, void* dst, const void* const* srcs, int nsrc, size_t n);

enum class Kind : uint8_t {
  AllReduce, Broadcast, AllGather, ReduceScatter, Send, Recv, Barrier, Reduce, Scatter, AllToAll, AllToAllV
};
const char* kind_name(Kind k);

// One call on one rank. count is per rank: AllReduce/Broadcast/Reduce/Send/Recv the buffer's
// elements, AllGather the elements each rank sends (recv holds size * count), ReduceScatter and
// Scatter the elements each rank receives (the send buffer, the root's for Scatter, holds
// size * count), AllToAll the elements each rank sends to each other (both buffers hold
// size * count); AllToAllV takes per-rank counts and offsets instead. peer: Broadcast's, Reduce's
// and Scatter's root, Send's destination, Recv's source. Buffers a rank does not use (Reduce's recv
// and Scatter's send off the root) may be null.
struct Call {
  Kind kind = Kind::Barrier;
  const char* name = "";  // for messages: "HcclAllReduce", "all_reduce", ...
  const void* send = nullptr;
  void* recv = nullptr;  // Broadcast: the buffer (root's is read, the others written)
  uint64_t count = 0;
  Elem elem = Elem::F32;
  RedOp op = RedOp::Sum;
  int peer = 0;
  // AllToAllV: entry k is the elements sent to (received from) rank k and their offset in
  // elements from send (recv); size() entries each, valid for the call.
  const uint64_t* send_counts = nullptr;
  const uint64_t* send_displs = nullptr;
  const uint64_t* recv_counts = nullptr;
  const uint64_t* recv_displs = nullptr;
};
// "HcclAllReduce(count 5, fp32, sum)" and the like.
std::string describe(const Call& c);
// "1.5 s", for timeout messages.
std::string format_seconds(std::chrono::milliseconds t);

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Runs c with the matching calls of the other ranks; returns when this rank's part is done
  // (its recv written, its send no longer read). Throws ember::Error naming c on a mismatch,
  // timeout or broken group.
  virtual void run(const Call& c) = 0;
  // Why the group is broken ("" while it is not): the first timeout or transport failure.
  virtual std::string broken() const = 0;
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }
  std::chrono::milliseconds timeout() const { return timeout_; }

 protected:
  std::chrono::milliseconds timeout_{std::chrono::minutes(30)};
};

// A group of n ranks inside this process: element k of the result is rank k's endpoint. Each
// endpoint is used by one thread at a time (its rank's stream worker).
std::vector<std::shared_ptr<Transport>> make_local_group(int n);

// Checks the calls of all ranks against each other: "" when they agree, else a message naming
// the collective with every rank's call. Send/Recv are checked pairwise by the caller; so are
// AllToAllV's counts, here when the calls carry them (each rank's sends to k must be what k
// expects from it).
std::string mismatch(const std::vector<Call>& calls);

}  // namespace comm
}  // namespace ember
