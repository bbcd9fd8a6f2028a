// DType vocabulary, 16-bit float conversions (checked bit-for-bit against Eigen), promotion.
#include <Eigen/Core>

#include <cmath>
#include <limits>
#include <random>

#include "test_util.h"

using namespace ember;

namespace {

uint16_t eigen_half_bits(float f) { return Eigen::numext::bit_cast<uint16_t>(Eigen::half(f)); }
uint16_t eigen_bf16_bits(float f) { return Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(f)); }

TEST(Half, WideningMatchesEigenForEveryPattern) {
  for (uint32_t b = 0; b < 65536; ++b) {
    float ours = static_cast<float>(Half::from_bits(static_cast<uint16_t>(b)));
    float eig = static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(static_cast<uint16_t>(b)));
    if (std::isnan(eig)) {
      EXPECT_TRUE(std::isnan(ours)) << b;
    } else {
      EXPECT_EQ(ours, eig) << "pattern " << b;
    }
  }
}

TEST(Half, NarrowingRoundsToNearestEvenLikeEigen) {
  std::mt19937 gen(1);
  std::vector<float> values = {0.f, -0.f, 1.f, 65504.f, 65519.f, 65520.f, 1e-8f, 5.96e-8f, 2.98e-8f, 6.1e-5f,
                               std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                               1.00048828125f /* tie: 1 + 2^-11 rounds to even 1.0 */, 1.00146484375f};
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = bits(gen);
    float f;
    std::memcpy(&f, &u, 4);
    values.push_back(f);
  }
  for (float f : values) {
    uint16_t ours = Half(f).x, eig = eigen_half_bits(f);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(Half::from_bits(ours))));
    } else {
      ASSERT_EQ(ours, eig) << "value " << f;
    }
  }
  EXPECT_EQ(static_cast<float>(Half(1.00048828125f)), 1.0f);         // tie -> even mantissa 0
  EXPECT_EQ(static_cast<float>(Half(1.00146484375f)), 1.001953125f);  // tie -> even mantissa 2
}

TEST(BFloat16, NarrowingRoundsToNearestEvenLikeEigen) {
  std::mt19937 gen(2);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = bits(gen);
    float f;
    std::memcpy(&f, &u, 4);
    uint16_t ours = BFloat16(f).x;
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16::from_bits(ours))));
    } else {
      ASSERT_EQ(ours, eigen_bf16_bits(f)) << "value " << f;
    }
  }
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even mantissa wins.
  EXPECT_EQ(static_cast<float>(BFloat16(1.00390625f)), 1.0f);
  EXPECT_EQ(static_cast<float>(BFloat16(1.01171875f)), 1.015625f);
}

TEST(DType, SizesNamesAndParsing) {
  EXPECT_EQ(element_size(kFloat32), 4u);
  EXPECT_EQ(element_size(kBFloat16), 2u);
  EXPECT_EQ(element_size(kBool), 1u);
  EXPECT_STREQ(dtype_name(kBFloat16), "bfloat16");
  EXPECT_EQ(dtype_from_string("F16"), kFloat16);
  EXPECT_EQ(dtype_from_string("int32"), kInt32);
  ember_test::expect_error<DTypeError>([] { dtype_from_string("float8"); }, {"float8", "expected one of"});
}

TEST(DType, PromotionFollowsPyTorch) {
  EXPECT_EQ(promote_types(kFloat16, kBFloat16), kFloat32);
  EXPECT_EQ(promote_types(kInt32, kFloat16), kFloat16);
  EXPECT_EQ(promote_types(kInt32, kInt64), kInt64);
  EXPECT_EQ(promote_types(kBool, kInt32), kInt32);
  EXPECT_EQ(promote_types(kFloat32, kFloat64), kFloat64);
  EXPECT_EQ(promote_types(kBFloat16, kFloat32), kFloat32);
}

TEST(DType, ScalarsAndZeroDimTensorsDoNotWidenWithinACategory) {
  Tensor h = ones({3}, kFloat16), i32 = ones({3}, kInt32);
  EXPECT_EQ(result_type(h, Scalar(2.5)), kFloat16);                     // float scalar keeps f16
  EXPECT_EQ(result_type(i32, Scalar(2.5)), kFloat32);                   // int tensor + float -> default float
  EXPECT_EQ(result_type(i32, Scalar(int64_t(7))), kInt32);              // int scalar keeps int32
  EXPECT_EQ(result_type(i32, scalar_tensor(1, kInt64)), kInt32);        // 0-d int64 does not widen int32
  EXPECT_EQ(result_type(i32, scalar_tensor(1.0, kFloat64)), kFloat64);  // but a higher category does
  EXPECT_EQ(result_type(ones({2}, kBool), Scalar(int64_t(1))), kInt64);
  EXPECT_EQ(result_type(h, ones({3}, kBFloat16)), kFloat32);
  EXPECT_EQ((h + 1.5).dtype(), kFloat16);
  EXPECT_EQ((i32 / i32).dtype(), kFloat32);
}

}  // namespace
