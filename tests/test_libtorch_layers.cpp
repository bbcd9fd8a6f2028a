// libtorch's layers beyond ember's kernels (issue 34): 3-D and adaptive pooling, unpooling, padding
// modes, interpolation, 3-D convolutions, instance norm, embedding options and bags, the margin
// and CTC losses, attention and the Transformer, the keyed containers. Values against references
// worked out here (loops over the definitions), gradients by finite differences, the NPU against
// the CPU, and bad input refused by name. (tests/libtorch_diff/families.cpp compares the same
// families with libtorch itself where it is installed.)
#include <cmath>

#include <ember/torch.h>

#include "test_util.h"

namespace {
namespace F = torch::nn::functional;

torch::Tensor seq(std::vector<int64_t> shape, double scale = 1.0, double shift = 0.0) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (torch::arange(n).to(torch::kDouble) * 0.61 + shift).sin().mul(scale).reshape(shape);
}
double at(const torch::Tensor& t, std::vector<int64_t> idx) {
  torch::Tensor c = t.contiguous().cpu().to(torch::kDouble);
  int64_t flat = 0;
  for (size_t d = 0; d < idx.size(); ++d) flat = flat * t.size(static_cast<int64_t>(d)) + idx[d];
  return c.data_ptr<double>()[flat];
}
bool grad_ok(const std::function<torch::Tensor(const torch::Tensor&)>& f, const torch::Tensor& x) {
  return torch::autograd::gradcheck([&](const std::vector<torch::Tensor>& in) { return f(in[0]); },
                                    {x.detach().requires_grad_(true)});
}

TEST(LibtorchLayers, MaxPool3dMatchesTheLoopAndItsIndices) {
  torch::Tensor x = seq({1, 2, 4, 5, 3});
  auto [y, idx] =
      F::max_pool3d_with_indices(x, F::MaxPool3dFuncOptions({2, 3, 2}).stride({2, 1, 1}).padding({1, 1, 0}));
  ASSERT_EQ(y.sizes(), torch::IntArrayRef({1, 2, 3, 5, 2}));
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t od = 0; od < 3; ++od)
      for (int64_t oh = 0; oh < 5; ++oh)
        for (int64_t ow = 0; ow < 2; ++ow) {
          double best = -1e300;
          int64_t arg = -1;
          for (int64_t kd = 0; kd < 2; ++kd)
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 2; ++kw) {
                const int64_t d = od * 2 - 1 + kd, h = oh - 1 + kh, w = ow + kw;
                if (d < 0 || d >= 4 || h < 0 || h >= 5 || w >= 3) continue;
                const double v = at(x, {0, c, d, h, w});
                if (v > best) best = v, arg = (d * 5 + h) * 3 + w;
              }
          EXPECT_EQ(at(y, {0, c, od, oh, ow}), best);
          EXPECT_EQ(static_cast<int64_t>(at(idx.to(torch::kDouble), {0, c, od, oh, ow})), arg);
        }
  // Unpooling puts each maximum back at its index.
  torch::Tensor back =
      F::max_unpool3d(y, idx,
                      F::MaxUnpool3dFuncOptions({2, 3, 2}).stride({2, 1, 1}).padding({1, 1, 0}).output_size(
                          std::vector<int64_t>{4, 5, 3}));
  EXPECT_TRUE(torch::equal(back.flatten(2).gather(2, idx.flatten(2)), y.flatten(2)));
  EXPECT_LE(torch::count_nonzero(back).item<int64_t>(), y.numel());
  EXPECT_TRUE(grad_ok(
      [](const torch::Tensor& t) {
        return F::avg_pool3d(t, F::AvgPool3dFuncOptions(2).padding(1).count_include_pad(false).ceil_mode(true));
      },
      seq({1, 1, 3, 4, 3})));
}

TEST(LibtorchLayers, AdaptiveAndFractionalPoolingWindows) {
  torch::Tensor x = seq({2, 7});
  auto [v, i] = F::adaptive_max_pool1d_with_indices(x.unsqueeze(0), F::AdaptiveMaxPool1dFuncOptions(3));
  // PyTorch's windows for 7 -> 3: [0, 3), [2, 5), [4, 7).
  const int64_t lo[3] = {0, 2, 4}, hi[3] = {3, 5, 7};
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t o = 0; o < 3; ++o) {
      double best = -1e300;
      for (int64_t j = lo[o]; j < hi[o]; ++j) best = std::max(best, at(x, {c, j}));
      EXPECT_EQ(at(v, {0, c, o}), best);
    }
  torch::Tensor samples = torch::full({1, 1, 2}, 0.5, torch::kDouble);
  auto [fv, fi] = F::fractional_max_pool2d_with_indices(
      seq({1, 1, 9, 9}),
      F::FractionalMaxPool2dFuncOptions(2).output_size(torch::ExpandingArray<2>(4))._random_samples(samples));
  EXPECT_EQ(fv.sizes(), torch::IntArrayRef({1, 1, 4, 4}));
  ember_test::expect_error<torch::Error>(
      [&] {
        F::fractional_max_pool2d(seq({1, 1, 4, 4}),
                                 F::FractionalMaxPool2dFuncOptions(3).output_size(torch::ExpandingArray<2>(3)));
      },
      {"fractional_max_pool2d", "do not fit input size 4"});
  ember_test::expect_error<torch::Error>(
      [&] {
        F::max_unpool2d(seq({1, 1, 2, 2}), torch::full({1, 1, 2, 2}, 99, torch::kLong), F::MaxUnpool2dFuncOptions(2));
      },
      {"max_unpool2d", "indices must be in [0, 16)", "99"});
}

TEST(LibtorchLayers, PaddingModesAndInterpolationFollowTheirDefinitions) {
  torch::Tensor x = seq({1, 1, 4});
  torch::Tensor r = F::pad(x, F::PadFuncOptions({2, 1}).mode(torch::kReflect));
  torch::Tensor p = F::pad(x, F::PadFuncOptions({2, 1}).mode(torch::kReplicate));
  torch::Tensor c = F::pad(x, F::PadFuncOptions({2, 1}).mode(torch::kCircular));
  const int64_t refl[7] = {2, 1, 0, 1, 2, 3, 2}, repl[7] = {0, 0, 0, 1, 2, 3, 3}, circ[7] = {2, 3, 0, 1, 2, 3, 0};
  for (int64_t o = 0; o < 7; ++o) {
    EXPECT_EQ(at(r, {0, 0, o}), at(x, {0, 0, refl[o]}));
    EXPECT_EQ(at(p, {0, 0, o}), at(x, {0, 0, repl[o]}));
    EXPECT_EQ(at(c, {0, 0, o}), at(x, {0, 0, circ[o]}));
  }
  ember_test::expect_error<torch::Error>(
      [&] {
        F::pad(x, F::PadFuncOptions({4, 0}).mode(torch::kReflect));
      },
      {"pad", "reflect padding (4, 0)", "smaller than the dim", "size 4"});
  // Linear, align_corners false: src = (o + 0.5) * in / out - 0.5, clamped at 0.
  torch::Tensor up = F::interpolate(
      x, F::InterpolateFuncOptions().size(std::vector<int64_t>{7}).mode(torch::kLinear).align_corners(false));
  for (int64_t o = 0; o < 7; ++o) {
    const double src = std::max(0.0, (o + 0.5) * 4.0 / 7.0 - 0.5);
    const int64_t i0 = static_cast<int64_t>(src), i1 = std::min<int64_t>(i0 + 1, 3);
    const double l = src - static_cast<double>(i0);
    EXPECT_NEAR(at(up, {0, 0, o}), (1 - l) * at(x, {0, 0, i0}) + l * at(x, {0, 0, i1}), 1e-15);
  }
  EXPECT_TRUE(grad_ok(
      [](const torch::Tensor& t) {
        return F::interpolate(t, F::InterpolateFuncOptions()
                                     .scale_factor(std::vector<double>{1.5, 2.0})
                                     .mode(torch::kBicubic)
                                     .align_corners(true));
      },
      seq({1, 2, 3, 4})));
  ember_test::expect_error<torch::Error>(
      [&] { F::interpolate(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{5}).mode(torch::kBilinear)); },
      {"interpolate", "bilinear", "4-D input", "[1, 1, 4]"});
  ember_test::expect_error<torch::Error>(
      [&] { F::interpolate(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{5}).align_corners(true)); },
      {"interpolate", "align_corners", "nearest"});
}

TEST(LibtorchLayers, Conv3dIsTheSumOverItsTaps) {
  torch::Tensor x = seq({1, 2, 3, 4, 4}), w = seq({3, 2, 2, 2, 3}, 0.5, 1.0);
  torch::Tensor y = F::conv3d(x, w, F::Conv3dFuncOptions().padding({0, 1, 1}));
  ASSERT_EQ(y.sizes(), torch::IntArrayRef({1, 3, 2, 5, 4}));
  for (int64_t o = 0; o < 3; ++o) {
    double s = 0;  // output (o, 1, 2, 3)
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t kd = 0; kd < 2; ++kd)
        for (int64_t kh = 0; kh < 2; ++kh)
          for (int64_t kw = 0; kw < 3; ++kw) {
            const int64_t h = 2 - 1 + kh, ww = 3 - 1 + kw;
            if (ww >= 4) continue;
            s += at(x, {0, c, 1 + kd, h, ww}) * at(w, {o, c, kd, kh, kw});
          }
    EXPECT_NEAR(at(y, {0, o, 1, 2, 3}), s, 1e-12);
  }
  // conv_transpose3d is conv3d's adjoint: <conv3d(x), g> = <x, conv_transpose3d(g)>.
  torch::Tensor g = seq({1, 3, 2, 5, 4}, 1.0, 2.0);
  torch::Tensor xt = F::conv_transpose3d(g, w, F::ConvTranspose3dFuncOptions().padding({0, 1, 1}));
  EXPECT_NEAR((y * g).sum().item<double>(), (x * xt).sum().item<double>(), 1e-10);
  torch::nn::Conv3d conv(torch::nn::Conv3dOptions(2, 3, 2).padding(1).padding_mode(torch::kReplicate));
  EXPECT_EQ(conv(x.to(torch::kFloat)).sizes(), torch::IntArrayRef({1, 3, 4, 5, 5}));
  ember_test::expect_error<torch::Error>(
      [] { torch::nn::ConvTranspose2d(torch::nn::ConvTranspose2dOptions(2, 2, 3).padding_mode(torch::kReflect)); },
      {"ConvTranspose2d", "only the kZeros padding_mode"});
}

TEST(LibtorchLayers, NormsEmbeddingsAndLossesAgainstTheirDefinitions) {
  torch::Tensor x = seq({2, 3, 5});
  torch::Tensor y = F::instance_norm(x);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c) {
      double m = 0, v = 0;
      for (int64_t l = 0; l < 5; ++l) m += at(x, {n, c, l}) / 5;
      for (int64_t l = 0; l < 5; ++l) v += (at(x, {n, c, l}) - m) * (at(x, {n, c, l}) - m) / 5;
      EXPECT_NEAR(at(y, {n, c, 4}), (at(x, {n, c, 4}) - m) / std::sqrt(v + 1e-5), 1e-12);
    }
  torch::Tensor table = seq({6, 2});
  torch::Tensor bag =
      F::embedding_bag(torch::tensor({1, 5, 5, 0}), table,
                       F::EmbeddingBagFuncOptions().offsets(torch::tensor({0, 1, 1})).mode(torch::kMax));
  EXPECT_EQ(at(bag, {0, 1}), at(table, {1, 1}));
  EXPECT_EQ(at(bag, {1, 0}), 0.0);  // an empty bag
  EXPECT_EQ(at(bag, {2, 0}), std::max(at(table, {5, 0}), at(table, {0, 0})));
  ember_test::expect_error<torch::Error>([] { torch::nn::Embedding(torch::nn::EmbeddingOptions(4, 2).sparse(true)); },
                                         {"Embedding", "sparse"});
  // multi_margin_loss of one sample: sum over i != y of max(0, 1 - x[y] + x[i]) / C.
  torch::Tensor s = torch::tensor({0.2, 0.9, -0.4}, torch::kDouble);
  EXPECT_NEAR(F::multi_margin_loss(s.unsqueeze(0), torch::tensor({1})).item<double>(), (0.3 + 0.0) / 3, 1e-15);
  // CTC of one frame per label with certain emissions: -log of the one path.
  torch::Tensor lp = torch::log(torch::tensor({0.7, 0.2, 0.1, 0.1, 0.1, 0.8}, torch::kDouble).reshape({2, 1, 3}));
  torch::Tensor ctc = F::ctc_loss(lp, torch::tensor({1, 2}).reshape({1, 2}), torch::tensor({2}), torch::tensor({2}),
                                  F::CTCLossFuncOptions().reduction(torch::kSum));
  EXPECT_NEAR(ctc.item<double>(), -std::log(0.2 * 0.8), 1e-12);
  ember_test::expect_error<torch::Error>(
      [&] {
        F::ctc_loss(lp, torch::tensor({0, 2}).reshape({1, 2}), torch::tensor({2}), torch::tensor({2}));
      },
      {"ctc_loss", "target 0", "other than blank"});
}

TEST(LibtorchLayers, CompositesRunOnTheNpuAsOnTheCpu) {
  torch::Tensor x = seq({2, 2, 4, 6, 5}, 1.0, 0.4).to(torch::kFloat);
  auto run = [](const torch::Tensor& t) {
    return std::vector<torch::Tensor>{
        F::max_pool3d(t, F::MaxPool3dFuncOptions(2)),
        F::adaptive_avg_pool3d(t, F::AdaptiveAvgPool3dFuncOptions({3, 2, 4})),
        F::pad(t, F::PadFuncOptions({1, 1, 2, 0, 1, 1}).mode(torch::kReflect)),
        F::interpolate(t, F::InterpolateFuncOptions()
                              .scale_factor(std::vector<double>{1.5, 0.5, 2})
                              .mode(torch::kTrilinear)
                              .align_corners(false)),
        F::conv3d(t, torch::ones({3, 2, 2, 2, 2}, t.options()), F::Conv3dFuncOptions().stride(2))};
  };
  auto cpu = run(x);
  auto npu = run(x.to(torch::Device("npu:0")));
  for (size_t i = 0; i < cpu.size(); ++i) EXPECT_TRUE(torch::allclose(npu[i].cpu(), cpu[i], 1e-5, 1e-5)) << i;
}

TEST(LibtorchLayers, TransformerTrainsAndContainersRegister) {
  torch::manual_seed(0);
  torch::nn::Transformer tr(torch::nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16).dropout(0.0));
  EXPECT_TRUE(tr->named_parameters().contains("encoder.layers.0.self_attn.in_proj_weight"));
  EXPECT_TRUE(tr->named_parameters().contains("decoder.norm.weight"));
  torch::Tensor src = torch::randn({5, 2, 8}), tgt = torch::randn({4, 2, 8});
  torch::optim::Adam opt(tr->parameters(), torch::optim::AdamOptions(1e-2));
  torch::Tensor mask = torch::nn::TransformerImpl::generate_square_subsequent_mask(4);
  double first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    torch::Tensor loss = (tr(src, tgt, torch::Tensor(), mask) - tgt).pow(2).mean();
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, 0.5 * first);
  // The mask keeps the decoder causal: changing a later target leaves earlier outputs alone.
  torch::Tensor tgt2 = tgt.clone();
  tgt2.index_put_({3}, torch::randn({2, 8}));
  torch::Tensor a = tr(src, tgt, torch::Tensor(), mask), b = tr(src, tgt2, torch::Tensor(), mask);
  EXPECT_TRUE(torch::allclose(a.narrow(0, 0, 3), b.narrow(0, 0, 3), 1e-5, 1e-6));
  torch::nn::ParameterList plist(torch::ones({2}).requires_grad_(true));
  plist->append(torch::zeros({3}).requires_grad_(true));
  EXPECT_EQ(plist->named_parameters().keys(), (std::vector<std::string>{"0", "1"}));
  torch::nn::ModuleDict dict;
  dict->insert("fc", torch::nn::Linear(2, 3).ptr());
  EXPECT_EQ(dict->parameters().size(), 2u);
  EXPECT_EQ(dict->pop("fc")->parameters().size(), 2u);
  EXPECT_TRUE(dict->parameters().empty());
  ember_test::expect_error<torch::Error>([&] { (void)dict["missing"]; }, {"ModuleDict", "missing"});
}

TEST(LibtorchLayers, TensorOverloadsRunOnTheNpuAndRefuseByName) {
  torch::Tensor x = seq({3, 4}).to(torch::kFloat), idx = torch::tensor({2, 0, 1, 2, 0, 0, 1, 1}).reshape({2, 4});
  auto run = [&](const torch::Tensor& a, const torch::Tensor& i) {
    return std::vector<torch::Tensor>{torch::scatter_add(a, 0, i, a.narrow(0, 0, 2)),
                                      torch::einsum("ij,kj->ik", {a, a}),
                                      a.cumprod(1),
                                      torch::cdist(a, a),
                                      a.masked_scatter(a > 0.2f, a * 2),
                                      a.std({1}, true, false)};
  };
  auto cpu = run(x, idx);
  auto npu = run(x.to(torch::Device("npu:0")), idx.to(torch::Device("npu:0")));
  for (size_t k = 0; k < cpu.size(); ++k) EXPECT_TRUE(torch::allclose(npu[k].cpu(), cpu[k], 1e-5, 1e-5)) << k;
  // scatter_add: duplicates add up (index 0 twice in column 1).
  torch::Tensor sa =
      torch::scatter_add(torch::zeros({3, 2}), 0, torch::tensor({0, 0, 0, 1}).reshape({2, 2}), torch::ones({2, 2}));
  EXPECT_EQ(sa[0][0].item<float>(), 2.0f);
  EXPECT_EQ(sa[1][1].item<float>(), 1.0f);
  ember_test::expect_error<torch::Error>([&] { x.scatter(0, idx, x.narrow(0, 0, 2), "multiply"); },
                                         {"scatter", "multiply", "not"});
  ember_test::expect_error<torch::Error>(
      [] {
        torch::scatter_add(torch::zeros({2, 3}), 1, torch::tensor({0, 3}).reshape({1, 2}), torch::ones({1, 2}));
      },
      {"scatter_add", "index values must be in [0, 3)", "[0, 3]"});
  ember_test::expect_error<torch::Error>([&] { x.div(x, "ceil"); }, {"div (rounding_mode)", "ceil"});
  ember_test::expect_error<torch::Error>([&] { torch::einsum("...ij->ij", {x}); }, {"einsum", "ellipsis"});
  ember_test::expect_error<torch::Error>([&] { torch::einsum("ij,jk->ik", {x}); },
                                         {"einsum", "2 operands", "1 tensors"});
  ember_test::expect_error<torch::Error>([] { torch::bincount(torch::tensor({1, -2})); }, {"bincount", "non-negative"});
  EXPECT_EQ(torch::div(torch::tensor({-7}), 2, "trunc").item<int64_t>(), -3);
  EXPECT_EQ(torch::div(torch::tensor({-7}), 2, "floor").item<int64_t>(), -4);
}

TEST(LibtorchLayers, AdaptiveLogSoftmaxIsANormalizedDistribution) {
  torch::manual_seed(1);
  torch::nn::AdaptiveLogSoftmaxWithLoss m(torch::nn::AdaptiveLogSoftmaxWithLossOptions(16, 10, {3, 7}));
  torch::Tensor x = torch::randn({5, 16});
  torch::Tensor lp = m->log_prob(x);
  ASSERT_EQ(lp.sizes(), torch::IntArrayRef({5, 10}));
  EXPECT_TRUE(torch::allclose(lp.exp().sum(1), torch::ones({5}), 1e-5, 1e-5));
  torch::Tensor target = torch::tensor({0, 4, 9, 2, 7});
  auto r = m(x, target);
  EXPECT_TRUE(torch::allclose(r.output, lp.gather(1, target.unsqueeze(1)).squeeze(1), 1e-5, 1e-5));
  EXPECT_NEAR(r.loss, -r.output.mean().item<double>(), 1e-6);
  EXPECT_TRUE(torch::equal(m->predict(x), lp.argmax(1)));
  ember_test::expect_error<torch::Error>(
      [&] {
        m(x, torch::tensor({0, 1, 2, 3, 10}));
      },
      {"AdaptiveLogSoftmaxWithLoss", "target 10", "10 classes"});
  ember_test::expect_error<torch::Error>(
      [] {
        torch::nn::AdaptiveLogSoftmaxWithLoss(torch::nn::AdaptiveLogSoftmaxWithLossOptions(16, 10, {5, 3}));
      },
      {"AdaptiveLogSoftmaxWithLoss", "cutoffs must be increasing"});
}

}  // namespace
