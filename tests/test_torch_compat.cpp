// <ember/torch.h>: libtorch's names resolve to ember's objects, the holders and option builders
// behave as libtorch's, and what ember lacks is an error rather than a different result.
#include <cstdio>
#include <string>

#include <ember/torch.h>

#include "test_util.h"

namespace {

// A module written the libtorch way: by-value forward, holder members, TORCH_MODULE.
struct TwoLayerImpl : torch::nn::Module {
  TwoLayerImpl(int64_t in, int64_t hidden) : fc1(in, hidden), fc2(torch::nn::LinearOptions(hidden, 1).bias(false)) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  torch::Tensor forward(torch::Tensor x) { return fc2(torch::leaky_relu(fc1(x), 0.2)); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(TwoLayer);

TEST(TorchCompat, NamesAreEmbersOwn) {
  static_assert(std::is_same<torch::Tensor, ember::Tensor>::value, "torch::Tensor is ember::Tensor");
  static_assert(std::is_same<torch::nn::LinearImpl, ember::nn::Linear>::value, "LinearImpl is ember's Linear");
  static_assert(std::is_base_of<ember::nn::ModuleHolder<ember::nn::Linear>, torch::nn::Linear>::value,
                "torch::nn::Linear is a holder");
  static_assert(std::is_base_of<ember::optim::SGD, torch::optim::SGD>::value, "torch's SGD is ember's");
  EXPECT_EQ(torch::kFloat, ember::kFloat32);
  EXPECT_EQ(torch::str("step ", 3, ": ", 0.5), "step 3: 0.5");
  EXPECT_EQ(torch::npu::is_available(), ember::npu::is_available());
  torch::Tensor t = torch::tensor({1, 2, 3}, torch::kInt32);
  EXPECT_EQ(t.dtype(), ember::kInt32);
  EXPECT_EQ(torch::tensor({0.5, 1.0}, torch::kDouble).dtype(), ember::kFloat64);
}

TEST(TorchCompat, OptionBuildersSetEmbersOptions) {
  TwoLayer net(3, 4);
  torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.5).nesterov(true));
  EXPECT_EQ(sgd.options().lr, 0.01);
  EXPECT_EQ(sgd.options().momentum, 0.5);
  EXPECT_TRUE(sgd.options().nesterov);
  torch::optim::SGD plain(net->parameters(), 0.1);  // an implicit SGDOptions(lr)
  EXPECT_EQ(plain.options().lr, 0.1);
  EXPECT_EQ(plain.options().momentum, 0.0);
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.5)));
  EXPECT_EQ(adam.options().lr, 2e-4);
  EXPECT_EQ(adam.options().betas, std::make_pair(0.5, 0.5));
  EXPECT_EQ(adam.options().weight_decay, 0.0);  // Adam's default, not AdamW's
  torch::optim::AdamW adamw(net->parameters());
  EXPECT_EQ(adamw.options().weight_decay, 1e-2);
  torch::optim::RMSprop rms(net->parameters(), torch::optim::RMSpropOptions(0.02).centered(true).alpha(0.9));
  EXPECT_TRUE(rms.options().centered);
  EXPECT_EQ(rms.options().alpha, 0.9);
  torch::optim::Adagrad ada(net->parameters(), torch::optim::AdagradOptions().lr_decay(0.1));
  EXPECT_EQ(ada.options().lr, 1e-2);
  EXPECT_EQ(ada.options().lr_decay, 0.1);
  torch::optim::StepLR sched(sgd, 2, 0.5);
  sched.step();
  sched.step();
  EXPECT_DOUBLE_EQ(sgd.lr(), 0.005);
}

TEST(TorchCompat, HoldersTrainSaveAndLoad) {
  torch::manual_seed(1);
  TwoLayer net(3, 8);
  EXPECT_EQ(net->named_parameters().size(), 3u);  // fc1.weight, fc1.bias, fc2.weight
  torch::Tensor x = torch::randn({16, 3}), y = x.sum({1}, true);
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-2));
  double first = 0, last = 0;
  for (int i = 0; i < 60; ++i) {
    opt.zero_grad();
    torch::Tensor loss = torch::nn::SmoothL1Loss()(net(x), y);
    if (i == 0) first = loss.item<double>();
    last = loss.item<double>();
    loss.backward();
    opt.step();
  }
  EXPECT_LT(last, first / 4);

  std::string path = ::testing::TempDir() + "ember_torch_compat_net.safetensors";
  torch::save(net, path);
  TwoLayer other(3, 8);
  torch::load(other, path);
  EXPECT_TRUE(torch::equal(other(x), net(x)));
  std::remove(path.c_str());

  torch::nn::Sequential seq(torch::nn::Linear(3, 4), torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
                            torch::nn::Linear(4, 1), torch::nn::Sigmoid());
  EXPECT_EQ(seq->size(), 4u);
  torch::Tensor p = seq->forward(x);
  EXPECT_EQ(p.sizes(), torch::IntArrayRef({16, 1}));
  EXPECT_TRUE(torch::logical_and(p.gt(0), p.lt(1)).all().item<bool>());
}

TEST(TorchCompat, DataUnderLibtorchsNames) {
  auto dataset = torch::data::datasets::TensorDataset(torch::arange(12, torch::kFloat).view({6, 2}),
                                                      torch::arange(6, torch::kLong))
                     .map(torch::data::transforms::Normalize<>(0.5, 2.0))
                     .map(torch::data::transforms::Stack<>());
  const size_t n = dataset.size().value();
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(dataset), torch::data::DataLoaderOptions().batch_size(4).workers(2));
  size_t seen = 0;
  for (const torch::data::Example<>& batch : *loader) {
    EXPECT_FLOAT_EQ(batch.data.to_vector<float>()[0], (static_cast<float>(2 * seen) - 0.5f) / 2.0f);
    seen += static_cast<size_t>(batch.data.size(0));
  }
  EXPECT_EQ(seen, n);
}

TEST(TorchCompat, FunctionalLayersScalarTensorsAndIndexSelect) {
  torch::nn::Sequential seq(torch::nn::Functional(torch::relu),
                            torch::nn::Functional(torch::max_pool2d, 2, torch::ExpandingArray<2>({2, 2}), 0, 1, false),
                            torch::nn::Functional(torch::reshape, torch::ExpandingArray<2>({-1, 4})));
  torch::Tensor x = torch::arange(32, torch::kFloat).view({2, 1, 4, 4}) - 8;
  torch::Tensor y = seq->forward(x);
  EXPECT_EQ(y.sizes(), torch::IntArrayRef({2, 4}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0, 0, 5, 7, 13, 15, 21, 23}));  // relu, then 2x2 max
  torch::Tensor label = torch::tensor(int64_t(7), torch::kLong);
  EXPECT_EQ(label.dim(), 0);
  EXPECT_EQ(label.item<int64_t>(), 7);
  EXPECT_EQ(torch::tensor(2.5).dtype(), torch::kFloat);
  torch::Tensor m = torch::arange(12, torch::kFloat).view({3, 4});
  EXPECT_EQ(m.index_select(1, torch::tensor({3, 0})).to_vector<float>(), (std::vector<float>{3, 0, 7, 4, 11, 8}));
  EXPECT_EQ(torch::index_select(m, 0, torch::tensor({2})).to_vector<float>(), (std::vector<float>{8, 9, 10, 11}));
  ember_test::expect_error<ember::IndexError>([&] { m.index_select(0, torch::tensor({3})); },
                                              {"index_select", "outside [0, 3)"});
  // its gradient adds the rows back where they came from
  torch::Tensor w = torch::ones({3, 2}, torch::requires_grad());
  w.index_select(0, torch::tensor({1, 1, 0})).sum().backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{1, 1, 2, 2, 0, 0}));
}

TEST(TorchCompat, EnumStyleReductionsAndUInt8Images) {
  torch::Tensor a = torch::tensor({1.0, 2.0, 4.0}), b = torch::zeros({3});
  torch::nn::MSELoss sum_loss{torch::nn::MSELossOptions(torch::kSum)};
  EXPECT_DOUBLE_EQ(sum_loss(a, b).item<double>(), 21.0);
  torch::nn::L1Loss none_loss(torch::nn::L1LossOptions().reduction(torch::kNone));
  EXPECT_EQ(none_loss(a, b).sizes(), torch::IntArrayRef({3}));
  EXPECT_DOUBLE_EQ(torch::mse_loss(a, b, torch::kMean).item<double>(), 7.0);
  // An 8-bit image as a decoder hands it over: from_blob, cat, view, to(kFloat), to(DeviceType).
  uint8_t r[4] = {0, 64, 128, 255}, g[4] = {1, 2, 3, 4};
  torch::Tensor img = torch::cat({torch::from_blob(r, {2, 2}, torch::kUInt8), torch::from_blob(g, {2, 2}, torch::kByte)})
                          .view({2, 2, 2})
                          .to(torch::kFloat)
                          .to(torch::kNPU);
  EXPECT_EQ(img.device().type(), torch::kNPU);
  EXPECT_EQ(img.cpu().to_vector<float>(), (std::vector<float>{0, 64, 128, 255, 1, 2, 3, 4}));
}

TEST(TorchCompat, ChecksThrowEmbersError) {
  EXPECT_NO_THROW(TORCH_CHECK(1 + 1 == 2, "arithmetic"));
  ember_test::expect_error<ember::Error>([] { TORCH_CHECK(1 > 2, "one is not above ", 2); },
                                         {"Expected 1 > 2 to be true", "one is not above 2"});
  ember_test::expect_error<ember::Error>([] { AT_ASSERT(false); }, {"assertion failed: false"});
}

TEST(TorchCompat, AutogradGradTakesLibtorchsArguments) {
  torch::Tensor x = torch::randn({4}, torch::requires_grad());
  torch::Tensor y = (x * x).sum();
  // (outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused)
  torch::Tensor g = torch::autograd::grad({y}, {x}, {}, /*retain_graph=*/true)[0];
  EXPECT_TRUE(torch::allclose(g, x.detach() * 2));
  torch::Tensor g2 = torch::autograd::grad({y}, {x}, {}, {}, /*create_graph=*/true)[0];  // the graph was retained
  EXPECT_TRUE(torch::allclose(g2, g));
  EXPECT_TRUE(g2.requires_grad());
  torch::Tensor h = torch::autograd::grad({g2.sum()}, {x})[0];  // d/dx sum(2x) = 2
  EXPECT_TRUE(torch::allclose(h, torch::full({4}, 2.0)));
}

// An op exported from its declaration (EMBER_EXPORT_OP) has libtorch's three spellings, with the
// schema's defaults: torch::cumsum, Tensor::cumsum and ember::cumsum.
TEST(TorchCompat, ExportedOpsHaveTheFunctionMethodAndTorchName) {
  torch::Tensor x = torch::tensor({1.0, 2.0, 3.0});
  EXPECT_EQ(torch::cumsum(x, 0).to_vector<float>(), (std::vector<float>{1, 3, 6}));
  EXPECT_EQ(x.cumsum(-1, torch::kFloat64).dtype(), torch::kFloat64);
  EXPECT_EQ(ember::cumsum(x.to(torch::kInt32), 0).dtype(), torch::kInt64);
}

}  // namespace
