// The aclnn ops real CANN clients call (ggml's CANN backend) beyond ember's own ops, driven through
// CANN's two phases and checked against values worked out here: index and scatter ops, sorting,
// pooling and resizing, norms and gated activations, losses, triangular solves, quantised and
// grouped matmuls, fused attention and the gated delta rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

#include "npu_test_util.h"

using namespace npu_test;

namespace {

using Phase2 = aclnnStatus (*)(void*, uint64_t, aclOpExecutor*, aclrtStream);

// Phase 2 with a workspace of the size phase 1 asked for, then a synchronize.
void exec(Phase2 phase2, uint64_t ws, aclOpExecutor* ex) {
  void* w = nullptr;
  if (ws) {
    ASSERT_EQ(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  }
  ASSERT_EQ(phase2(w, ws, ex, nullptr), ACLNN_SUCCESS) << recent_error();
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS) << recent_error();
  if (w) aclrtFree(w);
}
#define EXEC(Op, ...)                                                                     \
  do {                                                                                    \
    uint64_t ws_ = 0;                                                                     \
    aclOpExecutor* ex_ = nullptr;                                                         \
    ASSERT_EQ(aclnn##Op##GetWorkspaceSize(__VA_ARGS__, &ws_, &ex_), ACLNN_SUCCESS) << recent_error(); \
    exec(aclnn##Op, ws_, ex_);                                                            \
  } while (0)
#define REFUSED(Op, words, ...)                                                           \
  do {                                                                                    \
    uint64_t ws_ = 0;                                                                     \
    aclOpExecutor* ex_ = nullptr;                                                         \
    EXPECT_NE(aclnn##Op##GetWorkspaceSize(__VA_ARGS__, &ws_, &ex_), ACLNN_SUCCESS);       \
    std::string m_ = recent_error();                                                      \
    EXPECT_NE(m_.find(words), std::string::npos) << m_;                                   \
  } while (0)

// A device tensor of raw values of any element type (integers, bool, packed int4 bytes).
template <class T>
struct Raw {
  void* dev = nullptr;
  aclTensor* t = nullptr;
  size_t bytes;
  Raw(std::vector<int64_t> shape, const std::vector<T>& v, aclDataType dt, const int64_t* strides = nullptr,
      int64_t storage = -1) {
    bytes = v.size() * sizeof(T);
    aclrtMalloc(&dev, bytes ? bytes : 4, ACL_MEM_MALLOC_HUGE_FIRST);
    if (bytes) aclrtMemcpy(dev, bytes, v.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    int64_t n = storage >= 0 ? storage : static_cast<int64_t>(v.size());
    t = aclCreateTensor(shape.data(), shape.size(), dt, strides, 0, ACL_FORMAT_ND, &n, 1, dev);
  }
  ~Raw() {
    aclDestroyTensor(t);
    aclrtFree(dev);
  }
  std::vector<T> read() const {
    aclrtSynchronizeDevice();
    std::vector<T> out(bytes / sizeof(T));
    if (bytes) aclrtMemcpy(out.data(), bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    return out;
  }
};

std::vector<float> iota_f(size_t n, float start = 0, float step = 1) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}
std::vector<float> wave(size_t n, double f = 0.37, double a = 1.0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(a * std::sin(f * static_cast<double>(i) + 0.3));
  return v;
}
void expect_near_all(const std::vector<float>& got, const std::vector<double>& want, double rel, double abs_tol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], abs_tol + rel * std::fabs(want[i])) << "at " << i;
}

}  // namespace

TEST(CannClientOps, IndexCopyAndIndexFillWriteTheNamedSlices) {
  DevTensor self({3, 4}, iota_f(12)), src({3, 2}, {100, 101, 102, 103, 104, 105}), out({3, 4}, std::vector<float>(12));
  Raw<int64_t> idx({2}, {3, -4}, ACL_INT64);  // columns 3 and 0
  EXEC(IndexCopy, self.t, 1, idx.t, src.t, out.t);
  EXPECT_EQ(out.read(), (std::vector<float>{101, 1, 2, 100, 103, 5, 6, 102, 105, 9, 10, 104}));
  Raw<int32_t> row1({1}, {1}, ACL_INT32);
  DevTensor sevens({1, 4}, {7, 7, 7, 7});
  EXEC(InplaceIndexCopy, self.t, 0, row1.t, sevens.t);
  EXPECT_EQ(self.read(), (std::vector<float>{0, 1, 2, 3, 7, 7, 7, 7, 8, 9, 10, 11}));
  float v = -1;
  aclScalar* s = aclCreateScalar(&v, ACL_FLOAT);
  int64_t rows[] = {0, 2};
  aclIntArray* ix = aclCreateIntArray(rows, 2);
  EXEC(InplaceIndexFillTensor, self.t, 0, ix, s);
  EXPECT_EQ(self.read(), (std::vector<float>{-1, -1, -1, -1, 7, 7, 7, 7, -1, -1, -1, -1}));
  int64_t bad[] = {3};
  aclIntArray* bix = aclCreateIntArray(bad, 1);
  REFUSED(IndexFillTensor, "out of range", self.t, 0, bix, s, out.t);
  // An index out of range at run time faults the stream with an IndexError.
  Raw<int64_t> oob({1}, {9}, ACL_INT64);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  DevTensor col({3, 1}, {1, 2, 3});
  ASSERT_EQ(aclnnIndexCopyGetWorkspaceSize(self.t, 1, oob.t, col.t, out.t, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(aclnnIndexCopy(nullptr, 0, ex, nullptr), ACLNN_SUCCESS);
  EXPECT_NE(aclrtSynchronizeDevice(), ACL_SUCCESS);
  EXPECT_NE(recent_error().find("index 9"), std::string::npos);
  aclDestroyScalar(s);
  aclDestroyIntArray(ix);
  aclDestroyIntArray(bix);
}

TEST(CannClientOps, RepeatInterleaveRepeatsSlicesOrElements) {
  DevTensor x({2, 3}, iota_f(6));
  DevTensor o1({2, 6}, std::vector<float>(12));
  EXEC(RepeatInterleaveIntWithDim, x.t, 2, 1, 6, o1.t);
  EXPECT_EQ(o1.read(), (std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
  DevTensor o2({5, 3}, std::vector<float>(15));
  Raw<int64_t> reps({2}, {2, 3}, ACL_INT64);
  EXEC(RepeatInterleaveWithDim, x.t, reps.t, 0, 5, o2.t);
  EXPECT_EQ(o2.read(), (std::vector<float>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 3, 4, 5}));
  DevTensor o3({12}, std::vector<float>(12));
  EXEC(RepeatInterleaveInt, x.t, 2, 12, o3.t);
  EXPECT_EQ(o3.read(), (std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
  REFUSED(RepeatInterleaveIntWithDim, "is not the repeated size", x.t, 3, 1, 6, o1.t);
}

TEST(CannClientOps, ScatterWritesAddsAndMaskedFillFills) {
  DevTensor self({2, 3}, iota_f(6)), src({2, 2}, {10, 20, 30, 40}), out({2, 3}, std::vector<float>(6));
  Raw<int64_t> idx({2, 2}, {2, 0, 1, 1}, ACL_INT64);
  EXEC(Scatter, self.t, 1, idx.t, src.t, 0, out.t);  // row 0: [20, 1, 10], row 1: [3, 40, 5] (last write wins)
  EXPECT_EQ(out.read(), (std::vector<float>{20, 1, 10, 3, 40, 5}));
  EXEC(Scatter, self.t, 1, idx.t, src.t, 1, out.t);  // add
  EXPECT_EQ(out.read(), (std::vector<float>{20, 1, 12, 3, 74, 5}));
  float v = 9;
  aclScalar* s = aclCreateScalar(&v, ACL_FLOAT);
  Raw<int64_t> rows({1, 3}, {1, 0, 1}, ACL_INT64);
  EXEC(InplaceScatterValue, self.t, 0, rows.t, s, 0);
  EXPECT_EQ(self.read(), (std::vector<float>{0, 9, 2, 9, 4, 9}));
  Raw<uint8_t> mask({3}, {1, 0, 1}, ACL_BOOL);  // broadcast over rows
  float z = -5;
  aclScalar* zs = aclCreateScalar(&z, ACL_FLOAT);
  EXEC(InplaceMaskedFillScalar, self.t, mask.t, zs);
  EXPECT_EQ(self.read(), (std::vector<float>{-5, 9, -5, -5, 4, -5}));
  aclDestroyScalar(s);
  aclDestroyScalar(zs);
}

TEST(CannClientOps, ArgsortIsStableWithNanAboveEveryNumber) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  DevTensor x({2, 5}, {3, 1, 2, 1, nan, 0.5f, -1, 0.5f, 7, -3});
  Raw<int64_t> out({2, 5}, std::vector<int64_t>(10), ACL_INT64);
  EXEC(Argsort, x.t, -1, false, out.t);
  EXPECT_EQ(out.read(), (std::vector<int64_t>{1, 3, 2, 0, 4, 4, 1, 0, 2, 3}));
  EXEC(Argsort, x.t, 1, true, out.t);
  EXPECT_EQ(out.read(), (std::vector<int64_t>{4, 0, 2, 1, 3, 3, 0, 2, 1, 4}));
  Raw<int64_t> cols({2, 5}, std::vector<int64_t>(10), ACL_INT64);
  EXEC(Argsort, x.t, 0, false, cols.t);  // along the rows: 0.5 < 3, -1 < 1, 0.5 < 2, 1 < 7, -3 < NaN
  EXPECT_EQ(cols.read(), (std::vector<int64_t>{1, 1, 1, 0, 1, 0, 0, 0, 1, 0}));
}

TEST(CannClientOps, AddRmsNormMatchesTheSumThenRmsNormInFloat64) {
  const int64_t rows = 3, D = 8;
  std::vector<float> a = wave(rows * D, 0.7), b = wave(rows * D, 0.23, 0.5), g = wave(D, 1.1, 0.8);
  DevTensor x1({rows, D}, a), x2({rows, D}, b), gamma({D}, g), y({rows, D}, std::vector<float>(rows * D)),
      xo({rows, D}, std::vector<float>(rows * D)), rstd({rows, 1}, std::vector<float>(rows));
  const double eps = 1e-6;
  EXEC(AddRmsNorm, x1.t, x2.t, gamma.t, eps, y.t, rstd.t, xo.t);
  std::vector<double> wy, wx, wr;
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t d = 0; d < D; ++d) {
      const double s = static_cast<float>(a[r * D + d] + b[r * D + d]);
      wx.push_back(s);
      ss += s * s;
    }
    wr.push_back(1 / std::sqrt(ss / D + eps));
    for (int64_t d = 0; d < D; ++d) wy.push_back(wx[r * D + d] * wr.back() * g[d]);
  }
  expect_near_all(xo.read(), wx, 0, 0);
  expect_near_all(rstd.read(), wr, 1e-6);
  expect_near_all(y.read(), wy, 1e-6);
  REFUSED(AddRmsNorm, "rstdOut", x1.t, x2.t, gamma.t, eps, y.t, DevTensor({2}, {0, 0}).t, xo.t);
}

TEST(CannClientOps, GeGluV3ActivatesTheChosenHalfInEitherForm) {
  std::vector<float> v = wave(12, 0.9, 2.0);
  DevTensor x({2, 6}, v), out({2, 3}, std::vector<float>(6)), gel({2, 3}, std::vector<float>(6));
  for (int64_t approx : {0, 1})
    for (bool left : {true, false}) {
      SCOPED_TRACE(std::to_string(approx) + (left ? " left" : " right"));
      EXEC(GeGluV3, x.t, -1, approx, left, out.t, gel.t);
      std::vector<double> wo, wg;
      for (int r = 0; r < 2; ++r)
        for (int j = 0; j < 3; ++j) {
          const double a = v[r * 6 + j], b = v[r * 6 + 3 + j], act = left ? a : b, other = left ? b : a;
          const double ge = approx ? 0.5 * act * (1 + std::tanh(std::sqrt(2 / M_PI) * (act + 0.044715 * act * act * act)))
                                   : 0.5 * act * (1 + std::erf(act / std::sqrt(2.0)));
          wg.push_back(ge);
          wo.push_back(ge * other);
        }
      expect_near_all(out.read(), wo, 1e-6);
      expect_near_all(gel.read(), wg, 1e-6);
    }
  REFUSED(GeGluV3, "even", DevTensor({2, 5}, iota_f(10)).t, -1, 0, true, out.t, gel.t);
}

TEST(CannClientOps, MaxPoolReflectionPadAndNearestUpsample) {
  DevTensor x({1, 1, 4, 4}, {1, 5, 2, 0, 3, 4, 8, 1, 0, 9, 2, 2, 7, 1, 3, 6}), y({1, 1, 2, 2}, std::vector<float>(4));
  int64_t k[] = {2, 2}, st[] = {2, 2}, pads[] = {0, 0, 0, 0}, dil[] = {1, 1};
  aclIntArray *ka = aclCreateIntArray(k, 2), *sa = aclCreateIntArray(st, 2), *pa = aclCreateIntArray(pads, 4),
              *da = aclCreateIntArray(dil, 2);
  EXEC(MaxPool, x.t, ka, sa, 0, pa, da, 0, y.t);
  EXPECT_EQ(y.read(), (std::vector<float>{5, 8, 9, 6}));
  int64_t asym[] = {1, 0, 0, 0};
  aclIntArray* asa = aclCreateIntArray(asym, 4);
  REFUSED(MaxPool, "symmetric", x.t, ka, sa, 0, asa, da, 0, y.t);

  DevTensor s({1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), p({1, 2, 7}, std::vector<float>(14));
  int64_t pad[] = {2, 1};
  aclIntArray* pd = aclCreateIntArray(pad, 2);
  EXEC(ReflectionPad1d, s.t, pd, p.t);
  EXPECT_EQ(p.read(), (std::vector<float>{3, 2, 1, 2, 3, 4, 3, 7, 6, 5, 6, 7, 8, 7}));

  DevTensor u({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}), up({1, 1, 3, 5}, std::vector<float>(15));
  int64_t osz[] = {3, 5};
  aclIntArray* os = aclCreateIntArray(osz, 2);
  EXEC(UpsampleNearest2d, u.t, os, up.t);
  // rows: floor(h * 2/3) = 0, 0, 1; cols: floor(w * 3/5) = 0, 0, 1, 1, 2
  EXPECT_EQ(up.read(), (std::vector<float>{1, 1, 2, 2, 3, 1, 1, 2, 2, 3, 4, 4, 5, 5, 6}));
  for (aclIntArray* a : {ka, sa, pa, da, asa, pd, os}) aclDestroyIntArray(a);
}

TEST(CannClientOps, SoftmaxCrossEntropyWithLogitsGivesLossAndGradient) {
  std::vector<float> f = wave(8, 1.3, 2.0), l = {0.1f, 0.2f, 0.3f, 0.4f, 1, 0, 0, 0};
  DevTensor feat({2, 4}, f), lab({2, 4}, l), loss({2}, {0, 0}), bp({2, 4}, std::vector<float>(8));
  EXEC(SoftmaxCrossEntropyWithLogits, feat.t, lab.t, loss.t, bp.t);
  std::vector<double> wl, wb;
  for (int r = 0; r < 2; ++r) {
    double z = 0;
    for (int c = 0; c < 4; ++c) z += std::exp(static_cast<double>(f[r * 4 + c]));
    double total = 0;
    for (int c = 0; c < 4; ++c) {
      const double p = std::exp(static_cast<double>(f[r * 4 + c])) / z;
      total -= l[r * 4 + c] * std::log(p);
      wb.push_back(p - l[r * 4 + c]);
    }
    wl.push_back(total);
  }
  expect_near_all(loss.read(), wl, 1e-6);
  expect_near_all(bp.read(), wb, 1e-6);
}

TEST(CannClientOps, TriangularSolveSolvesEachForm) {
  const std::vector<float> A = {2, 0.5f, -1, 0.25f, 3, 0.75f, -0.5f, 1.5f, 4};  // both triangles used by one form or another
  const std::vector<float> B = {1, 2, 3, 4, 5, 6};                                 // [3, 2]
  DevTensor a({3, 3}, A), b({3, 2}, B), x({3, 2}, std::vector<float>(6)), m({3, 3}, std::vector<float>(9));
  for (bool upper : {false, true})
    for (bool trans : {false, true})
      for (bool unit : {false, true}) {
        SCOPED_TRACE(std::string(upper ? "upper" : "lower") + (trans ? " T" : "") + (unit ? " unit" : ""));
        EXEC(TriangularSolve, b.t, a.t, upper, trans, unit, x.t, m.t);
        // T x must give B, with T the triangle (unit diagonal) of A, transposed when asked.
        std::vector<float> X = x.read();
        auto T = [&](int i, int j) -> double {
          int r = trans ? j : i, c = trans ? i : j;
          if (r == c) return unit ? 1.0 : A[r * 3 + c];
          return (upper ? c > r : c < r) ? A[r * 3 + c] : 0.0;
        };
        for (int i = 0; i < 3; ++i)
          for (int c = 0; c < 2; ++c) {
            double s = 0;
            for (int j = 0; j < 3; ++j) s += T(i, j) * X[j * 2 + c];
            EXPECT_NEAR(s, B[i * 2 + c], 1e-5);
          }
        EXPECT_EQ(m.read(), A);
      }
}

TEST(CannClientOps, GerAddcdivAndSumOfAList) {
  DevTensor a({3}, {1, 2, 3}), b({2}, {10, -1}), g({3, 2}, std::vector<float>(6));
  EXEC(Ger, a.t, b.t, g.t);
  EXPECT_EQ(g.read(), (std::vector<float>{10, -1, 20, -2, 30, -3}));
  DevTensor s({2}, {1, 1}), t1({2, 2}, {2, 4, 6, 8}), t2({2}, {4, 2}), o({2, 2}, std::vector<float>(4));
  float half = 0.5f;
  aclScalar* hv = aclCreateScalar(&half, ACL_FLOAT);
  EXEC(Addcdiv, s.t, t1.t, t2.t, hv, o.t);
  EXPECT_EQ(o.read(), (std::vector<float>{1.25f, 2, 1.75f, 3}));
  aclTensor* parts[] = {aclCreateTensor(std::vector<int64_t>{2}.data(), 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND,
                                        std::vector<int64_t>{2}.data(), 1, s.dev),
                        aclCreateTensor(std::vector<int64_t>{2}.data(), 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND,
                                        std::vector<int64_t>{2}.data(), 1, t2.dev)};
  aclTensorList* list = aclCreateTensorList(parts, 2);
  DevTensor sum({2}, {0, 0});
  EXEC(Sum, list, sum.t);
  EXPECT_EQ(sum.read(), (std::vector<float>{5, 3}));
  aclDestroyTensorList(list);
  aclDestroyScalar(hv);
}

// ggml's layout: weight [K, N] viewed transposed over an [N, K] buffer, int4 packed two a byte
// (element of even index in the low nibble), scale per group of 32 rows of K.
TEST(CannClientOps, WeightQuantBatchMatmulDequantisesInt8AndInt4Weights) {
  const int64_t M = 2, K = 64, N = 3, G = 32;
  std::vector<float> xv = wave(M * K, 0.31, 1.0);
  DevTensor x({M, K}, xv, ACL_FLOAT16);
  std::vector<float> xr = x.read();  // x as the device holds it (fp16)
  std::vector<int8_t> q(N * K);      // q[n * K + k]
  for (int64_t i = 0; i < N * K; ++i) q[static_cast<size_t>(i)] = static_cast<int8_t>((i * 7) % 15 - 7);
  std::vector<float> scale(2 * N);
  for (size_t i = 0; i < scale.size(); ++i) scale[i] = 0.01f * static_cast<float>(i + 1);
  DevTensor sc({2, N}, scale, ACL_FLOAT16);  // [K / G, N]
  std::vector<float> scr = sc.read();
  int64_t wstr[] = {1, K};  // [K, N] over the [N, K] buffer
  auto want = [&](bool grouped) {
    std::vector<double> w;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) {
          const float deq = static_cast<float>(q[n * K + k]) * scr[(grouped ? k / G : 0) * N + n];
          const float h = aclFloat16ToFloat(aclFloatToFloat16(deq));  // the dequantised weight, rounded to fp16
          acc += xr[m * K + k] * static_cast<double>(h);
        }
        w.push_back(acc);
      }
    return w;
  };
  {
    Raw<int8_t> w({K, N}, q, ACL_INT8, wstr);
    DevTensor y({M, N}, std::vector<float>(M * N), ACL_FLOAT16);
    EXEC(WeightQuantBatchMatmulV2, x.t, w.t, sc.t, nullptr, nullptr, nullptr, nullptr, G, y.t);
    expect_near_all(y.read(), want(true), 2e-3, 1e-3);
    DevTensor sc1({1, N}, {0.5f, 0.25f, 0.125f}, ACL_FLOAT16);
    scr = {0.5f, 0.25f, 0.125f};
    EXEC(WeightQuantBatchMatmulV2, x.t, w.t, sc1.t, nullptr, nullptr, nullptr, nullptr, 0, y.t);
    expect_near_all(y.read(), want(false), 2e-3, 1e-3);
    scr = sc.read();
    // The weight as the second of two experts in one buffer (an offset, as ggml's MUL_MAT_ID).
    std::vector<int8_t> two(q.size(), 99);
    two.insert(two.end(), q.begin(), q.end());
    Raw<int8_t> buf({2 * N * K}, two, ACL_INT8);
    int64_t wshape[] = {K, N}, store = N * K;  // storage dims counted from the offset, as ggml does
    aclTensor* second = aclCreateTensor(wshape, 2, ACL_INT8, wstr, N * K, ACL_FORMAT_ND, &store, 1, buf.dev);
    EXEC(WeightQuantBatchMatmulV2, x.t, second, sc.t, nullptr, nullptr, nullptr, nullptr, G, y.t);
    expect_near_all(y.read(), want(true), 2e-3, 1e-3);
    aclDestroyTensor(second);
  }
  {
    std::vector<uint8_t> packed(N * K / 2);
    for (int64_t i = 0; i < N * K; ++i)
      packed[static_cast<size_t>(i / 2)] |= static_cast<uint8_t>((q[static_cast<size_t>(i)] & 0xF) << (4 * (i % 2)));
    Raw<uint8_t> w({K, N}, packed, ACL_INT4, wstr, N * K);
    DevTensor y({M, N}, std::vector<float>(M * N), ACL_FLOAT16);
    EXEC(WeightQuantBatchMatmulV2, x.t, w.t, sc.t, nullptr, nullptr, nullptr, nullptr, G, y.t);
    expect_near_all(y.read(), want(true), 2e-3, 1e-3);
    REFUSED(WeightQuantBatchMatmulV2, "antiquantGroupSize", x.t, w.t, sc.t, nullptr, nullptr, nullptr, nullptr, 48, y.t);
  }
}

TEST(CannClientOps, TransMatmulWeightKeepsTheWeightAnNzWeightMultipliesAsNd) {
  const int64_t K = 3, N = 2;
  DevTensor a({2, K}, {1, 2, 3, 4, 5, 6}, ACL_FLOAT16), w({K, N}, {1, 0, 0, 1, 1, 1}, ACL_FLOAT16),
      out({2, N}, {0, 0, 0, 0}, ACL_FLOAT16);
  EXEC(TransMatmulWeight, w.t);
  EXPECT_EQ(w.read(), (std::vector<float>{1, 0, 0, 1, 1, 1}));
  int64_t shape[] = {K, N};
  aclTensor* nz = aclCreateTensor(shape, 2, ACL_FLOAT16, nullptr, 0, ACL_FORMAT_FRACTAL_NZ, shape, 2, w.dev);
  EXEC(Mm, a.t, nz, out.t, int8_t(1));
  EXPECT_EQ(out.read(), (std::vector<float>{4, 5, 10, 11}));
  DevTensor sum({K, N}, std::vector<float>(K * N), ACL_FLOAT16);
  aclScalar* one = aclCreateScalar(&shape[0], ACL_INT64);
  REFUSED(Add, "format", nz, nz, one, sum.t);  // NZ is a matmul weight's format only
  aclDestroyScalar(one);
  aclDestroyTensor(nz);
  uint64_t elems = 0;
  int64_t big[] = {100, 33};
  aclIntArray* s = aclCreateIntArray(big, 2);
  ASSERT_EQ(aclnnCalculateMatmulWeightSizeV2(s, ACL_FLOAT16, &elems), ACLNN_SUCCESS);
  EXPECT_EQ(elems, 112u * 48u);
  ASSERT_EQ(aclnnCalculateMatmulWeightSizeV2(s, ACL_INT8, &elems), ACLNN_SUCCESS);
  EXPECT_EQ(elems, 112u * 64u);
  aclDestroyIntArray(s);
}

TEST(CannClientOps, GroupedMatmulPerListEntryAndSplitByGroupList) {
  // Two groups: x0 [1, 2] @ w0 [2, 2], x1 [2, 2] @ w1 [2, 2].
  DevTensor x0({1, 2}, {1, 2}), x1({2, 2}, {3, 4, 5, 6}), w0({2, 2}, {1, 0, 0, 1}), w1({2, 2}, {0, 1, 1, 0}),
      y({3, 2}, std::vector<float>(6)), y0({1, 2}, {0, 0}), y1({2, 2}, std::vector<float>(4));
  // A list owns its tensors: it gets descriptors of its own over the same memory.
  auto list = [](std::initializer_list<const DevTensor*> ts) {
    std::vector<aclTensor*> c;
    for (const DevTensor* t : ts) {
      std::vector<int64_t> shp = t->shape;
      c.push_back(aclCreateTensor(shp.data(), shp.size(), t->dtype, nullptr, 0, ACL_FORMAT_ND, shp.data(), shp.size(), t->dev));
    }
    return aclCreateTensorList(c.data(), c.size());
  };
  aclTensorList *lx = list({&x0, &x1}), *lw = list({&w0, &w1}), *ly = list({&y});
  EXEC(GroupedMatmulV3, lx, lw, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 3, -1, ly);
  EXPECT_EQ(y.read(), (std::vector<float>{1, 2, 4, 3, 6, 5}));
  // groupType 0: one x [3, 2] split 1 + 2 by groupList, into two y tensors.
  DevTensor xall({3, 2}, {1, 2, 3, 4, 5, 6});
  Raw<int64_t> gl({2}, {1, 3}, ACL_INT64);
  aclTensorList *lxa = list({&xall}), *lw2 = list({&w0, &w1}), *ly2 = list({&y0, &y1});
  EXEC(GroupedMatmulV3, lxa, lw2, nullptr, nullptr, nullptr, nullptr, nullptr, gl.t, 0, 0, ly2);
  EXPECT_EQ(y0.read(), (std::vector<float>{1, 2}));
  EXPECT_EQ(y1.read(), (std::vector<float>{4, 3, 6, 5}));
  for (aclTensorList* l : {lx, lw, ly, lxa, lw2, ly2}) aclDestroyTensorList(l);
}

// Attention in float64 by the definition, on fp16 inputs as the device holds them.
TEST(CannClientOps, FusedInferAttentionScoreMatchesTheDefinitionWithGroupedHeadsMaskAndPse) {
  const int64_t B = 2, S = 3, N = 4, KVN = 2, D = 16, S2 = 5;
  for (const char* layout_name : {"BSND", "BNSD"}) {
    SCOPED_TRACE(layout_name);
    const bool bnsd = std::string(layout_name) == "BNSD";
    auto shape = [&](int64_t s, int64_t n) {
      return bnsd ? std::vector<int64_t>{B, n, s, D} : std::vector<int64_t>{B, s, n, D};
    };
    auto at = [&](int64_t b, int64_t s, int64_t n, int64_t d, int64_t SS, int64_t NN) {
      return bnsd ? ((b * NN + n) * SS + s) * D + d : ((b * SS + s) * NN + n) * D + d;
    };
    DevTensor q(shape(S, N), wave(B * S * N * D, 0.13), ACL_FLOAT16), k(shape(S2, KVN), wave(B * S2 * KVN * D, 0.29), ACL_FLOAT16),
        v(shape(S2, KVN), wave(B * S2 * KVN * D, 0.41), ACL_FLOAT16), out(shape(S, N), std::vector<float>(B * S * N * D), ACL_FLOAT16),
        pse({1, N, S, S2}, wave(N * S * S2, 0.7, 0.5), ACL_FLOAT16);
    std::vector<uint8_t> mk(S * S2);
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < S2; ++j) mk[static_cast<size_t>(i * S2 + j)] = j > i + 2;  // causal, 2 ahead
    Raw<uint8_t> mask({S, S2}, mk, ACL_BOOL);
    std::vector<float> Q = q.read(), Kk = k.read(), V = v.read(), P = pse.read();
    aclTensor *kc = aclCreateTensor(k.shape.data(), 4, ACL_FLOAT16, nullptr, 0, ACL_FORMAT_ND, k.shape.data(), 4, k.dev),
              *vc = aclCreateTensor(v.shape.data(), 4, ACL_FLOAT16, nullptr, 0, ACL_FORMAT_ND, v.shape.data(), 4, v.dev);
    aclTensorList *kl = aclCreateTensorList(&kc, 1), *vl = aclCreateTensorList(&vc, 1);
    const double scale = 1 / std::sqrt(static_cast<double>(D));
    char layout[8];
    std::strcpy(layout, layout_name);
    EXEC(FusedInferAttentionScoreV2, q.t, kl, vl, pse.t, mask.t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
         nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
         nullptr, N, scale, 65535, 65535, layout, KVN, 0, 0, 0, 0, false, 0, 0, out.t, nullptr);
    std::vector<double> want(static_cast<size_t>(B * S * N * D));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < S; ++i) {
          std::vector<double> p(S2);
          double mx = -INFINITY, z = 0;
          for (int64_t j = 0; j < S2; ++j) {
            double dot = 0;
            for (int64_t d = 0; d < D; ++d) dot += Q[at(b, i, n, d, S, N)] * Kk[at(b, j, n / 2, d, S2, KVN)];
            p[j] = mk[i * S2 + j] ? -INFINITY : scale * dot + P[(n * S + i) * S2 + j];
            mx = std::max(mx, p[j]);
          }
          for (double& e : p) z += e = std::exp(e - mx);
          for (int64_t d = 0; d < D; ++d) {
            double acc = 0;
            for (int64_t j = 0; j < S2; ++j) acc += p[j] / z * V[at(b, j, n / 2, d, S2, KVN)];
            want[at(b, i, n, d, S, N)] = acc;
          }
        }
    expect_near_all(out.read(), want, 1e-3, 1e-3);
    aclDestroyTensorList(kl);
    aclDestroyTensorList(vl);
  }
}

TEST(CannClientOps, RecurrentGatedDeltaRuleRunsTheRecurrenceAndWritesEachTokensState) {
  const int64_t B = 2, L = 2, T = B * L, Nk = 1, Nv = 2, Dk = 4, Dv = 3, slots = T;
  DevTensor q({T, Nk, Dk}, wave(T * Nk * Dk, 0.5), ACL_BF16), k({T, Nk, Dk}, wave(T * Nk * Dk, 0.8, 0.5), ACL_BF16),
      v({T, Nv, Dv}, wave(T * Nv * Dv, 0.3), ACL_BF16), beta({T, Nv}, {0.5f, 0.25f, 0.75f, 1, 0.5f, 0.5f, 0.25f, 0.125f}, ACL_BF16),
      st({slots, Nv, Dv, Dk}, wave(slots * Nv * Dv * Dk, 0.11, 0.3), ACL_BF16), out({T, Nv, Dv}, std::vector<float>(T * Nv * Dv), ACL_BF16),
      g({T, Nv}, {-0.1f, -0.2f, -0.3f, 0, -0.5f, -0.05f, -1, -0.25f});
  Raw<int32_t> lens({B}, {L, L}, ACL_INT32), idx({T}, {0, 1, 2, 3}, ACL_INT32), acc({B}, {1, 2}, ACL_INT32);
  std::vector<float> Q = q.read(), K = k.read(), V = v.read(), Be = beta.read(), S0 = st.read(), Gv = g.read();
  const float scale = 0.5f;
  EXEC(RecurrentGatedDeltaRule, q.t, k.t, v.t, beta.t, st.t, lens.t, idx.t, g.t, nullptr, acc.t, scale, out.t);
  std::vector<double> wo(static_cast<size_t>(T * Nv * Dv)), ws(S0.begin(), S0.end());
  const int n_acc[] = {1, 2};
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Nv; ++h) {
      std::vector<double> S(Dv * Dk);
      const int64_t s0 = b * L + n_acc[b] - 1;
      for (int64_t i = 0; i < Dv * Dk; ++i) S[i] = S0[(s0 * Nv + h) * Dv * Dk + i];
      for (int64_t t = b * L; t < b * L + L; ++t) {
        const double a = std::exp(static_cast<double>(Gv[t * Nv + h]));
        for (double& e : S) e *= a;
        for (int64_t r = 0; r < Dv; ++r) {
          double sk = 0;
          for (int64_t c = 0; c < Dk; ++c) sk += S[r * Dk + c] * K[t * Dk + c];
          const double u = Be[t * Nv + h] * (V[(t * Nv + h) * Dv + r] - sk);
          double o = 0;
          for (int64_t c = 0; c < Dk; ++c) o += (S[r * Dk + c] += u * K[t * Dk + c]) * Q[t * Dk + c];
          wo[(t * Nv + h) * Dv + r] = scale * o;
        }
        for (int64_t i = 0; i < Dv * Dk; ++i) ws[(t * Nv + h) * Dv * Dk + i] = S[i];
      }
    }
  expect_near_all(out.read(), wo, 8e-3, 1e-3);
  expect_near_all(st.read(), ws, 8e-3, 1e-3);
}

// A 1-D convolution, plain and transposed, against the definition (ggml's CONV_TRANSPOSE_1D).
TEST(CannClientOps, OneDimensionalConvolutionPlainAndTransposed) {
  const std::vector<float> xv = {1, -2, 3, 0.5f, 4, 2, 1, -1, 0, 3}, wv = {1, 2, -1, 0.5f, 0, 1, 2, 1, 1, -1, 3, 0};
  DevTensor x({1, 2, 5}, xv), w({3, 2, 2}, wv), y({1, 3, 3}, std::vector<float>(9));
  int64_t one = 1, two = 2;
  aclIntArray *s2 = aclCreateIntArray(&two, 1), *p1 = aclCreateIntArray(&one, 1), *d1 = aclCreateIntArray(&one, 1);
  EXEC(Convolution, x.t, w.t, nullptr, s2, p1, d1, false, nullptr, 1, y.t, int8_t(0));
  std::vector<double> want(9, 0.0);  // out[o, l] = sum_c,k x[c, 2 l - 1 + k] w[o, c, k]
  for (int o = 0; o < 3; ++o)
    for (int l = 0; l < 3; ++l)
      for (int c = 0; c < 2; ++c)
        for (int k = 0; k < 2; ++k) {
          const int i = 2 * l - 1 + k;
          if (i >= 0 && i < 5) want[o * 3 + l] += xv[c * 5 + i] * wv[(o * 2 + c) * 2 + k];
        }
  expect_near_all(y.read(), want, 1e-6);
  // The same into a strided output: rows of 3 in rows of 4 (ggml's SSM_CONV writes such a view).
  DevTensor wide({1, 3, 4}, std::vector<float>(12, -7.0f));
  int64_t yshape[] = {1, 3, 3}, ystr[] = {12, 4, 1}, ystore = 12;
  aclTensor* yv = aclCreateTensor(yshape, 3, ACL_FLOAT, ystr, 0, ACL_FORMAT_ND, &ystore, 1, wide.dev);
  EXEC(Convolution, x.t, w.t, nullptr, s2, p1, d1, false, nullptr, 1, yv, int8_t(0));
  std::vector<float> wr = wide.read();
  for (int o = 0; o < 3; ++o) {
    for (int l = 0; l < 3; ++l) EXPECT_NEAR(wr[o * 4 + l], want[o * 3 + l], 1e-5);
    EXPECT_EQ(wr[o * 4 + 3], -7.0f);  // the gaps stay
  }
  aclDestroyTensor(yv);
  // Transposed: input [1, 2, 3], weight [Cin 2, Cout 1, 3], stride 2: output length (3 - 1) 2 + 3 = 7.
  DevTensor tx({1, 2, 3}, {1, 2, 3, -1, 0.5f, 2}), tw({2, 1, 3}, {1, -1, 2, 0.5f, 1, 0}), ty({1, 1, 7}, std::vector<float>(7));
  int64_t zero = 0;
  aclIntArray* p0 = aclCreateIntArray(&zero, 1);
  EXEC(Convolution, tx.t, tw.t, nullptr, s2, p0, d1, true, p0, 1, ty.t, int8_t(0));
  std::vector<double> tw_(7, 0.0);
  const std::vector<float> txv = {1, 2, 3, -1, 0.5f, 2}, twv = {1, -1, 2, 0.5f, 1, 0};
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 3; ++k) tw_[2 * i + k] += txv[c * 3 + i] * twv[c * 3 + k];
  expect_near_all(ty.read(), tw_, 1e-6);
  int64_t pair[] = {1, 1};
  aclIntArray* s11 = aclCreateIntArray(pair, 2);
  REFUSED(Convolution, "needs 1 value", x.t, w.t, nullptr, s11, p1, d1, false, nullptr, 1, y.t, int8_t(0));
  for (aclIntArray* a : {s2, p1, d1, p0, s11}) aclDestroyIntArray(a);
}
