// HCCL between processes, as a CANN program does it: MPI_Init, HcclGetRootInfo on rank 0 sent to
// the others with MPI_Bcast, HcclCommInitRootInfo, then collectives on each process's emulated
// NPU. Run under mpirun with 2 (or more) processes:
//   hccl_ranks all         every collective, type, reduction and size 0, 1, odd, 64 MiB, checked
//                          against values computed here (Reduce, Scatter, AlltoAll(V) and a
//                          grouped exchange too); calls that differ between ranks; misuse
//   hccl_ranks early-exit  rank 1 leaves at once: rank 0's all-reduce fails within
//                          HCCL_EXEC_TIMEOUT with a message naming it, instead of hanging
// Prints "ok" on every rank and exits 0 when everything holds.
#define OMPI_SKIP_MPICXX 1  // the C API only
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hccl_test_util.h"
#include "mpi/mpi_check.h"

using namespace hccl_test;

namespace {

int& g_rank = mpi_check::rank;
int& g_failures = mpi_check::failures;
int g_size = 1;

std::string recent() {
  const char* m = aclGetRecentErrMsg();
  return m ? m : "";
}

#define OK(call) EXPECT((call) == 0, "%s", recent().c_str())

struct Dev {
  void* p = nullptr;
  size_t bytes;
  explicit Dev(size_t n) : bytes(n) { OK(aclrtMalloc(&p, n ? n : 1, ACL_MEM_MALLOC_HUGE_FIRST)); }
  ~Dev() { aclrtFree(p); }
  void put(const std::vector<char>& h) {
    if (!h.empty()) OK(aclrtMemcpy(p, bytes, h.data(), h.size(), ACL_MEMCPY_HOST_TO_DEVICE));
  }
  std::vector<char> get() const {
    std::vector<char> h(bytes);
    if (bytes) OK(aclrtMemcpy(h.data(), bytes, p, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    return h;
  }
};

HcclComm make_comm() {
  HcclRootInfo info;
  if (g_rank == 0) OK(HcclGetRootInfo(&info));
  MPI_Bcast(&info, sizeof info, MPI_BYTE, 0, MPI_COMM_WORLD);
  HcclComm comm = nullptr;
  OK(HcclCommInitRootInfo(static_cast<uint32_t>(g_size), &info, static_cast<uint32_t>(g_rank), &comm));
  return comm;
}

// Reduce (to the last rank), Scatter (from rank 0), AlltoAll, AlltoAllV (rank i sends i + j + 1
// elements to rank j) and a grouped ring exchange where every rank sends first.
void rooted_and_all_to_all(HcclComm comm, aclrtStream stream) {
  const int n_ranks = g_size;
  const size_t nr = static_cast<size_t>(n_ranks), me = static_cast<size_t>(g_rank);
  for (const TypeInfo& t : kTypes) {
    const size_t n = 7, b = n * t.size;
    {  // Reduce (sum) to the last rank; the others pass no recvBuf
      Dev s(b), d(b);
      s.put(host_values(t, g_rank, n));
      const bool root = g_rank == n_ranks - 1;
      OK(HcclReduce(s.p, root ? d.p : nullptr, n, t.type, HCCL_REDUCE_SUM, static_cast<uint32_t>(n_ranks - 1), comm, stream));
      OK(aclrtSynchronizeStream(stream));
      if (root) {
        auto h = d.get();
        for (size_t i = 0; i < n; ++i) {
          double want = 0;
          for (int r = 0; r < n_ranks; ++r) want += value(t, r, i);
          EXPECT(decode(t.type, h.data() + i * t.size) == want, "reduce %s i %zu", t.name, i);
        }
      }
    }
    {  // Scatter from rank 0: block r of rank 0's values
      Dev s(b * nr), d(b);
      if (g_rank == 0) s.put(host_values(t, 0, n * nr));
      OK(HcclScatter(g_rank == 0 ? s.p : nullptr, d.p, n, t.type, 0, comm, stream));
      OK(aclrtSynchronizeStream(stream));
      auto all = host_values(t, 0, n * nr);
      EXPECT(d.get() == std::vector<char>(all.begin() + static_cast<long>(me * b), all.begin() + static_cast<long>((me + 1) * b)),
             "scatter %s", t.name);
    }
    {  // AlltoAll: block j of rank i lands as block i of rank j
      Dev s(b * nr), d(b * nr);
      s.put(host_values(t, g_rank, n * nr));
      OK(HcclAlltoAll(s.p, n, t.type, d.p, n, t.type, comm, stream));
      OK(aclrtSynchronizeStream(stream));
      std::vector<char> want;
      for (int r = 0; r < n_ranks; ++r) {
        auto theirs = host_values(t, r, n * nr);
        want.insert(want.end(), theirs.begin() + static_cast<long>(me * b), theirs.begin() + static_cast<long>((me + 1) * b));
      }
      EXPECT(d.get() == want, "all-to-all %s", t.name);
    }
  }
  {  // AlltoAllV in fp32: rank i sends i + j + 1 elements (its values from offset 4 j) to rank j
    const TypeInfo& f32 = kTypes[4];
    std::vector<uint64_t> sc(nr), sd(nr), rc(nr), rd(nr);
    uint64_t at = 0;
    for (size_t j = 0; j < nr; ++j) {
      sc[j] = me + j + 1;
      sd[j] = 4 * j;
      rc[j] = j + me + 1;
      rd[j] = at;
      at += rc[j];
    }
    Dev s(4 * nr * 4 + 64), d(at * 4);
    s.put(host_values(f32, g_rank, 4 * nr + 16));
    OK(HcclAlltoAllV(s.p, sc.data(), sd.data(), HCCL_DATA_TYPE_FP32, d.p, rc.data(), rd.data(), HCCL_DATA_TYPE_FP32,
                     comm, stream));
    OK(aclrtSynchronizeStream(stream));
    std::vector<char> want;
    for (size_t i = 0; i < nr; ++i) {
      auto theirs = host_values(f32, static_cast<int>(i), 4 * nr + 16);
      want.insert(want.end(), theirs.begin() + static_cast<long>(4 * me * 4),
                  theirs.begin() + static_cast<long>((4 * me + i + me + 1) * 4));
    }
    EXPECT(d.get() == want, "all-to-all-v");
  }
  {  // a grouped ring exchange: every rank sends before it receives
    const TypeInfo& f32 = kTypes[4];
    const int next = (g_rank + 1) % n_ranks, prev = (g_rank + n_ranks - 1) % n_ranks;
    Dev out(40), in(40);
    out.put(host_values(f32, g_rank, 10));
    OK(HcclGroupStart());
    OK(HcclSend(out.p, 10, HCCL_DATA_TYPE_FP32, static_cast<uint32_t>(next), comm, stream));
    OK(HcclRecv(in.p, 10, HCCL_DATA_TYPE_FP32, static_cast<uint32_t>(prev), comm, stream));
    OK(HcclGroupEnd());
    OK(aclrtSynchronizeStream(stream));
    EXPECT(in.get() == host_values(f32, prev, 10), "grouped send/recv from rank %d", prev);
  }
}

void collectives(HcclComm comm, aclrtStream stream) {
  const size_t sizes[] = {0, 1, 1001};
  const int n_ranks = g_size;
  for (const TypeInfo& t : kTypes)
    for (size_t n : sizes) {
      const size_t b = n * t.size;
      for (HcclReduceOp op : {HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX, HCCL_REDUCE_MIN}) {
        Dev s(b), d(b);
        s.put(host_values(t, g_rank, n));
        OK(HcclAllReduce(s.p, d.p, n, t.type, op, comm, stream));
        OK(aclrtSynchronizeStream(stream));
        auto h = d.get();
        for (size_t i = 0; i < n; ++i) {
          double want = value(t, 0, i);
          for (int r = 1; r < n_ranks; ++r) want = combine(op, want, value(t, r, i));
          EXPECT(decode(t.type, h.data() + i * t.size) == want, "all-reduce %s op %d n %zu i %zu", t.name, op, n, i);
          if (decode(t.type, h.data() + i * t.size) != want) break;
        }
      }
      {  // broadcast from the last rank
        Dev x(b);
        x.put(host_values(t, g_rank, n));
        OK(HcclBroadcast(x.p, n, t.type, static_cast<uint32_t>(n_ranks - 1), comm, stream));
        OK(aclrtSynchronizeStream(stream));
        EXPECT(x.get() == host_values(t, n_ranks - 1, n), "broadcast %s n %zu", t.name, n);
      }
      {  // all-gather
        Dev s(b), d(b * static_cast<size_t>(n_ranks));
        s.put(host_values(t, g_rank, n));
        OK(HcclAllGather(s.p, d.p, n, t.type, comm, stream));
        OK(aclrtSynchronizeStream(stream));
        std::vector<char> want;
        for (int r = 0; r < n_ranks; ++r) {
          auto part = host_values(t, r, n);
          want.insert(want.end(), part.begin(), part.end());
        }
        EXPECT(d.get() == want, "all-gather %s n %zu", t.name, n);
      }
      {  // reduce-scatter (sum): this rank's block of the sum
        Dev s(b * static_cast<size_t>(n_ranks)), d(b);
        s.put(host_values(t, g_rank, n * static_cast<size_t>(n_ranks)));
        OK(HcclReduceScatter(s.p, d.p, n, t.type, HCCL_REDUCE_SUM, comm, stream));
        OK(aclrtSynchronizeStream(stream));
        auto h = d.get();
        for (size_t i = 0; i < n; ++i) {
          const size_t at = static_cast<size_t>(g_rank) * n + i;
          double want = 0;
          for (int r = 0; r < n_ranks; ++r) want += value(t, r, at);
          EXPECT(decode(t.type, h.data() + i * t.size) == want, "reduce-scatter %s n %zu i %zu", t.name, n, i);
        }
      }
    }
  // 64 MiB of fp32, in place.
  const size_t big = (64u << 20) / 4;
  std::vector<float> x(big);
  for (size_t i = 0; i < big; ++i) x[i] = static_cast<float>((i + static_cast<size_t>(g_rank)) % 1024) * 0.5f;
  Dev buf(big * 4);
  OK(aclrtMemcpy(buf.p, big * 4, x.data(), big * 4, ACL_MEMCPY_HOST_TO_DEVICE));
  OK(HcclAllReduce(buf.p, buf.p, big, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
  OK(aclrtSynchronizeStream(stream));
  OK(aclrtMemcpy(x.data(), big * 4, buf.p, big * 4, ACL_MEMCPY_DEVICE_TO_HOST));
  for (size_t i = 0; i < big; ++i) {
    float want = 0;
    for (int r = 0; r < n_ranks; ++r) want += static_cast<float>((i + static_cast<size_t>(r)) % 1024) * 0.5f;
    if (x[i] != want) {
      EXPECT(x[i] == want, "64 MiB all-reduce: element %zu is %g, expected %g", i, x[i], want);
      break;
    }
  }
  // Send / recv around the ring, then a barrier.
  const int next = (g_rank + 1) % n_ranks, prev = (g_rank + n_ranks - 1) % n_ranks;
  const TypeInfo& f32 = kTypes[4];
  Dev out(40), in(40);
  out.put(host_values(f32, g_rank, 10));
  if (g_rank % 2 == 0) {
    OK(HcclSend(out.p, 10, HCCL_DATA_TYPE_FP32, static_cast<uint32_t>(next), comm, stream));
    OK(HcclRecv(in.p, 10, HCCL_DATA_TYPE_FP32, static_cast<uint32_t>(prev), comm, stream));
  } else {
    OK(HcclRecv(in.p, 10, HCCL_DATA_TYPE_FP32, static_cast<uint32_t>(prev), comm, stream));
    OK(HcclSend(out.p, 10, HCCL_DATA_TYPE_FP32, static_cast<uint32_t>(next), comm, stream));
  }
  OK(HcclBarrier(comm, stream));
  OK(aclrtSynchronizeStream(stream));
  EXPECT(in.get() == host_values(f32, prev, 10), "send/recv from rank %d", prev);
  rooted_and_all_to_all(comm, stream);
}

// Ranks that pass different counts all fail, naming each rank's call; the communicator stays usable.
void mismatch(HcclComm comm, aclrtStream stream) {
  Dev x(64);
  OK(HcclAllReduce(x.p, x.p, static_cast<uint64_t>(4 + g_rank), HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
  EXPECT(aclrtSynchronizeStream(stream) != 0, "a mismatched all-reduce succeeded");
  const std::string msg = recent();
  EXPECT(msg.find("rank 0: HcclAllReduce(count 4, fp32, sum); rank 1: HcclAllReduce(count 5, fp32, sum)") !=
             std::string::npos,
         "message: %s", msg.c_str());
  HcclResult async = HCCL_SUCCESS;
  OK(HcclGetCommAsyncError(comm, &async));
  EXPECT(async == HCCL_E_PARA, "async error %d", async);
  OK(HcclBarrier(comm, stream));
  OK(aclrtSynchronizeStream(stream));
  // Different collectives: each rank is named with its own call, on every rank.
  if (g_rank == 0) {
    OK(HcclReduce(x.p, x.p, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, comm, stream));
  } else {
    OK(HcclAllReduce(x.p, x.p, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
  }
  EXPECT(aclrtSynchronizeStream(stream) != 0, "a reduce matched with an all-reduce succeeded");
  const std::string names = recent();
  EXPECT(names.find("rank 0: HcclReduce(count 4, fp32, sum, root 0); rank 1: HcclAllReduce(count 4, fp32, sum)") !=
             std::string::npos,
         "message: %s", names.c_str());
  OK(HcclBarrier(comm, stream));
  OK(aclrtSynchronizeStream(stream));
}

void misuse() {
  HcclRootInfo info;
  if (g_rank == 0) OK(HcclGetRootInfo(&info));
  MPI_Bcast(&info, sizeof info, MPI_BYTE, 0, MPI_COMM_WORLD);
  HcclComm comm = nullptr;
  // Every process asks for rank 0: all fail, with the same message.
  EXPECT(HcclCommInitRootInfo(static_cast<uint32_t>(g_size), &info, 0, &comm) == HCCL_E_PARA, "duplicate ranks");
  const std::string msg = recent();
  EXPECT(msg.find("both asked for rank 0") != std::string::npos, "message: %s", msg.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);  // as CANN's samples do (not MPI_THREAD_MULTIPLE: ember serialises its calls)
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const std::string mode = argc > 1 ? argv[1] : "all";
  uint32_t devices = 0;
  OK(aclrtGetDeviceCount(&devices));
  OK(aclrtSetDevice(static_cast<int32_t>(static_cast<uint32_t>(g_rank) % devices)));
  aclrtStream stream = nullptr;
  OK(aclrtCreateStream(&stream));
  HcclComm comm = make_comm();
  uint32_t size = 0, rank = 0;
  OK(HcclGetRankSize(comm, &size));
  OK(HcclGetRankId(comm, &rank));
  EXPECT(size == static_cast<uint32_t>(g_size) && rank == static_cast<uint32_t>(g_rank), "size %u rank %u", size,
         rank);
  if (mode == "all") {
    collectives(comm, stream);
    if (g_size == 2) mismatch(comm, stream);
    misuse();
  } else if (mode == "early-exit") {
    if (g_rank == 1) {
      std::printf("rank 1: leaving early\n");
      std::fflush(stdout);
      MPI_Finalize();  // a normal return from main, before the others' next collective
      return 0;
    }
    Dev x(64);
    const auto start = std::chrono::steady_clock::now();
    OK(HcclAllReduce(x.p, x.p, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
    EXPECT(aclrtSynchronizeStream(stream) != 0, "an all-reduce without rank 1 succeeded");
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string msg = recent();
    std::printf("rank 0: after %.1f s: %s\n", waited, msg.c_str());
    EXPECT(msg.find("HcclAllReduce(count 4, fp32, sum) on rank 0 of 2 (MPI): timed out") != std::string::npos,
           "message: %s", msg.c_str());
    HcclResult async = HCCL_SUCCESS;
    OK(HcclGetCommAsyncError(comm, &async));
    EXPECT(async == HCCL_E_TIMEOUT, "async error %d", async);
    std::printf("%s\n", g_failures ? "FAILED" : "ok");
    std::fflush(stdout);
    MPI_Finalize();
    return g_failures ? 1 : 0;
  }
  OK(HcclCommDestroy(comm));
  OK(aclrtDestroyStream(stream));
  std::printf("rank %d: %s\n", g_rank, g_failures ? "FAILED" : "ok");
  MPI_Finalize();
  return g_failures ? 1 : 0;
}
