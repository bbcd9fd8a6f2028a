// Every check of Ascend C's execution model is a named fault: UB overflow, tensor lifetimes, queue
// states, DataCopy alignment, GM bounds (allocation and SetGlobalBuffer), op dtypes, flags, races.
#include <cstdlib>

#include "ascendc_test_util.h"

using namespace ascendc_test;
using AscendC::LocalTensor;
using AscendC::TPosition;

namespace {

using Que = AscendC::TQue<TPosition::VECIN, 1>;

// Each kernel breaks one rule on core 1 of 2 (core 0 runs clean), so the fault names core 1.
#define ON_CORE_1 if (AscendC::GetBlockIdx() != 1) return

void ub_overflow(GM_ADDR) {
  ON_CORE_1;
  AscendC::TPipe pipe;
  Que q1, q2;
  pipe.InitBuffer(q1, 2, 64 * 1024);
  pipe.InitBuffer(q2, 2, 64 * 1024);  // 256 KiB > 192 KiB
}
void use_after_free(GM_ADDR x) {
  ON_CORE_1;
  AscendC::TPipe pipe;
  Que q;
  pipe.InitBuffer(q, 1, 256);
  AscendC::GlobalTensor<float> g;
  g.SetGlobalBuffer((__gm__ float*)x, 64);
  LocalTensor<float> t = q.AllocTensor<float>();
  q.FreeTensor(t);
  AscendC::DataCopy(t, g, 64);
}
void dequeue_empty(GM_ADDR) {
  ON_CORE_1;
  AscendC::TPipe pipe;
  Que q;
  pipe.InitBuffer(q, 2, 256);
  (void)q.DeQue<float>();
}
void alloc_past_depth(GM_ADDR) {
  ON_CORE_1;
  AscendC::TPipe pipe;
  Que q;
  pipe.InitBuffer(q, 2, 256);
  for (int i = 0; i < 3; ++i) (void)q.AllocTensor<float>();
}
void unaligned_copy(GM_ADDR x) {
  ON_CORE_1;
  AscendC::TPipe pipe;
  Que q;
  pipe.InitBuffer(q, 1, 256);
  AscendC::GlobalTensor<half> g;
  g.SetGlobalBuffer((__gm__ half*)x, 64);
  LocalTensor<half> t = q.AllocTensor<half>();
  AscendC::DataCopy(t, g, 10);  // 20 bytes
}
void past_allocation(GM_ADDR x) {
  ON_CORE_1;
  AscendC::TPipe pipe;
  Que q;
  pipe.InitBuffer(q, 1, 1024);
  AscendC::GlobalTensor<float> g;
  g.SetGlobalBuffer((__gm__ float*)x);  // no length: the allocation bounds it
  LocalTensor<float> t = q.AllocTensor<float>();
  AscendC::DataCopy(t, g[64], 128);  // elements [64, 192) of a 128-element allocation
}
void past_global_buffer(GM_ADDR x) {
  ON_CORE_1;
  AscendC::TPipe pipe;
  Que q;
  pipe.InitBuffer(q, 1, 1024);
  AscendC::GlobalTensor<float> g;
  g.SetGlobalBuffer((__gm__ float*)x, 32);
  LocalTensor<float> t = q.AllocTensor<float>();
  AscendC::DataCopy(t, g[16], 64);  // the allocation has room, SetGlobalBuffer's 32 elements do not
}
void bf16_add(GM_ADDR) {
  ON_CORE_1;
  AscendC::TPipe pipe;
  AscendC::TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 1024);
  LocalTensor<bfloat16_t> t = b.Get<bfloat16_t>();
  AscendC::Add(t, t, t, 128);
}
void count_past_tensor(GM_ADDR) {
  ON_CORE_1;
  AscendC::TPipe pipe;
  AscendC::TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 256);
  LocalTensor<float> t = b.Get<float>();
  AscendC::Exp(t, t, 128);  // 64 elements in the buffer
}
void cube_queue(GM_ADDR) {
  ON_CORE_1;
  AscendC::TPipe pipe;
  AscendC::TQue<TPosition::A1, 1> a1;
  pipe.InitBuffer(a1, 1, 1024);
}
void wait_without_set(GM_ADDR) {
  ON_CORE_1;
  AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(0);
  AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(0);
  AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(1);
}

std::string run(void (*kernel)(GM_ADDR), const char* name, void* arg) {
  EXPECT_EQ(AscendC::ember_launch(kernel, name, 2, nullptr, nullptr)(arg), 0u);
  return sync_error();
}

}  // namespace

#define EXPECT_FAULT(kernel, arg, ...)                                                   \
  do {                                                                                   \
    const std::string m = run(kernel, #kernel, arg);                                     \
    EXPECT_NE(m.find("kernel fault in " #kernel), std::string::npos) << m;               \
    EXPECT_NE(m.find("kernel " #kernel ", core 1 of 2: "), std::string::npos) << m;      \
    for (const char* part : {__VA_ARGS__}) EXPECT_NE(m.find(part), std::string::npos) << part << "\n" << m; \
  } while (0)

TEST(AscendCChecks, InitBufferBeyondTheUnifiedBuffer) {
  EXPECT_FAULT(ub_overflow, nullptr, "TPipe::InitBuffer: the queue's buffers needs 131072 bytes of the Unified Buffer",
               "131072 of its 196608 bytes are in use already");
}
TEST(AscendCChecks, LocalTensorUsedAfterFreeTensor) {
  DeviceBuf<float> x(64);
  EXPECT_FAULT(use_after_free, x.p, "DataCopy(GM -> UB): dst is a LocalTensor used after FreeTensor");
}
TEST(AscendCChecks, DeQueOfAnEmptyQueue) {
  EXPECT_FAULT(dequeue_empty, nullptr, "TQue::DeQue: the VECIN queue is empty", "waits forever");
}
TEST(AscendCChecks, AllocTensorPastTheQueuesBuffers) {
  EXPECT_FAULT(alloc_past_depth, nullptr, "TQue::AllocTensor: all 2 buffers of this VECIN queue are allocated",
               "FreeTensor one first");
}
TEST(AscendCChecks, DataCopyOfPartialBlocks) {
  DeviceBuf<half> x(64);
  EXPECT_FAULT(unaligned_copy, x.p, "DataCopy(GM -> UB): 10 elements of half are 20 bytes, not a multiple of 32",
               "DataCopyPad");
}
TEST(AscendCChecks, GlobalMemoryOutsideTheAllocation) {
  DeviceBuf<float> x(128);
  EXPECT_FAULT(past_allocation, x.p, "DataCopy(GM -> UB): src reaches bytes [256, 768)",
               "outside its aclrtMalloc allocation of 512 bytes");
}
TEST(AscendCChecks, GlobalMemoryOutsideSetGlobalBuffer) {
  DeviceBuf<float> x(1024);
  EXPECT_FAULT(past_global_buffer, x.p, "src reaches elements [16, 80) of a GlobalTensor<float> of 32 elements");
}
TEST(AscendCChecks, GlobalMemoryNotAllocated) {
  std::vector<float> host(64);
  EXPECT_FAULT(past_global_buffer, host.data(), "which is in no live aclrtMalloc allocation");
}
TEST(AscendCChecks, ElementTypeTheOpDoesNotTake) {
  EXPECT_FAULT(bf16_add, nullptr, "Add: bfloat16_t is not an element type of this op on Atlas A2",
               "int16_t, half, int32_t, float");
}
TEST(AscendCChecks, CountPastTheTensor) {
  EXPECT_FAULT(count_past_tensor, nullptr, "Exp: dst (LocalTensor<float> of 64 elements at UB offset 0) is used for 128 elements");
}
TEST(AscendCChecks, TheCubePathIsNotEmulated) {
  EXPECT_FAULT(cube_queue, nullptr, "TPipe::InitBuffer: a queue at a cube position", "the cube path");
}
TEST(AscendCChecks, WaitFlagWithoutSetFlag) {
  EXPECT_FAULT(wait_without_set, nullptr, "WaitFlag: event 7 id 1 was never set");
}
TEST(AscendCChecks, BlockDimZeroIsRefused) {
  EXPECT_EQ(AscendC::ember_launch(ub_overflow, "ub_overflow", 0, nullptr, nullptr)(nullptr),
            static_cast<uint32_t>(ACL_ERROR_RT_PARAM_INVALID));
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("blockDim 0 is not 1 to 65535"), std::string::npos);
}
TEST(AscendCChecks, TheStreamRunsOnAfterAFault) {
  DeviceBuf<float> x(64);
  run(use_after_free, "use_after_free", x.p);
  EXPECT_EQ(run(ub_overflow, "fine_on_core_0", nullptr).find("core 0"), std::string::npos);
}

namespace {
// Every core writes its 64 floats and reads its right neighbour's: with 2 cores, core 0 reads
// what core 1 writes.
void neighbour_read(GM_ADDR x) {
  AscendC::TPipe pipe;
  AscendC::TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 512);
  AscendC::GlobalTensor<float> g;
  g.SetGlobalBuffer((__gm__ float*)x, 64 * AscendC::GetBlockNum());
  LocalTensor<float> t = b.Get<float>();
  const int64_t me = AscendC::GetBlockIdx(), next = (me + 1) % AscendC::GetBlockNum();
  AscendC::Duplicate(t, 1.0f, 64);
  AscendC::DataCopy(g[me * 64], t, 64);
  if (me == 0) AscendC::DataCopy(t[64], g[next * 64], 64);
}
// Each core its own slice: no conflict.
void own_slice(GM_ADDR x) {
  AscendC::TPipe pipe;
  AscendC::TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 256);
  AscendC::GlobalTensor<float> g;
  g.SetGlobalBuffer((__gm__ float*)x + 64 * AscendC::GetBlockIdx(), 64);
  LocalTensor<float> t = b.Get<float>();
  AscendC::DataCopy(t, g, 64);
  AscendC::Adds(t, t, 1.0f, 64);
  AscendC::DataCopy(g, t, 64);
}
struct RaceMode {
  RaceMode() { setenv("EMBER_ASCENDC_RACE", "1", 1); }
  ~RaceMode() { unsetenv("EMBER_ASCENDC_RACE"); }
};
}  // namespace

TEST(AscendCChecks, RaceModeReportsAWriteReadByAnotherCore) {
  DeviceBuf<float> x(128);
  {
    RaceMode on;
    const std::string m = run(neighbour_read, "neighbour_read", x.p);
    EXPECT_NE(m.find("kernel neighbour_read: race between cores (EMBER_ASCENDC_RACE): core 1 writes global memory"),
              std::string::npos) << m;
    EXPECT_NE(m.find("in DataCopy(UB -> GM), which core 0 reads in DataCopy(GM -> UB)"), std::string::npos) << m;
    EXPECT_EQ(run(own_slice, "own_slice", x.p), "");
  }
  EXPECT_EQ(run(neighbour_read, "neighbour_read", x.p), "");  // off by default: not looked for
}
