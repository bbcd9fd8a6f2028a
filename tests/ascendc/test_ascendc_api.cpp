// Ascend C kernels on the emulated NPU: the API computes what CANN documents, launches run every
// core, and each broken rule of scope 3 is a fault naming the kernel, the core and the call.
#include <algorithm>
#include <cmath>

#include <ember/ember.h>

#include "ascendc_test_util.h"

using namespace ascendc_test;

namespace {

constexpr uint32_t kCores = 8, kPerCore = 2048, kTile = 256;

// z = x + y: the double-buffered TQue pipeline of CANN's introductory add sample, in float.
class AddKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
    const int64_t off = kPerCore * AscendC::GetBlockIdx();
    xGm.SetGlobalBuffer((__gm__ float*)x + off, kPerCore);
    yGm.SetGlobalBuffer((__gm__ float*)y + off, kPerCore);
    zGm.SetGlobalBuffer((__gm__ float*)z + off, kPerCore);
    pipe.InitBuffer(inX, 2, kTile * sizeof(float));
    pipe.InitBuffer(inY, 2, kTile * sizeof(float));
    pipe.InitBuffer(outZ, 2, kTile * sizeof(float));
  }
  __aicore__ inline void Process() {
    for (uint32_t i = 0; i < kPerCore / kTile; ++i) {
      AscendC::LocalTensor<float> x = inX.AllocTensor<float>(), y = inY.AllocTensor<float>();
      AscendC::DataCopy(x, xGm[i * kTile], kTile);
      AscendC::DataCopy(y, yGm[i * kTile], kTile);
      inX.EnQue(x);
      inY.EnQue(y);
      x = inX.DeQue<float>();
      y = inY.DeQue<float>();
      AscendC::LocalTensor<float> z = outZ.AllocTensor<float>();
      AscendC::Add(z, x, y, kTile);
      outZ.EnQue(z);
      inX.FreeTensor(x);
      inY.FreeTensor(y);
      z = outZ.DeQue<float>();
      AscendC::DataCopy(zGm[i * kTile], z, kTile);
      outZ.FreeTensor(z);
    }
  }

 private:
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::QuePosition::VECIN, 2> inX, inY;
  AscendC::TQue<AscendC::QuePosition::VECOUT, 2> outZ;
  AscendC::GlobalTensor<float> xGm, yGm, zGm;
};

extern "C" __global__ __aicore__ void add_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
  AddKernel op;
  op.Init(x, y, z);
  op.Process();
}

std::vector<float> iota(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * scale;
  return v;
}

}  // namespace

TEST(AscendC, AddKernelRunsEveryCore) {
  const size_t n = kCores * kPerCore;
  std::vector<float> x = iota(n, 0.5f), y = iota(n, -0.25f);
  DeviceBuf<float> dx(x), dy(y), dz(n);
  ASSERT_EQ(AscendC::ember_launch(add_kernel, "add_kernel", kCores, nullptr, nullptr)(dx.gm(), dy.gm(), dz.gm()), 0u);
  ASSERT_EQ(sync_error(), "");
  std::vector<float> z = dz.host();
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(z[i], x[i] + y[i]) << i;
}

// The profiler draws a launch as one kernel on its stream's track and each core on a row under it.
TEST(AscendC, ProfilerShowsTheLaunchAndItsCores) {
  const size_t n = kCores * kPerCore;
  DeviceBuf<float> dx(iota(n, 1.0f)), dy(iota(n, 2.0f)), dz(n);
  ASSERT_EQ(sync_error(), "");
  ember::profiler::Profile prof;
  ASSERT_EQ(AscendC::ember_launch(add_kernel, "add_kernel", kCores, nullptr, nullptr)(dx.gm(), dy.gm(), dz.gm()), 0u);
  ASSERT_EQ(sync_error(), "");
  prof.stop();
  const ember::profiler::Event* kernel = nullptr;
  std::vector<uint32_t> cores;
  for (const auto& e : prof.events()) {
    if (e.kind == ember::profiler::Event::Kernel && e.name == "add_kernel") kernel = &e;
    if (std::string(e.category) == "core") {
      ASSERT_EQ(e.name.rfind("add_kernel core ", 0), 0u) << e.name;
      cores.push_back(static_cast<uint32_t>(e.track >> ember::profiler::kCoreTrackShift) - 1);
    }
  }
  ASSERT_NE(kernel, nullptr) << "no kernel event named add_kernel";
  std::sort(cores.begin(), cores.end());
  EXPECT_EQ(cores, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  for (const auto& e : prof.events())
    if (std::string(e.category) == "core") {
      EXPECT_EQ(e.device, kernel->device);
      EXPECT_EQ(e.track & ((uint64_t(1) << ember::profiler::kCoreTrackShift) - 1), kernel->track);  // under its stream
      EXPECT_GE(e.start_ns, kernel->start_ns);
      EXPECT_LE(e.end_ns, kernel->end_ns);
    }
  const std::string trace = prof.chrome_trace();
  EXPECT_NE(trace.find("\"stream " + std::to_string(kernel->track) + " core 7\""), std::string::npos);
}
