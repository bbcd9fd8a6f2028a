// The emulated NPU's HCCL communicators (CANN's hccl/hccl.h): made over device/comm's transports
// (in one process, or across processes with MPI), named, queried and destroyed; the collectives on
// them are in hccl.cpp.
//
// A call checks its arguments as phase 1 of an op does (device memory of the communicator's
// device, ranges inside one live allocation, counts that fit, a stream of that device), then
// enqueues a task that runs the collective when the stream reaches it. The task holds the
// communicator's transport, so HcclCommDestroy with work in flight is safe; a collective that fails
// on its stream (calls that differ between ranks, a timeout) faults the stream, named at the next
// synchronize, and is remembered for HcclGetCommAsyncError.

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "ember/device/comm/mpi.h"
#include "ember/device/env.h"
#include "ember/device/npu/hccl_comms.h"
#include "ember/device/npu/runtime.h"
#include "ember/core/error.h"

namespace ember {
namespace npu {
namespace detail {

namespace {
std::mutex g_comms_mu;
std::map<HcclComm, std::shared_ptr<CommImpl>>& live_comms() {
  static auto* m = new std::map<HcclComm, std::shared_ptr<CommImpl>>();
  return *m;
}
std::atomic<uint64_t> g_comm_ids{0};
}  // namespace

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

namespace {
// HCCL_EXEC_TIMEOUT (seconds), as on CANN, whose default is 1836 s.
std::chrono::milliseconds exec_timeout() {
  auto s = env_int("HCCL_EXEC_TIMEOUT", 0, 24 * 3600);
  return std::chrono::milliseconds(1000 * (s ? *s : 1836));
}

constexpr char kRootMagic[] = "ember-hccl-root-v1";

// HCCL_CONNECT_TIMEOUT (seconds), as on CANN, whose default is 120 s: how long the ranks of one
// rootInfo wait for each other in HcclCommInitRootInfo.
std::chrono::milliseconds connect_timeout() {
  auto s = env_int("HCCL_CONNECT_TIMEOUT", 0, 24 * 3600);
  return std::chrono::milliseconds(1000 * (s ? *s : 120));
}

// The ranks of one rootInfo inside this process (one thread per device, as CANN's HCCL samples
// run): the first to come makes a local group of nRanks, each takes its endpoint, and all wait
// until every rank has come, as HcclCommInitRootInfo does on hardware.
struct Rendezvous {
  uint32_t n = 0;
  std::vector<std::shared_ptr<comm::Transport>> group;
  std::vector<char> taken;
  uint32_t arrived = 0;
  std::string failed;  // set when a rank gave up waiting: the others fail too
};
std::mutex g_rv_mu;
std::condition_variable g_rv_cv;
std::map<std::string, std::shared_ptr<Rendezvous>>& rendezvous() {
  static auto* m = new std::map<std::string, std::shared_ptr<Rendezvous>>();
  return *m;
}

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

namespace {
// Every rank of t checks that all passed the same nRanks and rootInfo (an all-gather of both).
HcclResult check_same_root(const char* fn, comm::Transport& t, uint32_t nRanks, const HcclRootInfo* rootInfo) {
  struct Id {
    uint64_t n;
    char root[64];
  } mine{nRanks, {}};
  std::memcpy(mine.root, rootInfo->internal, sizeof mine.root);
  std::vector<Id> ids(static_cast<size_t>(t.size()));
  comm::Call k;
  k.kind = comm::Kind::AllGather;
  k.name = fn;
  k.elem = comm::Elem::U8;
  k.count = sizeof(Id);
  k.send = &mine;
  k.recv = ids.data();
  t.set_timeout(exec_timeout());
  try {
    t.run(k);
  } catch (const Error& e) {
    return fail(HCCL_E_PARA, e.what());
  }
  for (size_t p = 0; p < ids.size(); ++p) {
    if (ids[p].n != nRanks)
      return fail(HCCL_E_PARA, std::string(fn) + ": the processes passed different nRanks: " + std::to_string(ids[p].n) +
                                   " at rank " + std::to_string(p) + ", " + std::to_string(nRanks) + " here");
    if (std::memcmp(ids[p].root, mine.root, sizeof mine.root) != 0)
      return fail(HCCL_E_PARA, std::string(fn) + ": rank " + std::to_string(p) +
                                   " passed a different rootInfo (each process must use the one HcclGetRootInfo "
                                   "made on the root, e.g. sent with MPI_Bcast)");
  }
  return HCCL_SUCCESS;
}

// Several processes: one rank each, over MPI; every process of the mpirun job takes part.
HcclResult mpi_transport(const char* fn, uint32_t nRanks, uint32_t rank, const HcclRootInfo* rootInfo,
                         std::shared_ptr<comm::Transport>* out) {
  if (!comm::mpi::built())
    return fail(HCCL_E_NOT_SUPPORT, std::string(fn) + ": " + std::to_string(nRanks) +
                                        " ranks need MPI, and this ember was built without it (EMBER_WITH_MPI)");
  if (!comm::mpi::launched())
    return fail(HCCL_E_PARA, std::string(fn) + ": " + std::to_string(nRanks) +
                                 " ranks, but this process was not started by mpirun (one rank per process)");
  try {
    *out = comm::mpi::world_group(static_cast<int>(rank), fn);
  } catch (const Error& e) {
    return fail(HCCL_E_PARA, e.what());
  }
  if (HcclResult r = check_same_root(fn, **out, nRanks, rootInfo)) return r;
  if (static_cast<uint32_t>((*out)->size()) != nRanks)
    return fail(HCCL_E_PARA, std::string(fn) + ": nRanks " + std::to_string(nRanks) + ", but the MPI job has " +
                                 std::to_string((*out)->size()) + " processes");
  return HCCL_SUCCESS;
}
}  // namespace

namespace {
HcclResult local_transport(const char* fn, uint32_t nRanks, uint32_t rank, const HcclRootInfo* rootInfo,
                           std::shared_ptr<comm::Transport>* out) {
  const std::string key(rootInfo->internal, strnlen(rootInfo->internal, sizeof rootInfo->internal));
  std::unique_lock<std::mutex> g(g_rv_mu);
  std::shared_ptr<Rendezvous>& slot = rendezvous()[key];
  if (!slot) {
    slot = std::make_shared<Rendezvous>();
    slot->n = nRanks;
    slot->group = comm::make_local_group(static_cast<int>(nRanks));
    slot->taken.assign(nRanks, 0);
  }
  std::shared_ptr<Rendezvous> rv = slot;
  if (rv->n != nRanks)
    return fail(HCCL_E_PARA, std::string(fn) + ": rank " + std::to_string(rank) + " passed nRanks " +
                                 std::to_string(nRanks) + ", but an earlier rank of this rootInfo passed " +
                                 std::to_string(rv->n));
  if (rv->taken[rank])
    return fail(HCCL_E_PARA, std::string(fn) + ": rank " + std::to_string(rank) +
                                 " of this rootInfo is already taken (each rank calls HcclCommInitRootInfo once)");
  rv->taken[rank] = 1;
  *out = rv->group[rank];
  if (++rv->arrived == rv->n) {
    rendezvous().erase(key);  // complete: the rootInfo may not be used again
    g_rv_cv.notify_all();
    return HCCL_SUCCESS;
  }
  const auto timeout = connect_timeout();
  const bool all = g_rv_cv.wait_for(g, timeout, [&] { return rv->arrived == rv->n || !rv->failed.empty(); });
  if (all && rv->failed.empty()) return HCCL_SUCCESS;
  if (rv->failed.empty()) {
    std::string missing;
    for (uint32_t k = 0; k < rv->n; ++k)
      if (!rv->taken[k]) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
    rv->failed = std::string(fn) + ": rank(s) " + missing + " of " + std::to_string(rv->n) + " never came within " +
                 comm::format_seconds(timeout) + " (HCCL_CONNECT_TIMEOUT; every rank calls HcclCommInitRootInfo "
                 "with this rootInfo)";
    auto it = rendezvous().find(key);
    if (it != rendezvous().end() && it->second == rv) rendezvous().erase(it);
    g_rv_cv.notify_all();
  }
  return fail(HCCL_E_TIMEOUT, rv->failed);
}

// Ranks in several processes (mpirun, one rank each), or several ranks of this process.
bool across_processes() {
  if (!comm::mpi::launched() || !comm::mpi::built()) return false;
  comm::mpi::ensure_init();
  return comm::mpi::world_size() > 1;
}
}  // namespace

namespace {
// A config made by HcclCommConfigInit (its header: size, magic word, version) with values HCCL
// takes; buffer size and determinism change nothing here (every reduction is deterministic).
HcclResult check_config(const char* fn, const HcclCommConfig* config) {
  uint32_t magic = 0, version = 0;
  std::memcpy(&magic, config->reserved + sizeof(size_t), 4);
  std::memcpy(&version, config->reserved + sizeof(size_t) + 4, 4);
  if (magic != HCCL_COMM_CONFIG_MAGIC_WORD)
    return fail(HCCL_E_PARA, std::string(fn) + ": config was not set up by HcclCommConfigInit (no magic word)");
  if (version == 0 || version > HCCL_COMM_CONFIG_VERSION)
    return fail(HCCL_E_PARA, std::string(fn) + ": config version " + std::to_string(version) + " is not one of 1 .. " +
                                 std::to_string(HCCL_COMM_CONFIG_VERSION));
  if (config->hcclDeterministic > 1)
    return fail(HCCL_E_PARA, std::string(fn) + ": hcclDeterministic must be 0 or 1, got " +
                                 std::to_string(config->hcclDeterministic));
  if (config->hcclBufferSize == 0)
    return fail(HCCL_E_PARA, std::string(fn) + ": hcclBufferSize (MB) must be at least 1");
  return HCCL_SUCCESS;
}
}  // namespace

HcclResult detail::init_comm(const char* fn, uint32_t nRanks, const HcclRootInfo& root, bool same_process_root,
                             uint32_t rank, const HcclCommConfig* config, HcclComm* comm) {
  if (nRanks == 0 || rank >= nRanks)
    return fail(HCCL_E_PARA, std::string(fn) + ": rank " + std::to_string(rank) + " is not below nRanks " +
                                 std::to_string(nRanks));
  if (config) EMBER_HCCL_TRY(check_config(fn, config));
  auto c = std::make_shared<CommImpl>();
  if (nRanks == 1) {
    c->transport = comm::make_local_group(1)[0];
  } else if (across_processes()) {
    EMBER_HCCL_TRY(mpi_transport(fn, nRanks, rank, &root, &c->transport));
  } else {
    if (same_process_root) {
      long root_pid = 0;
      std::sscanf(root.internal + sizeof kRootMagic - 1, "%ld", &root_pid);
      if (root_pid != static_cast<long>(getpid()))
        return fail(HCCL_E_PARA, std::string(fn) + ": rootInfo was made by process " + std::to_string(root_pid) +
                                     "; ranks in other processes need mpirun (this one was not started by it)");
    }
    EMBER_HCCL_TRY(local_transport(fn, nRanks, rank, &root, &c->transport));
  }
  c->transport->set_timeout(exec_timeout());
  c->device = current_device();
  *comm = add_comm(std::move(c));
  if (config && config->hcclCommName[0]) {  // the config's name, as HCCL gives it
    auto made = find_comm(*comm);
    made->name.assign(config->hcclCommName, strnlen(config->hcclCommName, sizeof config->hcclCommName));
  }
  return HCCL_SUCCESS;
}

extern "C" HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank,
                                                 const HcclCommConfig* config, HcclComm* comm) {
  const char* fn = "HcclCommInitRootInfo";
  if (!rootInfo || !comm) return fail(HCCL_E_PTR, std::string(fn) + ": rootInfo and comm must not be null");
  if (check_runtime(fn, current_device()) != ACL_SUCCESS) return HCCL_E_RUNTIME;  // Note [Runtime lifecycle]
  if (std::strncmp(rootInfo->internal, kRootMagic, sizeof kRootMagic - 1) != 0)
    return fail(HCCL_E_PARA, std::string(fn) + ": rootInfo was not made by HcclGetRootInfo");
  return init_comm(fn, nRanks, *rootInfo, true, rank, config, comm);
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

}  // namespace npu
}  // namespace ember
