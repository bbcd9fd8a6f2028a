// The CANN API surface as CANN defines it: the in-place forms against their out-of-place twins,
// InplaceZero, GeluBackwardV2's string attribute, aclDataTypeSize and the fp16 converters, Mm /
// BatchMatMul / Addmm, Mean / MeanV2, Permute, IndexSelect, Gelu, SiluBackward, format tags.
#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>

#include "npu_test_util.h"

using namespace npu_test;

namespace {

// Phase 2 with no workspace (these ops plan none), then a device synchronize.
void run(aclnnStatus (*phase2)(void*, uint64_t, aclOpExecutor*, aclrtStream), uint64_t ws, aclOpExecutor* ex) {
  ASSERT_EQ(ws, 0u);
  ASSERT_EQ(phase2(nullptr, 0, ex, nullptr), ACLNN_SUCCESS) << recent_error();
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS) << recent_error();
}

struct UnaryPair {
  const char* name;
  aclnnStatus (*out_phase1)(const aclTensor*, aclTensor*, uint64_t*, aclOpExecutor**);
  aclnnStatus (*out_phase2)(void*, uint64_t, aclOpExecutor*, aclrtStream);
  aclnnStatus (*in_phase1)(aclTensor*, uint64_t*, aclOpExecutor**);
  aclnnStatus (*in_phase2)(void*, uint64_t, aclOpExecutor*, aclrtStream);
};

}  // namespace

// Every in-place unary form writes what its out-of-place op writes, bit for bit.
TEST(CannApi, InplaceUnaryFormsMatchTheirOutOfPlaceOps) {
#define EMBER_PAIR(N) \
  { #N, aclnn##N##GetWorkspaceSize, aclnn##N, aclnnInplace##N##GetWorkspaceSize, aclnnInplace##N }
  // (Relu's out is const in CANN's declaration, the others' not.)
  auto relu = [](const aclTensor* s, aclTensor* o, uint64_t* w, aclOpExecutor** e) {
    return aclnnReluGetWorkspaceSize(s, o, w, e);
  };
  const UnaryPair pairs[] = {{"Relu", relu, aclnnRelu, aclnnInplaceReluGetWorkspaceSize, aclnnInplaceRelu},
                             EMBER_PAIR(Neg),
                             EMBER_PAIR(Tanh),
                             EMBER_PAIR(Sigmoid),
                             EMBER_PAIR(Exp),
                             EMBER_PAIR(Log),
                             EMBER_PAIR(Log1p),
                             EMBER_PAIR(Sqrt),
                             EMBER_PAIR(Rsqrt),
                             EMBER_PAIR(Sin),
                             EMBER_PAIR(Cos),
                             EMBER_PAIR(Reciprocal)};
#undef EMBER_PAIR
  // Positive values, so that every function is defined on them; the Relu/Neg pair sees signs too.
  const std::vector<float> pos = {0.25f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f};
  const std::vector<float> mixed = {-2.0f, -0.5f, 0.0f, 0.5f, 1.0f, 3.0f};
  for (const UnaryPair& p : pairs) {
    SCOPED_TRACE(p.name);
    const std::vector<float>& v = (std::string(p.name) == "Relu" || std::string(p.name) == "Neg") ? mixed : pos;
    DevTensor src({2, 3}, v), out({2, 3}, std::vector<float>(6, 0.0f)), self({2, 3}, v);
    uint64_t ws = 0;
    aclOpExecutor* ex = nullptr;
    ASSERT_EQ(p.out_phase1(src.t, out.t, &ws, &ex), ACLNN_SUCCESS) << recent_error();
    run(p.out_phase2, ws, ex);
    ASSERT_EQ(p.in_phase1(self.t, &ws, &ex), ACLNN_SUCCESS) << recent_error();
    run(p.in_phase2, ws, ex);
    std::vector<float> want = out.read(), got = self.read();
    EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)));
    EXPECT_NE(want, v) << "the op changed nothing: the comparison proves nothing";
  }
}

TEST(CannApi, InplacePowTensorScalarAndInplaceZero) {
  DevTensor x({4}, {1.0f, 2.0f, 3.0f, 4.0f});
  float e = 3.0f;
  aclScalar* exponent = aclCreateScalar(&e, ACL_FLOAT);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(aclnnInplacePowTensorScalarGetWorkspaceSize(x.t, exponent, &ws, &ex), ACLNN_SUCCESS) << recent_error();
  run(aclnnInplacePowTensorScalar, ws, ex);
  EXPECT_EQ(x.read(), (std::vector<float>{1.0f, 8.0f, 27.0f, 64.0f}));
  ASSERT_EQ(aclnnInplaceZeroGetWorkspaceSize(x.t, &ws, &ex), ACLNN_SUCCESS) << recent_error();
  run(aclnnInplaceZero, ws, ex);
  EXPECT_EQ(x.read(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(aclnnInplaceZeroGetWorkspaceSize(nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_NE(recent_error().find("selfRef"), std::string::npos);
  aclDestroyScalar(exponent);
}

// approximate is a string, "none" (the erf form) or "tanh", as in CANN; anything else is refused.
TEST(CannApi, GeluBackwardV2TakesTheApproximationByName) {
  DevTensor g({3}, {1.0f, 1.0f, 1.0f}), x({3}, {-1.0f, 0.0f, 2.0f}), out({3}, {0, 0, 0});
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  char none[] = "none", tanh_[] = "tanh", bad[] = "erf";
  ASSERT_EQ(aclnnGeluBackwardV2GetWorkspaceSize(g.t, x.t, none, out.t, &ws, &ex), ACLNN_SUCCESS) << recent_error();
  run(aclnnGeluBackwardV2, ws, ex);
  std::vector<float> erf_form = out.read();
  ASSERT_EQ(aclnnGeluBackwardV2GetWorkspaceSize(g.t, x.t, tanh_, out.t, &ws, &ex), ACLNN_SUCCESS) << recent_error();
  run(aclnnGeluBackwardV2, ws, ex);
  std::vector<float> tanh_form = out.read();
  // d/dx gelu(x) = Phi(x) + x phi(x), computed here in double (the oracle) for the erf form.
  for (int i = 0; i < 3; ++i) {
    double v = std::vector<double>{-1.0, 0.0, 2.0}[i];
    double d = 0.5 * (1 + std::erf(v / std::sqrt(2.0))) + v * std::exp(-v * v / 2) / std::sqrt(2 * M_PI);
    EXPECT_NEAR(erf_form[i], d, 1e-6);
    EXPECT_NEAR(tanh_form[i], d, 1e-3);  // the tanh form approximates it to ~1e-3 here
  }
  EXPECT_NE(erf_form, tanh_form);
  EXPECT_EQ(aclnnGeluBackwardV2GetWorkspaceSize(g.t, x.t, bad, out.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("\"none\" or \"tanh\", got \"erf\""), std::string::npos);
  EXPECT_EQ(aclnnGeluBackwardV2GetWorkspaceSize(g.t, x.t, nullptr, out.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_NE(recent_error().find("approximate"), std::string::npos);
}

TEST(CannApi, DataTypeSizesAndHalfConversions) {
  EXPECT_EQ(aclDataTypeSize(ACL_FLOAT), 4u);
  EXPECT_EQ(aclDataTypeSize(ACL_FLOAT16), 2u);
  EXPECT_EQ(aclDataTypeSize(ACL_BF16), 2u);
  EXPECT_EQ(aclDataTypeSize(ACL_INT8), 1u);
  EXPECT_EQ(aclDataTypeSize(ACL_BOOL), 1u);
  EXPECT_EQ(aclDataTypeSize(ACL_INT64), 8u);
  EXPECT_EQ(aclDataTypeSize(ACL_DOUBLE), 8u);
  EXPECT_EQ(aclDataTypeSize(ACL_COMPLEX128), 16u);
  EXPECT_EQ(aclDataTypeSize(ACL_DT_UNDEFINED), 0u);
  EXPECT_EQ(aclDataTypeSize(static_cast<aclDataType>(999)), 0u);
  // Binary16 bit patterns, worked out by hand: 1.0 = 0x3C00, -2.0 = 0xC000, 65504 (max) = 0x7BFF,
  // 2^-24 (smallest subnormal) = 0x0001; 1 + 2^-11 is a tie and rounds to even (1.0).
  EXPECT_EQ(aclFloatToFloat16(1.0f), 0x3C00);
  EXPECT_EQ(aclFloatToFloat16(-2.0f), 0xC000);
  EXPECT_EQ(aclFloatToFloat16(65504.0f), 0x7BFF);
  EXPECT_EQ(aclFloatToFloat16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(aclFloatToFloat16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(aclFloatToFloat16(1e6f), 0x7C00);  // overflow: +inf
  EXPECT_EQ(aclFloat16ToFloat(0x3555), 0.333251953125f);
  EXPECT_TRUE(std::isnan(aclFloat16ToFloat(aclFloatToFloat16(std::numeric_limits<float>::quiet_NaN()))));
}

namespace {
// Phase 1 with args, a workspace if one is asked for, phase 2 and a device synchronize.
template <class P1, class... A>
void call(P1 phase1, aclnnStatus (*phase2)(void*, uint64_t, aclOpExecutor*, aclrtStream), A... args) {
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(phase1(args..., &ws, &ex), ACLNN_SUCCESS) << recent_error();
  void* w = nullptr;
  if (ws) {
    ASSERT_EQ(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  }
  ASSERT_EQ(phase2(w, ws, ex, nullptr), ACLNN_SUCCESS) << recent_error();
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS) << recent_error();
  if (w) aclrtFree(w);
}
}  // namespace

// Mm, BatchMatMul and Addmm against products worked out by hand; Mm and BatchMatMul refuse the
// other ranks.
TEST(CannApi, MmBatchMatMulAndAddmm) {
  DevTensor a({2, 3}, {1, 2, 3, 4, 5, 6}), b({3, 2}, {1, 0, 0, 1, 1, 1}), o({2, 2}, {0, 0, 0, 0});
  call(aclnnMmGetWorkspaceSize, aclnnMm, a.t, b.t, o.t, int8_t(0));
  EXPECT_EQ(o.read(), (std::vector<float>{4, 5, 10, 11}));
  // batch 2: [[1,2],[3,4]] @ I and [[1,1],[1,1]] @ [[2,0],[0,3]]
  DevTensor ba({2, 2, 2}, {1, 2, 3, 4, 1, 1, 1, 1}), bb({2, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 3}),
      bo({2, 2, 2}, std::vector<float>(8, 0));
  call(aclnnBatchMatMulGetWorkspaceSize, aclnnBatchMatMul, ba.t, bb.t, bo.t, int8_t(0));
  EXPECT_EQ(bo.read(), (std::vector<float>{1, 2, 3, 4, 2, 3, 2, 3}));
  uint64_t ws;
  aclOpExecutor* ex;
  EXPECT_EQ(aclnnMmGetWorkspaceSize(ba.t, bb.t, bo.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("must be 2-D"), std::string::npos);
  EXPECT_EQ(aclnnBatchMatMulGetWorkspaceSize(a.t, b.t, o.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("must be 3-D"), std::string::npos);
  // out = 0.5 * bias + 2 * (a @ b), bias [2] broadcast over the rows
  DevTensor bias({2}, {10, 20}), ao({2, 2}, {0, 0, 0, 0});
  float half = 0.5f, two = 2.0f;
  aclScalar* beta = aclCreateScalar(&half, ACL_FLOAT);
  aclScalar* alpha = aclCreateScalar(&two, ACL_FLOAT);
  call(aclnnAddmmGetWorkspaceSize, aclnnAddmm, static_cast<const aclTensor*>(bias.t),
       static_cast<const aclTensor*>(a.t), static_cast<const aclTensor*>(b.t), static_cast<const aclScalar*>(beta),
       static_cast<const aclScalar*>(alpha), ao.t, int8_t(0));
  EXPECT_EQ(ao.read(), (std::vector<float>{13, 20, 25, 32}));
  // in place: selfRef [2, 2] = 0.5 * selfRef + 2 * (a @ b); selfRef is read before the GEMM writes it
  DevTensor acc({2, 2}, {2, 4, 6, 8});
  call(aclnnInplaceAddmmGetWorkspaceSize, aclnnInplaceAddmm, static_cast<const aclTensor*>(acc.t),
       static_cast<const aclTensor*>(a.t), static_cast<const aclTensor*>(b.t), static_cast<const aclScalar*>(beta),
       static_cast<const aclScalar*>(alpha), int8_t(0));
  EXPECT_EQ(acc.read(), (std::vector<float>{9, 12, 23, 26}));
  aclDestroyScalar(beta);
  aclDestroyScalar(alpha);
}

// The matmul family's dtype rules as CANN documents them (aclnnMatmul.md): fp16 with fp32
// promotes to fp32, the result is cast to out (any of fp32, fp16, bf16), bf16 with fp16 or fp32
// is refused on Atlas A2/A3. Values against float64 products of the (rounded) inputs.
TEST(CannApi, MatmulFamilyTakesMixedDtypesAsCannDocumentsThem) {
  const std::vector<float> av = {0.5f, -1.25f, 2.0f, 0.1f, 3.0f, -0.7f}, bv = {1.5f, 0.3f, -2.0f, 0.25f, 0.6f, 1.1f};
  struct Case {
    aclDataType a, b, o;
  };
  const Case cases[] = {{ACL_FLOAT16, ACL_FLOAT, ACL_FLOAT},   {ACL_FLOAT, ACL_FLOAT16, ACL_FLOAT16},
                        {ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT}, {ACL_FLOAT, ACL_FLOAT, ACL_FLOAT16},
                        {ACL_BF16, ACL_BF16, ACL_FLOAT},       {ACL_FLOAT, ACL_FLOAT, ACL_BF16},
                        {ACL_FLOAT16, ACL_FLOAT, ACL_BF16}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.a) + " x " + std::to_string(c.b) + " -> " + std::to_string(c.o));
    DevTensor a({2, 3}, av, c.a), b({3, 2}, bv, c.b);
    std::vector<float> ar = DevTensor({2, 3}, av, c.a).read(), br = DevTensor({3, 2}, bv, c.b).read();
    auto check = [&](const DevTensor& o, const char* op) {
      std::vector<float> got = o.read();
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          double want = 0;
          for (int k = 0; k < 3; ++k) want += double(ar[i * 3 + k]) * br[k * 2 + j];
          // fp32 accumulation, one rounding to out's dtype (fp16: 2^-11, bf16: 2^-8 relative)
          double tol = (c.o == ACL_FLOAT ? 1e-6 : c.o == ACL_FLOAT16 ? 1.0 / 2048 : 1.0 / 256) * std::max(1.0, std::fabs(want));
          EXPECT_NEAR(got[i * 2 + j], want, tol) << op << " [" << i << ", " << j << "]";
        }
    };
    DevTensor o1({2, 2}, std::vector<float>(4, 0), c.o), o2({2, 2}, std::vector<float>(4, 0), c.o);
    call(aclnnMmGetWorkspaceSize, aclnnMm, static_cast<const aclTensor*>(a.t), static_cast<const aclTensor*>(b.t), o1.t,
         int8_t(0));
    check(o1, "Mm");
    call(aclnnMatmulGetWorkspaceSize, aclnnMatmul, static_cast<const aclTensor*>(a.t), static_cast<const aclTensor*>(b.t),
         o2.t, int8_t(0));
    check(o2, "Matmul");
    DevTensor ba({1, 2, 3}, av, c.a), bb({1, 3, 2}, bv, c.b), bo({1, 2, 2}, std::vector<float>(4, 0), c.o);
    call(aclnnBatchMatMulGetWorkspaceSize, aclnnBatchMatMul, static_cast<const aclTensor*>(ba.t),
         static_cast<const aclTensor*>(bb.t), bo.t, int8_t(0));
    check(bo, "BatchMatMul");
  }
  // Refused, naming the rule: bf16 with fp16 or fp32, integer out for float inputs.
  uint64_t ws;
  aclOpExecutor* ex;
  DevTensor h({2, 3}, av, ACL_BF16), f({3, 2}, bv), o({2, 2}, std::vector<float>(4, 0));
  EXPECT_EQ(aclnnMmGetWorkspaceSize(h.t, f.t, o.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("do not promote bfloat16 with float16 or float32"), std::string::npos) << recent_error();
  DevTensor f16({3, 2}, bv, ACL_FLOAT16);
  EXPECT_EQ(aclnnMatmulGetWorkspaceSize(h.t, f16.t, o.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  void* idev = nullptr;
  ASSERT_EQ(aclrtMalloc(&idev, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  int64_t two[2] = {2, 2}, four = 4;
  aclTensor* io = aclCreateTensor(two, 2, ACL_INT32, nullptr, 0, ACL_FORMAT_ND, &four, 1, idev);
  DevTensor fa({2, 3}, av);
  EXPECT_EQ(aclnnMmGetWorkspaceSize(fa.t, f.t, io, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("out (int32) must be float32, float16 or bfloat16"), std::string::npos) << recent_error();
  aclDestroyTensor(io);
  aclrtFree(idev);
}

// Mean and MeanV2 against means worked out by hand, an fp16 result rounded once, and the
// noopWithEmptyAxes copy.
TEST(CannApi, MeanAndMeanV2) {
  DevTensor x({2, 3}, {1, 2, 3, 4, 5, 7});
  DevTensor rows({2}, {0, 0}), all({1, 1}, {0});
  int64_t d1 = 1;
  aclIntArray* dim1 = aclCreateIntArray(&d1, 1);
  aclIntArray* none = aclCreateIntArray(nullptr, 0);
  call(aclnnMeanGetWorkspaceSize, aclnnMean, static_cast<const aclTensor*>(x.t), static_cast<const aclIntArray*>(dim1),
       false, ACL_FLOAT, rows.t);
  EXPECT_EQ(rows.read(), (std::vector<float>{2, 16.0f / 3}));
  call(aclnnMeanV2GetWorkspaceSize, aclnnMeanV2, static_cast<const aclTensor*>(x.t),
       static_cast<const aclIntArray*>(none), true, false, all.t);
  EXPECT_EQ(all.read(), (std::vector<float>{22.0f / 6}));
  DevTensor same({2, 3}, std::vector<float>(6, 0));
  call(aclnnMeanV2GetWorkspaceSize, aclnnMeanV2, static_cast<const aclTensor*>(x.t),
       static_cast<const aclIntArray*>(none), false, true, same.t);
  EXPECT_EQ(same.read(), x.read());
  // fp16 out: the mean rounded once to the nearest half.
  void* hd = nullptr;
  ASSERT_EQ(aclrtMalloc(&hd, 4, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  int64_t two = 2;
  aclTensor* h = aclCreateTensor(&two, 1, ACL_FLOAT16, nullptr, 0, ACL_FORMAT_ND, &two, 1, hd);
  call(aclnnMeanGetWorkspaceSize, aclnnMean, static_cast<const aclTensor*>(x.t), static_cast<const aclIntArray*>(dim1),
       false, ACL_FLOAT16, h);
  uint16_t bits[2];
  ASSERT_EQ(aclrtMemcpy(bits, 4, hd, 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_EQ(bits[0], aclFloatToFloat16(2.0f));
  EXPECT_EQ(bits[1], aclFloatToFloat16(16.0f / 3));
  aclDestroyTensor(h);
  aclrtFree(hd);
  uint64_t ws;
  aclOpExecutor* ex;
  // An integer dtype (CANN allows them): the mean truncated, 16/3 -> 5.
  void* idev = nullptr;
  ASSERT_EQ(aclrtMalloc(&idev, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  aclTensor* ints = aclCreateTensor(&two, 1, ACL_INT32, nullptr, 0, ACL_FORMAT_ND, &two, 1, idev);
  call(aclnnMeanGetWorkspaceSize, aclnnMean, static_cast<const aclTensor*>(x.t), static_cast<const aclIntArray*>(dim1),
       false, ACL_INT32, ints);
  int32_t iv[2];
  ASSERT_EQ(aclrtMemcpy(iv, 8, idev, 8, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_EQ(iv[0], 2);
  EXPECT_EQ(iv[1], 5);
  aclDestroyTensor(ints);
  aclrtFree(idev);
  DevTensor mismatch({2}, {0, 0});  // float32, but dtype says float16
  EXPECT_EQ(aclnnMeanGetWorkspaceSize(x.t, dim1, false, ACL_FLOAT16, mismatch.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  aclDestroyIntArray(dim1);
  aclDestroyIntArray(none);
}

TEST(CannApi, PermuteAndIndexSelect) {
  DevTensor x({2, 3}, {0, 1, 2, 3, 4, 5}), xt({3, 2}, std::vector<float>(6, 0));
  int64_t perm[2] = {1, 0};
  aclIntArray* dims = aclCreateIntArray(perm, 2);
  call(aclnnPermuteGetWorkspaceSize, aclnnPermute, static_cast<const aclTensor*>(x.t),
       static_cast<const aclIntArray*>(dims), xt.t);
  EXPECT_EQ(xt.read(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  uint64_t ws;
  aclOpExecutor* ex;
  int64_t bad[2] = {0, 0};
  aclIntArray* twice = aclCreateIntArray(bad, 2);
  EXPECT_EQ(aclnnPermuteGetWorkspaceSize(x.t, twice, xt.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("not a permutation"), std::string::npos);
  // columns 2, 0, 2 (an int64 index; -1 counts from the end)
  void* idev = nullptr;
  int64_t idx[3] = {2, 0, -1}, three = 3;
  ASSERT_EQ(aclrtMalloc(&idev, sizeof idx, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpy(idev, sizeof idx, idx, sizeof idx, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  aclTensor* index = aclCreateTensor(&three, 1, ACL_INT64, nullptr, 0, ACL_FORMAT_ND, &three, 1, idev);
  DevTensor sel({2, 3}, std::vector<float>(6, 0));
  call(aclnnIndexSelectGetWorkspaceSize, aclnnIndexSelect, static_cast<const aclTensor*>(x.t), int64_t(1),
       static_cast<const aclTensor*>(index), sel.t);
  EXPECT_EQ(sel.read(), (std::vector<float>{2, 0, 2, 5, 3, 5}));
  // An index out of range is found by the kernel: an IndexError-class fault at synchronize.
  idx[1] = 3;
  ASSERT_EQ(aclrtMemcpy(idev, sizeof idx, idx, sizeof idx, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  ASSERT_EQ(aclnnIndexSelectGetWorkspaceSize(x.t, 1, index, sel.t, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(aclnnIndexSelect(nullptr, 0, ex, nullptr), ACLNN_SUCCESS);
  EXPECT_NE(aclrtSynchronizeDevice(), ACL_SUCCESS);
  EXPECT_NE(recent_error().find("index 3 at position 1 is out of range for dim 1 of size 3"), std::string::npos);
  aclDestroyTensor(index);
  aclrtFree(idev);
  aclDestroyIntArray(dims);
  aclDestroyIntArray(twice);
}

// Gelu is the tanh form (CANN's doc and kernel); SiluBackward is g * silu'(x), checked against float64.
TEST(CannApi, GeluAndSiluBackward) {
  const std::vector<float> xs = {-2.0f, -0.5f, 0.0f, 1.0f, 3.0f};
  DevTensor x({5}, xs), g({5}, {1, 2, 3, 4, 5}), y({5}, std::vector<float>(5, 0)), gi({5}, std::vector<float>(5, 0));
  call(aclnnGeluGetWorkspaceSize, aclnnGelu, static_cast<const aclTensor*>(x.t), y.t);
  call(aclnnSiluBackwardGetWorkspaceSize, aclnnSiluBackward, static_cast<const aclTensor*>(g.t),
       static_cast<const aclTensor*>(x.t), gi.t);
  std::vector<float> gelu = y.read(), silu_grad = gi.read();
  for (size_t i = 0; i < xs.size(); ++i) {
    double v = xs[i], s = 1 / (1 + std::exp(-v));
    EXPECT_NEAR(gelu[i], 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))), 1e-6);
    EXPECT_NEAR(silu_grad[i], (i + 1) * s * (1 + v * (1 - s)), 2e-6);
  }
}

// InplacePowTensorTensor (exponent broadcast) and PowScalarTensor (a scalar base), as ggml's CANN
// backend calls them, against std::pow in float64.
TEST(CannApi, InplacePowTensorTensorAndPowScalarTensor) {
  const std::vector<float> base = {0.5f, 2.0f, 3.0f, 1.5f, 4.0f, 0.25f}, e = {2.0f, -1.0f, 0.5f};
  DevTensor self({2, 3}, base), exponent({3}, e);
  call(aclnnInplacePowTensorTensorGetWorkspaceSize, aclnnInplacePowTensorTensor, static_cast<const aclTensor*>(self.t),
       static_cast<const aclTensor*>(exponent.t));
  std::vector<float> got = self.read();
  for (size_t i = 0; i < base.size(); ++i) EXPECT_NEAR(got[i], std::pow(double(base[i]), double(e[i % 3])), 1e-6) << i;
  float two = 2.0f;
  aclScalar* b = aclCreateScalar(&two, ACL_FLOAT);
  DevTensor ex({4}, {0.0f, 1.0f, -2.0f, 0.5f}), out({4}, std::vector<float>(4, 0));
  call(aclnnPowScalarTensorGetWorkspaceSize, aclnnPowScalarTensor, static_cast<const aclScalar*>(b),
       static_cast<const aclTensor*>(ex.t), out.t);
  EXPECT_EQ(out.read(), (std::vector<float>{1.0f, 2.0f, 0.25f, static_cast<float>(std::sqrt(2.0))}));
  uint64_t ws;
  aclOpExecutor* exe;
  DevTensor wrong({3}, {0, 0, 0});
  EXPECT_EQ(aclnnPowScalarTensorGetWorkspaceSize(b, ex.t, wrong.t, &ws, &exe), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclnnPowScalarTensorGetWorkspaceSize(nullptr, ex.t, out.t, &ws, &exe), ACLNN_ERR_PARAM_NULLPTR);
  aclDestroyScalar(b);
}

// Slice (Python's start/end rules, a step), GatherV2 (a 2-D index: out takes its shape), Mv, and
// the in-place Tril/Triu ggml's CANN backend calls for its masks, against values worked out here.
TEST(CannApi, SliceGatherV2MvAndInPlaceTriangles) {
  // x [3, 4] = 0 .. 11
  std::vector<float> xv(12);
  for (int i = 0; i < 12; ++i) xv[i] = static_cast<float>(i);
  DevTensor x({3, 4}, xv), sl({3, 2}, std::vector<float>(6, 0));
  call(aclnnSliceGetWorkspaceSize, aclnnSlice, static_cast<const aclTensor*>(x.t), int64_t(1), int64_t(-3),
       int64_t(100), int64_t(2), sl.t);
  EXPECT_EQ(sl.read(), (std::vector<float>{1, 3, 5, 7, 9, 11}));  // columns 1 and 3
  void* idev = nullptr;
  const int64_t idx[4] = {2, 0, 2, 1};
  ASSERT_EQ(aclrtMalloc(&idev, sizeof idx, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpy(idev, sizeof idx, idx, sizeof idx, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  int64_t ishape[2] = {2, 2}, four = 4;
  aclTensor* index = aclCreateTensor(ishape, 2, ACL_INT64, nullptr, 0, ACL_FORMAT_ND, &four, 1, idev);
  DevTensor rows({2, 2, 4}, std::vector<float>(16, 0));
  call(aclnnGatherV2GetWorkspaceSize, aclnnGatherV2, static_cast<const aclTensor*>(x.t), int64_t(0),
       static_cast<const aclTensor*>(index), rows.t);
  EXPECT_EQ(rows.read(), (std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7}));
  aclDestroyTensor(index);
  aclrtFree(idev);
  DevTensor v({4}, {1, 0, -1, 2}), mv({3}, {0, 0, 0});
  call(aclnnMvGetWorkspaceSize, aclnnMv, static_cast<const aclTensor*>(x.t), static_cast<const aclTensor*>(v.t), mv.t,
       int8_t(0));
  EXPECT_EQ(mv.read(), (std::vector<float>{4, 12, 20}));  // row r: 4r - (4r + 2) + 2 (4r + 3) = 8r + 4
  DevTensor lo({3, 4}, xv), up({3, 4}, xv);
  call(aclnnInplaceTrilGetWorkspaceSize, aclnnInplaceTril, lo.t, int64_t(0));
  call(aclnnInplaceTriuGetWorkspaceSize, aclnnInplaceTriu, up.t, int64_t(1));
  EXPECT_EQ(lo.read(), (std::vector<float>{0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0}));
  EXPECT_EQ(up.read(), (std::vector<float>{0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11}));
  uint64_t ws;
  aclOpExecutor* ex;
  EXPECT_EQ(aclnnSliceGetWorkspaceSize(x.t, 1, 0, 4, 0, sl.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("step must be positive"), std::string::npos);
  EXPECT_EQ(aclnnMvGetWorkspaceSize(x.t, x.t, mv.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("vec 1-D"), std::string::npos);
}

// The clamp family with one bound and in place, and InplaceThreshold, as ggml's CANN backend calls
// them (its YaRN ramp: threshold at 0, then clamp to 1).
TEST(CannApi, ClampMinMaxAndInPlaceThreshold) {
  const std::vector<float> v = {-2.0f, -0.5f, 0.0f, 0.5f, 1.5f, 3.0f};
  float lo_v = -1.0f, hi_v = 1.0f, zero_v = 0.0f;
  aclScalar *lo = aclCreateScalar(&lo_v, ACL_FLOAT), *hi = aclCreateScalar(&hi_v, ACL_FLOAT),
            *zero = aclCreateScalar(&zero_v, ACL_FLOAT);
  DevTensor x({6}, v), a({6}, std::vector<float>(6, 0)), b({6}, std::vector<float>(6, 0)), r({6}, v);
  call(aclnnClampMinGetWorkspaceSize, aclnnClampMin, static_cast<const aclTensor*>(x.t), static_cast<const aclScalar*>(lo), a.t);
  call(aclnnClampMaxGetWorkspaceSize, aclnnClampMax, static_cast<const aclTensor*>(x.t), static_cast<const aclScalar*>(hi), b.t);
  EXPECT_EQ(a.read(), (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.5f, 3.0f}));
  EXPECT_EQ(b.read(), (std::vector<float>{-2.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.0f}));
  call(aclnnInplaceThresholdGetWorkspaceSize, aclnnInplaceThreshold, r.t, static_cast<const aclScalar*>(zero),
       static_cast<const aclScalar*>(zero));
  call(aclnnInplaceClampMaxGetWorkspaceSize, aclnnInplaceClampMax, static_cast<const aclTensor*>(r.t),
       static_cast<const aclScalar*>(hi));
  EXPECT_EQ(r.read(), (std::vector<float>{0.0f, 0.0f, 0.0f, 0.5f, 1.0f, 1.0f}));
  uint64_t ws;
  aclOpExecutor* ex;
  EXPECT_EQ(aclnnClampMinGetWorkspaceSize(x.t, nullptr, a.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
  aclDestroyScalar(lo);
  aclDestroyScalar(hi);
  aclDestroyScalar(zero);
}

// RotaryPositionEmbedding in both of Atlas A2's modes, cos/sin broadcast from [1, S, 1, D] over
// x [B, S, N, D] (BSND), against the formula of CANN's doc computed here in double.
TEST(CannApi, RotaryPositionEmbeddingHalfAndInterleave) {
  const int64_t B = 2, S = 3, N = 2, D = 4;
  std::vector<float> xv(B * S * N * D), cv(S * D), sv(S * D);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(std::sin(0.7 * i) * 2);
  for (size_t i = 0; i < cv.size(); ++i) {
    cv[i] = static_cast<float>(std::cos(0.3 * i));
    sv[i] = static_cast<float>(std::sin(0.3 * i));
  }
  for (int64_t mode : {0, 1}) {
    SCOPED_TRACE(mode);
    DevTensor x({B, S, N, D}, xv), c({1, S, 1, D}, cv), s({1, S, 1, D}, sv),
        y({B, S, N, D}, std::vector<float>(xv.size(), 0));
    call(aclnnRotaryPositionEmbeddingGetWorkspaceSize, aclnnRotaryPositionEmbedding, static_cast<const aclTensor*>(x.t),
         static_cast<const aclTensor*>(c.t), static_cast<const aclTensor*>(s.t), mode, y.t);
    std::vector<float> got = y.read();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t q = 0; q < S; ++q)
        for (int64_t h = 0; h < N; ++h)
          for (int64_t j = 0; j < D; ++j) {
            const size_t row = static_cast<size_t>(((b * S + q) * N + h) * D);
            double rot = mode == 0 ? (j < D / 2 ? -xv[row + j + D / 2] : xv[row + j - D / 2])
                                   : (j % 2 == 0 ? -xv[row + j + 1] : xv[row + j - 1]);
            const double want = xv[row + j] * cv[q * D + j] + rot * sv[q * D + j];
            EXPECT_NEAR(got[row + j], want, 1e-5) << b << " " << q << " " << h << " " << j;
          }
  }
  uint64_t ws;
  aclOpExecutor* ex;
  DevTensor x({1, 1, 1, 4}, {1, 2, 3, 4}), c({1, 1, 1, 4}, {1, 1, 1, 1}), y({1, 1, 1, 4}, {0, 0, 0, 0});
  EXPECT_EQ(aclnnRotaryPositionEmbeddingGetWorkspaceSize(x.t, c.t, c.t, 2, y.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("Atlas A2/A3"), std::string::npos) << recent_error();
}

// ApplyAdamWV2 takes the bias correction at step + 1, as CANN's kernel does
// (hicann/ops-nn:optim/apply_adam_w_v2/tests/assets/golden.py), and leaves step unwritten.
// step = 0 is the first update: with the moments zero it moves each weight by lr * sign(g).
TEST(CannApi, ApplyAdamWV2TakesTheBiasCorrectionAtStepPlusOne) {
  const float lr = 0.125f, b1 = 0.875f, b2 = 0.96875f, wd = 0.0625f, eps = 1e-6f;
  for (float taken : {0.0f, 4.0f}) {
    SCOPED_TRACE(taken);
    const std::vector<float> p0 = {1.0f, -2.0f, 0.5f}, m0 = {0.0f, 0.25f, -0.125f}, v0 = {0.0f, 0.5f, 0.25f},
                             g0 = {0.5f, -1.0f, 2.0f};
    DevTensor p({3}, p0), m({3}, m0), v({3}, v0), g({3}, g0), step({1}, {taken});
    call(aclnnApplyAdamWV2GetWorkspaceSize, aclnnApplyAdamWV2, p.t, m.t, v.t, static_cast<aclTensor*>(nullptr),
         static_cast<const aclTensor*>(g.t), static_cast<const aclTensor*>(step.t), lr, b1, b2, wd, eps, false, false);
    const std::vector<float> got = p.read();
    const double t = taken + 1.0;
    for (size_t i = 0; i < p0.size(); ++i) {
      const double mi = b1 * m0[i] + (1 - b1) * g0[i], vi = b2 * v0[i] + (1 - b2) * double(g0[i]) * g0[i];
      const double want = p0[i] * (1 - double(lr) * wd) -
                          lr / (1 - std::pow(b1, t)) * mi / (std::sqrt(vi) / std::sqrt(1 - std::pow(b2, t)) + eps);
      EXPECT_NEAR(got[i], want, 2e-6 * std::max(1.0, std::fabs(want))) << i;
    }
    EXPECT_EQ(step.read(), std::vector<float>{taken}) << "the kernel must not write step";
  }
}

// The layout tags torch_npu and CANN's samples use (NCL, NCDHW, ...) are plain row-major and
// accepted; the private blocked formats are refused with a message.
TEST(CannApi, PlainFormatTagsAreAcceptedBlockedFormatsRefused) {
  void* dev = nullptr;
  ASSERT_EQ(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  int64_t shape[3] = {1, 2, 2};
  for (aclFormat f : {ACL_FORMAT_ND, ACL_FORMAT_NCL, ACL_FORMAT_NCHW, ACL_FORMAT_NCDHW, ACL_FORMAT_NC,
                      ACL_FORMAT_FRACTAL_NZ, ACL_FORMAT_NC1HWC0}) {
    SCOPED_TRACE(static_cast<int>(f));
    aclTensor* t = aclCreateTensor(shape, 3, ACL_FLOAT, nullptr, 0, f, shape, 3, dev);
    uint64_t ws;
    aclOpExecutor* ex;
    aclnnStatus st = aclnnInplaceZeroGetWorkspaceSize(t, &ws, &ex);
    if (f == ACL_FORMAT_FRACTAL_NZ || f == ACL_FORMAT_NC1HWC0) {
      EXPECT_EQ(st, ACLNN_ERR_PARAM_INVALID);
      EXPECT_NE(recent_error().find("blocked (private) layout"), std::string::npos);
    } else {
      ASSERT_EQ(st, ACLNN_SUCCESS) << recent_error();
      ASSERT_EQ(aclnnInplaceZero(nullptr, 0, ex, nullptr), ACLNN_SUCCESS);
    }
    aclDestroyTensor(t);
  }
  aclrtSynchronizeDevice();
  aclrtFree(dev);
}

// RmsNormGrad takes one rstd per row: RmsNorm's rstdOut shape ([rows..., 1]), x's leading dims
// (CANN's documented shape) or the rows flattened (CANN's sample) give the same gradients.
TEST(CannApi, RmsNormGradTakesRstdInEachDocumentedShape) {
  DevTensor x({2, 1, 4}, {1, 2, 3, 4, -1, 0.5f, 2, -3}), gamma({4}, {1, 0.5f, 2, -1}),
      dy({2, 1, 4}, {1, -1, 2, 0.5f, 3, 1, -2, 1});
  DevTensor y({2, 1, 4}, std::vector<float>(8, 0)), rstd({2, 1, 1}, {0, 0});
  call(aclnnRmsNormGetWorkspaceSize, aclnnRmsNorm, static_cast<const aclTensor*>(x.t),
       static_cast<const aclTensor*>(gamma.t), 1e-6, static_cast<const aclTensor*>(y.t),
       static_cast<const aclTensor*>(rstd.t));
  std::vector<std::vector<float>> results;
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{2, 1, 1}, std::vector<int64_t>{2, 1}, std::vector<int64_t>{2}}) {
    int64_t n = 2;
    aclTensor* r = aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, &n, 1, rstd.dev);
    DevTensor dx({2, 1, 4}, std::vector<float>(8, 0)), dg({4}, std::vector<float>(4, 0));
    call(aclnnRmsNormGradGetWorkspaceSize, aclnnRmsNormGrad, static_cast<const aclTensor*>(dy.t),
         static_cast<const aclTensor*>(x.t), static_cast<const aclTensor*>(r), static_cast<const aclTensor*>(gamma.t),
         static_cast<const aclTensor*>(dx.t), static_cast<const aclTensor*>(dg.t));
    std::vector<float> v = dx.read(), g = dg.read();
    v.insert(v.end(), g.begin(), g.end());
    results.push_back(v);
    aclDestroyTensor(r);
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
  EXPECT_NE(results[0], std::vector<float>(12, 0.0f));
  DevTensor three({3}, {1, 1, 1}), dx({2, 1, 4}, std::vector<float>(8, 0)), dg({4}, std::vector<float>(4, 0));
  uint64_t ws;
  aclOpExecutor* ex;
  EXPECT_EQ(aclnnRmsNormGradGetWorkspaceSize(dy.t, x.t, three.t, gamma.t, dx.t, dg.t, &ws, &ex),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("one value per row"), std::string::npos);
}

// RmsNorm writes one rstd per row into rstdOut of CANN's documented shape (x's, normalised dims
// 1) or of x's leading dims (what ggml's CANN backend passes); x float16 with gamma float32 is in
// CANN's dtype table, x float32 with gamma float16 is not.
TEST(CannApi, RmsNormTakesRstdAsRealClientsPassItAndCannsDtypeTable) {
  const std::vector<float> xv = {1, 2, 3, 4, -1, 0.5f, 2, -3}, gv = {1, 0.5f, 2, -1};
  std::vector<std::vector<float>> ys;
  for (std::vector<int64_t> rshape : {std::vector<int64_t>{2, 1, 1}, std::vector<int64_t>{2, 1}}) {
    DevTensor x({2, 1, 4}, xv), gamma({4}, gv), y({2, 1, 4}, std::vector<float>(8, 0));
    DevTensor rstd(rshape, {0, 0});
    call(aclnnRmsNormGetWorkspaceSize, aclnnRmsNorm, static_cast<const aclTensor*>(x.t),
         static_cast<const aclTensor*>(gamma.t), 1e-6, static_cast<const aclTensor*>(y.t),
         static_cast<const aclTensor*>(rstd.t));
    std::vector<float> r = rstd.read();
    for (int row = 0; row < 2; ++row) {
      double ms = 0;
      for (int j = 0; j < 4; ++j) ms += double(xv[row * 4 + j]) * xv[row * 4 + j] / 4;
      EXPECT_NEAR(r[row], 1 / std::sqrt(ms + 1e-6), 1e-6);
    }
    ys.push_back(y.read());
  }
  EXPECT_EQ(ys[0], ys[1]);
  // float16 x, float32 gamma: y rounded once to float16.
  DevTensor xh({2, 1, 4}, xv, ACL_FLOAT16), gamma({4}, gv), yh({2, 1, 4}, std::vector<float>(8, 0), ACL_FLOAT16),
      rstd({2}, {0, 0});
  call(aclnnRmsNormGetWorkspaceSize, aclnnRmsNorm, static_cast<const aclTensor*>(xh.t),
       static_cast<const aclTensor*>(gamma.t), 1e-6, static_cast<const aclTensor*>(yh.t),
       static_cast<const aclTensor*>(rstd.t));
  std::vector<float> got = yh.read();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], ys[0][i], std::fabs(ys[0][i]) / 1024 + 1e-7) << i;
  DevTensor x32({2, 1, 4}, xv), g16({4}, gv, ACL_FLOAT16), y32({2, 1, 4}, std::vector<float>(8, 0));
  uint64_t ws;
  aclOpExecutor* ex;
  EXPECT_EQ(aclnnRmsNormGetWorkspaceSize(x32.t, g16.t, 1e-6, y32.t, rstd.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("or be float32 for a float16 or bfloat16 x"), std::string::npos) << recent_error();
  DevTensor three({3}, {0, 0, 0});
  EXPECT_EQ(aclnnRmsNormGetWorkspaceSize(x32.t, gamma.t, 1e-6, y32.t, three.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("one value per row"), std::string::npos) << recent_error();
}

// Contexts name devices: aclrtSetDevice makes the default one current, aclrtCreateContext a new
// one; a thread that has neither has no context.
TEST(CannApi, ContextsRunModeAndSocName) {
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  aclrtContext dflt = nullptr, made = nullptr, cur = nullptr;
  ASSERT_EQ(aclrtGetCurrentContext(&dflt), ACL_SUCCESS);
  ASSERT_EQ(aclrtCreateContext(&made, 0), ACL_SUCCESS);
  ASSERT_EQ(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
  EXPECT_EQ(cur, made);
  EXPECT_NE(made, dflt);
  ASSERT_EQ(aclrtSetCurrentContext(dflt), ACL_SUCCESS);
  ASSERT_EQ(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
  EXPECT_EQ(cur, dflt);
  EXPECT_EQ(aclrtDestroyContext(dflt), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("default context"), std::string::npos);
  EXPECT_EQ(aclrtDestroyContext(made), ACL_SUCCESS);
  EXPECT_EQ(aclrtSetCurrentContext(made), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("not a live context"), std::string::npos);
  EXPECT_EQ(aclrtCreateContext(&made, 1000), ACL_ERROR_RT_INVALID_DEVICEID);
  aclError none = ACL_SUCCESS;
  std::thread([&] { none = aclrtGetCurrentContext(&cur); }).join();
  EXPECT_EQ(none, ACL_ERROR_RT_CONTEXT_NULL);
  uint32_t n = 0;
  ASSERT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
  if (n > 1) {  // a context made on device 1 moves the thread there; the default one moves it back
    ASSERT_EQ(aclrtCreateContext(&made, 1), ACL_SUCCESS);
    int32_t dev = -1;
    aclrtGetDevice(&dev);
    EXPECT_EQ(dev, 1);
    ASSERT_EQ(aclrtSetCurrentContext(dflt), ACL_SUCCESS);
    aclrtGetDevice(&dev);
    EXPECT_EQ(dev, 0);
    EXPECT_EQ(aclrtDestroyContext(made), ACL_SUCCESS);
  }
  aclrtRunMode mode = ACL_DEVICE;
  ASSERT_EQ(aclrtGetRunMode(&mode), ACL_SUCCESS);
  EXPECT_EQ(mode, ACL_HOST);
  EXPECT_STREQ(aclrtGetSocName(), "Ascend910B4");
}

namespace {
// A kernel that blocks until released: the stream stays busy while the test looks at it.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void release() {
    std::lock_guard<std::mutex> g(mu);
    open = true;
    cv.notify_all();
  }
};
void enqueue_gate(Gate* gate, aclrtStream stream) {
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(make_executor(
                "aclnnTestGate", 0,
                [gate](KernelContext&) {
                  std::unique_lock<std::mutex> lk(gate->mu);
                  gate->cv.wait(lk, [gate] { return gate->open; });
                },
                &ws, &ex),
            ACLNN_SUCCESS);
  ASSERT_EQ(run_executor("aclnnTestGate", nullptr, 0, ex, stream), ACLNN_SUCCESS);
}
}  // namespace

TEST(CannApi, StreamQueryTimeoutsAndCreateWithConfig) {
  aclrtStream s = nullptr;
  ASSERT_EQ(aclrtCreateStreamWithConfig(&s, 0, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC), ACL_SUCCESS);
  aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
  ASSERT_EQ(aclrtStreamQuery(s, &st), ACL_SUCCESS);
  EXPECT_EQ(st, ACL_STREAM_STATUS_COMPLETE);
  Gate gate;
  enqueue_gate(&gate, s);
  ASSERT_EQ(aclrtStreamQuery(s, &st), ACL_SUCCESS);
  EXPECT_EQ(st, ACL_STREAM_STATUS_NOT_READY);
  EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  EXPECT_NE(recent_error().find("did not finish within 20 ms"), std::string::npos);
  gate.release();
  EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, -1), ACL_SUCCESS) << recent_error();
  ASSERT_EQ(aclrtStreamQuery(s, &st), ACL_SUCCESS);
  EXPECT_EQ(st, ACL_STREAM_STATUS_COMPLETE);
  EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, -2), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtStreamQuery(s, nullptr), ACL_ERROR_INVALID_PARAM);
  aclrtStream bad = nullptr;
  EXPECT_EQ(aclrtCreateStreamWithConfig(&bad, 0, 0x80), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("unsupported flag bits"), std::string::npos);
  ASSERT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

// Before their first record, aclrtCreateEvent / WithFlag events are not ready, ExWithFlag
// events complete (CANN's documented statuses); both are ready after a record has run.
TEST(CannApi, EventsWithFlags) {
  aclrtEvent plain = nullptr, flagged = nullptr, ex = nullptr;
  ASSERT_EQ(aclrtCreateEventWithFlag(&flagged, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE), ACL_SUCCESS);
  ASSERT_EQ(aclrtCreateEventExWithFlag(&ex, ACL_EVENT_SYNC), ACL_SUCCESS);
  ASSERT_EQ(aclrtCreateEvent(&plain), ACL_SUCCESS);
  aclrtEventRecordedStatus st;
  ASSERT_EQ(aclrtQueryEventStatus(flagged, &st), ACL_SUCCESS);
  EXPECT_EQ(st, ACL_EVENT_RECORDED_STATUS_NOT_READY);
  ASSERT_EQ(aclrtQueryEventStatus(ex, &st), ACL_SUCCESS);
  EXPECT_EQ(st, ACL_EVENT_RECORDED_STATUS_COMPLETE);
  for (aclrtEvent e : {plain, flagged, ex}) {
    ASSERT_EQ(aclrtRecordEvent(e, nullptr), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeEvent(e), ACL_SUCCESS);
    ASSERT_EQ(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);
    EXPECT_EQ(st, ACL_EVENT_RECORDED_STATUS_COMPLETE);
    EXPECT_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
  }
  aclrtEvent bad = nullptr;
  EXPECT_EQ(aclrtCreateEventWithFlag(&bad, 0x100), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("unsupported flag bits 256"), std::string::npos);
}

// aclrtMallocAlign32: no padding, so the allocation ends at the 32-byte-rounded size: a view of
// 48 floats fits a 192-byte allocation, one element more does not.
TEST(CannApi, MallocAlign32HasNoPadding) {
  void* p = nullptr;
  ASSERT_EQ(aclrtMallocAlign32(&p, 192, ACL_MEM_MALLOC_HUGE_FIRST_P2P), ACL_SUCCESS) << recent_error();
  std::vector<float> host(49, 1.0f);
  EXPECT_EQ(aclrtMemcpy(p, 192, host.data(), 192, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  EXPECT_NE(aclrtMemcpy(p, 196, host.data(), 196, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  recent_error();
  EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
  // aclrtMalloc's padding holds the extra element.
  ASSERT_EQ(aclrtMalloc(&p, 192, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  EXPECT_EQ(aclrtMemcpy(p, 196, host.data(), 196, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
  EXPECT_EQ(aclrtMallocAlign32(nullptr, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("aclrtMallocAlign32: devPtr is null"), std::string::npos);
}

TEST(CannApi, ArraysListsAndTensorGetters) {
  const float fv[3] = {0.5f, 1.5f, -2.0f};
  const bool bv[2] = {true, false};
  aclFloatArray* fa = aclCreateFloatArray(fv, 3);
  aclBoolArray* ba = aclCreateBoolArray(bv, 2);
  ASSERT_NE(fa, nullptr);
  ASSERT_NE(ba, nullptr);
  EXPECT_EQ(aclCreateFloatArray(nullptr, 2), nullptr);
  EXPECT_NE(recent_error().find("aclCreateFloatArray: value is null"), std::string::npos);
  float one = 1.0f;
  int64_t two = 2;
  const aclScalar* scalars[2] = {aclCreateScalar(&one, ACL_FLOAT), aclCreateScalar(&two, ACL_INT64)};
  aclScalarList* sl = aclCreateScalarList(scalars, 2);
  ASSERT_NE(sl, nullptr);
  size_t before = live_descriptor_count();
  EXPECT_EQ(aclDestroyScalarList(sl), ACLNN_SUCCESS);
  EXPECT_EQ(live_descriptor_count(), before - 3);  // the list and its two scalars
  EXPECT_EQ(aclDestroyFloatArray(fa), ACLNN_SUCCESS);
  EXPECT_EQ(aclDestroyFloatArray(fa), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("not a live aclFloatArray"), std::string::npos);
  EXPECT_EQ(aclDestroyBoolArray(ba), ACLNN_SUCCESS);

  void* dev = nullptr;
  ASSERT_EQ(aclrtMalloc(&dev, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  int64_t view[2] = {3, 2}, strides[2] = {1, 4}, storage[1] = {12};
  aclTensor* t = aclCreateTensor(view, 2, ACL_FLOAT16, strides, 2, ACL_FORMAT_NCL, storage, 1, dev);
  ASSERT_NE(t, nullptr) << recent_error();
  int64_t* dims = nullptr;
  uint64_t n = 0;
  ASSERT_EQ(aclGetViewShape(t, &dims, &n), ACLNN_SUCCESS);
  EXPECT_EQ(std::vector<int64_t>(dims, dims + n), (std::vector<int64_t>{3, 2}));
  delete[] dims;
  ASSERT_EQ(aclGetViewStrides(t, &dims, &n), ACLNN_SUCCESS);
  EXPECT_EQ(std::vector<int64_t>(dims, dims + n), (std::vector<int64_t>{1, 4}));
  delete[] dims;
  ASSERT_EQ(aclGetStorageShape(t, &dims, &n), ACLNN_SUCCESS);
  EXPECT_EQ(std::vector<int64_t>(dims, dims + n), (std::vector<int64_t>{12}));
  delete[] dims;
  int64_t offset = -1;
  aclFormat f = ACL_FORMAT_UNDEFINED;
  aclDataType dt = ACL_DT_UNDEFINED;
  ASSERT_EQ(aclGetViewOffset(t, &offset), ACLNN_SUCCESS);
  ASSERT_EQ(aclGetFormat(t, &f), ACLNN_SUCCESS);
  ASSERT_EQ(aclGetDataType(t, &dt), ACLNN_SUCCESS);
  EXPECT_EQ(offset, 2);
  EXPECT_EQ(f, ACL_FORMAT_NCL);
  EXPECT_EQ(dt, ACL_FLOAT16);
  EXPECT_EQ(aclGetViewShape(t, nullptr, &n), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetFormat(nullptr, &f), ACLNN_ERR_PARAM_NULLPTR);
  aclDestroyTensor(t);
  EXPECT_EQ(aclGetDataType(t, &dt), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("not a live aclTensor"), std::string::npos);
  aclrtFree(dev);
}

// Comparison and logical ops write any dtype bool converts to (CANN's rule), not only BOOL;
// ArgMax / ArgMin write INT32 as well as INT64.
TEST(CannApi, CompareOutDtypesAndInt32ArgMax) {
  DevTensor a({4}, {1, 5, 3, 7}), b({4}, {2, 5, 1, 9}), lt({4}, {9, 9, 9, 9}), nz({4}, {0, 2, 0, -1});
  call(aclnnLtTensorGetWorkspaceSize, aclnnLtTensor, static_cast<const aclTensor*>(a.t),
       static_cast<const aclTensor*>(b.t), lt.t);
  EXPECT_EQ(lt.read(), (std::vector<float>{1, 0, 0, 1}));
  DevTensor notv({4}, {9, 9, 9, 9});
  call(aclnnLogicalNotGetWorkspaceSize, aclnnLogicalNot, static_cast<const aclTensor*>(nz.t), notv.t);
  EXPECT_EQ(notv.read(), (std::vector<float>{1, 0, 1, 0}));
  void* dev = nullptr;
  ASSERT_EQ(aclrtMalloc(&dev, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  int64_t four = 4, one = 1;
  aclTensor* i32 = aclCreateTensor(&four, 1, ACL_INT32, nullptr, 0, ACL_FORMAT_ND, &four, 1, dev);
  float three = 3.0f;
  aclScalar* s = aclCreateScalar(&three, ACL_FLOAT);
  call(aclnnGeScalarGetWorkspaceSize, aclnnGeScalar, static_cast<const aclTensor*>(a.t),
       static_cast<const aclScalar*>(s), i32);
  int32_t got[4] = {};
  ASSERT_EQ(aclrtMemcpy(got, 16, dev, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_EQ(std::vector<int32_t>(got, got + 4), (std::vector<int32_t>{0, 1, 1, 1}));
  aclTensor* idx = aclCreateTensor(&one, 1, ACL_INT32, nullptr, 0, ACL_FORMAT_ND, &one, 1, dev);
  call(aclnnArgMaxGetWorkspaceSize, aclnnArgMax, static_cast<const aclTensor*>(a.t), int64_t(0), true, idx);
  ASSERT_EQ(aclrtMemcpy(got, 4, dev, 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_EQ(got[0], 3);
  call(aclnnArgMinGetWorkspaceSize, aclnnArgMin, static_cast<const aclTensor*>(b.t), int64_t(0), true, idx);
  ASSERT_EQ(aclrtMemcpy(got, 4, dev, 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_EQ(got[0], 2);
  uint64_t ws;
  aclOpExecutor* ex;
  EXPECT_EQ(aclnnArgMaxGetWorkspaceSize(a.t, 0, true, lt.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("int64 or int32"), std::string::npos);
  aclDestroyScalar(s);
  aclDestroyTensor(i32);
  aclDestroyTensor(idx);
  aclrtFree(dev);
}

// Cumsum along either dim (out in dtype); CumsumV2's exclusive and reverse, each and both; a dtype
// out does not have and a dim out of range are refused.
TEST(CannApi, CumsumAndCumsumV2) {
  DevTensor x({2, 3}, {1, 2, 3, 4, 5, 6}), out({2, 3}, std::vector<float>(6, 0));
  const aclTensor* cx = x.t;
  call(aclnnCumsumGetWorkspaceSize, aclnnCumsum, cx, int64_t(1), ACL_FLOAT, out.t);
  EXPECT_EQ(out.read(), (std::vector<float>{1, 3, 6, 4, 9, 15}));
  call(aclnnCumsumGetWorkspaceSize, aclnnCumsum, cx, int64_t(-2), ACL_FLOAT, out.t);
  EXPECT_EQ(out.read(), (std::vector<float>{1, 2, 3, 5, 7, 9}));
  struct Case {
    bool exclusive, reverse;
    std::vector<float> want;
  };
  for (const Case& c : {Case{false, false, {1, 3, 6, 4, 9, 15}}, Case{true, false, {0, 1, 3, 0, 4, 9}},
                        Case{false, true, {6, 5, 3, 15, 11, 6}}, Case{true, true, {5, 3, 0, 11, 6, 0}}}) {
    call(aclnnCumsumV2GetWorkspaceSize, aclnnCumsumV2, cx, int64_t(1), c.exclusive, c.reverse, out.t);
    EXPECT_EQ(out.read(), c.want) << "exclusive " << c.exclusive << ", reverse " << c.reverse;
  }
  uint64_t ws;
  aclOpExecutor* ex;
  EXPECT_EQ(aclnnCumsumGetWorkspaceSize(x.t, 1, ACL_INT64, out.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("out's dtype must be dtype"), std::string::npos);
  EXPECT_EQ(aclnnCumsumV2GetWorkspaceSize(x.t, 2, false, false, out.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("dim 2 out of range [-2, 1]"), std::string::npos);
}

// LayerNorm against float64: out, mean and rstd per row; weight and bias optional.
TEST(CannApi, LayerNormAgainstFloat64) {
  const std::vector<float> xs = {1, 2, 3, 4, -1, 0.5f, 2, -3, 0, 0, 0, 1};
  const std::vector<float> w = {1, 0.5f, 2, -1}, b = {0, 1, -1, 0.25f};
  DevTensor x({3, 4}, xs), weight({4}, w), bias({4}, b), out({3, 4}, std::vector<float>(12, 0)),
      mean({3, 1}, {0, 0, 0}), rstd({3, 1}, {0, 0, 0});
  int64_t four = 4;
  aclIntArray* ns = aclCreateIntArray(&four, 1);
  call(aclnnLayerNormGetWorkspaceSize, aclnnLayerNorm, static_cast<const aclTensor*>(x.t),
       static_cast<const aclIntArray*>(ns), static_cast<const aclTensor*>(weight.t),
       static_cast<const aclTensor*>(bias.t), 1e-5, out.t, mean.t, rstd.t);
  std::vector<float> y = out.read(), m = mean.read(), r = rstd.read();
  for (int row = 0; row < 3; ++row) {
    double mu = 0, var = 0;
    for (int j = 0; j < 4; ++j) mu += xs[row * 4 + j] / 4.0;
    for (int j = 0; j < 4; ++j) var += (xs[row * 4 + j] - mu) * (xs[row * 4 + j] - mu) / 4.0;
    double inv = 1 / std::sqrt(var + 1e-5);
    EXPECT_NEAR(m[row], mu, 1e-6);
    EXPECT_NEAR(r[row], inv, 1e-5 * inv);
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(y[row * 4 + j], (xs[row * 4 + j] - mu) * inv * w[j] + b[j], 1e-5);
  }
  // no weight, bias or statistics: the plain normalisation
  DevTensor plain({3, 4}, std::vector<float>(12, 0));
  call(aclnnLayerNormGetWorkspaceSize, aclnnLayerNorm, static_cast<const aclTensor*>(x.t),
       static_cast<const aclIntArray*>(ns), static_cast<const aclTensor*>(nullptr),
       static_cast<const aclTensor*>(nullptr), 1e-5, plain.t, static_cast<aclTensor*>(nullptr),
       static_cast<aclTensor*>(nullptr));
  std::vector<float> p = plain.read();
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(p[j], (xs[j] - 2.5) / std::sqrt(1.25 + 1e-5), 1e-5);
  uint64_t ws;
  aclOpExecutor* ex;
  int64_t three = 3;
  aclIntArray* bad = aclCreateIntArray(&three, 1);
  EXPECT_EQ(aclnnLayerNormGetWorkspaceSize(x.t, bad, nullptr, nullptr, 1e-5, out.t, nullptr, nullptr, &ws, &ex),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("does not match the trailing dims"), std::string::npos);
  aclDestroyIntArray(ns);
  aclDestroyIntArray(bad);
}

// CrossEntropyLoss against a float64 oracle written from PyTorch's definition: class weights,
// label smoothing, an ignored row, every reduction; logProbOut is the log-softmax.
TEST(CannApi, CrossEntropyLossAgainstFloat64) {
  const int64_t N = 3, C = 4;
  const std::vector<float> xs = {1, 2, 0.5f, -1, 0, 0, 3, 1, 2, -2, 1, 0};
  const std::vector<float> w = {1, 0.5f, 2, 1.5f};
  const int64_t tgt[N] = {1, 2, -100};  // the last row is ignored
  const double ls = 0.1;
  // the oracle
  std::vector<double> logp(N * C), per_row(N, 0.0);
  double total = 0, wsum = 0;
  for (int64_t n = 0; n < N; ++n) {
    double mx = -1e300, se = 0;
    for (int64_t c = 0; c < C; ++c) mx = std::max<double>(mx, xs[n * C + c]);
    for (int64_t c = 0; c < C; ++c) se += std::exp(xs[n * C + c] - mx);
    for (int64_t c = 0; c < C; ++c) logp[n * C + c] = xs[n * C + c] - mx - std::log(se);
    if (tgt[n] == -100) continue;
    double smooth = 0;
    for (int64_t c = 0; c < C; ++c) smooth -= w[c] * logp[n * C + c];
    per_row[n] = (1 - ls) * -w[tgt[n]] * logp[n * C + tgt[n]] + ls / C * smooth;
    total += per_row[n];
    wsum += w[tgt[n]];
  }
  DevTensor x({N, C}, xs), weight({C}, w), lp({N, C}, std::vector<float>(N * C, 0)), none({N}, {0, 0, 0}),
      one({1}, {0});
  void* tdev = nullptr;
  ASSERT_EQ(aclrtMalloc(&tdev, sizeof tgt, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpy(tdev, sizeof tgt, tgt, sizeof tgt, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  int64_t n3 = N;
  aclTensor* target = aclCreateTensor(&n3, 1, ACL_INT64, nullptr, 0, ACL_FORMAT_ND, &n3, 1, tdev);
  char mean[] = "mean", sum[] = "sum", none_[] = "none", bad[] = "avg";
  auto run_ce = [&](char* reduction, const aclTensor* loss) {
    call(aclnnCrossEntropyLossGetWorkspaceSize, aclnnCrossEntropyLoss, static_cast<const aclTensor*>(x.t),
         static_cast<const aclTensor*>(target), static_cast<const aclTensor*>(weight.t), reduction, int64_t(-100), ls,
         0.0, false, loss, static_cast<const aclTensor*>(lp.t), static_cast<const aclTensor*>(nullptr),
         static_cast<const aclTensor*>(nullptr));
  };
  run_ce(none_, none.t);
  std::vector<float> got = none.read();
  for (int64_t n = 0; n < N; ++n) EXPECT_NEAR(got[n], per_row[n], 1e-5) << n;
  std::vector<float> lpv = lp.read();
  for (int64_t i = 0; i < N * C; ++i) EXPECT_NEAR(lpv[i], logp[i], 1e-6) << i;
  run_ce(sum, one.t);
  EXPECT_NEAR(one.read()[0], total, 1e-5);
  run_ce(mean, one.t);
  EXPECT_NEAR(one.read()[0], total / wsum, 1e-6);
  uint64_t ws;
  aclOpExecutor* ex;
  EXPECT_EQ(aclnnCrossEntropyLossGetWorkspaceSize(x.t, target, weight.t, bad, -100, 0, 0, false, one.t, lp.t, nullptr,
                                                  nullptr, &ws, &ex),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("got \"avg\""), std::string::npos);
  EXPECT_EQ(aclnnCrossEntropyLossGetWorkspaceSize(x.t, target, weight.t, mean, -100, 0, 0, true, one.t, lp.t, nullptr,
                                                  nullptr, &ws, &ex),
            ACLNN_ERR_PARAM_INVALID);
  // A target outside [0, C) that is not ignoreIndex is found by the kernel: a fault at synchronize.
  const int64_t wrong[N] = {1, 7, 0};
  ASSERT_EQ(aclrtMemcpy(tdev, sizeof wrong, wrong, sizeof wrong, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  ASSERT_EQ(aclnnCrossEntropyLossGetWorkspaceSize(x.t, target, weight.t, mean, -100, 0, 0, false, one.t, lp.t, nullptr,
                                                  nullptr, &ws, &ex),
            ACLNN_SUCCESS);
  void* w_ = nullptr;
  ASSERT_EQ(aclrtMalloc(&w_, ws, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(aclnnCrossEntropyLoss(w_, ws, ex, nullptr), ACLNN_SUCCESS);
  EXPECT_NE(aclrtSynchronizeDevice(), ACL_SUCCESS);
  EXPECT_NE(recent_error().find("target 7 at position 1 is out of range [0, 4)"), std::string::npos);
  aclrtFree(w_);
  aclDestroyTensor(target);
  aclrtFree(tdev);
}

// ApplyAdamW (V1) against its documented formula in float64, with amsgrad and maximize.
TEST(CannApi, ApplyAdamWV1AgainstItsFormula) {
  const std::vector<float> var0 = {1, -2, 0.5f, 3}, m0 = {0.1f, 0, -0.2f, 0.3f}, v0 = {0.01f, 0.02f, 0, 0.5f},
                           g = {0.5f, -1, 2, 0.25f}, mx = {0.2f, 0, 0.3f, 0.1f};
  const double b1 = 0.9, b2 = 0.999, lr = 0.01, wd = 0.1, eps = 1e-8, b1p = 0.81, b2p = 0.998001;  // step 3
  for (bool amsgrad : {false, true})
    for (bool maximize : {false, true}) {
      SCOPED_TRACE(std::to_string(amsgrad) + std::to_string(maximize));
      DevTensor var({4}, var0), m({4}, m0), v({4}, v0), grad({4}, g), maxg({4}, mx);
      DevTensor tb1p({1}, {float(b1p)}), tb2p({1}, {float(b2p)}), tlr({1}, {float(lr)}), twd({1}, {float(wd)}),
          tb1({1}, {float(b1)}), tb2({1}, {float(b2)}), teps({1}, {float(eps)});
      call(aclnnApplyAdamWGetWorkspaceSize, aclnnApplyAdamW, var.t, m.t, v.t, static_cast<const aclTensor*>(tb1p.t),
           static_cast<const aclTensor*>(tb2p.t), static_cast<const aclTensor*>(tlr.t),
           static_cast<const aclTensor*>(twd.t), static_cast<const aclTensor*>(tb1.t),
           static_cast<const aclTensor*>(tb2.t), static_cast<const aclTensor*>(teps.t),
           static_cast<const aclTensor*>(grad.t), static_cast<const aclTensor*>(maxg.t), amsgrad, maximize);
      std::vector<float> gv = var.read(), gm = m.read(), gvv = v.read();
      for (int i = 0; i < 4; ++i) {
        // the hyperparameters went through float32, as the op reads them
        double fb1 = float(b1), fb2 = float(b2), flr = float(lr), fwd = float(wd), feps = float(eps);
        double b1t = double(float(b1p)) * fb1, b2t = double(float(b2p)) * fb2;
        double gi = maximize ? -g[i] : g[i];
        double mi = fb1 * m0[i] + (1 - fb1) * gi;
        double vi = fb2 * v0[i] + (1 - fb2) * gi * gi;
        if (amsgrad) vi = std::max<double>(mx[i], vi);
        double want = var0[i] - flr * (mi / (1 - b1t)) / (std::sqrt(vi / (1 - b2t)) + feps) - flr * fwd * var0[i];
        EXPECT_NEAR(gm[i], mi, 1e-7) << i;
        EXPECT_NEAR(gvv[i], vi, 1e-7) << i;
        EXPECT_NEAR(gv[i], want, 2e-6) << i;
      }
    }
  DevTensor var({4}, var0), two({2}, {1, 1});
  uint64_t ws;
  aclOpExecutor* ex;
  EXPECT_EQ(aclnnApplyAdamWGetWorkspaceSize(var.t, var.t, var.t, two.t, two.t, two.t, two.t, two.t, two.t, two.t, var.t,
                                            nullptr, false, false, &ws, &ex),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("must hold one value"), std::string::npos);
  EXPECT_EQ(aclnnApplyAdamWGetWorkspaceSize(var.t, var.t, var.t, var.t, var.t, var.t, var.t, var.t, var.t, var.t, var.t,
                                            nullptr, true, false, &ws, &ex),
            ACLNN_ERR_PARAM_NULLPTR);
}

// Repeatable executors: made right after phase 1, run by every phase 2 until destroyed; the
// address setters move a tensor to other device memory for the later runs.
TEST(CannApi, RepeatableExecutorsRunUntilDestroyedAndTakeNewAddresses) {
  DevTensor a({4}, {1, 2, 3, 4}), b({4}, {10, 20, 30, 40}), out({4}, {0, 0, 0, 0});
  DevTensor a2({4}, {100, 200, 300, 400}), out2({4}, {0, 0, 0, 0});
  float one = 1.0f;
  aclScalar* alpha = aclCreateScalar(&one, ACL_FLOAT);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(aclnnAddGetWorkspaceSize(a.t, b.t, alpha, out.t, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS) << recent_error();
  for (int run = 0; run < 3; ++run) {  // new input values in place, the same executor
    std::vector<float> v = {float(run), 2, 3, 4};
    ASSERT_EQ(aclrtMemcpy(a.dev, 16, v.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    ASSERT_EQ(aclnnAdd(nullptr, 0, ex, nullptr), ACLNN_SUCCESS) << recent_error();
    EXPECT_EQ(out.read(), (std::vector<float>{10.0f + run, 22, 33, 44}));
  }
  ASSERT_EQ(aclSetInputTensorAddr(ex, 0, a.t, a2.dev), ACLNN_SUCCESS) << recent_error();
  ASSERT_EQ(aclSetOutputTensorAddr(ex, 0, out.t, out2.dev), ACLNN_SUCCESS) << recent_error();
  ASSERT_EQ(aclnnAdd(nullptr, 0, ex, nullptr), ACLNN_SUCCESS) << recent_error();
  EXPECT_EQ(out2.read(), (std::vector<float>{110, 220, 330, 440}));
  EXPECT_EQ(out.read(), (std::vector<float>{12, 22, 33, 44}));  // the old output is left alone
  // a tensor the op was not planned with, and a host address, are refused
  EXPECT_EQ(aclSetInputTensorAddr(ex, 0, a2.t, a.dev), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("not one this executor's op was planned with"), std::string::npos);
  float host[4];
  EXPECT_EQ(aclSetInputTensorAddr(ex, 0, a.t, host), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("not device memory"), std::string::npos);
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  EXPECT_EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnAdd(nullptr, 0, ex, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("already used or destroyed"), std::string::npos);
  EXPECT_EQ(aclDestroyAclOpExecutor(ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclDestroyAclOpExecutor(nullptr), ACLNN_ERR_INNER_NULLPTR);
  recent_error();

  // Only right after phase 1 (CANN's rule): another op planned in between makes it an error.
  aclOpExecutor *first = nullptr, *second = nullptr;
  ASSERT_EQ(aclnnAddGetWorkspaceSize(a.t, b.t, alpha, out.t, &ws, &first), ACLNN_SUCCESS);
  ASSERT_EQ(aclnnAddGetWorkspaceSize(a.t, b.t, alpha, out2.t, &ws, &second), ACLNN_SUCCESS);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(first), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("right after the op's GetWorkspaceSize"), std::string::npos);
  EXPECT_EQ(aclSetInputTensorAddr(first, 0, a.t, a2.dev), ACLNN_ERR_PARAM_INVALID);  // not repeatable
  recent_error();
  // a single-use executor may be destroyed unrun
  EXPECT_EQ(aclDestroyAclOpExecutor(first), ACLNN_SUCCESS);
  ASSERT_EQ(aclnnAdd(nullptr, 0, second, nullptr), ACLNN_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  EXPECT_EQ(live_executor_count(), 0u);
  aclDestroyScalar(alpha);
}

// The in-place compare and logical forms write 0/1 into selfRef, in its dtype.
TEST(CannApi, InplaceCompareAndLogicalForms) {
  const std::vector<float> x = {1, 5, 3, 0}, y = {1, 4, 6, 0};
  float three = 3.0f;
  aclScalar* s3 = aclCreateScalar(&three, ACL_FLOAT);
  struct Case {
    const char* name;
    std::function<aclnnStatus(aclTensor*, const aclTensor*, uint64_t*, aclOpExecutor**)> phase1;
    aclnnStatus (*phase2)(void*, uint64_t, aclOpExecutor*, aclrtStream);
    std::vector<float> want;
  };
  const std::vector<Case> cases = {
      {"EqTensor",
       [](aclTensor* a, const aclTensor* b, uint64_t* w, aclOpExecutor** e) {
         return aclnnInplaceEqTensorGetWorkspaceSize(a, b, w, e);
       },
       aclnnInplaceEqTensor,
       {1, 0, 0, 1}},
      {"GeTensor",
       [](aclTensor* a, const aclTensor* b, uint64_t* w, aclOpExecutor** e) {
         return aclnnInplaceGeTensorGetWorkspaceSize(a, b, w, e);
       },
       aclnnInplaceGeTensor,
       {1, 1, 0, 1}},
      {"NeScalar",
       [&](aclTensor* a, const aclTensor*, uint64_t* w, aclOpExecutor** e) {
         return aclnnInplaceNeScalarGetWorkspaceSize(a, s3, w, e);
       },
       aclnnInplaceNeScalar,
       {1, 1, 0, 1}},
      {"LtScalar",
       [&](aclTensor* a, const aclTensor*, uint64_t* w, aclOpExecutor** e) {
         return aclnnInplaceLtScalarGetWorkspaceSize(a, s3, w, e);
       },
       aclnnInplaceLtScalar,
       {1, 0, 0, 1}},
      {"LogicalAnd",
       [](aclTensor* a, const aclTensor* b, uint64_t* w, aclOpExecutor** e) {
         return aclnnInplaceLogicalAndGetWorkspaceSize(a, b, w, e);
       },
       aclnnInplaceLogicalAnd,
       {1, 1, 1, 0}},
      {"LogicalNot",
       [](aclTensor* a, const aclTensor*, uint64_t* w, aclOpExecutor** e) {
         return aclnnInplaceLogicalNotGetWorkspaceSize(a, w, e);
       },
       aclnnInplaceLogicalNot,
       {0, 0, 0, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    DevTensor self({4}, x), other({4}, y);
    uint64_t ws = 0;
    aclOpExecutor* ex = nullptr;
    ASSERT_EQ(c.phase1(self.t, other.t, &ws, &ex), ACLNN_SUCCESS) << recent_error();
    run(c.phase2, ws, ex);
    EXPECT_EQ(self.read(), c.want);
  }
  aclDestroyScalar(s3);
}

// A data type ember has no kernels for (UINT16 today) is refused by name at phase 1.
TEST(CannApi, UnsupportedDataTypesAreNamed) {
  void* dev = nullptr;
  ASSERT_EQ(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  int64_t four = 4;
  aclTensor* t = aclCreateTensor(&four, 1, ACL_UINT16, nullptr, 0, ACL_FORMAT_ND, &four, 1, dev);
  ASSERT_NE(t, nullptr);
  uint64_t ws;
  aclOpExecutor* ex;
  EXPECT_EQ(aclnnInplaceZeroGetWorkspaceSize(t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("selfRef has data type ACL_UINT16 (7), which the emulated NPU does not support"),
            std::string::npos);
  aclDestroyTensor(t);
  aclrtFree(dev);
}

// A list input's tensor moved by aclSetDynamicInputTensorAddr (Cat's second tensor).
TEST(CannApi, RepeatableCatTakesANewAddressForAListElement) {
  DevTensor a({2}, {1, 2}), b({2}, {3, 4}), b2({2}, {30, 40}), out({4}, {0, 0, 0, 0});
  int64_t two = 2;
  aclTensor* ta = aclCreateTensor(&two, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, &two, 1, a.dev);
  aclTensor* tb = aclCreateTensor(&two, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, &two, 1, b.dev);
  const aclTensor* members[2] = {ta, tb};
  aclTensorList* list = aclCreateTensorList(members, 2);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(aclnnCatGetWorkspaceSize(list, 0, out.t, &ws, &ex), ACLNN_SUCCESS) << recent_error();
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS) << recent_error();
  void* w = nullptr;
  if (ws) {
    ASSERT_EQ(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  }
  ASSERT_EQ(aclnnCat(w, ws, ex, nullptr), ACLNN_SUCCESS) << recent_error();
  EXPECT_EQ(out.read(), (std::vector<float>{1, 2, 3, 4}));
  ASSERT_EQ(aclSetDynamicInputTensorAddr(ex, 0, 1, list, b2.dev), ACLNN_SUCCESS) << recent_error();
  ASSERT_EQ(aclnnCat(w, ws, ex, nullptr), ACLNN_SUCCESS) << recent_error();
  EXPECT_EQ(out.read(), (std::vector<float>{1, 2, 30, 40}));
  EXPECT_EQ(aclSetDynamicInputTensorAddr(ex, 0, 2, list, b2.dev), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("relativeIndex 2"), std::string::npos);
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  EXPECT_EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
  if (w) aclrtFree(w);
  aclDestroyTensorList(list);
}

// A live repeatable executor holds the memory it was planned with: aclrtFree of it is refused,
// naming the op, until the executor is destroyed.
TEST(CannApi, RepeatableExecutorHoldsItsMemoryUntilDestroyed) {
  if (std::getenv("EMBER_NPU_FREE_IN_USE")) GTEST_SKIP() << "EMBER_NPU_FREE_IN_USE changes what aclrtFree does";
  void* mem = nullptr;
  ASSERT_EQ(aclrtMalloc(&mem, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  int64_t four = 4;
  aclTensor* t = aclCreateTensor(&four, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, &four, 1, mem);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(aclnnInplaceZeroGetWorkspaceSize(t, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
  ASSERT_EQ(aclnnInplaceZero(nullptr, 0, ex, nullptr), ACLNN_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(mem), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent_error().find("aclnnInplaceZero"), std::string::npos);
  EXPECT_EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
  EXPECT_EQ(aclrtFree(mem), ACL_SUCCESS);
  aclDestroyTensor(t);
}

// aclnnConvolution and aclnnConvolutionBackward, called as CANN's samples call them, against
// ember's conv2d and its gradients in float64 (groups, stride, padding and dilation all set).
TEST(CannApi, ConvolutionAndItsBackwardMatchConv2dInFloat64) {
  using ember::Tensor;
  ember::manual_seed(11);
  Tensor x = ember::randn({2, 4, 7, 6}, ember::kFloat64), w = ember::randn({6, 2, 3, 2}, ember::kFloat64) * 0.5,
         b = ember::randn({6}, ember::kFloat64);
  const int64_t st[2] = {2, 1}, pd[2] = {1, 1}, dl[2] = {1, 2}, groups = 2;
  Tensor xs = x.clone().requires_grad_(), ws = w.clone().requires_grad_(), bs = b.clone().requires_grad_();
  Tensor y = ember::conv2d(xs, ws, bs, {2, 1}, {1}, {1, 2}, groups);
  Tensor gy = ember::randn(y.sizes(), ember::kFloat64);
  (y * gy).sum().backward();
  auto host = [](const Tensor& t) { return t.to(ember::kFloat32).contiguous().to_vector<float>(); };
  DevTensor dx(x.sizes().vec(), host(x)), dw(w.sizes().vec(), host(w)), db({6}, host(b)),
      dy(y.sizes().vec(), std::vector<float>(static_cast<size_t>(y.numel()), 0.f)), dgy(y.sizes().vec(), host(gy)),
      dgx(x.sizes().vec(), std::vector<float>(static_cast<size_t>(x.numel()), 0.f)),
      dgw(w.sizes().vec(), std::vector<float>(static_cast<size_t>(w.numel()), 0.f)), dgb({6}, std::vector<float>(6, 0.f));
  aclIntArray *stride = aclCreateIntArray(st, 2), *padding = aclCreateIntArray(pd, 2),
              *dilation = aclCreateIntArray(dl, 2), *none = aclCreateIntArray(nullptr, 0);
  int64_t six = 6;
  aclIntArray* bias_sizes = aclCreateIntArray(&six, 1);
  bool all[3] = {true, true, true};
  aclBoolArray* mask = aclCreateBoolArray(all, 3);
  call(aclnnConvolutionGetWorkspaceSize, aclnnConvolution, static_cast<const aclTensor*>(dx.t),
       static_cast<const aclTensor*>(dw.t), static_cast<const aclTensor*>(db.t), static_cast<const aclIntArray*>(stride),
       static_cast<const aclIntArray*>(padding), static_cast<const aclIntArray*>(dilation), false,
       static_cast<const aclIntArray*>(none), groups, dy.t, int8_t(0));
  call(aclnnConvolutionBackwardGetWorkspaceSize, aclnnConvolutionBackward, static_cast<const aclTensor*>(dgy.t),
       static_cast<const aclTensor*>(dx.t), static_cast<const aclTensor*>(dw.t),
       static_cast<const aclIntArray*>(bias_sizes), static_cast<const aclIntArray*>(stride),
       static_cast<const aclIntArray*>(padding), static_cast<const aclIntArray*>(dilation), false,
       static_cast<const aclIntArray*>(none), int(groups), static_cast<const aclBoolArray*>(mask), int8_t(0), dgx.t,
       dgw.t, dgb.t);
  auto expect_near = [](const std::vector<float>& got, const Tensor& want, const char* what) {
    std::vector<double> w = want.contiguous().to_vector<double>();
    ASSERT_EQ(got.size(), w.size()) << what;
    for (size_t i = 0; i < w.size(); ++i)  // fp32 data, fp32 accumulation over at most 12 products per term
      ASSERT_NEAR(got[i], w[i], 1e-4 * (1 + std::abs(w[i]))) << what << " element " << i;
  };
  expect_near(dy.read(), y.detach(), "output");
  expect_near(dgx.read(), xs.grad(), "gradInput");
  expect_near(dgw.read(), ws.grad(), "gradWeight");
  expect_near(dgb.read(), bs.grad(), "gradBias");

  // The emulator's limits and CANN's argument rules, each refused by name at phase 1.
  uint64_t wsz;
  aclOpExecutor* ex;
  EXPECT_EQ(aclnnConvolutionGetWorkspaceSize(dx.t, dw.t, db.t, stride, padding, dilation, true, none, groups, dy.t, 0,
                                             &wsz, &ex),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("transposed"), std::string::npos);
  EXPECT_EQ(aclnnConvolutionGetWorkspaceSize(dx.t, dw.t, db.t, stride, padding, dilation, false, none, 3, dy.t, 0,
                                             &wsz, &ex),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("groups = 3"), std::string::npos);
  EXPECT_EQ(aclnnConvolutionGetWorkspaceSize(dx.t, dw.t, db.t, stride, padding, dilation, false, none, groups, dgx.t,
                                             0, &wsz, &ex),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("output"), std::string::npos);
  bool two[2] = {true, true};
  aclBoolArray* short_mask = aclCreateBoolArray(two, 2);
  EXPECT_EQ(aclnnConvolutionBackwardGetWorkspaceSize(dgy.t, dx.t, dw.t, bias_sizes, stride, padding, dilation, false,
                                                     none, int(groups), short_mask, 0, dgx.t, dgw.t, dgb.t, &wsz, &ex),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("outputMask needs 3 values"), std::string::npos);
  // Only the input's gradient asked for: the other two may be null.
  bool only_x[3] = {true, false, false};
  aclBoolArray* mask_x = aclCreateBoolArray(only_x, 3);
  call(aclnnConvolutionBackwardGetWorkspaceSize, aclnnConvolutionBackward, static_cast<const aclTensor*>(dgy.t),
       static_cast<const aclTensor*>(dx.t), static_cast<const aclTensor*>(dw.t),
       static_cast<const aclIntArray*>(nullptr), static_cast<const aclIntArray*>(stride),
       static_cast<const aclIntArray*>(padding), static_cast<const aclIntArray*>(dilation), false,
       static_cast<const aclIntArray*>(none), int(groups), static_cast<const aclBoolArray*>(mask_x), int8_t(0), dgx.t,
       static_cast<aclTensor*>(nullptr), static_cast<aclTensor*>(nullptr));
  expect_near(dgx.read(), xs.grad(), "gradInput alone");
  for (aclIntArray* a : {stride, padding, dilation, none, bias_sizes}) aclDestroyIntArray(a);
  for (aclBoolArray* m : {mask, short_mask, mask_x}) aclDestroyBoolArray(m);
}

// The fused losses as a CANN program calls them: NLLLoss (with its total weight) and
// NLLLossBackward on values worked out by hand, MseLoss's reductions, and the refusals.
TEST(CannApi, NllLossMseLossAndTheirBackward) {
  // log-probabilities of 3 rows over 4 classes; row 1 is ignored (target -100)
  DevTensor x({3, 4}, {-1, -2, -3, -4, -5, -6, -7, -8, -0.5f, -1.5f, -2.5f, -3.5f}), w({4}, {1, 2, 3, 4}),
      out({}, {0}), total({}, {0}), g({}, {2}), gx({3, 4}, std::vector<float>(12, 0.f));
  int64_t tv[3] = {2, -100, 1}, tn = 3;
  void* tdev = nullptr;
  ASSERT_EQ(aclrtMalloc(&tdev, sizeof(tv), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpy(tdev, sizeof(tv), tv, sizeof(tv), ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  aclTensor* t = aclCreateTensor(&tn, 1, ACL_INT64, nullptr, 0, ACL_FORMAT_ND, &tn, 1, tdev);
  call(aclnnNLLLossGetWorkspaceSize, aclnnNLLLoss, static_cast<const aclTensor*>(x.t), static_cast<const aclTensor*>(t),
       static_cast<const aclTensor*>(w.t), int64_t(1), int64_t(-100), out.t, total.t);
  // rows 0 and 2: -(3 * -3) and -(2 * -1.5); total weight 3 + 2; mean (9 + 3) / 5
  EXPECT_FLOAT_EQ(out.read()[0], 12.f / 5);
  EXPECT_FLOAT_EQ(total.read()[0], 5.f);
  call(aclnnNLLLossBackwardGetWorkspaceSize, aclnnNLLLossBackward, static_cast<const aclTensor*>(g.t),
       static_cast<const aclTensor*>(x.t), static_cast<const aclTensor*>(t), static_cast<const aclTensor*>(w.t),
       int64_t(1), int64_t(-100), static_cast<const aclTensor*>(total.t), gx.t);
  std::vector<float> want(12, 0.f);
  want[2] = -3.f * 2 / 5;     // row 0, class 2
  want[8 + 1] = -2.f * 2 / 5;  // row 2, class 1
  EXPECT_EQ(gx.read(), want);

  DevTensor a({2, 2}, {1, 2, 3, 4}), b({2}, {0, 1}), sum({}, {0}), each({2, 2}, {0, 0, 0, 0});
  call(aclnnMseLossGetWorkspaceSize, aclnnMseLoss, static_cast<const aclTensor*>(a.t),
       static_cast<const aclTensor*>(b.t), int64_t(2), sum.t);
  EXPECT_FLOAT_EQ(sum.read()[0], 1 + 1 + 9 + 9);  // target broadcast over rows
  call(aclnnMseLossGetWorkspaceSize, aclnnMseLoss, static_cast<const aclTensor*>(a.t),
       static_cast<const aclTensor*>(b.t), int64_t(0), each.t);
  EXPECT_EQ(each.read(), (std::vector<float>{1, 1, 9, 9}));

  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  EXPECT_EQ(aclnnMseLossGetWorkspaceSize(a.t, b.t, 3, sum.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("reduction must be 0 (none), 1 (mean) or 2 (sum)"), std::string::npos) << recent_error();
  EXPECT_EQ(aclnnMseLossGetWorkspaceSize(a.t, b.t, 0, sum.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);  // out not [2, 2]
  float neg = -0.5f;
  aclScalar* slope = aclCreateScalar(&neg, ACL_FLOAT);
  EXPECT_EQ(aclnnLeakyReluBackwardGetWorkspaceSize(a.t, a.t, slope, true, each.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("selfIsResult needs a positive negativeSlope"), std::string::npos) << recent_error();
  // A target outside [0, C) fails the kernel, reported at synchronize.
  tv[2] = 4;
  ASSERT_EQ(aclrtMemcpy(tdev, sizeof(tv), tv, sizeof(tv), ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  ASSERT_EQ(aclnnNLLLossGetWorkspaceSize(x.t, t, w.t, 1, -100, out.t, total.t, &ws, &ex), ACLNN_SUCCESS);
  void* wsp = nullptr;
  if (ws) {
    ASSERT_EQ(aclrtMalloc(&wsp, ws, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  }
  ASSERT_EQ(aclnnNLLLoss(wsp, ws, ex, nullptr), ACLNN_SUCCESS);
  EXPECT_NE(aclrtSynchronizeDevice(), ACL_SUCCESS);
  EXPECT_NE(recent_error().find("target 4 of row 2 is outside [0, 4)"), std::string::npos) << recent_error();
  if (wsp) aclrtFree(wsp);
  aclDestroyScalar(slope);
  aclDestroyTensor(t);
  aclrtFree(tdev);
}

// Pooling as a CANN program calls it: MaxPool2dWithIndices with int32 indices and its Backward,
// AvgPool2d with a divisor override, AdaptiveAvgPool2dBackward, and the refusals.
TEST(CannApi, PoolingAndItsBackward) {
  // 4x3 plane, 2x2 windows at stride 2: rows 0-1 and 2-3 of columns 0-1
  DevTensor x({1, 1, 4, 3}, {0.5f, -1, 7, -2, -3, 8, 4, 1, 9, 2, 3, 9}), out({1, 1, 2, 1}, {0, 0}),
      g({1, 1, 2, 1}, {10, 20}), gx({1, 1, 4, 3}, std::vector<float>(12, 0.f));
  int32_t iv[2] = {-1, -1};
  int64_t is[4] = {1, 1, 2, 1}, ist[4] = {2, 2, 1, 1};
  void* idev = nullptr;
  ASSERT_EQ(aclrtMalloc(&idev, sizeof(iv), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  aclTensor* idx = aclCreateTensor(is, 4, ACL_INT32, ist, 0, ACL_FORMAT_ND, is, 4, idev);
  const int64_t two[2] = {2, 2}, zero[2] = {0, 0}, one[2] = {1, 1};
  aclIntArray *k = aclCreateIntArray(two, 2), *s = aclCreateIntArray(two, 2), *p = aclCreateIntArray(zero, 2),
              *d = aclCreateIntArray(one, 2);
  call(aclnnMaxPool2dWithIndicesGetWorkspaceSize, aclnnMaxPool2dWithIndices, static_cast<const aclTensor*>(x.t),
       static_cast<const aclIntArray*>(k), static_cast<const aclIntArray*>(s), static_cast<const aclIntArray*>(p),
       static_cast<const aclIntArray*>(d), false, out.t, idx);
  EXPECT_EQ(out.read(), (std::vector<float>{0.5f, 4}));
  ASSERT_EQ(aclrtMemcpy(iv, sizeof(iv), idev, sizeof(iv), ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_EQ(iv[0], 0);
  EXPECT_EQ(iv[1], 6);  // row 2, column 0
  call(aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize, aclnnMaxPool2dWithIndicesBackward,
       static_cast<const aclTensor*>(g.t), static_cast<const aclTensor*>(x.t), static_cast<const aclTensor*>(idx),
       static_cast<const aclIntArray*>(k), static_cast<const aclIntArray*>(s), static_cast<const aclIntArray*>(p),
       static_cast<const aclIntArray*>(d), false, gx.t);
  std::vector<float> want(12, 0.f);
  want[0] = 10;
  want[6] = 20;
  EXPECT_EQ(gx.read(), want);

  // 2x2 average over a 2x2 plane with divisor 8: (0.5 - 1 - 2 - 3) / 8
  DevTensor sq({1, 1, 2, 2}, {0.5f, -1, -2, -3}), avg({1, 1, 1, 1}, {0});
  call(aclnnAvgPool2dGetWorkspaceSize, aclnnAvgPool2d, static_cast<const aclTensor*>(sq.t),
       static_cast<const aclIntArray*>(k), static_cast<const aclIntArray*>(s), static_cast<const aclIntArray*>(p), false,
       true, int64_t(8), int8_t(0), avg.t);
  EXPECT_FLOAT_EQ(avg.read()[0], -5.5f / 8);
  // a 1x2 pooled grad over 2x3 columns: windows [0, 2) and [1, 3)
  DevTensor gy({1, 1, 1, 2}, {4, 8}), self({1, 1, 2, 3}, std::vector<float>(6, 0.f)),
      g2({1, 1, 2, 3}, std::vector<float>(6, 0.f));
  call(aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize, aclnnAdaptiveAvgPool2dBackward,
       static_cast<const aclTensor*>(gy.t), static_cast<const aclTensor*>(self.t), g2.t);
  EXPECT_EQ(g2.read(), (std::vector<float>{1, 3, 2, 1, 3, 2}));

  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  const int64_t big_pad[2] = {2, 2};
  aclIntArray* bp = aclCreateIntArray(big_pad, 2);
  EXPECT_EQ(aclnnMaxPool2dWithIndicesGetWorkspaceSize(x.t, k, s, bp, d, false, out.t, idx, &ws, &ex),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("should be at most half of kernel_size"), std::string::npos) << recent_error();
  EXPECT_EQ(aclnnAvgPool2dGetWorkspaceSize(sq.t, k, s, p, false, true, -1, 0, avg.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclnnAvgPool2dGetWorkspaceSize(sq.t, k, s, p, false, true, 0, 0, out.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  for (aclIntArray* a : {k, s, p, d, bp}) aclDestroyIntArray(a);
  aclDestroyTensor(idx);
  aclrtFree(idev);
}

// BatchNorm as a CANN program calls it in training: the batch statistics normalize, saveMean /
// saveInvstd hold them, and the running statistics move by momentum (the unbiased variance).
TEST(CannApi, BatchNormTrainingUpdatesTheRunningStatistics) {
  // channel 0: 1, 3, 5, 7 (mean 4, biased variance 5, unbiased 20/3); channel 1: all 2
  DevTensor x({2, 2, 2}, {1, 3, 2, 2, 5, 7, 2, 2}), w({2}, {2, 1}), b({2}, {0, 0.5f}), rm({2}, {1, 1}),
      rv({2}, {1, 1}), y({2, 2, 2}, std::vector<float>(8, 0.f)), sm({2}, {0, 0}), si({2}, {0, 0});
  call(aclnnBatchNormGetWorkspaceSize, aclnnBatchNorm, static_cast<const aclTensor*>(x.t),
       static_cast<const aclTensor*>(w.t), static_cast<const aclTensor*>(b.t), rm.t, rv.t, true, 0.1, 1e-5, y.t,
       sm.t, si.t);
  const float inv0 = 1 / std::sqrt(5 + 1e-5f), inv1 = 1 / std::sqrt(1e-5f);
  std::vector<float> got = y.read();
  EXPECT_NEAR(got[0], 2 * (1 - 4) * inv0, 1e-5);
  EXPECT_NEAR(got[5], 2 * (7 - 4) * inv0, 1e-5);
  EXPECT_NEAR(got[2], 0.5f, 1e-6);  // channel 1 is constant: only the bias is left
  EXPECT_EQ(sm.read(), (std::vector<float>{4, 2}));
  EXPECT_NEAR(si.read()[0], inv0, 1e-6);
  EXPECT_NEAR(si.read()[1], inv1, inv1 * 1e-6);
  EXPECT_NEAR(rm.read()[0], 0.9f * 1 + 0.1f * 4, 1e-6);
  EXPECT_NEAR(rv.read()[0], 0.9f * 1 + 0.1f * 20 / 3, 1e-6);
  EXPECT_NEAR(rv.read()[1], 0.9f, 1e-6);

  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  // evaluation needs running statistics; a one-value-per-channel batch cannot train
  EXPECT_EQ(aclnnBatchNormGetWorkspaceSize(x.t, w.t, b.t, nullptr, nullptr, false, 0.1, 1e-5, y.t, sm.t, si.t, &ws, &ex),
            ACLNN_ERR_PARAM_INVALID);
  DevTensor one({1, 2}, {1, 2}), y1({1, 2}, {0, 0});
  EXPECT_EQ(aclnnBatchNormGetWorkspaceSize(one.t, w.t, b.t, rm.t, rv.t, true, 0.1, 1e-5, y1.t, sm.t, si.t, &ws, &ex),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("more than 1 value per channel"), std::string::npos) << recent_error();
}

// aclnnAll / aclnnAny: nonzero per column or row (NaN is nonzero), into a uint8 out (1 / 0, as
// CANN's example) or a bool one with keepdim.
TEST(CannApi, AllAndAnyIntoUint8OrBool) {
  DevTensor x({3, 2}, {0, 1, 2, 3, NAN, 5});
  int64_t cols = 2, rows_keep[2] = {3, 1};
  void* u8 = nullptr;
  void* b = nullptr;
  ASSERT_EQ(aclrtMalloc(&u8, 2, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(aclrtMalloc(&b, 3, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  int64_t one = 1, strides[2] = {1, 1};
  aclTensor* out_u8 = aclCreateTensor(&cols, 1, ACL_UINT8, &one, 0, ACL_FORMAT_ND, &cols, 1, u8);
  aclTensor* out_b = aclCreateTensor(rows_keep, 2, ACL_BOOL, strides, 0, ACL_FORMAT_ND, rows_keep, 2, b);
  int64_t d0 = 0, d1 = 1;
  aclIntArray* dim0 = aclCreateIntArray(&d0, 1);
  aclIntArray* dim1 = aclCreateIntArray(&d1, 1);
  uint8_t got_u8[2] = {7, 7};
  bool got_b[3] = {false, false, false};
  call(aclnnAllGetWorkspaceSize, aclnnAll, static_cast<const aclTensor*>(x.t), static_cast<const aclIntArray*>(dim0),
       false, out_u8);
  ASSERT_EQ(aclrtMemcpy(got_u8, 2, u8, 2, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_EQ(got_u8[0], 0);  // column 0 holds a 0
  EXPECT_EQ(got_u8[1], 1);
  call(aclnnAnyGetWorkspaceSize, aclnnAny, static_cast<const aclTensor*>(x.t), static_cast<const aclIntArray*>(dim1),
       true, out_b);
  ASSERT_EQ(aclrtMemcpy(got_b, 3, b, 3, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_TRUE(got_b[0] && got_b[1] && got_b[2]);  // row 2: NaN and 5
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  DevTensor f({2}, {0, 0});
  EXPECT_EQ(aclnnAllGetWorkspaceSize(x.t, dim0, false, f.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("out must be bool or uint8"), std::string::npos) << recent_error();
  aclDestroyIntArray(dim0);
  aclDestroyIntArray(dim1);
  aclDestroyTensor(out_u8);
  aclDestroyTensor(out_b);
  aclrtFree(u8);
  aclrtFree(b);
}
