// Process groups: init_process_group and the free collectives over the default group, and the
// checks both groups share. The groups: "mpi" (cpu tensors, device/comm's MPI group driven by one
// worker thread per group: mpi_group.cpp) and "hccl" (npu tensors, the emulated HCCL's C API on
// the group's communication stream, ordered after the work of the current stream: hccl_group.cpp).
#include "ember/distributed/process_group.h"

#include <memory>
#include <mutex>
#include <string>

#include "ember/core/error.h"
#include "ember/device/comm/collective.h"
#include "ember/distributed/groups.h"
#include "ember/device/comm/mpi.h"
#include "hccl/hccl.h"

namespace ember {
namespace distributed {
namespace detail {

comm::Elem elem_of(const char* fn, DType t) {
  switch (t) {
    case kFloat32: return comm::Elem::F32;
    case kFloat64: return comm::Elem::F64;
    case kFloat16: return comm::Elem::F16;
    case kBFloat16: return comm::Elem::BF16;
    case kInt64: return comm::Elem::I64;
    case kInt32: return comm::Elem::I32;
    case kBool:
    case kUInt8: return comm::Elem::U8;
    case kInt8: return comm::Elem::I8;
    case kInt16: return comm::Elem::I16;
  }
  throw DTypeError(std::string(fn) + ": unsupported dtype " + dtype_name(t));
}

comm::RedOp red_of(const char* fn, ReduceOp op, DType t) {
  if (t == kBool) {  // as torch's NCCL group: SUM is logical or, PRODUCT logical and (bytes stay 0/1)
    if (op == ReduceOp::SUM) return comm::RedOp::Max;
    if (op == ReduceOp::PRODUCT) return comm::RedOp::Min;
  }
  switch (op) {
    case ReduceOp::SUM: return comm::RedOp::Sum;
    case ReduceOp::AVG:
      if (!is_floating_point(t))
        throw DTypeError(std::string(fn) + ": ReduceOp.AVG needs a floating-point tensor, got " + dtype_name(t));
      return comm::RedOp::Sum;  // then divided by the group's size
    case ReduceOp::PRODUCT: return comm::RedOp::Prod;
    case ReduceOp::MIN: return comm::RedOp::Min;
    case ReduceOp::MAX: return comm::RedOp::Max;
  }
  throw ValueError(std::string(fn) + ": unknown ReduceOp");
}

void check_tensor(const char* fn, const char* what, const Tensor& t, const std::string& backend) {
  if (!t.defined()) throw ValueError(std::string(fn) + ": " + what + " is an undefined tensor");
  if (!t.is_contiguous())
    throw ValueError(std::string(fn) + ": " + what + " must be contiguous (call .contiguous()), got sizes " +
                     to_string(t.sizes()) + " strides " + to_string(t.strides()));
  if (backend == "mpi" && !t.is_cpu())
    throw DeviceError(std::string(fn) + ": the \"mpi\" backend takes cpu tensors, " + what + " is on " +
                      t.device().str() + " (use the \"hccl\" backend for npu tensors)");
  if (backend == "hccl" && !t.is_npu())
    throw DeviceError(std::string(fn) + ": the \"hccl\" backend takes npu tensors, " + what + " is on " +
                      t.device().str() + " (use the \"mpi\" backend for cpu tensors)");
}

// output = size blocks shaped like input (the first dimension size times input's, or a flat
// tensor of size * numel elements).
void check_blocks(const char* fn, const Tensor& big, const Tensor& small, int size, const char* big_name) {
  if (big.dtype() != small.dtype())
    throw DTypeError(std::string(fn) + ": " + big_name + " is " + dtype_name(big.dtype()) + ", the other tensor " +
                     dtype_name(small.dtype()));
  if (big.device() != small.device())
    throw DeviceError(std::string(fn) + ": the tensors are on " + big.device().str() + " and " + small.device().str());
  if (big.numel() != small.numel() * size)
    throw ShapeError(std::string(fn) + ": " + big_name + " has " + std::to_string(big.numel()) + " elements, expected " +
                     std::to_string(size) + " (ranks) x " + std::to_string(small.numel()) + " (sizes " +
                     to_string(big.sizes()) + " vs " + to_string(small.sizes()) + ")");
}

void check_hccl(HcclResult r, const char* fn) {
  if (r != HCCL_SUCCESS) {
    const char* m = aclGetRecentErrMsg();
    throw Error(std::string(fn) + ": " + HcclGetErrorString(r) + ": " + (m ? m : ""));
  }
}

}  // namespace detail

namespace {
using namespace detail;

std::mutex g_mu;
std::unique_ptr<GroupImpl> g_default;

}  // namespace

bool is_mpi_available() { return comm::mpi::built(); }
bool launched_by_mpirun() { return comm::mpi::launched(); }

void init_process_group(const std::string& backend, const InitOptions& options) {
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_default)
    throw ValueError("init_process_group: the default process group exists already (backend \"" +
                     g_default->backend() + "\"); call destroy_process_group first");
  if (backend != "mpi" && backend != "hccl")
    throw ValueError("init_process_group: unknown backend \"" + backend + "\" (expected \"mpi\" for cpu tensors or "
                     "\"hccl\" for npu tensors)");
  if (options.timeout.count() <= 0)
    throw ValueError("init_process_group: timeout must be positive, got " + std::to_string(options.timeout.count()) +
                     " ms");
  if (!comm::mpi::built())
    throw NotImplementedError("init_process_group(\"" + backend +
                              "\"): ember was built without MPI (EMBER_WITH_MPI); install libopenmpi-dev "
                              "(scripts/deps.sh) and build again");
  comm::mpi::ensure_init();
  const int world = comm::mpi::world_size(), me = comm::mpi::world_rank();
  if (options.world_size >= 0 && options.world_size != world)
    throw ValueError("init_process_group: world_size " + std::to_string(options.world_size) + ", but the MPI job has " +
                     std::to_string(world) + " processes (start them with mpirun -np " +
                     std::to_string(options.world_size) + ")");
  if (options.rank >= 0 && options.rank != me)
    throw ValueError("init_process_group: rank " + std::to_string(options.rank) + ", but MPI says this process is rank " +
                     std::to_string(me));
  auto t = comm::mpi::world_group(me, "init_process_group");
  if (backend == "mpi") {
    g_default = make_mpi_group(std::move(t), options.timeout);
    return;
  }
  // hccl: the root info travels over the MPI group, as a CANN program would send it.
  t->set_timeout(options.timeout);
  HcclRootInfo info;
  if (me == 0) check_hccl(HcclGetRootInfo(&info), "init_process_group");
  comm::Call c;
  c.kind = comm::Kind::Broadcast;
  c.name = "init_process_group";
  c.elem = comm::Elem::U8;
  c.count = sizeof info;
  c.recv = &info;
  c.peer = 0;
  t->run(c);
  HcclComm comm = nullptr;
  check_hccl(HcclCommInitRootInfo(static_cast<uint32_t>(world), &info, static_cast<uint32_t>(me), &comm),
             "init_process_group");
  g_default = make_hccl_group(comm, options.timeout);
}

bool is_initialized() {
  std::lock_guard<std::mutex> lk(g_mu);
  return g_default != nullptr;
}

ProcessGroup& default_group() {
  std::lock_guard<std::mutex> lk(g_mu);
  if (!g_default)
    throw ValueError("ember::distributed: the default process group is not initialised; call "
                     "init_process_group(\"mpi\") or (\"hccl\") first");
  return *g_default;
}

int get_rank() { return default_group().rank(); }
int local_rank() {
  if (!comm::mpi::built() || !comm::mpi::launched()) return 0;
  return comm::mpi::local_rank();
}
int get_world_size() { return default_group().size(); }

void destroy_process_group() {
  std::lock_guard<std::mutex> lk(g_mu);
  if (!g_default) return;
  g_default->drain();
  g_default.reset();
}

namespace {
WorkPtr finish(WorkPtr w, bool async_op) {
  if (!async_op) w->wait();
  return w;
}
}  // namespace

WorkPtr all_reduce(Tensor& tensor, ReduceOp op, bool async_op) {
  return finish(default_group().all_reduce(tensor, op), async_op);
}
WorkPtr broadcast(Tensor& tensor, int src, bool async_op) {
  return finish(default_group().broadcast(tensor, src), async_op);
}
WorkPtr all_gather_into_tensor(Tensor& output, const Tensor& input, bool async_op) {
  return finish(default_group().all_gather(output, input), async_op);
}
WorkPtr reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op, bool async_op) {
  return finish(default_group().reduce_scatter(output, input, op), async_op);
}
WorkPtr send(const Tensor& tensor, int dst) { return finish(default_group().send(tensor, dst), false); }
WorkPtr recv(Tensor& tensor, int src) { return finish(default_group().recv(tensor, src), false); }
WorkPtr barrier(bool async_op) { return finish(default_group().barrier(), async_op); }

}  // namespace distributed
}  // namespace ember
