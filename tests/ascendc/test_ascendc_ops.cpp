// The Ascend C instructions compute what CANN documents: the mask/repeat geometry, DataCopyPad's
// padding and gaps, Cast's round modes, Compare/Select, the reductions, atomic adds, debug output,
// and CANN's CPU debug entry points (ICPU_RUN_KF on GmAlloc memory). Run with ICPU_RUN_KF: every
// core still has its UB and every check.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ascendc_test_util.h"

using AscendC::LocalTensor;
using AscendC::TPosition;

namespace {

// One UB buffer of 64 KiB as `n` elements of T, for a single-core body.
template <class T>
LocalTensor<T> ub(AscendC::TPipe& pipe, AscendC::TBuf<TPosition::VECCALC>& buf, uint32_t bytes = 65536) {
  pipe.InitBuffer(buf, bytes);
  return buf.Get<T>();
}

// ---- mask / repeat: Add over 2 repeats of 64 floats, the first 32 of each (continuous mask), with
// src1's repeats 16 blocks apart and dst's blocks 2 apart.
void repeat_add(GM_ADDR io) {
  AscendC::TPipe pipe;
  AscendC::TBuf<TPosition::VECCALC> b;
  LocalTensor<float> t = ub<float>(pipe, b);
  LocalTensor<float> a = t, c = t[1024], d = t[4096];
  for (uint32_t i = 0; i < 1024; ++i) {
    a.SetValue(i, static_cast<float>(i));
    c.SetValue(i, 1000.0f * static_cast<float>(i));
  }
  AscendC::Duplicate(d, -1.0f, 2048);
  AscendC::BinaryRepeatParams p(2, 1, 1, 16, 8, 16);
  AscendC::Add(d, a, c, uint64_t(32), 2, p);
  AscendC::GlobalTensor<float> g;
  g.SetGlobalBuffer((__gm__ float*)io, 2048);
  AscendC::DataCopy(g, d, 2048);
}

// ---- bitwise mask on half: every other element of one repeat (128 halves)
void bitmask_muls(GM_ADDR io) {
  AscendC::TPipe pipe;
  AscendC::TBuf<TPosition::VECCALC> b;
  LocalTensor<half> t = ub<half>(pipe, b);
  for (uint32_t i = 0; i < 128; ++i) t.SetValue(i, half(static_cast<float>(i)));
  uint64_t mask[2] = {0x5555555555555555ull, 0x5555555555555555ull};
  AscendC::Muls(t, t, half(2.0f), mask, 1, AscendC::UnaryRepeatParams());
  AscendC::GlobalTensor<half> g;
  g.SetGlobalBuffer((__gm__ half*)io, 128);
  AscendC::DataCopy(g, t, 128);
}

// ---- DataCopyPad: 3 rows of 5 floats, 7 floats apart in GM, padded with -9 to 8 in UB, then
// written back 6 floats apart.
void pad_copy(GM_ADDR in, GM_ADDR out) {
  AscendC::TPipe pipe;
  AscendC::TBuf<TPosition::VECCALC> b;
  LocalTensor<float> t = ub<float>(pipe, b);
  AscendC::GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, 19);
  go.SetGlobalBuffer((__gm__ float*)out, 17);
  AscendC::DataCopyPad(t, gi, AscendC::DataCopyExtParams(3, 5 * sizeof(float), 2 * sizeof(float), 0, 0),
                       AscendC::DataCopyPadExtParams<float>(true, 0, 3, -9.0f));
  AscendC::GlobalTensor<float> staged;
  staged.SetGlobalBuffer((__gm__ float*)out + 17, 24);  // the padded UB rows, as they are
  AscendC::DataCopy(staged, t, 24);
  AscendC::DataCopyPad(go, t, AscendC::DataCopyExtParams(3, 5 * sizeof(float), 0, 1 * sizeof(float), 0));
}

// ---- Cast: 1 + 2^-12 (between two halves) in every round mode, and -2.5 to int32
void casts(GM_ADDR out) {
  AscendC::TPipe pipe;
  AscendC::TBuf<TPosition::VECCALC> b;
  LocalTensor<uint8_t> t = ub<uint8_t>(pipe, b);
  LocalTensor<float> f = t.ReinterpretCast<float>();
  LocalTensor<half> h = t[4096].ReinterpretCast<half>();
  LocalTensor<int32_t> i32 = t[8192].ReinterpretCast<int32_t>();
  AscendC::GlobalTensor<float> g;
  g.SetGlobalBuffer((__gm__ float*)out, 16);
  const float x = 1.0f + 0x1p-12f;  // halves near 1 are 2^-10 apart
  AscendC::Duplicate(f, x, 16);
  AscendC::Duplicate(f[16], -2.5f, 16);
  const AscendC::RoundMode modes[] = {AscendC::RoundMode::CAST_RINT, AscendC::RoundMode::CAST_FLOOR,
                                      AscendC::RoundMode::CAST_CEIL, AscendC::RoundMode::CAST_TRUNC,
                                      AscendC::RoundMode::CAST_ROUND, AscendC::RoundMode::CAST_ODD};
  for (int m = 0; m < 6; ++m) {
    AscendC::Cast(h, f, modes[m], 16);
    g.SetValue(m, static_cast<float>(h.GetValue(0)));
  }
  for (int m = 0; m < 5; ++m) {
    AscendC::Cast(i32, f[16], modes[m], 16);
    g.SetValue(6 + m, static_cast<float>(i32.GetValue(0)));
  }
}

// ---- Compare (LT) + Select, and the reductions
void compare_select_reduce(GM_ADDR out) {
  AscendC::TPipe pipe;
  AscendC::TBuf<TPosition::VECCALC> b;
  LocalTensor<float> t = ub<float>(pipe, b);
  LocalTensor<float> x = t, y = t[64], s = t[128], work = t[192], r = t[256];
  LocalTensor<uint8_t> m = t[320].ReinterpretCast<uint8_t>();
  for (uint32_t i = 0; i < 64; ++i) {
    x.SetValue(i, static_cast<float>(i));
    y.SetValue(i, 63.0f - static_cast<float>(i));
  }
  AscendC::Compare(m, x, y, AscendC::CMPMODE::LT, 64);  // x < y for i < 32
  AscendC::Select(s, m, x, y, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, 64);  // min(x, y)
  AscendC::ReduceSum(r, s, work, 64);
  AscendC::ReduceMax(r[8], x, work, 64, true);
  AscendC::GlobalTensor<float> g;
  g.SetGlobalBuffer((__gm__ float*)out, 4);
  g.SetValue(0, r.GetValue(0));
  g.SetValue(1, r.GetValue(8));
  uint32_t idx;
  const float bits = r.GetValue(9);
  std::memcpy(&idx, &bits, 4);
  g.SetValue(2, static_cast<float>(idx));
  g.SetValue(3, s.GetValue(40));
}

// ---- SetAtomicAdd: every core adds its ones into the same 64 floats
void atomic_sum(GM_ADDR out) {
  AscendC::TPipe pipe;
  AscendC::TBuf<TPosition::VECCALC> b;
  LocalTensor<float> t = ub<float>(pipe, b, 256);
  AscendC::Duplicate(t, 1.0f, 64);
  AscendC::GlobalTensor<float> g;
  g.SetGlobalBuffer((__gm__ float*)out, 64);
  AscendC::SetAtomicAdd<float>();
  AscendC::DataCopy(g, t, 64);
  AscendC::SetAtomicNone();
}

void prints(GM_ADDR) {
  AscendC::TPipe pipe;
  AscendC::TBuf<TPosition::VECCALC> b;
  LocalTensor<float> t = ub<float>(pipe, b, 256);
  AscendC::Duplicate(t, 1.5f, 4);
  AscendC::printf("hello from %d\n", 42);
  AscendC::DumpTensor(t, 7, 4);
}

void overflow(GM_ADDR x) {
  AscendC::GlobalTensor<float> g;
  g.SetGlobalBuffer((__gm__ float*)x, 8);
  (void)g.GetValue(8);
}

template <class T>
struct Gm {
  explicit Gm(size_t n) : n(n), p(static_cast<T*>(AscendC::GmAlloc(n * sizeof(T)))) { std::memset(static_cast<void*>(p), 0, n * sizeof(T)); }
  ~Gm() { AscendC::GmFree(p); }
  GM_ADDR gm() const { return reinterpret_cast<GM_ADDR>(p); }
  size_t n;
  T* p;
};

}  // namespace

TEST(AscendCOps, RepeatFormWalksBlocksAndRepeatsUnderTheMask) {
  Gm<float> io(2048);
  ICPU_RUN_KF(repeat_add, 1, io.gm());
  // repeat r, element e < 32: block e / 8 at dst r*16 + (e/8)*2 blocks, src0 r*8, src1 r*16 blocks
  std::vector<float> want(2048, -1.0f);
  for (int r = 0; r < 2; ++r)
    for (int e = 0; e < 32; ++e) {
      const int blk = e / 8, k = e % 8;
      const int d = (r * 16 + blk * 2) * 8 + k, a = (r * 8 + blk) * 8 + k, c = (r * 16 + blk) * 8 + k;
      want[d] = static_cast<float>(a) + 1000.0f * static_cast<float>(c);
    }
  for (int i = 0; i < 2048; ++i) ASSERT_EQ(io.p[i], want[i]) << i;
}

TEST(AscendCOps, BitwiseMaskSelectsElements) {
  Gm<half> io(128);
  ICPU_RUN_KF(bitmask_muls, 1, io.gm());
  for (int i = 0; i < 128; ++i) ASSERT_EQ(static_cast<float>(io.p[i]), i % 2 == 0 ? 2.0f * i : 1.0f * i) << i;
}

TEST(AscendCOps, DataCopyPadPadsRowsAndKeepsGaps) {
  Gm<float> in(19), out(17 + 24);
  for (int i = 0; i < 19; ++i) in.p[i] = static_cast<float>(i);
  ICPU_RUN_KF(pad_copy, 1, in.gm(), out.gm());
  // UB: rows of 8 = 5 values (GM rows start 7 apart) + 3 padding values
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 8; ++k) EXPECT_EQ(out.p[17 + r * 8 + k], k < 5 ? static_cast<float>(r * 7 + k) : -9.0f);
  // back to GM: rows of 5, 6 apart (a gap of one element, left as it was: 0)
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 6 && r * 6 + k < 17; ++k)
      EXPECT_EQ(out.p[r * 6 + k], k < 5 ? static_cast<float>(r * 7 + k) : 0.0f) << r << " " << k;
}

TEST(AscendCOps, CastRoundsByItsMode) {
  Gm<float> out(16);
  ICPU_RUN_KF(casts, 1, out.gm());
  const float lo = 1.0f, hi = 1.0f + 0x1p-10f;  // the halves around 1 + 2^-12
  EXPECT_EQ(out.p[0], lo);  // RINT: nearest
  EXPECT_EQ(out.p[1], lo);  // FLOOR
  EXPECT_EQ(out.p[2], hi);  // CEIL
  EXPECT_EQ(out.p[3], lo);  // TRUNC
  EXPECT_EQ(out.p[4], lo);  // ROUND: nearest, ties away
  EXPECT_EQ(out.p[5], hi);  // ODD: the neighbour with an odd last bit
  EXPECT_EQ(out.p[6], -2.0f);  // -2.5: RINT to even
  EXPECT_EQ(out.p[7], -3.0f);  // FLOOR
  EXPECT_EQ(out.p[8], -2.0f);  // CEIL
  EXPECT_EQ(out.p[9], -2.0f);  // TRUNC
  EXPECT_EQ(out.p[10], -3.0f); // ROUND: away from zero
}

TEST(AscendCOps, CompareSelectAndReductions) {
  Gm<float> out(4);
  ICPU_RUN_KF(compare_select_reduce, 1, out.gm());
  float sum = 0;
  for (int i = 0; i < 64; ++i) sum += std::min<float>(i, 63 - i);
  EXPECT_EQ(out.p[0], sum);
  EXPECT_EQ(out.p[1], 63.0f);  // ReduceMax
  EXPECT_EQ(out.p[2], 63.0f);  // its index
  EXPECT_EQ(out.p[3], 23.0f);  // min(40, 23)
}

TEST(AscendCOps, AtomicAddsOfAllCoresAccumulate) {
  Gm<float> out(64);
  ICPU_RUN_KF(atomic_sum, 6, out.gm());
  for (int i = 0; i < 64; ++i) ASSERT_EQ(out.p[i], 6.0f);
  // Atomic adds of two cores to the same bytes are no race.
  setenv("EMBER_ASCENDC_RACE", "1", 1);
  EXPECT_NO_THROW(ICPU_RUN_KF(atomic_sum, 6, out.gm()));
  unsetenv("EMBER_ASCENDC_RACE");
  EXPECT_EQ(out.p[0], 12.0f);
}

TEST(AscendCOps, PrintfAndDumpTensorNameTheCore) {
  testing::internal::CaptureStdout();
  ICPU_RUN_KF(prints, 1, nullptr);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("[core 0] hello from 42"), std::string::npos) << out;
  EXPECT_NE(out.find("DumpTensor: core 0, desc=7"), std::string::npos) << out;
  EXPECT_NE(out.find("1.5, 1.5, 1.5, 1.5"), std::string::npos) << out;
}

TEST(AscendCOps, CpuDebugFaultsThrowKernelError) {
  Gm<float> x(8);
  try {
    ICPU_RUN_KF(overflow, 2, x.gm());
    FAIL() << "no fault";
  } catch (const AscendC::KernelError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("kernel overflow, core 0 of 2: GlobalTensor::GetValue: the tensor reaches elements [8, 9) of a "
                     "GlobalTensor<float> of 8 elements"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("(and 1 more of the 2 cores failed)"), std::string::npos) << m;
  }
}
