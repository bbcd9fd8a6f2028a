// The CPU GEMM engines (device/cpu/gemm.h): which path each dtype takes on this CPU, and every
// path against a float64 product of the same (rounded) inputs, in the layouts the ops produce.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <ember/device/cpu/gemm.h>
#include <ember/device/cpu/isa.h>
#include <ember/device/cpu/packed_gemm.h>
#include <ember/device/roofline.h>

#include "test_util.h"

using namespace ember;
using cpu::Isa;
using cpu::Matrix;

namespace {

// A dense buffer of one dtype holding values given as doubles (rounded to the dtype on store).
struct Buffer {
  DType dtype;
  std::vector<unsigned char> bytes;
  Buffer(DType dt, int64_t n) : dtype(dt), bytes(static_cast<size_t>(n) * element_size(dt)) {}
  void* data() { return bytes.data(); }
  void set(int64_t i, double v) {
    visit_dtype(dtype, [&](auto tag) { reinterpret_cast<decltype(tag)*>(bytes.data())[i] = decltype(tag)(static_cast<float>(v)); });
  }
  double get(int64_t i) const {
    double r = 0;
    visit_dtype(dtype, [&](auto tag) { r = static_cast<double>(static_cast<float>(reinterpret_cast<const decltype(tag)*>(bytes.data())[i])); });
    return r;
  }
};

Matrix mat(Buffer& buf, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t bs = 0) {
  return Matrix{buf.data(), buf.dtype, rows, cols, rs, cs, bs};
}

double at(const Buffer& buf, const Matrix& m, int64_t b, int64_t i, int64_t j) {
  return buf.get(b * m.batch_stride + i * m.row_stride + j * m.col_stride);
}

// Fills every element x can address with N(0, 1) values (rounded to x's dtype).
void fill_randn(Buffer& buf, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> nd;
  int64_t n = static_cast<int64_t>(buf.bytes.size() / element_size(buf.dtype));
  for (int64_t i = 0; i < n; ++i) buf.set(i, nd(gen));
}

// x's batch entry z as a dense float64 matrix.
std::vector<double> dense(const Buffer& buf, const Matrix& x, int64_t z) {
  std::vector<double> d(static_cast<size_t>(x.rows * x.cols));
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t j = 0; j < x.cols; ++j) d[static_cast<size_t>(i * x.cols + j)] = at(buf, x, z, i, j);
  return d;
}

// Largest |c - ref| / (atol + rtol |ref|) over the batch, ref the float64 product of the stored
// (already rounded) inputs: below 1 passes.
double worst(int64_t batch, const Buffer& ab, const Matrix& a, const Buffer& bb, const Matrix& b, const Buffer& cb,
             const Matrix& c, double rtol, double atol) {
  double w = 0;
  const int64_t M = a.rows, K = a.cols, N = b.cols;
  for (int64_t z = 0; z < batch; ++z) {
    std::vector<double> A = dense(ab, a, z), B = dense(bb, b, z), C = dense(cb, c, z), ref(static_cast<size_t>(M * N));
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k) {
        const double aik = A[static_cast<size_t>(i * K + k)];
        for (int64_t j = 0; j < N; ++j) ref[static_cast<size_t>(i * N + j)] += aik * B[static_cast<size_t>(k * N + j)];
      }
    for (size_t e = 0; e < ref.size(); ++e) w = std::max(w, std::fabs(C[e] - ref[e]) / (atol + rtol * std::fabs(ref[e])));
  }
  return w;
}

// Output rounding (bf16 2^-8, fp16 2^-11 relative) plus fp32 accumulation over K <= 300 terms
// of unit variance (~1e-5 absolute).
double rtol_of(DType dt) { return dt == kBFloat16 ? 8e-3 : dt == kFloat16 ? 1e-3 : 1e-5; }
double atol_of(DType dt) { return dt == kBFloat16 ? 2e-2 : dt == kFloat16 ? 4e-3 : 1e-4; }

// A 64-byte aligned scratch of n bytes followed by 4 KiB of canary bytes.
struct Scratch {
  std::vector<unsigned char> bytes;
  size_t n, offset;
  explicit Scratch(size_t need) : bytes(need + 4096 + 64, 0xA5), n(need) {
    offset = (64 - reinterpret_cast<uintptr_t>(bytes.data()) % 64) % 64;
  }
  unsigned char* data() { return bytes.data() + offset; }
  void expect_canary_intact() const {
    for (size_t i = offset + n; i < bytes.size(); ++i)
      ASSERT_EQ(bytes[i], 0xA5) << "byte " << i - offset - n << " past the scratch";
    for (size_t i = 0; i < offset; ++i) ASSERT_EQ(bytes[i], 0xA5) << "byte " << offset - i << " before the scratch";
  }
};

// Where bf16 (without native units) and f16 go on this CPU under the cap.
bool is_16bit_path(const std::string& path) {
  return cpu::packed_gemm_enabled() ? path == "packed" : path.rfind("staged_", 0) == 0;
}

}  // namespace

TEST(Gemm, Bf16RunsNativelyOnlyWhereTheCpuHasBf16Units) {
  Buffer x(kBFloat16, 1);
  Matrix a = mat(x, 256, 256, 256, 1), b = mat(x, 256, 256, 256, 1), c = mat(x, 256, 256, 256, 1);
  if (!cpu::cpu_has(Isa::Avx512Bf16)) {
    EXPECT_FALSE(cpu::gemm_native_bf16());
  }
  std::string path = cpu::gemm_path(1, a, b, c);
  if (cpu::gemm_native_bf16()) {
    EXPECT_EQ(path, "onednn");
    EXPECT_EQ(cpu::gemm_scratch_bytes(1, a, b, c), 0u);
  } else {
    EXPECT_TRUE(is_16bit_path(path)) << path;
    EXPECT_GT(cpu::gemm_scratch_bytes(1, a, b, c), 0u);
  }
  // ember's packed kernel is the 16-bit path exactly where the ISA (under the cap) is AVX2.
  EXPECT_EQ(cpu::packed_gemm_enabled(), cpu::cpu_info().effective() == Isa::Avx2);
  // fp16 never runs natively (oneDNN 2.6 has no f16 matmul); f64 and integers run on Eigen.
  Buffer h(kFloat16, 1), d(kFloat64, 1);
  Matrix ha = mat(h, 256, 256, 256, 1), da = mat(d, 256, 256, 256, 1);
  EXPECT_TRUE(is_16bit_path(cpu::gemm_path(1, ha, ha, ha))) << cpu::gemm_path(1, ha, ha, ha);
  EXPECT_STREQ(cpu::gemm_path(1, da, da, da), "eigen");
}

TEST(Gemm, CpuInfoIsConsistent) {
  const cpu::CpuInfo& ci = cpu::cpu_info();
  EXPECT_FALSE(ci.model.empty());
  EXPECT_LE(static_cast<int>(ci.effective()), static_cast<int>(ci.detected));
  EXPECT_LE(static_cast<int>(ci.effective()), static_cast<int>(ci.cap));
  EXPECT_NE(cpu::cpu_summary().find(ci.model), std::string::npos);
  EXPECT_TRUE(cpu::cpu_has(Isa::Baseline));
}

// The staged path with an 8 MiB panel budget (64 MiB outside tests), so these small problems
// take several panels.
struct SmallPanels {
  int64_t saved = cpu::set_staged_panel_bytes(int64_t(8) << 20);
  ~SmallPanels() { cpu::set_staged_panel_bytes(saved); }
};

// Every staged layout: A row-major or transposed, B row-major or transposed, C dense or with a
// padded row stride; enough rows for three panels (K + N = 8192 makes 256-row panels).
TEST(Gemm, StagedPanelsAgreeWithFloat64InEveryLayout) {
  SmallPanels small;
  const int64_t M = 560, K = 16, N = 8176;
  for (DType dt : {kFloat16, kBFloat16}) {
    for (bool a_t : {false, true})
      for (bool b_t : {false, true})
        for (bool c_pad : {false, true}) {
          SCOPED_TRACE(std::string(dtype_name(dt)) + (a_t ? " A^T" : "") + (b_t ? " B^T" : "") + (c_pad ? " C padded" : ""));
          Buffer ab(dt, M * K), bb(dt, K * N), cb(dt, M * (N + 8));
          fill_randn(ab, 1);
          fill_randn(bb, 2);
          Matrix a = a_t ? mat(ab, M, K, 1, M) : mat(ab, M, K, K, 1);
          Matrix b = b_t ? mat(bb, K, N, 1, K) : mat(bb, K, N, N, 1);
          Matrix c = mat(cb, M, N, c_pad ? N + 8 : N, 1);
          cpu::gemm(1, a, b, c);
          EXPECT_LT(worst(1, ab, a, bb, b, cb, c, rtol_of(dt), atol_of(dt)), 1.0);
        }
  }
}

// Operands without a unit stride are staged (packed, for 16-bit on AVX2) in every dtype.
TEST(Gemm, OperandsWithoutUnitStrideAreStagedCorrectly) {
  const int64_t M = 300, K = 257, N = 190;
  for (DType dt : {kFloat32, kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    Buffer ab(dt, M * K * 2), bb(dt, K * N), cb(dt, M * N);
    fill_randn(ab, 3);
    fill_randn(bb, 4);
    Matrix a = mat(ab, M, K, 2 * K, 2);  // every other element
    Matrix b = mat(bb, K, N, N, 1), c = mat(cb, M, N, N, 1);
    std::string path = cpu::gemm_path(1, a, b, c);
    if (dt == kFloat32)
      EXPECT_EQ(path.rfind("staged_", 0), 0u) << path;
    else
      EXPECT_TRUE(is_16bit_path(path)) << path;
    cpu::gemm(1, a, b, c);
    EXPECT_LT(worst(1, ab, a, bb, b, cb, c, rtol_of(dt), atol_of(dt)), 1.0);
  }
}

// Batches: B shared by every batch entry (batch stride 0) or one per entry; every path.
TEST(Gemm, BatchesWithSharedAndPerEntryOperands) {
  const int64_t Z = 3, M = 70, K = 50, N = 90;
  for (DType dt : {kFloat32, kBFloat16, kFloat16, kFloat64}) {
    for (bool shared_b : {false, true}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + (shared_b ? " shared B" : ""));
      Buffer ab(dt, Z * M * K), bb(dt, (shared_b ? 1 : Z) * K * N), cb(dt, Z * M * N);
      fill_randn(ab, 5);
      fill_randn(bb, 6);
      Matrix a = mat(ab, M, K, K, 1, M * K), b = mat(bb, K, N, N, 1, shared_b ? 0 : K * N), c = mat(cb, M, N, N, 1, M * N);
      cpu::gemm(Z, a, b, c);
      EXPECT_LT(worst(Z, ab, a, bb, b, cb, c, rtol_of(dt), atol_of(dt)), 1.0);
    }
  }
}

// The scratch gemm_scratch_bytes asks for is all it touches: the bytes after it keep a canary.
TEST(Gemm, StagingStaysInsideTheScratchItAskedFor) {
  SmallPanels small;
  const int64_t M = 560, K = 16, N = 8176;
  Buffer ab(kFloat16, M * K), bb(kFloat16, K * N), cb(kFloat16, M * N);
  fill_randn(ab, 7);
  fill_randn(bb, 8);
  Matrix a = mat(ab, M, K, K, 1), b = mat(bb, K, N, 1, K), c = mat(cb, M, N, N, 1);
  size_t need = cpu::gemm_scratch_bytes(1, a, b, c);
  ASSERT_GT(need, 0u);
  if (!cpu::packed_gemm_enabled()) {
    // Panels, not the whole problem: B plus 256-row panels of A and C.
    EXPECT_EQ(need, static_cast<size_t>(K * N + 256 * K + 256 * N) * sizeof(float));
  }
  Scratch scratch(need);
  cpu::gemm(1, a, b, c, scratch.data(), need);
  scratch.expect_canary_intact();
  EXPECT_LT(worst(1, ab, a, bb, b, cb, c, rtol_of(kFloat16), atol_of(kFloat16)), 1.0);
}

// ---------------------------------------------------------------- ember's packed kernel
// Called directly on any AVX2 CPU, whatever the cap (gemm routes 16-bit there only under AVX2).

namespace {
bool has_avx2() { return cpu::cpu_info().detected >= Isa::Avx2; }

// c = a @ b through packed_gemm on `parts` parts, in a scratch of exactly the size asked for.
void packed(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c, int parts) {
  size_t need = cpu::packed_scratch_bytes(a, b, c, parts, a.dtype);
  Scratch s(need);
  cpu::packed_gemm(batch, a, b, c, s.data(), parts, a.dtype);
  s.expect_canary_intact();
}
}  // namespace

// Shapes that cross every block edge: M and N not multiples of the 6 x 16 tile, K longer than
// one K block (partial sums kept across blocks, then rounded once), several M blocks, several N
// blocks; in every layout of A, B and C (C transposed or padded), in f32, bf16 and f16, on one,
// two and three parts.
TEST(PackedGemm, AgreesWithFloat64AcrossBlocksLayoutsAndParts) {
  if (!has_avx2()) GTEST_SKIP() << "no AVX2 on this CPU: the packed kernel is never used here";
  struct Shape {
    int64_t M, K, N;
    const char* what;
  };
  const Shape shapes[] = {{13, 1100, 37, "K over two blocks"},
                          {500, 24, 45, "several M blocks"},
                          {7, 20, 2100, "several N blocks"},
                          {1, 1, 1, "1 x 1 x 1"},
                          {61, 517, 83, "odd sizes"}};
  for (const Shape& sh : shapes)
    for (DType dt : {kFloat32, kBFloat16, kFloat16})
      for (int layout = 0; layout < 8; ++layout)
        for (int parts : {1, 2, 3}) {
          const bool a_t = layout & 1, b_t = layout & 2, c_t = layout & 4;
          SCOPED_TRACE(std::string(sh.what) + " " + dtype_name(dt) + (a_t ? " A^T" : "") + (b_t ? " B^T" : "") +
                       (c_t ? " C^T" : " C padded") + " parts " + std::to_string(parts));
          const int64_t M = sh.M, K = sh.K, N = sh.N;
          Buffer ab(dt, M * K), bb(dt, K * N), cb(dt, M * (N + 3));
          fill_randn(ab, 11);
          fill_randn(bb, 12);
          Matrix a = a_t ? mat(ab, M, K, 1, M) : mat(ab, M, K, K, 1);
          Matrix b = b_t ? mat(bb, K, N, 1, K) : mat(bb, K, N, N, 1);
          Matrix c = c_t ? mat(cb, M, N, 1, M) : mat(cb, M, N, N + 3, 1);
          packed(1, a, b, c, parts);
          // K up to 1100 terms of unit variance: fp32 accumulation error grows like sqrt(K).
          const double scale = K > 300 ? 3.0 : 1.0;
          EXPECT_LT(worst(1, ab, a, bb, b, cb, c, rtol_of(dt) * scale, atol_of(dt) * scale), 1.0);
        }
}

TEST(PackedGemm, BatchesWithSharedB) {
  if (!has_avx2()) GTEST_SKIP() << "no AVX2 on this CPU: the packed kernel is never used here";
  const int64_t Z = 3, M = 40, K = 30, N = 50;
  for (DType dt : {kBFloat16, kFloat16}) {
    Buffer ab(dt, Z * M * K), bb(dt, K * N), cb(dt, Z * M * N);
    fill_randn(ab, 13);
    fill_randn(bb, 14);
    Matrix a = mat(ab, M, K, K, 1, M * K), b = mat(bb, K, N, N, 1, 0), c = mat(cb, M, N, N, 1, M * N);
    packed(Z, a, b, c, 2);
    EXPECT_LT(worst(Z, ab, a, bb, b, cb, c, rtol_of(dt), atol_of(dt)), 1.0);
  }
}

// With K = 1 each output is one product, exact in fp32: the rounding into bf16 and f16 must be
// bit for bit what BFloat16(float) and Half(float) give (nearest even, ties included), and NaN,
// infinities and overflow must come through. Zeros compare by value (a sum starts from +0).
TEST(PackedGemm, RoundsOutputsExactlyAsScalarConversion) {
  if (!has_avx2()) GTEST_SKIP() << "no AVX2 on this CPU: the packed kernel is never used here";
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // (1 + 2^-7) x 1.5 and (1 + 2^-10) x 1.5 are ties in bf16 and f16.
  const std::vector<float> av = {1.0f, -1.0f, 3.0e38f, 1.0078125f, 1.0009765625f, 1.01171875f, nan,
                                 inf,  -inf,  0.0f,    1e-30f,     65504.0f,      2.0f};
  const std::vector<float> bv = {1.0f, 1.00390625f,   2.0f, -1.0f, 1.0e-3f,     3.0f,   0.5f,   1e-20f, inf,
                                 7.0f, 1.0009765625f, 1.5f, -0.0f, 1.0f / 3.0f, 6.0e4f, 255.0f, 1.0f,   0.1f};
  const int64_t M = static_cast<int64_t>(av.size()), N = static_cast<int64_t>(bv.size());
  for (DType dt : {kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    Buffer ab(dt, M), bb(dt, N), cb(dt, M * N);
    for (int64_t i = 0; i < M; ++i) ab.set(i, av[static_cast<size_t>(i)]);
    for (int64_t j = 0; j < N; ++j) bb.set(j, bv[static_cast<size_t>(j)]);
    Matrix a = mat(ab, M, 1, 1, 1), b = mat(bb, 1, N, N, 1), c = mat(cb, M, N, N, 1);
    packed(1, a, b, c, 1);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        const float prod = static_cast<float>(ab.get(i)) * static_cast<float>(bb.get(j));
        Buffer want(dt, 1);
        want.set(0, prod);
        uint16_t got_bits, want_bits;
        std::memcpy(&got_bits, cb.bytes.data() + (i * N + j) * 2, 2);
        std::memcpy(&want_bits, want.bytes.data(), 2);
        if (std::isnan(prod)) {
          EXPECT_TRUE(std::isnan(cb.get(i * N + j))) << i << "," << j;
        } else if (prod == 0.0f) {  // a sum from +0: -0 products come out +0, as in any GEMM
          EXPECT_EQ(cb.get(i * N + j), 0.0);
        } else {
          EXPECT_EQ(got_bits, want_bits) << "a " << ab.get(i) << " b " << bb.get(j) << " product " << prod;
        }
      }
  }
}

// The scratch gemm asks for on one thread is enough (a smaller one than for all threads runs on
// fewer), and stays inside; less than that is refused, never overrun.
TEST(Gemm, RunsInTheOneThreadScratchAndRefusesLess) {
  const int64_t M = 256, K = 300, N = 512;
  for (DType dt : {kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    Buffer ab(dt, M * K), bb(dt, K * N), cb(dt, M * N);
    fill_randn(ab, 15);
    fill_randn(bb, 16);
    Matrix a = mat(ab, M, K, K, 1), b = mat(bb, K, N, N, 1), c = mat(cb, M, N, N, 1);
    const size_t one = cpu::gemm_scratch_bytes(1, a, b, c, 1);
    if (one == 0) continue;  // native bf16: nothing staged
    EXPECT_LE(one, cpu::gemm_scratch_bytes(1, a, b, c));
    Scratch s(one);
    cpu::gemm(1, a, b, c, s.data(), one);
    s.expect_canary_intact();
    EXPECT_LT(worst(1, ab, a, bb, b, cb, c, rtol_of(dt), atol_of(dt)), 1.0);
    EXPECT_THROW(cpu::gemm(1, a, b, c, s.data(), one - 64), Error);
  }
}

// gemm_rounded: fp32 operands rounded to bf16/f16 while packed (AVX2) or staged (AVX-512), fp32
// outputs rounded before they are stored. Bit for bit the product of the same operands cast first
// (by the scalar conversion) and multiplied in the 16-bit dtype: the rounding is the cast's, and
// nothing else changes (same packed or staged values, same kernel, same order). The packed kernel
// also gives the same bits whatever A's layout; oneDNN's fp32 GEMM behind the staged path may sum
// in another order for another layout, so there the layouts compared are the same.
TEST(PackedGemm, RoundedMixedDtypesEqualTheCastOperandsProduct) {
  if (!cpu::gemm_rounded_available()) GTEST_SKIP() << "no AVX2 on this CPU: gemm_rounded is never called here";
  const int64_t M = 37, K = 600, N = 45;
  for (DType lo : {kBFloat16, kFloat16}) {
    Buffer a32(kFloat32, M * K), b32(kFloat32, K * N), alo(lo, M * K), blo(lo, K * N), ref(lo, M * N);
    fill_randn(a32, 21);
    fill_randn(b32, 22);
    a32.set(5, std::numeric_limits<double>::infinity());
    for (int64_t i = 0; i < M * K; ++i) alo.set(i, a32.get(i));
    for (int64_t i = 0; i < K * N; ++i) blo.set(i, b32.get(i));
    Buffer alo_t(lo, M * K);  // A transposed
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k) alo_t.set(k * M + i, alo.get(i * K + k));
    cpu::gemm_rounded(1, mat(alo_t, M, K, 1, M), mat(blo, K, N, 1, K), mat(ref, M, N, N, 1), lo);  // B transposed
    if (cpu::packed_gemm_enabled()) {  // the packed kernel: A row-major gives the same bits
      Buffer row(lo, M * N);
      cpu::gemm_rounded(1, mat(alo, M, K, K, 1), mat(blo, K, N, 1, K), mat(row, M, N, N, 1), lo);
      for (int64_t i = 0; i < M * N; ++i) {
        if (!std::isnan(ref.get(i))) {
          ASSERT_EQ(row.get(i), ref.get(i)) << "element " << i;
        }
      }
    }
    for (int mask = 1; mask < 8; ++mask) {
      const bool a_f32 = mask & 1, b_f32 = mask & 2, c_f32 = mask & 4;
      SCOPED_TRACE(std::string(dtype_name(lo)) + (a_f32 ? " A f32" : "") + (b_f32 ? " B f32" : "") +
                   (c_f32 ? " C f32" : ""));
      Buffer c(c_f32 ? kFloat32 : lo, M * N);
      // A transposed, as in ref.
      Buffer at(a_f32 ? kFloat32 : lo, M * K);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < K; ++k) at.set(k * M + i, (a_f32 ? a32 : alo).get(i * K + k));
      Matrix a = mat(at, M, K, 1, M), b = b_f32 ? mat(b32, K, N, 1, K) : mat(blo, K, N, 1, K);
      cpu::gemm_rounded(1, a, b, mat(c, M, N, N, 1), lo);
      for (int64_t i = 0; i < M * N; ++i) {
        const double want = ref.get(i), got = c.get(i);
        if (std::isnan(want))
          ASSERT_TRUE(std::isnan(got)) << i;
        else
          ASSERT_EQ(got, want) << "element " << i;
      }
    }
  }
}

// f32 operands marked rounded (Matrix::rounded: their elements are already values of the compute
// dtype, as _round_to makes them) are read in place where gemm_rounded stages: no scratch for
// them, and the same bits as rounding a staged copy. Where it rounds while packing, the mark
// changes nothing. B is laid out as linear's w.t().
TEST(PackedGemm, OperandsMarkedRoundedAreReadInPlace) {
  if (!cpu::gemm_rounded_available()) GTEST_SKIP() << "no AVX2 on this CPU: gemm_rounded is never called here";
  const int64_t M = 70, K = 300, N = 90;
  for (DType lo : {kBFloat16, kFloat16}) {
    Buffer a32(kFloat32, M * K), b32(kFloat32, K * N), one(lo, 1);
    fill_randn(a32, 31);
    fill_randn(b32, 32);
    for (Buffer* buf : {&a32, &b32}) {  // rounded to lo, kept in f32
      for (int64_t i = 0; i < static_cast<int64_t>(buf->bytes.size() / sizeof(float)); ++i) {
        one.set(0, buf->get(i));
        buf->set(i, one.get(0));
      }
    }
    const Matrix a = mat(a32, M, K, K, 1), b = mat(b32, K, N, 1, K);
    Buffer want(kFloat32, M * N);
    cpu::gemm_rounded(1, a, b, mat(want, M, N, N, 1), lo);
    const size_t unmarked = cpu::gemm_rounded_scratch_bytes(1, a, b, mat(want, M, N, N, 1), lo, 1);
    for (int marks = 1; marks < 4; ++marks) {
      SCOPED_TRACE(std::string(dtype_name(lo)) + (marks & 1 ? " A marked" : "") + (marks & 2 ? " B marked" : ""));
      Matrix am = a, bm = b;
      am.rounded = marks & 1;
      bm.rounded = marks & 2;
      Buffer got(kFloat32, M * N);
      const Matrix c = mat(got, M, N, N, 1);
      const size_t need = cpu::gemm_rounded_scratch_bytes(1, am, bm, c, lo, 1);
      if (cpu::gemm_rounded_stages()) {  // one panel of A (all M rows) and all of B, in fp32
        const size_t saved = (am.rounded ? M * K : 0) + (bm.rounded ? K * N : 0);
        EXPECT_EQ(unmarked - need, saved * sizeof(float));
      } else {
        EXPECT_EQ(need, unmarked);
      }
      Scratch s(need);
      cpu::gemm_rounded(1, am, bm, c, lo, need ? s.data() : nullptr, need);
      s.expect_canary_intact();
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.bytes.size()), 0);
    }
  }
}

// bf16 GEMMs go to the bf16 units only where the CPU has them and they pay (isa.h).
TEST(Gemm, Bf16UnitsAreUsedWhereTheyPay) {
  if (cpu::bf16_units_pay()) {
    EXPECT_TRUE(cpu::cpu_has(Isa::Avx512Bf16));
  }
  if (cpu::gemm_native_bf16()) {
    EXPECT_TRUE(cpu::bf16_units_pay());
  }
  const char* env = std::getenv("EMBER_BF16_UNITS");
  if (env && *env) return;  // the variable decided (tests/isa_cap_check.cpp)
  if (cpu::cpu_has(Isa::Amx)) {
    EXPECT_TRUE(cpu::bf16_units_pay());
  }
  const bool timed = cpu::cpu_has(Isa::Avx512Bf16) && !cpu::cpu_has(Isa::Amx);
  EXPECT_EQ(cpu::bf16_dot_to_fma_ratio() > 0, timed);
  if (timed) {
    EXPECT_EQ(cpu::bf16_units_pay(), cpu::bf16_dot_to_fma_ratio() >= 0.75) << cpu::bf16_dot_to_fma_ratio();
  }
}

// The bound model's counts (roofline.h), computed here by hand, and the bound from them.
TEST(Roofline, BoundModelCountsTheStepsWork) {
  using namespace ember::roofline;
  const double t = 512, d = 1024, f = 2816;
  Cost c = llama_mlp_block(512, 1024, 2816, kFloat32);
  EXPECT_DOUBLE_EQ(c.gemm_flops, 18 * t * d * f);
  EXPECT_DOUBLE_EQ(c.bytes, t * (d * 28 + 32 * f));  // s = 4: 16 + 3s per d_model, 8s per d_ff
  EXPECT_DOUBLE_EQ(llama_mlp_block(512, 1024, 2816, kBFloat16).bytes, t * (d * 22 + 16 * f));
  EXPECT_DOUBLE_EQ(adamw(10).bytes, 280);
  EXPECT_DOUBLE_EQ(adamw(10).gemm_flops, 0);
  EXPECT_DOUBLE_EQ(linear_layer(2, 3, 4).gemm_flops, 144);
  c += adamw(10);
  EXPECT_DOUBLE_EQ(c.bytes, t * (d * 28 + 32 * f) + 280);
  if (!has_unit(gemm_unit(kFloat32))) GTEST_SKIP() << "no measurable unit on " << cpu::cpu_summary();
  const double peak = gemm_peak_flops(kFloat32), bw = peak_bandwidth();
  EXPECT_GE(gemm_peak_flops(kBFloat16), peak_flops(gemm_unit(kFloat32)));  // bf16 can always run as fp32
  ASSERT_GT(peak, 1e9);
  ASSERT_GT(bw, 1e8);
  // Later measurements only raise the recorded figures, so bound_seconds is at most the bound at
  // the figures read above.
  EXPECT_LE(bound_seconds(c, kFloat32), c.gemm_flops / peak + c.bytes / bw);
  EXPECT_GT(bound_seconds(c, kFloat32), 0);
}

TEST(Roofline, GemmUnitIsTheOneTheGemmRunsOn) {
  using namespace ember::roofline;
  const Unit f32 = cpu::cpu_has(Isa::Avx512) ? Unit::F32FmaAvx512 : Unit::F32FmaAvx2;
  EXPECT_EQ(gemm_unit(kFloat32), f32);
  EXPECT_EQ(gemm_unit(kFloat16), f32);  // f16 is always staged through fp32 here
  if (!cpu::gemm_native_bf16()) {
    EXPECT_EQ(gemm_unit(kBFloat16), f32);
  } else
    EXPECT_TRUE(gemm_unit(kBFloat16) == Unit::Bf16DotAvx512 || gemm_unit(kBFloat16) == Unit::Bf16TileAmx);
  EXPECT_STREQ(unit_name(Unit::F32FmaAvx512), "f32_fma/avx512");
  for (Unit u : all_units())
    if (!has_unit(u)) {
      EXPECT_EQ(time_unit_on_this_thread(u, 16), 0);
    }
}

// Where the bf16 units do not pay for compute, only compute-bound bf16 GEMMs are staged through
// fp32; memory-bound ones (an im2col GEMM: K = 27, N = 64) stay on the units. Units that are
// switched off (EMBER_BF16_UNITS=off) or absent run nothing.
TEST(Gemm, MemoryBoundBf16StaysOnTheUnits) {
  Buffer x(kBFloat16, 1);
  Matrix im2col_a = mat(x, 20000, 27, 27, 1), im2col_b = mat(x, 27, 64, 64, 1), im2col_c = mat(x, 20000, 64, 64, 1);
  Matrix big_a = mat(x, 512, 1024, 1024, 1), big_b = mat(x, 1024, 2816, 2816, 1), big_c = mat(x, 512, 2816, 2816, 1);
  const std::string small = cpu::gemm_path(1, im2col_a, im2col_b, im2col_c),
                    big = cpu::gemm_path(1, big_a, big_b, big_c);
  if (!cpu::bf16_units_allowed()) {
    EXPECT_TRUE(is_16bit_path(small)) << small;
    EXPECT_TRUE(is_16bit_path(big)) << big;
  } else if (cpu::gemm_native_bf16()) {
    EXPECT_EQ(big, "onednn");
    EXPECT_EQ(small, "onednn");
  } else {
    EXPECT_TRUE(is_16bit_path(big)) << big;
    const std::string isa = cpu::onednn_isa();  // oneDNN has bf16 kernels unless capped below them
    if (isa.find("bf16") != std::string::npos || isa.find("amx") != std::string::npos) {
      EXPECT_EQ(small, "onednn");
    }
  }
}
