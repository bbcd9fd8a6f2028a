// ember: collectives between processes, torch.distributed's c10d API (README, "Training on several
// processes or machines").
//
//   mpirun -np 2 ./train            # each process:
//   ember::distributed::init_process_group("hccl");   // or "mpi" for cpu tensors
//   ember::distributed::all_reduce(grad);             // sum over the ranks, in place
//
// Backends: "mpi" works on cpu tensors, with MPI (Debian's OpenMPI) carrying the bytes; "hccl" works
// on npu tensors, through the emulated HCCL (hccl/hccl.h), whose collectives are enqueued on the
// group's own stream of the tensor's device (as ProcessGroupNCCL's), after the work queued so far
// on the current stream: they overlap the kernels queued after them, and the tensors' memory is
// marked as used by that stream (record_stream). Rank and world size come from the MPI launcher. Every call
// has the process group's timeout: ranks that call different collectives fail together with every
// rank's call named; a rank that never comes (exited, stuck) fails the others after the timeout.
// Calls are matched in order, as in torch.distributed: every rank makes the same calls.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ember/tensor/tensor.h"

namespace ember {
namespace distributed {

enum class ReduceOp { SUM, AVG, PRODUCT, MIN, MAX };

// One collective in flight. wait() returns when this rank's part is done (its output written)
// and throws ember::Error if the collective failed; for npu tensors it synchronises the group's
// stream of that device (the host waits; later work on any stream then sees the result).
class Work {
 public:
  virtual ~Work() = default;
  virtual bool is_completed() = 0;
  virtual void wait() = 0;
};
using WorkPtr = std::shared_ptr<Work>;

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const std::string& backend() const = 0;
  // In place: every rank's tensor becomes the reduction of all ranks' tensors.
  virtual WorkPtr all_reduce(Tensor& tensor, ReduceOp op) = 0;
  // In place: every rank's tensor becomes src's.
  virtual WorkPtr broadcast(Tensor& tensor, int src) = 0;
  // output holds size() blocks the shape of input, block r from rank r (torch's
  // all_gather_into_tensor: output's first dimension is size() times input's).
  virtual WorkPtr all_gather(Tensor& output, const Tensor& input) = 0;
  // output is this rank's block of the reduction of every rank's input (input: size() blocks the
  // shape of output; torch's reduce_scatter_tensor).
  virtual WorkPtr reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op) = 0;
  virtual WorkPtr send(const Tensor& tensor, int dst) = 0;
  virtual WorkPtr recv(Tensor& tensor, int src) = 0;
  virtual WorkPtr barrier() = 0;
  std::chrono::milliseconds timeout() const { return timeout_; }

 protected:
  std::chrono::milliseconds timeout_{std::chrono::minutes(30)};
};

struct InitOptions {
  // -1: from the launcher (mpirun). Given explicitly, they must match it.
  int rank = -1;
  int world_size = -1;
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};  // torch's default
};

// Makes the default process group ("mpi" or "hccl"). Collective: every process calls it. For
// "hccl", each process's rank runs on the calling thread's current NPU (npu::DeviceGuard or
// aclrtSetDevice first, e.g. to local_rank() % npu::device_count()), as with torch_npu.
void init_process_group(const std::string& backend, const InitOptions& options = {});
bool is_initialized();
// The default group; throws if init_process_group was not called.
ProcessGroup& default_group();
int get_rank();
int get_world_size();
// This process's rank among the job's processes on this machine (torch's LOCAL_RANK), before or
// after init_process_group.
int local_rank();
// Waits for the group's work in flight, then forgets the group (init_process_group may be called
// again).
void destroy_process_group();
// Whether this build can run between processes (MPI), and whether an MPI launcher started it.
bool is_mpi_available();
bool launched_by_mpirun();

// torch.distributed's functions on the default group. async_op = false waits before returning
// (and returns the finished work); true returns at once.
WorkPtr all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM, bool async_op = false);
WorkPtr broadcast(Tensor& tensor, int src, bool async_op = false);
WorkPtr all_gather_into_tensor(Tensor& output, const Tensor& input, bool async_op = false);
WorkPtr reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::SUM,
                              bool async_op = false);
WorkPtr send(const Tensor& tensor, int dst);  // waits, as torch.distributed.send
WorkPtr recv(Tensor& tensor, int src);
WorkPtr barrier(bool async_op = false);

}  // namespace distributed
}  // namespace ember
