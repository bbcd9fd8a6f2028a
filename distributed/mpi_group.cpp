// The "mpi" process group: cpu tensors over device/comm's MPI group, driven by one worker thread
// per group (FutureWork finishes when the worker is done).
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "ember/autograd/grad_mode.h"
#include "ember/distributed/groups.h"

namespace ember {
namespace distributed {
namespace detail {
namespace {

// ---- "mpi": cpu tensors over device/comm's MPI group ----
class MpiGroup final : public GroupImpl {
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
  void drain() override {
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

}  // namespace

std::unique_ptr<GroupImpl> make_mpi_group(std::shared_ptr<comm::Transport> t, std::chrono::milliseconds timeout) {
  return std::make_unique<MpiGroup>(std::move(t), timeout);
}

}  // namespace detail
}  // namespace distributed
}  // namespace ember
