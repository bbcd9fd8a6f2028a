// The CANN API surface as CANN defines it: the in-place forms against their out-of-place twins,
// InplaceZero, GeluBackwardV2's string attribute, aclDataTypeSize and the fp16 converters.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

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
