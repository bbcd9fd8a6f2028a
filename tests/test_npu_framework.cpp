// ember tensors on the emulated NPU: transfers, streams and events, the caching allocator,
// out-of-memory behaviour, kernel faults surfacing as errors, training parity and steady state.
#include <atomic>
#include <cmath>
#include <thread>

#include "ember/device/npu/runtime.h"
#include "ember/ops/npu_exec.h"
#include "ember/testing/op_info.h"
#include "npu_test_util.h"
#include "test_util.h"

using namespace ember;

namespace {

TEST(NpuTensor, TransfersRoundTripEveryDtypeAndLayout) {
  manual_seed(1);
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kBool}) {
    Tensor c = (randn({5, 7}) * 10).to(dt);
    Tensor n = c.npu();
    EXPECT_TRUE(n.is_npu());
    EXPECT_EQ(n.dtype(), dt);
    EXPECT_TRUE(equal(n.cpu(), c)) << dt;
    EXPECT_TRUE(equal(c.t().npu().cpu(), c.t())) << dt << " (non-contiguous upload)";
    EXPECT_TRUE(equal(n.t().cpu(), c.t())) << dt << " (non-contiguous download)";
    EXPECT_TRUE(equal(n.to(Device("npu:1")).cpu(), c)) << dt << " (npu:0 -> npu:1)";
  }
  Tensor n = arange(10).npu();
  EXPECT_EQ(n[3].item<int64_t>(), 3);
  EXPECT_EQ(n.to_vector<int64_t>()[9], 9);
  EXPECT_EQ(n.to(kFloat32).mean().item<double>(), 4.5);
  Tensor host = zeros({2, 3});
  host.t().copy_(arange(6).reshape({3, 2}).npu());  // device to a strided host view
  EXPECT_EQ(host.to_vector<float>(), (std::vector<float>{0, 2, 4, 1, 3, 5}));
}

TEST(NpuTensor, FactoriesAndRandomNumbersMatchTheCpu) {
  manual_seed(5);
  Tensor c = randn({100});
  manual_seed(5);
  Tensor n = randn({100}, Device("npu:0"));
  EXPECT_TRUE(equal(n.cpu(), c));  // same seed, same values on every device
  EXPECT_TRUE(equal(eye(3, Device("npu:0")).cpu(), eye(3)));
  EXPECT_TRUE(equal(linspace(0, 1, 7, Device("npu:1")).cpu(), linspace(0, 1, 7)));
  EXPECT_TRUE(equal(arange(1.0, 2.0, 0.1, Device("npu:0")).cpu(), arange(1.0, 2.0, 0.1)));
}

TEST(NpuStreams, StreamGuardAndEventsOrderWorkAcrossStreams) {
  npu::Stream s1 = npu::Stream::create(0), s2 = npu::Stream::create(0);
  Tensor x = zeros({1000}, Device("npu:0"));  // filled on the default stream
  npu::Event done;
  {
    npu::StreamGuard g(s1);
    s1.wait_stream(npu::default_stream(0));  // as on CUDA/NPU, cross-stream order is explicit
    EXPECT_EQ(npu::current_stream(0), s1);
    for (int i = 0; i < 20; ++i) x.add_(1);
    done.record();
  }
  EXPECT_EQ(npu::current_stream(0), npu::default_stream(0));
  Tensor y;
  {
    npu::StreamGuard g(s2);
    done.wait(s2);
    y = x * 2;
  }
  s2.synchronize();
  EXPECT_EQ(y.sum().item<double>(), 40000.0);
  npu::Event a, b;
  a.record(s1);
  b.record(s1);
  EXPECT_GE(a.elapsed_time(b), 0.0f);
  s1.destroy();
  s2.destroy();
}

// A tensor made on the default stream and read by a side stream, then freed before the side
// stream got to it: with record_stream the allocator must not hand its memory to the next
// same-size tensor (whose fill would run first and corrupt the side stream's input).
TEST(NpuAllocator, RecordStreamHoldsAFreedBlockUntilTheOtherStreamIsDone) {
  npu::Stream side = npu::Stream::create(0);
  npu::synchronize(0);
  npu::empty_cache();
  std::atomic<bool> release{false};
  // The side stream stays busy until the test releases it (host code standing in for a long kernel).
  npu::detail::resolve_stream(side.raw())->enqueue({"hold", [&] {
                                                       while (!release.load()) std::this_thread::yield();
                                                     }});
  const int64_t n = (int64_t(11) << 20) / 4;  // 11 MiB: a segment of its own, so best fit would reuse it
  const Device npu0("npu:0");
  auto base = [](const Tensor& t) { return t.impl()->storage()->data(); };
  Tensor x = full({n}, 3.0, npu0);
  npu::default_stream(0).synchronize();
  const void* xp = base(x);
  Tensor y;
  {
    npu::StreamGuard g(side);
    y = x * 2.0;  // queued behind the hold
  }
  npu::record_stream(x, side);
  size_t allocated_before_free = npu::memory_allocated(0);
  x = Tensor();
  EXPECT_EQ(npu::memory_allocated(0), allocated_before_free);  // held back, still counted
  Tensor z = full({n}, 7.0, npu0);  // the default stream is not held: this fill runs now
  EXPECT_NE(base(z), xp);
  npu::default_stream(0).synchronize();
  release = true;
  side.synchronize();
  EXPECT_EQ(y.max().item<double>(), 6.0);
  EXPECT_EQ(y.min().item<double>(), 6.0);
  // Once the side stream is done, the block is reclaimed and reused.
  Tensor w = empty({n}, npu0);
  EXPECT_EQ(base(w), xp);
  // Misuse: a tensor of another device, or memory that is not a live allocation's start.
  ember_test::expect_error<DeviceError>([&] { npu::record_stream(ones({2}), side); }, {"npu::record_stream", "cpu"});
  ember_test::expect_error<ValueError>(
      [&] { npu::record_stream(static_cast<const char*>(base(w)) + 512, side); }, {"not the start of a live allocation"});
  side.destroy();
}

TEST(NpuAllocator, StatsCachingAndEmptyCache) {
  npu::synchronize(0);
  npu::empty_cache();
  size_t base = npu::memory_allocated(0);
  uint64_t raw0 = npu::num_raw_allocations(0);
  {
    Tensor t = empty({1 << 20}, Device("npu:0"));  // 4 MiB: a 20 MiB segment of the large pool
    EXPECT_EQ(npu::memory_allocated(0), base + (4u << 20));
    EXPECT_EQ(npu::num_raw_allocations(0), raw0 + 1);
    Tensor u = empty({1 << 20}, Device("npu:0"));  // split from the same segment
    EXPECT_EQ(npu::num_raw_allocations(0), raw0 + 1);
  }
  EXPECT_EQ(npu::memory_allocated(0), base);
  size_t reserved = npu::memory_reserved(0);
  EXPECT_GE(reserved, base + (20u << 20));  // cached, not returned
  { Tensor again = empty({3 << 20}, Device("npu:0")); }  // 12 MiB from the merged free segment
  EXPECT_EQ(npu::num_raw_allocations(0), raw0 + 1);
  EXPECT_GE(npu::max_memory_allocated(0), 12u << 20);
  {
    std::vector<Tensor> small;  // 1000 small tensors share 2 MiB segments
    for (int i = 0; i < 1000; ++i) small.push_back(empty({100}, Device("npu:0")));
    EXPECT_LE(npu::num_raw_allocations(0), raw0 + 2);
  }
  EXPECT_NE(npu::memory_summary(0).find("aclrtMalloc calls"), std::string::npos);
  npu::empty_cache();  // returns every segment without a live block
  EXPECT_LE(npu::memory_reserved(0), reserved - (20u << 20));
  if (base == 0) {
    EXPECT_EQ(npu::memory_reserved(0), 0u);
  }
}

TEST(NpuAllocator, FreedBlocksMergeAndServeOtherSizes) {
  npu::synchronize(0);
  npu::empty_cache();
  uint64_t raw0 = npu::num_raw_allocations(0);
  std::vector<Tensor> ts;
  for (int i = 0; i < 64; ++i) ts.push_back(full({1000}, double(i), Device("npu:0")));  // 4 KiB each
  uint64_t raw1 = npu::num_raw_allocations(0);
  ts.clear();  // all freed: the neighbours merge back into one block
  Tensor big = ones({64 * 1000}, Device("npu:0"));  // 256 KiB fits in the merged space
  EXPECT_EQ(npu::num_raw_allocations(0), raw1);
  EXPECT_LE(raw1, raw0 + 1);
  EXPECT_EQ(big.sum().item<double>(), 64000.0);
}

TEST(NpuAllocator, OutOfMemoryThrowsWithTheSummaryAndTheDeviceStaysUsable) {
  try {
    Tensor huge = empty({int64_t(3) << 30}, Device("npu:0"));  // 12 GiB > the 8 GiB default
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("npu:0 out of memory"), std::string::npos) << msg;
    EXPECT_NE(msg.find("caching allocator"), std::string::npos) << msg;
  }
  Tensor ok = ones({1000}, Device("npu:0"));
  EXPECT_EQ(ok.sum().item<double>(), 1000.0);
}

// A faulty kernel launched through EXEC_NPU_CMD: the error surfaces at the next synchronize, naming it.
npu::aclnnStatus aclnnFrameworkFaultGetWorkspaceSize(const npu::aclTensor* x, uint64_t* ws, npu::aclOpExecutor** ex) {
  npu::TensorRef r = npu::ref(x);
  return npu::make_executor("aclnnFrameworkFault", 32, [r](npu::KernelContext& k) {
    std::memset(k.workspace(), 0, 48);  // 16 bytes too many
  }, ws, ex);
}
npu::aclnnStatus aclnnFrameworkFault(void* w, uint64_t n, npu::aclOpExecutor* e, npu::aclrtStream s) {
  return npu::run_executor("aclnnFrameworkFault", w, n, e, s);
}
Tensor fault_npu(const Tensor& x) {
  EXEC_NPU_CMD(aclnnFrameworkFault, x);
  return x;
}

TEST(NpuErrors, KernelFaultSurfacesAtSynchronizeNamingTheOp) {
  Tensor x = ones({4}, Device("npu:0"));
  fault_npu(x);  // returns at once: the fault is on the device
  ember_test::expect_error<Error>([] { npu::synchronize(0); }, {"aclnnFrameworkFault", "workspace overrun", "507015"});
  npu::synchronize(0);  // reported once; the device keeps working
  EXPECT_EQ((x + 1).sum().item<double>(), 8.0);
}

// A small MLP step: y = relu(x W1^T + b1) W2^T + b2, loss = mse; SGD under NoGradGuard.
double mlp_steps(Device dev, int steps, uint64_t* raw_after_first = nullptr, uint64_t* raw_end = nullptr) {
  manual_seed(3);
  Tensor x = randn({64, 16}).to(dev), t = randn({64, 4}).to(dev);
  Tensor W1 = (randn({32, 16}) * 0.1).to(dev).requires_grad_(), b1 = zeros({32}, dev).requires_grad_();
  Tensor W2 = (randn({4, 32}) * 0.1).to(dev).requires_grad_(), b2 = zeros({4}, dev).requires_grad_();
  double loss_v = 0;
  for (int i = 0; i < steps; ++i) {
    Tensor h = (x.matmul(W1.t()) + b1).relu();
    Tensor loss = (h.matmul(W2.t()) + b2 - t).square().mean();
    loss.backward();
    {
      NoGradGuard ng;
      for (Tensor* p : {&W1, &b1, &W2, &b2}) {
        p->sub_(p->grad(), 0.1);
        p->mutable_grad().zero_();
      }
    }
    loss_v = loss.item<double>();
    if (i == 0 && raw_after_first && dev.is_npu()) *raw_after_first = npu::num_raw_allocations(dev.index());
  }
  if (raw_end && dev.is_npu()) *raw_end = npu::num_raw_allocations(dev.index());
  return loss_v;
}

TEST(NpuTraining, SmallMlpGivesTheSameLossOnCpuAndNpu) {
  double c = mlp_steps(Device("cpu"), 5), n = mlp_steps(Device("npu:0"), 5);
  EXPECT_NEAR(n, c, 1e-5 * std::fabs(c)) << "cpu " << c << " npu " << n;
}

TEST(NpuTraining, SteadyStateMakesNoRawDeviceAllocationsAfterTheFirstStep) {
  uint64_t after_first = 0, at_end = 0;
  mlp_steps(Device("npu:1"), 100, &after_first, &at_end);
  EXPECT_EQ(at_end, after_first) << "aclrtMalloc calls after step 1";
}

}  // namespace

// A kernel's error reaches the host at the next synchronize with its class: an out-of-range
// embedding index, found by the kernel reading device data, is an IndexError there, and a later
// unrelated failure does not inherit that class.
TEST(NpuStreams, AKernelFaultKeepsItsErrorClassAtSynchronize) {
  Device npu0("npu:0");
  Tensor w = ones({4, 3}, npu0);
  Tensor idx = tensor(std::vector<int64_t>{0, 7}).to(npu0);
  Tensor out = embedding(w, idx);  // launched; the kernel finds index 7 when it runs
  EXPECT_THROW(npu::synchronize(), IndexError);
  npu::synchronize();  // the error was cleared with its kind
  try {
    npu::Stream::create(99);
    FAIL() << "device 99 exists?";
  } catch (const IndexError&) {
    FAIL() << "a stale kernel error class leaked into an unrelated failure";
  } catch (const Error&) {
  }
}

// Note [Current device]: a Device without an index is the calling thread's current device, as
// torch's current CUDA device: npu(), Device("npu"), Device(kNPU), factories and .to(kNPU) all
// follow npu::DeviceGuard / aclrtSetDevice; an explicit index still wins; cpu stays cpu.
TEST(NpuFramework, CurrentDeviceIsHonouredWhereNoIndexIsGiven) {
  ASSERT_GE(npu::device_count(), 2);
  EXPECT_EQ(Device("npu"), Device(kNPU, 0));
  {
    npu::DeviceGuard g(1);
    EXPECT_EQ(npu::current_device(), 1);
    EXPECT_EQ(Device("npu").index(), 1);
    EXPECT_EQ(Device(kNPU).index(), 1);
    EXPECT_EQ(Device("npu:0").index(), 0);
    EXPECT_EQ(Device("cpu"), Device(kCPU));
    Tensor c = arange(0, 6);
    EXPECT_EQ(c.npu().device(), Device(kNPU, 1));
    EXPECT_EQ(c.npu(0).device(), Device(kNPU, 0));
    EXPECT_EQ(c.to(kNPU).device(), Device(kNPU, 1));
    EXPECT_EQ(c.to(Device("npu")).device(), Device(kNPU, 1));
    EXPECT_EQ(zeros({2, 3}, kNPU).device(), Device(kNPU, 1));
    EXPECT_EQ(ones({2}, TensorOptions(kNPU).dtype(kBFloat16)).device(), Device(kNPU, 1));
    EXPECT_TRUE(equal(c.npu().cpu(), c));
  }
  EXPECT_EQ(Device("npu").index(), 0);  // the guard restored npu:0
  // The current device is per thread (aclrtSetDevice sets the calling thread's).
  int in_thread = -1, here = -1;
  std::thread t([&] {
    npu::DeviceGuard g(1);
    in_thread = arange(0, 3).npu().device().index();
  });
  t.join();
  here = arange(0, 3).npu().device().index();
  EXPECT_EQ(in_thread, 1);
  EXPECT_EQ(here, 0);
  ember_test::expect_error<ValueError>([] { Device(kNPU, -2); }, {"Device", "-2"});
  ember_test::expect_error<ValueError>([] { Device(kCPU, 1); }, {"cpu has only index 0"});
}
