// amp: which dtype each op runs in under autocast (cpu and npu), the weight-cast cache, fp32
// master gradients, and GradScaler's rules on injected inf/NaN.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ember/device/cpu/packed_gemm.h"
#include "test_util.h"

using namespace ember;
namespace F = ember::nn::functional;

namespace {

TEST(Autocast, PoliciesPickEachOpsDtypeOnBothDevices) {
  for (DeviceType dt : {DeviceType::CPU, DeviceType::NPU}) {
    Device dev(dt, 0);
    Tensor a = randn({4, 8}, dev), b = randn({8, 3}, dev), w = randn({3, 8}, dev), bias = randn({3}, dev);
    Tensor h = randn({4, 8}, TensorOptions(kBFloat16).device(dev));
    Tensor tgt = zeros({4}, TensorOptions(kInt64).device(dev));
    EXPECT_EQ(a.matmul(b).dtype(), kFloat32);  // no guard: as given
    amp::AutocastGuard guard(dt, kBFloat16);
    EXPECT_TRUE(amp::is_autocast_enabled(dt));
    // lower precision
    EXPECT_EQ(a.matmul(b).dtype(), kBFloat16) << dev;
    EXPECT_EQ(mm(a, b).dtype(), kBFloat16) << dev;
    EXPECT_EQ(bmm(a.unsqueeze(0), b.unsqueeze(0)).dtype(), kBFloat16) << dev;
    EXPECT_EQ(F::linear(a, w, bias).dtype(), kBFloat16) << dev;
    EXPECT_EQ(F::linear(a, w).dtype(), kBFloat16) << dev;
    // float32
    EXPECT_EQ(h.softmax(1).dtype(), kFloat32) << dev;
    EXPECT_EQ(h.log_softmax(1).dtype(), kFloat32) << dev;
    EXPECT_EQ(h.sum().dtype(), kFloat32) << dev;
    EXPECT_EQ(h.mean().dtype(), kFloat32) << dev;
    EXPECT_EQ(h.exp().dtype(), kFloat32) << dev;
    EXPECT_EQ(h.abs().log().dtype(), kFloat32) << dev;
    // ... and those whose table row says F32 (core/tables/*_ops.def)
    EXPECT_EQ(h.abs().log1p().dtype(), kFloat32) << dev;
    EXPECT_EQ(h.abs().rsqrt().dtype(), kFloat32) << dev;
    EXPECT_EQ(h.nansum({1}).dtype(), kFloat32) << dev;
    EXPECT_EQ(h.amax({1}).dtype(), kBFloat16) << dev;  // Keep
    EXPECT_EQ(h.sin().dtype(), kBFloat16) << dev;
    EXPECT_EQ(F::rms_norm(h, ones({8}, TensorOptions(kBFloat16).device(dev))).dtype(), kFloat32) << dev;
    EXPECT_EQ(F::dispersion_correction(h, ones({8}, TensorOptions(kBFloat16).device(dev))).dtype(), kFloat32) << dev;
    EXPECT_EQ(F::cross_entropy(h, tgt).dtype(), kFloat32) << dev;
    EXPECT_EQ(F::mse_loss(h, h).dtype(), kFloat32) << dev;
    // promote
    EXPECT_EQ(cat({h, a}, 0).dtype(), kFloat32) << dev;
    EXPECT_EQ(stack({h, a}).dtype(), kFloat32) << dev;
    EXPECT_EQ(atan2(h, h).dtype(), kBFloat16) << dev;  // Promote: the widest of the inputs
    EXPECT_EQ(h.maximum(h).dtype(), kBFloat16) << dev;
    EXPECT_EQ((h + a).dtype(), kFloat32) << dev;  // binary ops promote by themselves
    EXPECT_EQ((h * h).dtype(), kBFloat16) << dev;  // others keep their inputs' dtype
    EXPECT_EQ(h.relu().dtype(), kBFloat16) << dev;
    // float64 is never lowered
    EXPECT_EQ(a.to(kFloat64).matmul(b.to(kFloat64)).dtype(), kFloat64) << dev;
    // the layers: convolutions lowered, layer / group norm in float32, batch norm, pooling and
    // dropout in their input's dtype (float32 weights and running statistics with bf16 input)
    Tensor img = randn({2, 4, 6, 6}, dev), k = randn({6, 4, 3, 3}, dev), kt = randn({4, 3, 3, 3}, dev);
    Tensor x = conv2d(img, k, randn({6}, dev));
    EXPECT_EQ(x.dtype(), kBFloat16) << dev;
    EXPECT_EQ(conv1d(img.flatten(2), randn({5, 4, 3}, dev)).dtype(), kBFloat16) << dev;
    EXPECT_EQ(conv_transpose2d(img, kt).dtype(), kBFloat16) << dev;
    nn::LayerNorm ln(nn::LayerNormOptions({4}));
    nn::GroupNorm gn(nn::GroupNormOptions(2, 6));
    nn::BatchNorm2d bn(6);
    ln.to(dev);
    gn.to(dev);
    bn.to(dev);
    EXPECT_EQ(ln.forward(x.flatten(2).transpose(1, 2).flatten(0, 1).narrow(1, 0, 4)).dtype(), kFloat32) << dev;
    EXPECT_EQ(gn.forward(x).dtype(), kFloat32) << dev;
    Tensor y = bn.forward(x);
    EXPECT_EQ(y.dtype(), kBFloat16) << dev;
    EXPECT_EQ(bn.running_mean.dtype(), kFloat32) << dev;
    y.to(kFloat32).sum().backward();  // float32 parameters get float32 gradients
    EXPECT_EQ(bn.weight.grad().dtype(), kFloat32) << dev;
    EXPECT_EQ(max_pool2d(y, {2}).dtype(), kBFloat16) << dev;
    EXPECT_EQ(F::dropout(y, 0.5, true).dtype(), kBFloat16) << dev;
  }
}

TEST(Autocast, GuardsAreScopedPerDeviceTypeAndNest) {
  Tensor a = randn({2, 2}), an = a.npu();
  {
    amp::AutocastGuard npu_only(DeviceType::NPU, kFloat16);
    EXPECT_EQ(an.matmul(an).dtype(), kFloat16);
    EXPECT_EQ(a.matmul(a).dtype(), kFloat32);  // cpu tensors untouched
    {
      amp::AutocastGuard off(DeviceType::NPU, kFloat16, false);
      EXPECT_EQ(an.matmul(an).dtype(), kFloat32);
    }
    EXPECT_EQ(an.matmul(an).dtype(), kFloat16);
  }
  EXPECT_FALSE(amp::is_autocast_enabled(DeviceType::NPU));
  EXPECT_EQ(an.matmul(an).dtype(), kFloat32);
  ember_test::expect_error<DTypeError>([] { amp::AutocastGuard g(DeviceType::CPU, kFloat32); }, {"float16 or bfloat16"});
}

// Where the bf16 GEMM computes in fp32 anyway (no bf16 units, or units that do not pay), linear
// folds the weight's cast into the GEMM: nothing is cached where it rounds while packing (AVX2),
// the weight's rounded f32 copy where it stages (AVX-512); elsewhere the cast is made once and
// cached.
TEST(Autocast, WeightCastsAreCachedUntilTheOutermostGuardExitsAndGradsStayFp32) {
  auto lin = std::make_shared<nn::Linear>(8, 8, false);
  Tensor x = randn({4, 8});
  Tensor loss;
  const size_t cached =
      cpu::gemm_rounded_available() && !cpu::gemm_native_bf16() && !cpu::gemm_rounded_stages() ? 0u : 1u;
  {
    amp::AutocastGuard g(DeviceType::CPU);
    {
      amp::AutocastGuard inner(DeviceType::CPU);
      Tensor y = (*lin)((*lin)(x));  // the weight is used twice
      EXPECT_EQ(amp::autocast_cache_size(), cached);
      loss = y.to(kFloat32).square().mean();
    }
    EXPECT_EQ(amp::autocast_cache_size(), cached);  // still inside the outer guard
  }
  EXPECT_EQ(amp::autocast_cache_size(), 0u);
  loss.backward();
  EXPECT_EQ(lin->weight.grad().dtype(), kFloat32);
  // The same computation in fp32 with bf16-rounded operands gives about the same gradient.
  Tensor w64 = lin->weight.detach().to(kBFloat16).to(kFloat64).requires_grad_();
  Tensor x64 = x.to(kBFloat16).to(kFloat64);
  Tensor h = x64.matmul(w64.t()).to(kBFloat16).to(kFloat64);
  h.matmul(w64.t()).square().mean().backward();
  EXPECT_TRUE(allclose(lin->weight.grad().to(kFloat64), w64.grad(), 3e-2, 1e-3));
  // A cast made under NoGradGuard is not reused when grad mode is back on.
  {
    amp::AutocastGuard g(DeviceType::CPU);
    {
      NoGradGuard ng;
      (*lin)(x);
    }
    lin->zero_grad();
    (*lin)(x).to(kFloat32).sum().backward();
    EXPECT_TRUE(lin->weight.grad().defined());
  }
  // An updated weight is cast again.
  {
    amp::AutocastGuard g(DeviceType::CPU);
    Tensor first = (*lin)(x);
    {
      NoGradGuard ng;
      lin->weight.mul_(2);
    }
    Tensor second = (*lin)(x);
    EXPECT_TRUE(allclose(second.to(kFloat32), first.to(kFloat32) * 2, 2e-2, 1e-2));
  }
}

// The cast of a leaf used by a batched product (never folded) is cached on every CPU.
TEST(Autocast, LeafCastsForBatchedProductsAreCached) {
  Tensor w = randn({2, 8, 8}).requires_grad_();
  Tensor x = randn({2, 4, 8});
  amp::AutocastGuard g(DeviceType::CPU);
  Tensor y = x.bmm(w) + x.bmm(w);
  EXPECT_EQ(y.dtype(), kBFloat16);
  EXPECT_EQ(amp::autocast_cache_size(), 1u);
}

// Autocast's linear and mm give, bit for bit, the outputs and fp32 gradients of casting the
// operands by hand, whichever way this CPU runs them (casts, or casts folded into the GEMM).
TEST(Autocast, LinearAndMmEqualExplicitCastsBitForBit) {
  for (DType low : {kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(low));
    manual_seed(3);
    Tensor w = randn({40, 70}).requires_grad_(), b = randn({40}).requires_grad_();
    Tensor x = randn({3, 5, 70}).requires_grad_(), m = randn({70, 30}).requires_grad_();
    Tensor y, z;
    {
      amp::AutocastGuard g(DeviceType::CPU, low);
      y = F::linear(x, w, b);
      z = x.reshape({15, 70}).mm(m);
    }
    ASSERT_EQ(y.dtype(), low);
    ASSERT_EQ(z.dtype(), low);
    (y.to(kFloat32).square().sum() + z.to(kFloat32).sum()).backward();
    Tensor w2 = w.detach().requires_grad_(), b2 = b.detach().requires_grad_(), x2 = x.detach().requires_grad_(),
           m2 = m.detach().requires_grad_();
    Tensor y2 = F::linear(x2.to(low), w2.to(low), b2.to(low));
    Tensor z2 = x2.reshape({15, 70}).to(low).mm(m2.to(low));
    (y2.to(kFloat32).square().sum() + z2.to(kFloat32).sum()).backward();
    EXPECT_TRUE(equal(y, y2));
    EXPECT_TRUE(equal(z, z2));
    for (auto [got, want] : {std::pair<Tensor, Tensor>{w.grad(), w2.grad()},
                             {b.grad(), b2.grad()},
                             {x.grad(), x2.grad()},
                             {m.grad(), m2.grad()}}) {
      ASSERT_EQ(got.dtype(), kFloat32);
      EXPECT_TRUE(equal(got, want)) << (got - want).abs().max().item<float>();
    }
  }
}

// ---------------------------------------------------------------- GradScaler
TEST(GradScaler, ScalesUnscalesAndSkipsStepsWithInfOrNan) {
  Tensor p = tensor({1.0f, 2.0f}).requires_grad_();
  optim::SGD opt({p}, {0.1});
  amp::GradScaler scaler({1024.0, 2.0, 0.5, 3});
  EXPECT_EQ(scaler.get_scale(), 1024.0);
  // a clean step: grads come back unscaled, the step runs
  Tensor loss = (p * tensor({3.0f, 4.0f})).sum();
  EXPECT_EQ(scaler.scale(loss).item<double>(), 1024.0 * 11);
  scaler.scale(loss).backward();
  EXPECT_EQ(p.grad().to_vector<float>(), (std::vector<float>{3072, 4096}));
  scaler.unscale_(opt);
  EXPECT_EQ(p.grad().to_vector<float>(), (std::vector<float>{3, 4}));
  ember_test::expect_error<ValueError>([&] { scaler.unscale_(opt); }, {"unscale_() has already been called"});
  EXPECT_TRUE(scaler.step(opt));
  ember_test::expect_error<ValueError>([&] { scaler.step(opt); }, {"step() has already been called"});
  ember_test::expect_error<ValueError>([&] { scaler.unscale_(opt); }, {"after step()"});
  EXPECT_NEAR(p.to_vector<float>()[0], 1.0f - 0.3f, 1e-6);
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 1024.0);
  EXPECT_EQ(scaler.growth_tracker(), 1);
  ember_test::expect_error<ValueError>([&] { scaler.update(); }, {"no inf checks were recorded"});
  // injected inf and NaN: the step is skipped and the scale backs off
  for (float bad : {INFINITY, NAN}) {
    std::vector<float> before = p.to_vector<float>();
    opt.zero_grad();
    p.set_grad(tensor({1.0f, bad}));
    EXPECT_FALSE(scaler.step(opt));
    EXPECT_TRUE(scaler.found_inf(opt));
    EXPECT_EQ(p.to_vector<float>(), before);
    double s = scaler.get_scale();
    scaler.update();
    EXPECT_EQ(scaler.get_scale(), s * 0.5);
    EXPECT_EQ(scaler.growth_tracker(), 0);
  }
  // growth after growth_interval clean steps
  double s = scaler.get_scale();
  for (int i = 0; i < 3; ++i) {
    p.set_grad(tensor({1.0f, 1.0f}) * static_cast<float>(scaler.get_scale()));
    EXPECT_TRUE(scaler.step(opt));
    scaler.update();
  }
  EXPECT_EQ(scaler.get_scale(), s * 2);
}

// PyTorch's rule: the scale stays a finite float32 however long the run goes without overflow,
// and positive however long it overflows; the steps keep running.
TEST(GradScaler, ScaleStaysFiniteAndPositive) {
  Tensor p = tensor({1.0f}).requires_grad_();
  optim::SGD opt({p}, {0.0});
  amp::GradScaler scaler({65536.0, 2.0, 0.5, 1});
  for (int i = 0; i < 300; ++i) {
    p.set_grad(tensor({0.0f}));
    EXPECT_TRUE(scaler.step(opt)) << "step " << i << " skipped at scale " << scaler.get_scale();
    scaler.update();
  }
  EXPECT_TRUE(std::isfinite(static_cast<float>(scaler.get_scale()))) << scaler.get_scale();
  EXPECT_GT(scaler.get_scale(), 1e38);
  EXPECT_TRUE(std::isfinite(scaler.scale(tensor({1.0f})).item<float>()));
  for (int i = 0; i < 400; ++i) {
    p.set_grad(tensor({INFINITY}));
    EXPECT_FALSE(scaler.step(opt));
    scaler.update();
  }
  EXPECT_GE(scaler.get_scale(), std::numeric_limits<float>::min());
  p.set_grad(tensor({static_cast<float>(scaler.get_scale())}));  // a scaled gradient of 1
  EXPECT_TRUE(scaler.step(opt));  // a clean step after the long overflow runs
  EXPECT_EQ(p.grad().item<float>(), 1.0f);
  scaler.update();
}

TEST(GradScaler, Fp16TrainingOnTheNpuWithScalerAndAutocast) {
  manual_seed(7);
  auto net = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Linear>(8, 32), std::make_shared<nn::RMSNorm>(32), std::make_shared<nn::Linear>(32, 4)});
  net->to(Device("npu:0"));
  Tensor x = randn({64, 8}).npu(), y = x.matmul(randn({8, 4}).npu()).argmax(1);  // a learnable labelling
  optim::AdamW opt(net->parameters(), {1e-2});
  amp::GradScaler scaler;
  double first = 0, last = 0;
  for (int s = 0; s < 40; ++s) {
    opt.zero_grad();
    Tensor loss;
    {
      amp::AutocastGuard g(DeviceType::NPU, kFloat16);
      loss = F::cross_entropy((*net)(x), y);
    }
    EXPECT_EQ(loss.dtype(), kFloat32);
    scaler.scale(loss).backward();
    for (const Tensor& p : net->parameters()) EXPECT_EQ(p.grad().dtype(), kFloat32);
    scaler.step(opt);
    scaler.update();
    (s == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, 0.5 * first);
  amp::GradScaler off({65536.0, 2.0, 0.5, 2000, false});
  EXPECT_EQ(off.scale(ones({1})).item<double>(), 1.0);
}

}  // namespace

namespace {
// The rounded product (the GEMM autocast's linear uses where 16-bit GEMMs compute in fp32) on the
// NPU, through aclnnEmberMatmulRoundedV2, is the CPU's bit for bit, in every operand dtype mix and
// for a transposed weight, and equals the product of the cast operands.
TEST(Autocast, RoundedProductsAgreeOnBothDevices) {
  if (!cpu::gemm_rounded_available()) GTEST_SKIP() << "no AVX2: the rounded products are casts here";
  manual_seed(11);
  Tensor a = randn({70, 300}), w = randn({90, 300});
  Device npu("npu:0");
  for (DType lo : {kBFloat16, kFloat16}) {
    for (int mask = 0; mask < 4; ++mask) {
      Tensor x = mask & 1 ? a.to(lo) : a, wt = (mask & 2 ? w.to(lo) : w).t();
      for (DType out : {lo, kFloat32}) {
        SCOPED_TRACE(std::string(dtype_name(lo)) + " mask " + std::to_string(mask) + " out " + dtype_name(out));
        Tensor c = _mm_rounded(x, wt, lo, out);
        Tensor n = _mm_rounded(x.to(npu), wt.to(npu), lo, out).cpu();
        ASSERT_EQ(c.dtype(), out);
        EXPECT_TRUE(equal(c, n));
        Tensor ref = mm(x.to(lo).to(kFloat64), wt.to(lo).to(kFloat64)).to(lo).to(out);
        EXPECT_TRUE(allclose(c.to(kFloat64), ref.to(kFloat64), 1e-2, 1e-2));
      }
    }
  }
  // Refusals name the op, as on the CPU.
  ember_test::expect_error<ShapeError>([&] { _mm_rounded(a.to(npu), a.to(npu), kBFloat16, kBFloat16); },
                                       {"_mm_rounded"});
}

// A weight's gradient from the rounded linear arrives as a transposed view of a transposed
// product: .grad takes that memory over (no copy), as a plain tensor, on both devices; a second
// backward adds into it, and a gradient someone else still holds is copied, never aliased.
TEST(Autocast, RoundedLinearGradientIsTakenOverWithoutACopy) {
  if (!cpu::gemm_rounded_available()) GTEST_SKIP() << "no AVX2: the rounded products are casts here";
  manual_seed(13);
  for (Device dev : {Device("cpu"), Device("npu:0")}) {
    SCOPED_TRACE(dev.str());
    Tensor x = randn({16, 40}).to(dev), w = randn({24, 40}).to(dev).requires_grad_();
    const void* arrived = nullptr;
    w.register_hook([&](const Tensor& g) {
      arrived = g.impl()->data();  // not the tensor: holding it would force the copy
      return Tensor();
    });
    _linear_rounded(x, w, kBFloat16).sum().backward();
    ASSERT_TRUE(w.grad().defined());
    EXPECT_EQ(w.grad().impl()->data(), arrived);
    EXPECT_FALSE(w.grad().impl()->is_view());
    EXPECT_EQ(w.grad().impl()->view_base(), nullptr);
    EXPECT_TRUE(w.grad().is_contiguous());
    // dW[o][i] = sum over rows of x[r][i], rounded to bf16 (the product's rounding).
    Tensor ref = x.cpu().to(kBFloat16).to(kFloat64).sum(0).expand({24, 40}).to(kBFloat16).to(kFloat32);
    EXPECT_TRUE(allclose(w.grad().cpu(), ref, 1e-2, 1e-2));
    Tensor first = w.grad().clone();
    _linear_rounded(x, w, kBFloat16).sum().backward();
    EXPECT_TRUE(allclose(w.grad().cpu(), (first * 2).cpu(), 1e-5, 0));
    // A hook that keeps the gradient: .grad must not share its memory.
    Tensor w2 = w.detach().clone().requires_grad_(), kept;
    w2.register_hook([&](const Tensor& g) {
      kept = g;
      return Tensor();
    });
    _linear_rounded(x, w2, kBFloat16).sum().backward();
    ASSERT_TRUE(kept.defined());
    EXPECT_NE(w2.grad().impl()->data(), kept.impl()->data());
    EXPECT_TRUE(allclose(w2.grad().cpu(), first.cpu(), 0, 0));
    // A hook that returns an alias (a detached tensor over memory it keeps): copied too.
    Tensor w3 = w.detach().clone().requires_grad_(), mine;
    w3.register_hook([&](const Tensor& g) {
      mine = g.clone();
      return mine.detach();
    });
    _linear_rounded(x, w3, kBFloat16).sum().backward();
    EXPECT_NE(w3.grad().impl()->data(), mine.impl()->data());
    EXPECT_TRUE(allclose(w3.grad().cpu(), first.cpu(), 0, 0));
  }
}

// Autocast's linear on the NPU runs the same rounded product as on the CPU: no weight cast is
// cached where it applies (the bias is still cast), the gradient is fp32, and both devices give the same numbers.
TEST(Autocast, LinearOnTheNpuMatchesTheCpu) {
  manual_seed(12);
  auto lin = std::make_shared<nn::Linear>(64, 48);
  auto lin_npu = std::make_shared<nn::Linear>(64, 48);
  lin_npu->weight.detach().copy_(lin->weight.detach());
  lin_npu->bias.detach().copy_(lin->bias.detach());
  lin_npu->to(Device("npu:0"));
  Tensor x = randn({32, 64});
  Tensor y_cpu, y_npu;
  const bool rounded = cpu::gemm_rounded_available() && !cpu::gemm_native_bf16();
  {
    amp::AutocastGuard g(DeviceType::CPU);
    y_cpu = (*lin)(x);
  }
  {
    amp::AutocastGuard g(DeviceType::NPU);
    y_npu = (*lin_npu)(x.to(Device("npu:0")));
    // the bias's cast, and the weight's cast or rounded copy (none where the GEMM rounds while packing)
    EXPECT_EQ(amp::autocast_cache_size(), rounded && !cpu::gemm_rounded_stages() ? 1u : 2u);
  }
  EXPECT_EQ(y_npu.dtype(), kBFloat16);
  EXPECT_TRUE(allclose(y_cpu.to(kFloat64), y_npu.cpu().to(kFloat64), 1e-2, 1e-2));
  if (rounded) {
    EXPECT_TRUE(equal(y_cpu, y_npu.cpu()));
  }
  y_cpu.to(kFloat32).square().sum().backward();
  y_npu.to(kFloat32).square().sum().backward();
  EXPECT_EQ(lin_npu->weight.grad().dtype(), kFloat32);
  EXPECT_TRUE(allclose(lin->weight.grad(), lin_npu->weight.grad().cpu(), 2e-2, 1e-2));
}

// The bits of a float tensor (NaN compared as NaN: conversions may give another quiet NaN).
void expect_same_floats(const Tensor& got, const Tensor& want) {
  std::vector<float> g = got.cpu().to_vector<float>(), w = want.cpu().to_vector<float>();
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << "element " << i;
    } else {
      EXPECT_EQ(std::memcmp(&g[i], &w[i], sizeof(float)), 0) << "element " << i << ": " << g[i] << " vs " << w[i];
    }
  }
}

// _round_to is the two casts in one pass, bit for bit: ties, subnormals, values that round to
// infinity, infinities and NaN, contiguous or not, on both devices. Its result is marked rounded;
// an in-place op drops the mark.
TEST(Autocast, RoundToIsTwoCastsInOnePassAndMarksItsResult) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v = {
      0.f, -0.f,   1.f,     1.00390625f, 1.01171875f, -1.00390625f, 3.4028235e38f, -3.3961776e38f, inf,    -inf,
      nan, 1e-40f, -1e-45f, 65504.f,     65520.f,     -65519.f,     5.96e-8f,      2.98e-8f,       1.f / 3};
  manual_seed(14);
  std::vector<float> r = (randn({4000}) * 100).to_vector<float>();
  v.insert(v.end(), r.begin(), r.end());
  for (Device dev : {Device("cpu"), Device("npu:0")}) {
    for (DType to : {kBFloat16, kFloat16}) {
      SCOPED_TRACE(dev.str() + " " + dtype_name(to));
      Tensor x = tensor(v).to(dev);
      Tensor y = _round_to(x, to);
      expect_same_floats(y, x.to(to).to(kFloat32));
      EXPECT_TRUE(is_rounded_to(y, to));
      EXPECT_FALSE(is_rounded_to(y, to == kBFloat16 ? kFloat16 : kBFloat16));
      EXPECT_FALSE(is_rounded_to(x, to));
      Tensor strided = x.narrow(0, 1, 4002).reshape({1334, 3}).t();  // not contiguous
      expect_same_floats(_round_to(strided, to), strided.to(to).to(kFloat32));
      Tensor x64 = x.to(kFloat64);
      Tensor y64 = _round_to(x64, to);
      ASSERT_EQ(y64.dtype(), kFloat64);
      expect_same_floats(y64.to(kFloat32), x64.to(to).to(kFloat32));
      y.add_(0.f);
      EXPECT_FALSE(is_rounded_to(y, to));
    }
  }
  ember_test::expect_error<DTypeError>([] { _round_to(ones({2}, kInt64), kBFloat16); }, {"_round_to", "int64"});
}

// Its gradient is the incoming one rounded the same way, which passes as it is (the same memory)
// when it is rounded already.
TEST(Autocast, RoundToGradientIsRoundedUnlessItAlreadyIs) {
  manual_seed(15);
  for (Device dev : {Device("cpu"), Device("npu:0")}) {
    SCOPED_TRACE(dev.str());
    Tensor x = randn({6, 7}).to(dev).requires_grad_();
    Tensor g = randn({6, 7}).to(dev);
    _round_to(x, kBFloat16).backward(g);
    expect_same_floats(x.grad(), g.to(kBFloat16).to(kFloat32));
    Tensor x2 = randn({6, 7}).to(dev).requires_grad_();
    Tensor g2 = _round_to(randn({6, 7}).to(dev), kBFloat16);
    const void* arrived = nullptr;
    x2.register_hook([&](const Tensor& t) {
      arrived = t.impl()->data();
      return Tensor();
    });
    _round_to(x2, kBFloat16).backward(g2);
    EXPECT_EQ(arrived, g2.impl()->data());
  }
}

// Where the rounded GEMM stages its operands (AVX-512), it reads an f32 operand marked rounded as
// it is: _round_to's weight gives the product of the unmarked weight bit for bit, and a mark that
// lies (an unrounded weight marked by hand) shows the GEMM took it as it was, on both devices,
// until an in-place op drops the mark. Autocast's linear rounds its weight so, once per guard.
TEST(Autocast, RoundedProductsReadOperandsMarkedRoundedInPlace) {
  if (!cpu::gemm_rounded_stages()) GTEST_SKIP() << "the rounded GEMM rounds while packing here";
  manual_seed(16);
  for (Device dev : {Device("cpu"), Device("npu:0")}) {
    SCOPED_TRACE(dev.str());
    Tensor x = randn({64, 96}).to(dev), w = randn({80, 96}).to(dev);
    Tensor want = _mm_rounded(x, w.t(), kBFloat16, kFloat32);
    EXPECT_TRUE(is_rounded_to(want, kBFloat16));  // the f32 result is rounded too
    expect_same_floats(_mm_rounded(x, _round_to(w, kBFloat16).t(), kBFloat16, kFloat32), want);
    Tensor liar = w.clone();
    liar.impl()->storage()->mark_rounded(kBFloat16);
    Tensor took = _mm_rounded(x, liar.t(), kBFloat16, kFloat32);
    Tensor unrounded_w = _mm_rounded(_round_to(x, kBFloat16), w.t(), kFloat32, kFloat32);
    EXPECT_FALSE(equal(took.cpu(), want.cpu()));
    EXPECT_TRUE(allclose(took.cpu(), unrounded_w.to(kBFloat16).to(kFloat32).cpu(), 1e-2, 1e-3));
    liar.mul_(1.f);
    expect_same_floats(_mm_rounded(x, liar.t(), kBFloat16, kFloat32), want);
  }
  auto lin = std::make_shared<nn::Linear>(96, 80, false);
  Tensor x = randn({64, 96});
  amp::AutocastGuard g(DeviceType::CPU);
  Tensor y = (*lin)(x) + (*lin)(x);
  EXPECT_EQ(amp::autocast_cache_size(), 1u);  // one rounded copy for both calls
  expect_same_floats(y.to(kFloat32), (_mm_rounded(x, lin->weight.t(), kBFloat16, kBFloat16) * 2).to(kFloat32));
}
}  // namespace
