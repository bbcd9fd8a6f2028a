// ember (internal to device/npu): the emulated HCCL's communicators (hccl_comm.cpp), which the
// collectives (hccl.cpp) look up.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "ember/device/comm/collective.h"
#include "hccl/hccl.h"

// Returns the HcclResult of expr when it is an error.
#define EMBER_HCCL_TRY(expr)               \
  do {                                     \
    if (HcclResult r_ = (expr)) return r_; \
  } while (0)

namespace ember {
namespace npu {
namespace detail {

struct CommImpl {
  std::shared_ptr<comm::Transport> transport;
  int device = 0;
  std::string name;
  std::atomic<int> async_error{HCCL_SUCCESS};
};
// Registers a communicator under a fresh name; its handle.
HcclComm add_comm(std::shared_ptr<CommImpl> c);
// The live communicator of handle h, or null.
std::shared_ptr<CommImpl> find_comm(HcclComm h);
// Makes rank `rank` of nRanks ranks that share `root` (the ranks of this process meet in-process,
// those of an mpirun job over MPI); same_process_root: root came from HcclGetRootInfo, which
// names its process. Checks rank and config (HcclCommInitRootInfo, HcclCommInitClusterInfo).
HcclResult init_comm(const char* fn, uint32_t nRanks, const HcclRootInfo& root, bool same_process_root, uint32_t rank,
                     const HcclCommConfig* config, HcclComm* comm);

}  // namespace detail
}  // namespace npu
}  // namespace ember
