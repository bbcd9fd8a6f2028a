// Op semantics beyond the conformance samples: promotion, operators, NaN handling, numerics at
// scale, and the CPU kernels' parallel paths.
#include <cmath>
#include <limits>

#include "test_util.h"

using namespace ember;

namespace {

TEST(Ops, ScalarOperatorsAndReverseForms) {
  Tensor x = tensor({1.0, 2.0, 4.0});
  EXPECT_EQ((10 - x).to_vector<float>(), (std::vector<float>{9, 8, 6}));
  EXPECT_EQ((8 / x).to_vector<float>(), (std::vector<float>{8, 4, 2}));
  EXPECT_EQ((2 * x + 1).to_vector<float>(), (std::vector<float>{3, 5, 9}));
  EXPECT_EQ((-x).to_vector<float>(), (std::vector<float>{-1, -2, -4}));
  Tensor i = tensor(std::vector<int64_t>{1, 2, 4});
  EXPECT_EQ((8 / i).dtype(), kFloat32);
  EXPECT_EQ((i * 2).dtype(), kInt64);
  EXPECT_EQ((i * 2.5).dtype(), kFloat32);
  Tensor y = x.clone();
  y += 1;
  y *= tensor({2.0, 2.0, 2.0});
  y -= 2;
  y /= 2;
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 4}));
  EXPECT_EQ((x > 1.5).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ((x == tensor({1.0, 0.0, 4.0})).to_vector<bool>(), (std::vector<bool>{true, false, true}));
}

TEST(Ops, AddWithAlphaAndInPlaceOnStridedSelf) {
  Tensor a = zeros({3, 4});
  Tensor col = a.select(1, 2);
  col.add_(tensor({1.0, 2.0, 3.0}), 2);
  EXPECT_EQ(a.sum().item<double>(), 12.0);
  EXPECT_EQ(add(tensor({1.0}), tensor({1.0}), -3).item<double>(), -2.0);
  EXPECT_EQ(sub(tensor({1.0}), 1.0, 2).item<double>(), -1.0);
}

TEST(Ops, NaNPropagatesThroughMaxMinClampRelu) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = tensor(std::vector<double>{1.0, nan, -2.0});
  EXPECT_TRUE(std::isnan(x.max().item<double>()));
  EXPECT_TRUE(std::isnan(x.amin({0}).item<double>()));
  EXPECT_EQ(x.argmax().item<int64_t>(), 1);
  std::vector<double> m = maximum(x, zeros({3}, kFloat64)).to_vector<double>();
  EXPECT_TRUE(std::isnan(m[1]));
  EXPECT_EQ(m[2], 0.0);
  EXPECT_TRUE(std::isnan(x.clamp(0.0, 0.5).to_vector<double>()[1]));
  EXPECT_TRUE(std::isnan(x.relu().to_vector<double>()[1]));
}

// PyTorch's rule: the input that loses gets no gradient, a tie splits it, a NaN gives both all of it.
TEST(Ops, MaximumMinimumGradientGoesToTheWinnerSplitsTiesAndPassesNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const char* dev : {"cpu", "npu:0"}) {
    Tensor a = tensor(std::vector<double>{3.0, 1.0, 2.0, nan}).to(Device(dev)).requires_grad_();
    Tensor b = tensor(std::vector<double>{1.0, 3.0, 2.0, 0.0}).to(Device(dev)).requires_grad_();
    (maximum(a, b) * 2.0).sum().backward();
    EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{2.0, 0.0, 1.0, 2.0})) << dev;
    EXPECT_EQ(b.grad().to_vector<double>(), (std::vector<double>{0.0, 2.0, 1.0, 2.0})) << dev;
    a.mutable_grad() = Tensor();
    b.mutable_grad() = Tensor();
    (minimum(a, b) * 2.0).sum().backward();
    EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{0.0, 2.0, 1.0, 2.0})) << dev;
    EXPECT_EQ(b.grad().to_vector<double>(), (std::vector<double>{2.0, 0.0, 1.0, 2.0})) << dev;
  }
}

// nansum counts NaN as 0, and NaN inputs get no gradient (the conformance samples hold no NaN).
TEST(Ops, NansumSkipsNaNAndGivesItNoGradient) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const char* dev : {"cpu", "npu:0"}) {
    for (DType dt : {kFloat64, kFloat32, kBFloat16}) {
      Tensor x = tensor(std::vector<double>{1.0, nan, 2.0, nan, nan, nan}).reshape({2, 3}).to(dt).to(Device(dev));
      x.requires_grad_();
      Tensor rows = nansum(x, {1});
      EXPECT_EQ(rows.to(kFloat64).to_vector<double>(), (std::vector<double>{3.0, 0.0})) << dev << " " << dt;
      EXPECT_EQ(x.nansum().item<double>(), 3.0) << dev << " " << dt;
      EXPECT_TRUE(std::isnan(x.sum().item<double>())) << dev << " " << dt;
      (rows * 2.0).sum().backward();
      EXPECT_EQ(x.grad().to(kFloat64).to_vector<double>(), (std::vector<double>{2.0, 0.0, 2.0, 0.0, 0.0, 0.0}))
          << dev << " " << dt;
    }
  }
  Tensor i = tensor(std::vector<int64_t>{1, 2, 3});
  EXPECT_EQ(nansum(i).dtype(), kInt64);
  EXPECT_EQ(nansum(i).item<int64_t>(), 6);
}

// cumsum follows torch.cumsum: integral and bool inputs sum in int64, a dtype casts the input
// first (0.5 + 0.5 in int64 is 0, not 1), integer sums wrap around, and the gradient of every
// element is the sum of the gradients at and after it, on both devices.
TEST(Ops, CumsumFollowsTorchDtypeRulesAndGradients) {
  for (const char* dev : {"cpu", "npu:0"}) {
    Tensor i = tensor(std::vector<int32_t>{1, 2, 3, 4}).to(Device(dev));
    EXPECT_EQ(i.cumsum(0).dtype(), kInt64) << dev;
    EXPECT_EQ(i.cumsum(0).cpu().to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 6, 10})) << dev;
    Tensor b = tensor(std::vector<double>{1, 0, 1}).to(kBool).to(Device(dev));
    EXPECT_EQ(cumsum(b, 0).cpu().to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 2})) << dev;
    Tensor h = tensor({0.5, 0.5, 1.5}).to(Device(dev));
    EXPECT_EQ(cumsum(h, 0, kInt64).cpu().to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1})) << dev;
    EXPECT_EQ(cumsum(h, -1, kFloat64).dtype(), kFloat64) << dev;
    const int64_t big = std::numeric_limits<int64_t>::max();
    Tensor w = tensor(std::vector<int64_t>{big, 1}).to(Device(dev));
    EXPECT_EQ(w.cumsum(0).cpu().to_vector<int64_t>(), (std::vector<int64_t>{big, std::numeric_limits<int64_t>::min()}))
        << dev;
    Tensor x = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}).reshape({2, 3}).to(Device(dev)).requires_grad_();
    Tensor y = x.cumsum(1);
    EXPECT_EQ(y.cpu().to_vector<float>(), (std::vector<float>{1, 3, 6, 4, 9, 15})) << dev;
    (y * tensor({1.0, 10.0, 100.0}).to(Device(dev))).sum().backward();
    EXPECT_EQ(x.grad().cpu().to_vector<float>(), (std::vector<float>{111, 110, 100, 111, 110, 100})) << dev;
    ember_test::expect_error<IndexError>([&] { x.cumsum(2); }, {"dim"});
    ember_test::expect_error<DTypeError>([&] { cumsum(x, 0, kBool); }, {"cumsum", "bool"});
  }
}

TEST(Ops, SoftmaxIsStableForLargeLogits) {
  Tensor x = tensor({1000.0, 1001.0, 1002.0});
  std::vector<float> p = x.softmax(0).to_vector<float>();
  EXPECT_NEAR(p[2], 0.66524096, 1e-6);
  std::vector<float> lp = x.log_softmax(0).to_vector<float>();
  EXPECT_NEAR(lp[0], -2.40760596, 1e-5);
  Tensor inf = tensor({-INFINITY, 0.0f});
  EXPECT_EQ(inf.softmax(0).to_vector<float>(), (std::vector<float>{0, 1}));
}

TEST(Ops, LongFloatSumsAreAccurate) {
  // 16M ones: a naive fp32 running sum would stop at 2^24; blocks accumulate across in double.
  Tensor x = ones({1 << 24});
  EXPECT_EQ(x.sum().item<double>(), 16777216.0);
  Tensor h = full({1 << 20}, 0.1, kBFloat16);
  double want = (1 << 20) * static_cast<double>(static_cast<float>(BFloat16(0.1f)));
  EXPECT_NEAR(h.sum(std::nullopt).to(kFloat64).item<double>(), want, want * 4e-3);
  EXPECT_NEAR(h.sum({}, false, kFloat32).item<double>(), want, want * 1e-6);
}

TEST(Ops, ReductionKeepdimAndMultipleDims) {
  Tensor x = arange(24).reshape({2, 3, 4}).to(kFloat32);
  EXPECT_EQ(x.sum({0, 2}).to_vector<float>(), (std::vector<float>{60, 92, 124}));
  EXPECT_EQ(x.sum({0, 2}, true).sizes(), (Shape{1, 3, 1}));
  EXPECT_EQ(x.amax({-1}).to_vector<float>(), (std::vector<float>{3, 7, 11, 15, 19, 23}));
  EXPECT_EQ(x.argmax(1).sizes(), (Shape{2, 4}));
  EXPECT_EQ(x.mean({1}).select(0, 0).to_vector<float>(), (std::vector<float>{4, 5, 6, 7}));
  EXPECT_NEAR(tensor({1.0, 2.0, 3.0, 4.0}).var().item<double>(), 1.6666667, 1e-6);
  EXPECT_NEAR(tensor({3.0, 4.0}).norm().item<double>(), 5.0, 1e-6);
  EXPECT_EQ(ones({3}, kBool).sum().dtype(), kInt64);
}

TEST(Ops, MatmulShapesFollowTorchMatmul) {
  EXPECT_EQ(matmul(ones({3}), ones({3})).dim(), 0);
  EXPECT_EQ(matmul(ones({2, 3}), ones({3})).sizes(), (Shape{2}));
  EXPECT_EQ(matmul(ones({3}), ones({3, 4})).sizes(), (Shape{4}));
  EXPECT_EQ(matmul(ones({5, 2, 3}), ones({3, 4})).sizes(), (Shape{5, 2, 4}));
  EXPECT_EQ(matmul(ones({2, 1, 2, 3}), ones({4, 3, 5})).sizes(), (Shape{2, 4, 2, 5}));
  EXPECT_EQ(matmul(ones({2, 3}), ones({6, 3, 4})).sizes(), (Shape{6, 2, 4}));
  EXPECT_EQ(matmul(ones({4, 5}), ones({5, 6})).sum().item<double>(), 4 * 6 * 5);
}

TEST(Ops, LargeMatmulAgreesWithFloat64InEveryDtype) {
  manual_seed(3);
  Tensor a = randn({300, 257}, kFloat64), b = randn({257, 190}, kFloat64);
  Tensor ref = a.matmul(b);
  // fp32 rounding of inputs plus fp32 accumulation over K = 257 terms of unit variance.
  EXPECT_TRUE(allclose(a.to(kFloat32).matmul(b.to(kFloat32)).to(kFloat64), ref, 1e-4, 1e-4));
  // bf16/fp16: inputs rounded to 8/11 bits dominate; each product has relative error ~2^-8.
  Tensor ab = a.to(kBFloat16), bb = b.to(kBFloat16);
  Tensor ref_b = ab.to(kFloat64).matmul(bb.to(kFloat64));  // exact products of the rounded inputs
  EXPECT_TRUE(allclose(ab.matmul(bb).to(kFloat64), ref_b, 8e-3, 0.1));
  Tensor ah = a.to(kFloat16), bh = b.to(kFloat16);
  Tensor ref_h = ah.to(kFloat64).matmul(bh.to(kFloat64));
  EXPECT_TRUE(allclose(ah.matmul(bh).to(kFloat64), ref_h, 1e-3, 2e-2));
}

TEST(Ops, CatAndStack) {
  Tensor a = ones({2, 3}), b = zeros({1, 3});
  EXPECT_EQ(cat({a, b}).sizes(), (Shape{3, 3}));
  EXPECT_EQ(cat({a, b}).sum().item<double>(), 6.0);
  EXPECT_EQ(stack({a, a, a}, 1).sizes(), (Shape{2, 3, 3}));
  EXPECT_EQ(cat({ones({2}, kInt64), ones({2}, kFloat64)}).dtype(), kFloat64);
  EXPECT_THROW(stack({ones({2}), ones({3})}), ShapeError);
}

TEST(Ops, SwigluFormsAgree) {
  manual_seed(1);
  Tensor x = randn({4, 8});
  Tensor a = x.narrow(1, 0, 4), b = x.narrow(1, 4, 4);
  Tensor ref = a.silu() * b;
  EXPECT_TRUE(allclose(swiglu(x), ref, 1e-6, 1e-6));
  EXPECT_TRUE(allclose(swiglu(a, b), ref, 1e-6, 1e-6));
  EXPECT_TRUE(allclose(swiglu(x.t().contiguous(), 0).t(), ref, 1e-6, 1e-6));
}

TEST(Ops, CopyConvertsBetweenAllDtypesWithRounding) {
  Tensor x = tensor({1.00048828125, -2.5, 65520.0, 0.0});  // a tie, a value, an overflow, zero
  EXPECT_EQ(x.to(kFloat16).to_vector<float>(), (std::vector<float>{1.0, -2.5, INFINITY, 0.0}));
  EXPECT_EQ(x.to(kInt32).to_vector<int32_t>(), (std::vector<int32_t>{1, -2, 65520, 0}));
  EXPECT_EQ(x.to(kBool).to_vector<bool>(), (std::vector<bool>{true, true, true, false}));
  Tensor big = randn({1000, 1000});
  EXPECT_TRUE(equal(big.to(kBFloat16).to(kFloat32), big.to(kFloat64).to(kBFloat16).to(kFloat32)));
}

}  // namespace

// exp and expm1 in float32 are finite up to the float overflow threshold, in long tensors too:
// hardsigmoid and hardswish at and around their kinks, values and gradients as PyTorch defines
// them (hardsigmoid_backward: 1/6 strictly inside (-3, 3); hardswish_backward: 0 below -3,
// x / 3 + 1/2 on [-3, 3], 1 above), NaN kept, on cpu and npu.
namespace {
void expect_all_near(const std::vector<float>& got, const std::vector<float>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}
}  // namespace

TEST(Ops, HardsigmoidAndHardswishFollowPyTorchAtTheKinks) {
  const std::vector<float> xs = {-4.0f, -3.0f, -1.5f, 0.0f, 2.0f, 3.0f, 4.0f};
  const std::vector<float> hs = {0.0f, 0.0f, 0.25f, 0.5f, 5.0f / 6, 1.0f, 1.0f};
  const std::vector<float> hs_grad = {0.0f, 0.0f, 1.0f / 6, 1.0f / 6, 1.0f / 6, 0.0f, 0.0f};
  const std::vector<float> hw = {0.0f, 0.0f, -0.375f, 0.0f, 5.0f / 3, 3.0f, 4.0f};
  const std::vector<float> hw_grad = {0.0f, -0.5f, 0.0f, 0.5f, 7.0f / 6, 1.5f, 1.0f};
  for (const char* dev : {"cpu", "npu:0"}) {
    SCOPED_TRACE(dev);
    Tensor x = tensor(xs).to(Device(dev)).requires_grad_();
    Tensor a = x.hardsigmoid(), b = x.hardswish();
    (a.sum() + b.sum() * 0.0).backward();
    expect_all_near(a.cpu().to_vector<float>(), hs, 1e-7);
    expect_all_near(x.grad().cpu().to_vector<float>(), hs_grad, 1e-7);
    Tensor x2 = tensor(xs).to(Device(dev)).requires_grad_();
    x2.hardswish().sum().backward();
    expect_all_near(b.cpu().to_vector<float>(), hw, 1e-6);
    expect_all_near(x2.grad().cpu().to_vector<float>(), hw_grad, 1e-6);
    Tensor nan = full({2}, std::nan(""), TensorOptions().device(Device(dev)));
    for (float v : nan.hardsigmoid().cpu().to_vector<float>()) EXPECT_TRUE(std::isnan(v));
    for (float v : nan.hardswish().cpu().to_vector<float>()) EXPECT_TRUE(std::isnan(v));
  }
}

// Eigen's vectorized exp overflowed from x = 88.3763 (exp(88.72) = 3.39e38 < FLT_MAX), so every
// lane but a row's scalar tail gave inf (CANN's ggml tests found it). Checked against double
// precision, on cpu and npu, across [-80, 88.72] in 4097 steps: within 2.5 ulps (3e-7 relative).
TEST(Ops, ExpAndExpm1StayFiniteUpToTheFloatOverflowThreshold) {
  const int64_t n = 4097;
  Tensor x = linspace(-80.0, 88.72, n).to(kFloat32);
  const std::vector<float> xs = x.to_vector<float>();
  for (const char* dev : {"cpu", "npu:0"}) {
    Tensor xd = x.to(Device(dev));
    const std::vector<float> e = xd.exp().cpu().to_vector<float>();
    const std::vector<float> m = xd.expm1().cpu().to_vector<float>();
    for (int64_t i = 0; i < n; ++i) {
      const double want = std::exp(static_cast<double>(xs[i])), want_m1 = std::expm1(static_cast<double>(xs[i]));
      ASSERT_TRUE(std::isfinite(e[i]) && std::isfinite(m[i])) << dev << " x = " << xs[i] << ": " << e[i] << ", " << m[i];
      ASSERT_NEAR(e[i] / want, 1.0, 3e-7) << dev << " exp(" << xs[i] << ")";
      ASSERT_NEAR(m[i] / want_m1, 1.0, 3e-7) << dev << " expm1(" << xs[i] << ")";
    }
    // Past the threshold: inf, as exp's own; NaN stays NaN.
    Tensor over = tensor(std::vector<float>(64, 88.73f)).to(Device(dev));
    EXPECT_TRUE(std::isinf(over.exp().cpu().to_vector<float>()[10]));
    Tensor nan = full({64}, std::numeric_limits<double>::quiet_NaN(), TensorOptions(kFloat32).device(Device(dev)));
    EXPECT_TRUE(std::isnan(nan.exp().cpu().to_vector<float>()[10]));
  }
}
