// The CPU GEMM engines (device/cpu/gemm.h): which path each dtype takes on this CPU, and every
// path against a float64 product of the same (rounded) inputs, in the layouts the ops produce.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <ember/device/cpu/gemm.h>
#include <ember/device/cpu/isa.h>

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
  Matrix m;
  m.data = buf.data();
  m.dtype = buf.dtype;
  m.rows = rows;
  m.cols = cols;
  m.row_stride = rs;
  m.col_stride = cs;
  m.batch_stride = bs;
  return m;
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
    EXPECT_EQ(path.rfind("staged_", 0), 0u) << path;
    EXPECT_GT(cpu::gemm_scratch_bytes(1, a, b, c), 0u);
  }
  // fp16 never runs natively (oneDNN 2.6 has no f16 matmul); f64 and integers run on Eigen.
  Buffer h(kFloat16, 1), d(kFloat64, 1);
  Matrix ha = mat(h, 256, 256, 256, 1), da = mat(d, 256, 256, 256, 1);
  EXPECT_EQ(std::string(cpu::gemm_path(1, ha, ha, ha)).rfind("staged_", 0), 0u);
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

// Every staged layout: A row-major or transposed, B row-major or transposed, C dense or with a
// padded row stride; enough rows for three panels (K + N = 8192 makes 256-row panels).
TEST(Gemm, StagedPanelsAgreeWithFloat64InEveryLayout) {
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

// Operands without a unit stride are staged in every dtype, bf16 and f32 included.
TEST(Gemm, OperandsWithoutUnitStrideAreStagedCorrectly) {
  const int64_t M = 300, K = 257, N = 190;
  for (DType dt : {kFloat32, kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    Buffer ab(dt, M * K * 2), bb(dt, K * N), cb(dt, M * N);
    fill_randn(ab, 3);
    fill_randn(bb, 4);
    Matrix a = mat(ab, M, K, 2 * K, 2);  // every other element
    Matrix b = mat(bb, K, N, N, 1), c = mat(cb, M, N, N, 1);
    EXPECT_EQ(std::string(cpu::gemm_path(1, a, b, c)).rfind("staged_", 0), 0u);
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
  const int64_t M = 560, K = 16, N = 8176;
  Buffer ab(kFloat16, M * K), bb(kFloat16, K * N), cb(kFloat16, M * N);
  fill_randn(ab, 7);
  fill_randn(bb, 8);
  Matrix a = mat(ab, M, K, K, 1), b = mat(bb, K, N, 1, K), c = mat(cb, M, N, N, 1);
  size_t need = cpu::gemm_scratch_bytes(1, a, b, c);
  ASSERT_GT(need, 0u);
  // Panels, not the whole problem: B plus 256-row panels of A and C.
  EXPECT_EQ(need, static_cast<size_t>(K * N + 256 * K + 256 * N) * sizeof(float));
  std::vector<unsigned char> scratch(need + 4096, 0xA5);
  cpu::gemm(1, a, b, c, scratch.data());
  for (size_t i = need; i < scratch.size(); ++i) ASSERT_EQ(scratch[i], 0xA5) << "byte " << i - need << " past the scratch";
  EXPECT_LT(worst(1, ab, a, bb, b, cb, c, rtol_of(kFloat16), atol_of(kFloat16)), 1.0);
}
