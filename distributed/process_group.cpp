// Process groups: "mpi" (cpu tensors, device/comm's MPI group driven by one worker thread per
// group) and "hccl" (npu tensors, the emulated HCCL's C API on the group's communication stream,
// ordered after the work of the current stream).
#include "ember/distributed/process_group.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "ember/autograd/grad_mode.h"
#include "ember/core/error.h"
#include "ember/device/comm/collective.h"
#include "ember/device/comm/mpi.h"
#include "ember/device/npu/hccl_ext.h"
#include "ember/device/npu/npu.h"
#include "ember/ops/npu_exec.h"
#include "hccl/hccl.h"

namespace ember {
namespace distributed {
namespace {

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

// ---- Work ----

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

// npu work: an event after the collective on the group's communication stream; wait()
// synchronises that stream, so a fault (a mismatch, a timeout) surfaces as an ember::Error naming
// the collective. The tensors' memory is marked as used by that stream (record_stream), so
// dropping the work or the tensors early never hands the memory out again while it is in use.
class StreamWork final : public Work {
 public:
  StreamWork(npu::Stream s, std::vector<Tensor> keep, bool sync_on_drop)
      : stream_(s), keep_(std::move(keep)), sync_on_drop_(sync_on_drop) {
    event_.record(s);
  }
  ~StreamWork() override {
    if (!sync_on_drop_) return;
    try {
      event_.synchronize();  // memory the allocator does not know: wait before letting it go
    } catch (...) {
      // The fault stays on the stream: the next synchronize of the device reports it.
    }
  }
  bool is_completed() override { return event_.query(); }
  void wait() override {
    stream_.synchronize();
    keep_.clear();
    sync_on_drop_ = false;
  }

 private:
  npu::Stream stream_;
  npu::Event event_;
  std::vector<Tensor> keep_;
  bool sync_on_drop_;
};

// ---- "mpi": cpu tensors over device/comm's MPI group ----
class MpiGroup final : public ProcessGroup {
 public:
  MpiGroup(std::shared_ptr<comm::Transport> t, std::chrono::milliseconds timeout) : t_(std::move(t)) {
    timeout_ = timeout;
    t_->set_timeout(timeout);
    worker_ = std::thread([this] { loop(); });
  }
  ~MpiGroup() override {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  int rank() const override { return t_->rank(); }
  int size() const override { return t_->size(); }
  const std::string& backend() const override { return backend_; }

  WorkPtr all_reduce(Tensor& tensor, ReduceOp op) override {
    const char* fn = "all_reduce";
    check_tensor(fn, "tensor", tensor, backend_);
    comm::Call c = call(comm::Kind::AllReduce, fn, tensor);
    c.op = red_of(fn, op, tensor.dtype());
    c.send = c.recv = tensor.raw_data_ptr();
    const bool avg = op == ReduceOp::AVG;
    const int n = size();
    return submit(c, {tensor}, [tensor, avg, n]() mutable {
      if (avg) {
        NoGradGuard g;
        tensor.div_(Scalar(static_cast<double>(n)));
      }
    });
  }
  WorkPtr broadcast(Tensor& tensor, int src) override {
    const char* fn = "broadcast";
    check_tensor(fn, "tensor", tensor, backend_);
    check_rank(fn, "src", src);
    comm::Call c = call(comm::Kind::Broadcast, fn, tensor);
    c.recv = tensor.raw_data_ptr();
    c.peer = src;
    return submit(c, {tensor});
  }
  WorkPtr all_gather(Tensor& output, const Tensor& input) override {
    const char* fn = "all_gather_into_tensor";
    check_tensor(fn, "output", output, backend_);
    check_tensor(fn, "input", input, backend_);
    check_blocks(fn, output, input, size(), "output");
    comm::Call c = call(comm::Kind::AllGather, fn, input);
    c.send = input.raw_data_ptr();
    c.recv = output.raw_data_ptr();
    return submit(c, {output, input});
  }
  WorkPtr reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op) override {
    const char* fn = "reduce_scatter_tensor";
    check_tensor(fn, "output", output, backend_);
    check_tensor(fn, "input", input, backend_);
    check_blocks(fn, input, output, size(), "input");
    comm::Call c = call(comm::Kind::ReduceScatter, fn, output);
    c.op = red_of(fn, op, output.dtype());
    c.send = input.raw_data_ptr();
    c.recv = output.raw_data_ptr();
    const bool avg = op == ReduceOp::AVG;
    const int n = size();
    return submit(c, {output, input}, [output, avg, n]() mutable {
      if (avg) {
        NoGradGuard g;
        output.div_(Scalar(static_cast<double>(n)));
      }
    });
  }
  WorkPtr send(const Tensor& tensor, int dst) override {
    const char* fn = "send";
    check_tensor(fn, "tensor", tensor, backend_);
    check_rank(fn, "dst", dst);
    if (dst == rank()) throw ValueError("send: dst " + std::to_string(dst) + " is this process's own rank");
    comm::Call c = call(comm::Kind::Send, fn, tensor);
    c.send = tensor.raw_data_ptr();
    c.peer = dst;
    return submit(c, {tensor});
  }
  WorkPtr recv(Tensor& tensor, int src) override {
    const char* fn = "recv";
    check_tensor(fn, "tensor", tensor, backend_);
    check_rank(fn, "src", src);
    if (src == rank()) throw ValueError("recv: src " + std::to_string(src) + " is this process's own rank");
    comm::Call c = call(comm::Kind::Recv, fn, tensor);
    c.recv = tensor.raw_data_ptr();
    c.peer = src;
    return submit(c, {tensor});
  }
  WorkPtr barrier() override {
    comm::Call c;
    c.kind = comm::Kind::Barrier;
    c.name = "barrier";
    return submit(c, {});
  }
  void drain() {
    std::unique_lock<std::mutex> lk(mu_);
    idle_cv_.wait(lk, [this] { return queue_.empty() && !busy_; });
  }

 private:
  struct Job {
    comm::Call call;
    std::vector<Tensor> keep;  // the tensors stay alive until the collective is done
    std::function<void()> then;
    std::shared_ptr<FutureWork> work;
  };

  comm::Call call(comm::Kind k, const char* fn, const Tensor& t) const {
    comm::Call c;
    c.kind = k;
    c.name = fn;
    c.count = static_cast<uint64_t>(t.numel());
    c.elem = elem_of(fn, t.dtype());
    return c;
  }
  void check_rank(const char* fn, const char* what, int r) const {
    if (r < 0 || r >= size())
      throw IndexError(std::string(fn) + ": " + what + " " + std::to_string(r) + " is not a rank of the group (0 .. " +
                       std::to_string(size() - 1) + ")");
  }
  WorkPtr submit(const comm::Call& c, std::vector<Tensor> keep, std::function<void()> then = nullptr) {
    auto w = std::make_shared<FutureWork>();
    {
      std::lock_guard<std::mutex> lk(mu_);
      queue_.push_back(Job{c, std::move(keep), std::move(then), w});
    }
    cv_.notify_all();
    return w;
  }
  void loop() {
    while (true) {
      Job job;
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
      }
      std::string error;
      try {
        t_->run(job.call);
        if (job.then) job.then();
      } catch (const std::exception& e) {
        error = e.what();
      }
      job.keep.clear();
      job.work->finish(std::move(error));
      {
        std::lock_guard<std::mutex> lk(mu_);
        busy_ = false;
      }
      idle_cv_.notify_all();
    }
  }

  std::shared_ptr<comm::Transport> t_;
  const std::string backend_ = "mpi";
  std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<Job> queue_;
  bool stop_ = false, busy_ = false;
  std::thread worker_;
};

// ---- "hccl": npu tensors through the emulated HCCL ----
HcclDataType hccl_type(const char* fn, DType t) {
  switch (t) {
    case kFloat32: return HCCL_DATA_TYPE_FP32;
    case kFloat64: return HCCL_DATA_TYPE_FP64;
    case kFloat16: return HCCL_DATA_TYPE_FP16;
    case kBFloat16: return HCCL_DATA_TYPE_BFP16;
    case kInt64: return HCCL_DATA_TYPE_INT64;
    case kInt32: return HCCL_DATA_TYPE_INT32;
    case kBool:
    case kUInt8: return HCCL_DATA_TYPE_UINT8;
    case kInt8: return HCCL_DATA_TYPE_INT8;
  }
  throw DTypeError(std::string(fn) + ": unsupported dtype " + dtype_name(t));
}

void check_hccl(HcclResult r, const char* fn) {
  if (r != HCCL_SUCCESS) {
    const char* m = aclGetRecentErrMsg();
    throw Error(std::string(fn) + ": " + HcclGetErrorString(r) + ": " + (m ? m : ""));
  }
}

class HcclGroup final : public ProcessGroup {
 public:
  HcclGroup(HcclComm comm, std::chrono::milliseconds timeout) : comm_(comm) {
    timeout_ = timeout;
    check_hccl(npu::hccl_set_timeout(comm_, timeout), "init_process_group");
    uint32_t r = 0, n = 0;
    HcclGetRankId(comm_, &r);
    HcclGetRankSize(comm_, &n);
    rank_ = static_cast<int>(r);
    size_ = static_cast<int>(n);
  }
  ~HcclGroup() override {
    for (auto& [device, s] : streams_) {
      try {
        s.synchronize();
        s.destroy();
      } catch (...) {
        // a fault of the last collectives: reported by whoever synchronised first (drain)
      }
    }
    HcclCommDestroy(comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& backend() const override { return backend_; }

  WorkPtr all_reduce(Tensor& tensor, ReduceOp op) override {
    const char* fn = "all_reduce";
    check_tensor(fn, "tensor", tensor, backend_);
    const comm::RedOp red = red_of(fn, op, tensor.dtype());
    npu::Stream s = comm_stream(tensor.device().index());
    void* p = data(tensor);
    check_hccl(HcclAllReduce(p, p, n(tensor), hccl_type(fn, tensor.dtype()), static_cast<HcclReduceOp>(red), comm_,
                             s.raw()),
               fn);
    if (op == ReduceOp::AVG) {
      NoGradGuard g;
      npu::StreamGuard sg(s);
      tensor.div_(Scalar(static_cast<double>(size_)));
    }
    return work(s, {tensor});
  }
  WorkPtr broadcast(Tensor& tensor, int src) override {
    const char* fn = "broadcast";
    check_tensor(fn, "tensor", tensor, backend_);
    npu::Stream s = comm_stream(tensor.device().index());
    check_hccl(HcclBroadcast(data(tensor), n(tensor), hccl_type(fn, tensor.dtype()), static_cast<uint32_t>(src), comm_,
                             s.raw()),
               fn);
    return work(s, {tensor});
  }
  WorkPtr all_gather(Tensor& output, const Tensor& input) override {
    const char* fn = "all_gather_into_tensor";
    check_tensor(fn, "output", output, backend_);
    check_tensor(fn, "input", input, backend_);
    check_blocks(fn, output, input, size_, "output");
    npu::Stream s = comm_stream(input.device().index());
    check_hccl(HcclAllGather(data(input), data(output), n(input), hccl_type(fn, input.dtype()), comm_, s.raw()), fn);
    return work(s, {output, input});
  }
  WorkPtr reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op) override {
    const char* fn = "reduce_scatter_tensor";
    check_tensor(fn, "output", output, backend_);
    check_tensor(fn, "input", input, backend_);
    check_blocks(fn, input, output, size_, "input");
    const comm::RedOp red = red_of(fn, op, output.dtype());
    npu::Stream s = comm_stream(output.device().index());
    check_hccl(HcclReduceScatter(data(input), data(output), n(output), hccl_type(fn, output.dtype()),
                                 static_cast<HcclReduceOp>(red), comm_, s.raw()),
               fn);
    if (op == ReduceOp::AVG) {
      NoGradGuard g;
      npu::StreamGuard sg(s);
      output.div_(Scalar(static_cast<double>(size_)));
    }
    return work(s, {output, input});
  }
  WorkPtr send(const Tensor& tensor, int dst) override {
    const char* fn = "send";
    check_tensor(fn, "tensor", tensor, backend_);
    npu::Stream s = comm_stream(tensor.device().index());
    check_hccl(HcclSend(data(tensor), n(tensor), hccl_type(fn, tensor.dtype()), static_cast<uint32_t>(dst), comm_,
                        s.raw()),
               fn);
    return work(s, {tensor});
  }
  WorkPtr recv(Tensor& tensor, int src) override {
    const char* fn = "recv";
    check_tensor(fn, "tensor", tensor, backend_);
    npu::Stream s = comm_stream(tensor.device().index());
    check_hccl(HcclRecv(data(tensor), n(tensor), hccl_type(fn, tensor.dtype()), static_cast<uint32_t>(src), comm_,
                        s.raw()),
               fn);
    return work(s, {tensor});
  }
  WorkPtr barrier() override {
    npu::Stream s = comm_stream(npu::current_device());
    check_hccl(HcclBarrier(comm_, s.raw()), "barrier");
    return work(s, {});
  }
  // The group's stream on a device, made on first use (as ProcessGroupNCCL's): collectives
  // overlap the kernels of the current stream. Each collective first waits (on the device) for
  // the work queued so far on the current stream, so it sees its inputs as the caller wrote them.
  npu::Stream comm_stream(int device) {
    npu::Stream s;
    {
      std::lock_guard<std::mutex> lk(streams_mu_);
      auto it = streams_.find(device);
      if (it == streams_.end()) it = streams_.emplace(device, npu::Stream::create(device)).first;
      s = it->second;
    }
    s.wait_stream(npu::current_stream(device));
    return s;
  }
  WorkPtr work(const npu::Stream& s, std::vector<Tensor> keep) {
    bool unknown_memory = false;
    for (const Tensor& t : keep) {
      if (t.numel() == 0) continue;
      try {
        npu::record_stream(t, s);
      } catch (const ValueError&) {
        unknown_memory = true;  // not from the caching allocator (e.g. wrapped aclrtMalloc memory)
      }
    }
    return std::make_shared<StreamWork>(s, std::move(keep), unknown_memory);
  }
  void drain() {
    for (int d = 0; d < npu::device_count(); ++d) npu::synchronize(d);
  }

 private:
  static void* data(const Tensor& t) { return t.numel() ? t.impl()->data() : nullptr; }
  static uint64_t n(const Tensor& t) { return static_cast<uint64_t>(t.numel()); }

  HcclComm comm_;
  std::mutex streams_mu_;
  std::map<int, npu::Stream> streams_;
  int rank_ = 0, size_ = 1;
  const std::string backend_ = "hccl";
};

std::mutex g_mu;
std::unique_ptr<ProcessGroup> g_default;

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
    g_default = std::make_unique<MpiGroup>(std::move(t), options.timeout);
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
  g_default = std::make_unique<HcclGroup>(comm, options.timeout);
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
  if (auto* m = dynamic_cast<MpiGroup*>(g_default.get())) m->drain();
  if (auto* h = dynamic_cast<HcclGroup*>(g_default.get())) h->drain();
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
