// DType vocabulary, 16-bit float conversions (checked bit-for-bit against Eigen), promotion.
#include <Eigen/Core>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>

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
  EXPECT_EQ(element_size(kUInt8), 1u);
  EXPECT_EQ(element_size(kInt8), 1u);
  EXPECT_STREQ(dtype_name(kUInt8), "uint8");
  EXPECT_STREQ(dtype_name(kChar), "int8");
  EXPECT_EQ(dtype_from_string("U8"), kByte);
  EXPECT_EQ(dtype_from_string("int8"), kInt8);
  EXPECT_TRUE(is_integral(kUInt8));
  EXPECT_FALSE(is_floating_point(kInt8));
  ember_test::expect_error<DTypeError>([] { dtype_from_string("float8"); }, {"float8", "expected one of"});
}

TEST(DType, PromotionFollowsPyTorch) {
  EXPECT_EQ(promote_types(kFloat16, kBFloat16), kFloat32);
  EXPECT_EQ(promote_types(kInt32, kFloat16), kFloat16);
  EXPECT_EQ(promote_types(kInt32, kInt64), kInt64);
  EXPECT_EQ(promote_types(kBool, kInt32), kInt32);
  EXPECT_EQ(promote_types(kFloat32, kFloat64), kFloat64);
  EXPECT_EQ(promote_types(kBFloat16, kFloat32), kFloat32);
  EXPECT_EQ(promote_types(kUInt8, kInt32), kInt32);
  EXPECT_EQ(promote_types(kInt8, kInt64), kInt64);
  EXPECT_EQ(promote_types(kBool, kUInt8), kUInt8);
  EXPECT_EQ(promote_types(kUInt8, kFloat16), kFloat16);
  EXPECT_EQ(promote_types(kUInt8, kInt8), kInt16);  // the narrowest type that holds both
  EXPECT_EQ(promote_types(kInt16, kUInt8), kInt16);
  EXPECT_EQ(promote_types(kInt16, kInt32), kInt32);
  EXPECT_EQ(promote_types(kInt16, kFloat16), kFloat16);
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

// Bytes as image decoders hand them over: wrapped with from_blob, joined, widened to float.
TEST(Bytes, FromBlobCatViewAndToFloatOnCpuAndNpu) {
  uint8_t r[4] = {0, 127, 200, 255}, g[4] = {1, 2, 3, 4};
  for (Device dev : {Device(kCPU), Device(kNPU)}) {
    Tensor R = from_blob(r, {2, 2}, kUInt8).to(dev), G = from_blob(g, {2, 2}, kUInt8).to(dev);
    Tensor img = cat({R, G}).view({2, 2, 2}).to(kFloat);
    ASSERT_EQ(img.dtype(), kFloat32);
    Tensor host = img.cpu().contiguous();
    const float want[8] = {0, 127, 200, 255, 1, 2, 3, 4};
    for (int i = 0; i < 8; ++i) EXPECT_EQ(host.data_ptr<float>()[i], want[i]) << dev << " element " << i;
    EXPECT_EQ(R.sum().dtype(), kInt64);
    EXPECT_EQ(R.sum().item().to_int(), 582) << dev;  // summed in int64: no wrap
    EXPECT_EQ(R.max().item().to_int(), 255) << dev;
  }
  int8_t c[3] = {-128, -1, 127};
  Tensor C = from_blob(c, {3}, kInt8);
  EXPECT_EQ(C.to(kFloat64).sum().item().to_double(), -2.0);
  EXPECT_EQ(C.min().item().to_int(), -128);
}

// Integer arithmetic stays in the type and wraps, as in PyTorch; conversions into bytes truncate
// then wrap (x86 PyTorch and NumPy: -3.0 -> 253).
TEST(Bytes, ArithmeticWrapsAndConversionsTruncate) {
  for (Device dev : {Device(kCPU), Device(kNPU)}) {
    Tensor a = tensor({200, 100}, TensorOptions().dtype(kUInt8).device(dev));
    Tensor sum = a + a;
    EXPECT_EQ(sum.dtype(), kUInt8);
    EXPECT_EQ(sum.cpu().data_ptr<uint8_t>()[0], 144) << dev;  // 400 mod 256
    EXPECT_EQ(sum.cpu().data_ptr<uint8_t>()[1], 200) << dev;
    EXPECT_EQ((a + 1).dtype(), kUInt8);  // an int scalar does not widen
    Tensor b = tensor({100, -100}, TensorOptions().dtype(kInt8).device(dev));
    EXPECT_EQ((b + b).cpu().data_ptr<int8_t>()[0], -56) << dev;
    EXPECT_EQ((b + b).cpu().data_ptr<int8_t>()[1], 56) << dev;
    EXPECT_EQ((a + b).dtype(), kInt16);
    EXPECT_EQ((a + b).cpu().data_ptr<int16_t>()[0], 300) << dev;
    EXPECT_EQ((a + b).cpu().data_ptr<int16_t>()[1], 0) << dev;
    Tensor s = tensor({30000, -30000}, TensorOptions().dtype(kInt16).device(dev));
    EXPECT_EQ((s + s).cpu().data_ptr<int16_t>()[0], -5536) << dev;  // 60000 - 65536
    EXPECT_EQ((s * 2).to(kInt64).cpu().data_ptr<int64_t>()[1], 5536) << dev;
    EXPECT_EQ((a / a).dtype(), kFloat32);
    EXPECT_TRUE((a > b).all().item().to_bool());
    Tensor f = tensor({-3.0, 300.7, 255.9, 0.5}, TensorOptions().device(dev)).to(kUInt8);
    const uint8_t want[4] = {253, 44, 255, 0};
    for (int i = 0; i < 4; ++i) EXPECT_EQ(f.cpu().data_ptr<uint8_t>()[i], want[i]) << dev << " element " << i;
    EXPECT_EQ(tensor({-129.0}).to(kInt8).item().to_int(), 127);
  }
}

TEST(Bytes, ItemPrintAndSafetensorsRoundTrip) {
  Tensor u = tensor({7, 250}, TensorOptions().dtype(kUInt8));
  EXPECT_EQ(u[1].item().to_int(), 250);
  std::ostringstream os;
  os << u;
  EXPECT_NE(os.str().find("250"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("uint8"), std::string::npos) << os.str();
  std::string path = ::testing::TempDir() + "/bytes.safetensors";
  Tensor i8 = tensor({-5, 6}, TensorOptions().dtype(kInt8));
  nn::save_safetensors({{"u", u}, {"i", i8}}, path);
  auto back = nn::load_safetensors(path);
  ASSERT_EQ(back.at("u").dtype(), kUInt8);
  ASSERT_EQ(back.at("i").dtype(), kInt8);
  EXPECT_TRUE(back.at("u").equal(u));
  EXPECT_TRUE(back.at("i").equal(i8));
}

}  // namespace

// The promotion, cast and broadcast rules live once in core/ and both the framework and the
// emulated NPU call them.
TEST(DTypeRules, CategoriesCastsAndScalarPromotion) {
  EXPECT_EQ(dtype_category(kBool), 0);
  EXPECT_EQ(dtype_category(kUInt8), 1);
  EXPECT_EQ(dtype_category(kBFloat16), 2);
  EXPECT_TRUE(can_cast(kInt32, kFloat16));
  EXPECT_TRUE(can_cast(kFloat64, kFloat16));  // within a category: allowed (rounding)
  EXPECT_FALSE(can_cast(kFloat32, kInt64));
  EXPECT_FALSE(can_cast(kInt8, kBool));
  EXPECT_EQ(combine_categories(kInt32, kFloat32), kFloat32);   // int tensor + float scalar
  EXPECT_EQ(combine_categories(kFloat16, kFloat64), kFloat16);  // width never raised
  EXPECT_EQ(combine_categories(kBool, kInt64), kInt64);
  EXPECT_EQ(combine_categories(kUInt8, kInt64), kUInt8);
  // The framework's result_type and the NPU's promotion agree with the rule.
  EXPECT_EQ((ones({2}, kInt32) + 1.5).dtype(), kFloat32);
  EXPECT_EQ((ones({2}, kFloat16) + 1.5).dtype(), kFloat16);
  EXPECT_EQ((ones({2}, kInt32).npu() + 1.5).dtype(), kFloat32);
}

TEST(DTypeRules, BroadcastWithAndWithoutThrowing) {
  DimVector out;
  EXPECT_TRUE(try_broadcast_shapes({3, 1}, {4}, &out));
  EXPECT_EQ(IntArrayRef(out), IntArrayRef({3, 4}));
  EXPECT_FALSE(try_broadcast_shapes({3, 2}, {4}, &out));
  EXPECT_THROW(broadcast_shapes({3, 2}, {4}, "op"), ShapeError);
  EXPECT_EQ(IntArrayRef(broadcast_shapes({}, {2, 1}, "op")), IntArrayRef({2, 1}));
}
