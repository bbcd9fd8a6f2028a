// ember (internal to distributed/): what process_group.cpp and the two groups (mpi_group.cpp,
// hccl_group.cpp) share: the argument checks, the mapping to device/comm's types, the work the
// mpi group's worker finishes, and the groups' factories.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "ember/device/comm/collective.h"
#include "ember/distributed/process_group.h"
#include "hccl/hccl_types.h"

namespace ember {
namespace distributed {
namespace detail {

comm::Elem elem_of(const char* fn, DType t);
comm::RedOp red_of(const char* fn, ReduceOp op, DType t);
// A collective's tensor: defined, contiguous, on the backend's device type.
void check_tensor(const char* fn, const char* what, const Tensor& t, const std::string& backend);
// output = size blocks shaped like input (the first dimension size times input's, or a flat
// tensor of size * numel elements).
void check_blocks(const char* fn, const Tensor& big, const Tensor& small, int size, const char* big_name);
// Throws an ember::Error naming fn and HCCL's message when r is not HCCL_SUCCESS.
void check_hccl(HcclResult r, const char* fn);

// Finished when the worker (or, for hccl, the stream) says so.
class FutureWork final : public Work {
 public:
  bool is_completed() override {
    std::lock_guard<std::mutex> lk(mu_);
    return done_;
  }
  void wait() override {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [this] { return done_; });
    if (!error_.empty()) throw Error(error_);
  }
  void finish(std::string error) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      done_ = true;
      error_ = std::move(error);
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string error_;
};

// A group as init_process_group holds it: destroy_process_group drains its work first.
class GroupImpl : public ProcessGroup {
 public:
  virtual void drain() = 0;  // waits for the work in flight (errors stay with their Work)
};
std::unique_ptr<GroupImpl> make_mpi_group(std::shared_ptr<comm::Transport> t, std::chrono::milliseconds timeout);
std::unique_ptr<GroupImpl> make_hccl_group(HcclComm comm, std::chrono::milliseconds timeout);

}  // namespace detail
}  // namespace distributed
}  // namespace ember
