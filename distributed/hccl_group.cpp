// The "hccl" process group: npu tensors through the emulated HCCL's C API, on the group's
// communication stream of each device, ordered after the work of the current stream.
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/device/npu/hccl_ext.h"
#include "ember/device/npu/npu.h"
#include "ember/distributed/groups.h"
#include "ember/ops/npu_exec.h"
#include "hccl/hccl.h"

namespace ember {
namespace distributed {
namespace detail {
namespace {

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
    case kInt16: return HCCL_DATA_TYPE_INT16;
  }
  throw DTypeError(std::string(fn) + ": unsupported dtype " + dtype_name(t));
}

class HcclGroup final : public GroupImpl {
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
  void drain() override {
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

}  // namespace

std::unique_ptr<GroupImpl> make_hccl_group(HcclComm comm, std::chrono::milliseconds timeout) {
  return std::make_unique<HcclGroup>(comm, timeout);
}

}  // namespace detail
}  // namespace distributed
}  // namespace ember
