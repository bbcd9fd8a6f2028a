// The MPI group: device/comm's Transport between processes. Every call first exchanges what each
// rank was asked to do, with a nonblocking MPI_Iallgather polled until done or until the deadline:
// a mismatch fails on every rank with every rank's call named, and a peer that never comes, or
// that has exited, ends in an error naming the collective, never a hang. Then the data moves with
// MPI's collective on the caller's buffers (MPI's set-up: mpi_init.cpp).
#include "ember/device/comm/mpi.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "ember/core/error.h"

#include "ember/device/comm/mpi_detail.h"

namespace ember {
namespace comm {
namespace mpi {

bool launched() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

#ifndef EMBER_HAVE_MPI

bool built() { return false; }
[[noreturn]] static void no_mpi() {
  throw NotImplementedError(
      "ember was built without MPI (EMBER_WITH_MPI=OFF, or no libopenmpi-dev when it was configured): "
      "install it (scripts/deps.sh) and build again to run on several processes");
}
void ensure_init() { no_mpi(); }
int world_rank() { return 0; }
int world_size() { return 1; }
int local_rank() { return 0; }
std::shared_ptr<Transport> world_group(int, const char*) { no_mpi(); }

#else

bool built() { return true; }

namespace {

using detail::datatype;
using detail::mpi_error;
using detail::mpi_op;
using detail::Serial;
using Clock = std::chrono::steady_clock;

// What each rank was asked to do, exchanged before any data moves.
struct Header {
  uint64_t count;
  int32_t peer;
  uint8_t kind, elem, op, pad;
  char name[40];  // the call's name as this rank made it ("HcclAllReduce"), for messages
};

constexpr int kTagHeader = 7101, kTagData = 7102, kTagAck = 7103;
constexpr uint64_t kChunk = uint64_t(1) << 30;  // elements (bytes for send/recv) per MPI call: counts are int

class MpiEndpoint final : public Transport {
 public:
  MpiEndpoint(MPI_Comm comm, std::string tag) : comm_(comm), tag_(std::move(tag)) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiEndpoint() override {
    // MPI_Comm_free is collective in effect: skipped once broken (a peer may be gone) or after
    // MPI_Finalize (a group that outlived the program's main).
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && broken_.empty()) {
      Serial s;
      MPI_Comm_free(&comm_);
    }
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string broken() const override {
    std::lock_guard<std::mutex> lk(mu_);
    return broken_;
  }

  void run(const Call& c) override {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (!broken_.empty()) throw Error(where(c) + ": the communicator is broken: " + broken_);
    }
    const auto deadline = Clock::now() + timeout_;
    if (c.kind == Kind::Send) return send(c, deadline);
    if (c.kind == Kind::Recv) return recv(c, deadline);
    agree(c, deadline);
    // Every rank has now entered this same collective: the data moves with MPI's blocking
    // collectives, whose tuned algorithms are about twice as fast as the nonblocking ones (libnbc)
    // on large buffers (bench/allreduce.cpp). A rank that dies from here on ends the job (mpirun).
    const size_t es = elem_size(c.elem);
    const MPI_Datatype dt = datatype(c.elem);
    switch (c.kind) {
      case Kind::AllReduce:
        for (uint64_t lo = 0; lo < c.count; lo += kChunk) {
          const int n = static_cast<int>(std::min(kChunk, c.count - lo));
          char* out = static_cast<char*>(c.recv) + lo * es;
          const void* in = c.send == c.recv ? MPI_IN_PLACE : static_cast<const char*>(c.send) + lo * es;
          check(c, call([&] { return MPI_Allreduce(in, out, n, dt, mpi_op(c.elem, c.op), comm_); }));
        }
        return;
      case Kind::Broadcast:
        for (uint64_t lo = 0; lo < c.count; lo += kChunk) {
          const int n = static_cast<int>(std::min(kChunk, c.count - lo));
          check(c, call([&] { return MPI_Bcast(static_cast<char*>(c.recv) + lo * es, n, dt, c.peer, comm_); }));
        }
        return;
      case Kind::AllGather: {
        if (c.count > kChunk) too_large(c);
        const int n = static_cast<int>(c.count);
        const void* in = c.send == static_cast<char*>(c.recv) + static_cast<size_t>(rank_) * c.count * es
                             ? MPI_IN_PLACE
                             : c.send;
        check(c, call([&] { return MPI_Allgather(in, n, dt, c.recv, n, dt, comm_); }));
        return;
      }
      case Kind::ReduceScatter: {
        if (c.count > kChunk) too_large(c);
        const int n = static_cast<int>(c.count);
        // An output inside the input is staged: MPI's in-place form means something else.
        const char* in = static_cast<const char*>(c.send);
        const char* out = static_cast<const char*>(c.recv);
        const size_t in_bytes = static_cast<size_t>(size_) * c.count * es;
        std::vector<char> staged;
        if (out < in + in_bytes && in < out + c.count * es) {
          staged.assign(in, in + in_bytes);
          in = staged.data();
        }
        check(c, call([&] { return MPI_Reduce_scatter_block(in, c.recv, n, dt, mpi_op(c.elem, c.op), comm_); }));
        return;
      }
      case Kind::Reduce:
        for (uint64_t lo = 0; lo < c.count; lo += kChunk) {
          const int n = static_cast<int>(std::min(kChunk, c.count - lo));
          const bool root = rank_ == c.peer;
          char* out = root ? static_cast<char*>(c.recv) + lo * es : nullptr;
          const void* in = root && c.send == c.recv ? MPI_IN_PLACE : static_cast<const char*>(c.send) + lo * es;
          check(c, call([&] { return MPI_Reduce(in, out, n, dt, mpi_op(c.elem, c.op), c.peer, comm_); }));
        }
        return;
      case Kind::Scatter: {
        if (c.count > kChunk) too_large(c);
        const int n = static_cast<int>(c.count);
        const bool in_place = rank_ == c.peer && static_cast<const char*>(c.send) + static_cast<size_t>(rank_) * c.count * es ==
                                                     static_cast<const char*>(c.recv);
        check(c, call([&] { return MPI_Scatter(c.send, n, dt, in_place ? MPI_IN_PLACE : c.recv, n, dt, c.peer, comm_); }));
        return;
      }
      case Kind::AllToAll: {
        if (c.count > kChunk) too_large(c);
        const int n = static_cast<int>(c.count);
        check(c, call([&] { return MPI_Alltoall(c.send, n, dt, c.recv, n, dt, comm_); }));
        return;
      }
      case Kind::AllToAllV: return all_to_all_v(c, deadline);
      case Kind::Barrier: return;  // the exchange of headers was the barrier
      case Kind::Send:
      case Kind::Recv: return;
    }
  }

 private:
  template <class F>
  static int call(F f) {
    Serial s;
    return f();
  }
  std::string where(const Call& c) const {
    return describe(c) + " on rank " + std::to_string(rank_) + " of " + std::to_string(size_) + " (MPI)";
  }
  void check(const Call& c, int code) {
    if (code != MPI_SUCCESS) fail(c, "MPI failed: " + mpi_error(code));
  }
  [[noreturn]] void fail(const Call& c, const std::string& why) {
    std::string msg = where(c) + ": " + why;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (broken_.empty()) broken_ = msg;
    }
    throw Error(msg);
  }
  [[noreturn]] void too_large(const Call& c) {
    throw NotImplementedError(where(c) + ": counts above 2^30 elements per rank are not supported over MPI");
  }

  // Polls r until it completes. Spins (MPI makes progress inside MPI_Test) and, after a second,
  // naps between polls; past the deadline the group is broken (an MPI collective cannot be
  // cancelled, so it cannot be used again).
  void wait(const Call& c, MPI_Request* r, Clock::time_point deadline) {
    const auto start = Clock::now();
    for (uint64_t polls = 0;; ++polls) {
      int done = 0;
      check(c, call([&] { return MPI_Test(r, &done, MPI_STATUS_IGNORE); }));
      if (done) return;
      if ((polls & 255) == 255) {
        const auto now = Clock::now();
        if (now >= deadline)
          fail(c, "timed out after " + format_seconds(timeout_) +
                      " waiting for the other ranks (a rank that exited, hangs, or makes different calls)");
        if (now - start > std::chrono::seconds(1)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  }

  // AllToAllV: each rank learns what the others send it and compares with what it expects; all
  // fail together if any pair disagrees (an all-reduce of the verdicts), else the data moves.
  void all_to_all_v(const Call& c, Clock::time_point deadline) {
    const size_t n = static_cast<size_t>(size_);
    std::vector<uint64_t> incoming(n);
    MPI_Request r;
    check(c, call([&] {
      return MPI_Ialltoall(c.send_counts, 1, MPI_UINT64_T, incoming.data(), 1, MPI_UINT64_T, comm_, &r);
    }));
    wait(c, &r, deadline);
    std::string bad;
    for (size_t k = 0; k < n && bad.empty(); ++k)
      if (incoming[k] != c.recv_counts[k])
        bad = "rank " + std::to_string(k) + " sends " + std::to_string(incoming[k]) + " elements to rank " +
              std::to_string(rank_) + ", which expects " + std::to_string(c.recv_counts[k]) + " from it";
    int mine = bad.empty() ? 0 : 1, any = 0;
    check(c, call([&] { return MPI_Iallreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm_, &r); }));
    wait(c, &r, deadline);
    if (any)
      throw Error(where(c) + ": the ranks' counts disagree" + (bad.empty() ? std::string(" (on another rank)") : ": " + bad) +
                  " (sendCounts[j] of rank i must equal recvCounts[i] of rank j)");
    std::vector<int> sc(n), sd(n), rc(n), rd(n);
    auto to_int = [&](uint64_t v) {
      if (v > static_cast<uint64_t>(INT32_MAX)) too_large(c);
      return static_cast<int>(v);
    };
    for (size_t k = 0; k < n; ++k) {
      sc[k] = to_int(c.send_counts[k]);
      sd[k] = to_int(c.send_displs[k]);
      rc[k] = to_int(c.recv_counts[k]);
      rd[k] = to_int(c.recv_displs[k]);
    }
    const MPI_Datatype dt = datatype(c.elem);
    check(c, call([&] {
      return MPI_Alltoallv(c.send, sc.data(), sd.data(), dt, c.recv, rc.data(), rd.data(), dt, comm_);
    }));
  }

  // Every rank's call, before any data moves: all fail together on a mismatch.
  void agree(const Call& c, Clock::time_point deadline) {
    Header mine{c.count, c.peer, static_cast<uint8_t>(c.kind), static_cast<uint8_t>(c.elem),
                static_cast<uint8_t>(c.op), 0, {}};
    std::strncpy(mine.name, c.name, sizeof mine.name - 1);
    std::vector<Header> all(static_cast<size_t>(size_));
    MPI_Request r;
    check(c, call([&] {
      return MPI_Iallgather(&mine, sizeof(Header), MPI_BYTE, all.data(), sizeof(Header), MPI_BYTE, comm_, &r);
    }));
    wait(c, &r, deadline);
    std::vector<Call> calls(all.size());
    for (size_t k = 0; k < all.size(); ++k) {
      all[k].name[sizeof all[k].name - 1] = '\0';
      calls[k].kind = static_cast<Kind>(all[k].kind);
      calls[k].name = all[k].name;  // each rank's own name for its call
      calls[k].count = all[k].count;
      calls[k].elem = static_cast<Elem>(all[k].elem);
      calls[k].op = static_cast<RedOp>(all[k].op);
      calls[k].peer = all[k].peer;
    }
    std::string bad = mismatch(calls);
    if (!bad.empty()) throw Error(where(c) + ": " + bad);
  }

  // Point to point: a header, the bytes, and an acknowledgement that says whether the receiver
  // expected them (both sides fail on a mismatch, neither waits for ever).
  void send(const Call& c, Clock::time_point deadline) {
    Header h{c.count, rank_, static_cast<uint8_t>(c.kind), static_cast<uint8_t>(c.elem), 0, 0, {}};
    const uint64_t bytes = c.count * elem_size(c.elem);
    std::vector<MPI_Request> reqs(1);
    int ack = 0;
    check(c, call([&] { return MPI_Isend(&h, sizeof h, MPI_BYTE, c.peer, kTagHeader, comm_, &reqs[0]); }));
    for (uint64_t lo = 0; lo < bytes; lo += kChunk) {
      reqs.emplace_back();
      const int n = static_cast<int>(std::min(kChunk, bytes - lo));
      check(c, call([&] {
        return MPI_Isend(static_cast<const char*>(c.send) + lo, n, MPI_BYTE, c.peer, kTagData, comm_, &reqs.back());
      }));
    }
    reqs.emplace_back();
    check(c, call([&] { return MPI_Irecv(&ack, 1, MPI_INT, c.peer, kTagAck, comm_, &reqs.back()); }));
    for (MPI_Request& r : reqs) wait(c, &r, deadline);
    if (ack != 1)
      throw Error(where(c) + ": rank " + std::to_string(c.peer) + " expected a different message (its " +
                  "HcclRecv/recv has another count or type)");
  }

  void recv(const Call& c, Clock::time_point deadline) {
    Header h{};
    MPI_Request r;
    check(c, call([&] { return MPI_Irecv(&h, sizeof h, MPI_BYTE, c.peer, kTagHeader, comm_, &r); }));
    wait(c, &r, deadline);
    const bool ok = h.count == c.count && h.elem == static_cast<uint8_t>(c.elem);
    const uint64_t bytes = h.count * elem_size(static_cast<Elem>(h.elem));
    std::vector<char> sink(ok ? 0 : std::min<uint64_t>(bytes, kChunk));
    for (uint64_t lo = 0; lo < bytes; lo += kChunk) {  // (a mismatched message is drained)
      const int n = static_cast<int>(std::min(kChunk, bytes - lo));
      char* dst = ok ? static_cast<char*>(c.recv) + lo : sink.data();
      check(c, call([&] { return MPI_Irecv(dst, n, MPI_BYTE, c.peer, kTagData, comm_, &r); }));
      wait(c, &r, deadline);
    }
    int ack = ok ? 1 : 0;
    check(c, call([&] { return MPI_Isend(&ack, 1, MPI_INT, c.peer, kTagAck, comm_, &r); }));
    wait(c, &r, deadline);
    if (!ok) {
      Call theirs = c;
      theirs.kind = Kind::Send;
      theirs.count = h.count;
      theirs.elem = static_cast<Elem>(h.elem);
      theirs.peer = rank_;
      throw Error(where(c) + ": the send and the recv differ: rank " + std::to_string(c.peer) + " sent " +
                  describe(theirs));
    }
  }

  MPI_Comm comm_;
  std::string tag_;
  int rank_ = 0, size_ = 1;
  mutable std::mutex mu_;
  std::string broken_;
};

}  // namespace

std::shared_ptr<Transport> world_group(int key, const char* tag) {
  ensure_init();
  const int me = world_rank(), n = world_size();
  if (key < 0) key = me;
  // Every process learns every key first, so a bad one fails everywhere with the same message.
  std::vector<int> keys(static_cast<size_t>(n));
  {
    Serial s;
    MPI_Allgather(&key, 1, MPI_INT, keys.data(), 1, MPI_INT, MPI_COMM_WORLD);
  }
  std::vector<int> seen(static_cast<size_t>(n), -1);
  for (int p = 0; p < n; ++p) {
    const int k = keys[static_cast<size_t>(p)];
    if (k < 0 || k >= n)
      throw ValueError(std::string(tag) + ": process " + std::to_string(p) + " asked for rank " + std::to_string(k) +
                       ", but the MPI job has " + std::to_string(n) + " processes (ranks 0 .. " +
                       std::to_string(n - 1) + "; every process of the job takes part)");
    if (seen[static_cast<size_t>(k)] >= 0)
      throw ValueError(std::string(tag) + ": processes " + std::to_string(seen[static_cast<size_t>(k)]) + " and " +
                       std::to_string(p) + " both asked for rank " + std::to_string(k));
    seen[static_cast<size_t>(k)] = p;
  }
  MPI_Comm comm;
  {
    Serial s;
    MPI_Comm_split(MPI_COMM_WORLD, 0, key, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  }
  return std::make_shared<MpiEndpoint>(comm, tag);
}

#endif  // EMBER_HAVE_MPI

}  // namespace mpi
}  // namespace comm
}  // namespace ember
