// nn: Module bookkeeping (names, state_dict, to(), hooks, printing) and every module's values
// against independent float64 computations, on cpu and npu.
#include <cmath>
#include <functional>
#include <sstream>

#include "ember/device/cpu/isa.h"
#include "ember/device/cpu/nn.h"
#include "ember/device/cpu/pool.h"
#include "test_util.h"

using namespace ember;
namespace F = ember::nn::functional;

namespace {

struct Net : nn::Module {
  std::shared_ptr<nn::Linear> fc1, fc2;
  Tensor scale;
  Net() {
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(4, 8));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(8, 2, false));
    scale = register_buffer("scale", ones({2}));
  }
  Tensor forward(const Tensor& x) override { return (*fc2)((*fc1)(x).relu()) * scale; }
};

TEST(Module, NamesParametersBuffersAndChildrenInRegistrationOrder) {
  auto net = std::make_shared<Net>();
  std::vector<std::string> names;
  for (auto& [n, p] : net->named_parameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight"}));
  EXPECT_EQ(net->parameters().size(), 3u);
  EXPECT_EQ(net->named_parameters(false).size(), 0u);
  EXPECT_EQ(net->named_buffers().at(0).first, "scale");
  EXPECT_EQ(net->children().size(), 2u);
  std::vector<std::string> mods;
  for (auto& [n, m] : net->named_modules()) mods.push_back(n);
  EXPECT_EQ(mods, (std::vector<std::string>{"", "fc1", "fc2"}));
  EXPECT_EQ(net->num_parameters(), 4 * 8 + 8 + 8 * 2);
  for (const Tensor& p : net->parameters()) EXPECT_TRUE(p.requires_grad() && p.is_leaf());
  ember_test::expect_error<ValueError>([&] { net->register_parameter("scale", ones({1})); }, {"already registered"});
  ember_test::expect_error<ValueError>([&] { net->register_buffer("a.b", ones({1})); }, {"no dots"});
  EXPECT_EQ(net->child("fc1").get(), net->fc1.get());
}

TEST(Module, TrainEvalZeroGradAndPrinting) {
  auto net = std::make_shared<Net>();
  net->eval();
  EXPECT_FALSE(net->is_training());
  EXPECT_FALSE(net->fc1->is_training());
  net->train();
  EXPECT_TRUE(net->fc2->is_training());
  (*net)(randn({3, 4})).sum().backward();
  EXPECT_TRUE(net->fc1->weight.grad().defined());
  net->zero_grad(false);
  EXPECT_EQ(net->fc1->weight.grad().abs().sum().item<double>(), 0.0);
  net->zero_grad();
  EXPECT_FALSE(net->fc1->weight.grad().defined());
  std::ostringstream os;
  os << *net;
  std::string s = os.str();
  for (const char* part : {"Net(", "(fc1): Linear(in_features=4, out_features=8, bias=true)", "weight: [8, 4] float32",
                           "(fc2): Linear(in_features=8, out_features=2, bias=false)", "scale: [2] float32 (buffer)",
                           "56 parameters"})
    EXPECT_NE(s.find(part), std::string::npos) << part << " in\n" << s;
}

TEST(Module, ToMovesInPlaceSoHoldersKeepValidReferences) {
  auto net = std::make_shared<Net>();
  std::vector<Tensor> held = net->parameters();  // what an optimizer keeps
  (*net)(randn({2, 4})).sum().backward();
  std::vector<double> before = held[0].to_vector<double>();
  net->to(Device("npu:0"));
  for (const Tensor& p : held) {
    EXPECT_TRUE(p.is_npu());
    EXPECT_TRUE(p.requires_grad());
    EXPECT_TRUE(p.grad().is_npu());  // grads move along
  }
  EXPECT_TRUE(net->scale.is_npu());
  EXPECT_EQ(held[0].to_vector<double>(), before);
  Tensor y = (*net)(randn({2, 4}).npu());
  EXPECT_TRUE(y.is_npu());
  net->to(kBFloat16);
  EXPECT_EQ(held[1].dtype(), kBFloat16);
  net->to(Device("cpu"), kFloat32);
  EXPECT_TRUE(held[0].is_cpu());
  EXPECT_EQ(held[0].dtype(), kFloat32);
}

TEST(Module, StateDictRoundTripAndStrictLoadReportsEveryProblem) {
  manual_seed(1);
  auto a = std::make_shared<Net>();
  manual_seed(2);
  auto b = std::make_shared<Net>();
  auto sd = a->state_dict();
  EXPECT_EQ(sd.size(), 4u);
  EXPECT_FALSE(sd.at("fc1.weight").requires_grad());
  nn::LoadReport r = b->load_state_dict(sd);
  EXPECT_TRUE(r.missing_keys.empty() && r.unexpected_keys.empty());
  EXPECT_TRUE(equal(b->fc1->weight, a->fc1->weight));

  auto bad = sd;
  bad.erase("fc2.weight");
  bad["extra.bias"] = zeros({3});
  bad["fc1.bias"] = zeros({7});
  bad["scale"] = ones({2}, kFloat64);
  Tensor keep = b->fc1->weight.clone();
  try {
    b->load_state_dict(bad);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    for (const char* part : {"4 problem(s), nothing was loaded", "missing key 'fc2.weight'", "unexpected key 'extra.bias'",
                             "'fc1.bias': shape [7] in the state dict, [8] in the module",
                             "'scale': dtype float64 in the state dict, float32 in the module"})
      EXPECT_NE(m.find(part), std::string::npos) << part << " in\n" << m;
  }
  EXPECT_TRUE(equal(b->fc1->weight, keep));  // nothing copied
  // Not strict: keys reported, dtype converted; a shape mismatch still throws.
  bad.erase("fc1.bias");
  r = b->load_state_dict(bad, false);
  EXPECT_EQ(r.missing_keys, (std::vector<std::string>{"fc1.bias", "fc2.weight"}));
  EXPECT_EQ(r.unexpected_keys, (std::vector<std::string>{"extra.bias"}));
  bad["fc1.weight"] = zeros({1});
  EXPECT_THROW(b->load_state_dict(bad, false), Error);
  // From npu tensors into a cpu module.
  auto c = std::make_shared<Net>();
  std::map<std::string, Tensor> on_npu;
  for (auto& [k, t] : sd) on_npu[k] = t.npu();
  c->load_state_dict(on_npu);
  EXPECT_TRUE(equal(c->fc2->weight, a->fc2->weight));
}

TEST(Module, ForwardHooksSeeAndReplaceValues) {
  auto lin = std::make_shared<nn::Linear>(3, 2);
  int calls = 0;
  size_t h = lin->register_forward_hook([&](nn::Module& m, const Tensor& in, const Tensor& out) -> std::optional<Tensor> {
    ++calls;
    EXPECT_EQ(m.name(), "Linear");
    EXPECT_EQ(in.size(-1), 3);
    return out * 0;
  });
  size_t pre = lin->register_forward_pre_hook([](nn::Module&, const Tensor& in) -> std::optional<Tensor> { return in * 2; });
  Tensor x = randn({4, 3});
  EXPECT_EQ((*lin)(x).abs().sum().item<double>(), 0.0);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(lin->remove_hook(h));
  EXPECT_TRUE(allclose((*lin)(x), lin->forward(x * 2)));
  EXPECT_TRUE(lin->remove_hook(pre));
  EXPECT_FALSE(lin->remove_hook(pre));
  EXPECT_TRUE(allclose((*lin)(x), lin->forward(x)));
}

// ---------------------------------------------------------------- modules vs float64
double at2(const Tensor& t, int64_t i, int64_t j) { return t.to(kFloat64).contiguous().data_ptr<double>()[i * t.size(1) + j]; }

TEST(Modules, LinearMatchesItsDefinitionAndPyTorchInitBounds) {
  manual_seed(3);
  nn::Linear lin(64, 5);
  double bound = 1.0 / std::sqrt(64.0);
  EXPECT_LE(lin.weight.abs().max().item<double>(), bound);
  EXPECT_GT(lin.weight.abs().max().item<double>(), 0.8 * bound);
  EXPECT_LE(lin.bias.abs().max().item<double>(), bound);
  Tensor x = randn({3, 64}, kFloat64);
  Tensor y = F::linear(x, lin.weight.to(kFloat64), lin.bias.to(kFloat64));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t o = 0; o < 5; ++o) {
      double s = at2(lin.bias.reshape({1, 5}), 0, o);
      for (int64_t k = 0; k < 64; ++k) s += at2(x, i, k) * at2(lin.weight, o, k);
      EXPECT_NEAR(at2(y, i, o), s, 1e-12);
    }
  EXPECT_EQ(lin(randn({2, 7, 64})).sizes(), (Shape{2, 7, 5}));
  ember_test::expect_error<ShapeError>([&] { lin(randn({2, 63})); }, {"linear", "in_features = 64"});
}

TEST(Modules, EmbeddingRmsNormAndErrors) {
  manual_seed(4);
  nn::Embedding emb(10, 3);
  Tensor idx = tensor({int64_t(2), int64_t(9), int64_t(2)});
  Tensor e = emb(idx);
  EXPECT_EQ(e.sizes(), (Shape{3, 3}));
  EXPECT_TRUE(equal(e[0], emb.weight[2]));
  EXPECT_TRUE(equal(e[1], emb.weight[9]));
  e.sum().backward();
  EXPECT_EQ(emb.weight.grad()[2].sum().item<double>(), 6.0);  // used twice, 3 columns
  EXPECT_EQ(emb.weight.grad()[0].sum().item<double>(), 0.0);
  ember_test::expect_error<IndexError>([&] { emb(tensor({int64_t(10)})); }, {"embedding", "index 10", "[0, 10)"});
  // On the NPU an out-of-range index is a kernel fault reported at the next synchronize.
  nn::Embedding en(4, 2);
  en.to(Device("npu:0"));
  en(tensor({int64_t(7)}).npu());
  ember_test::expect_error<Error>([] { npu::synchronize(0); }, {"aclnnEmbedding", "index 7", "[0, 4)"});

  nn::RMSNorm norm(4, 1e-5);
  Tensor x = tensor({1.0, -2.0, 3.0, 0.5}, {1, 4}, kFloat64);
  double ms = (1 + 4 + 9 + 0.25) / 4;
  Tensor y = F::rms_norm(x, norm.weight.to(kFloat64) * 2, 1e-5);
  EXPECT_NEAR(at2(y, 0, 2), 3.0 / std::sqrt(ms + 1e-5) * 2, 1e-12);
}

TEST(Modules, DispersionCorrectionModesAndArgumentChecks) {
  for (double alpha : {0.0, 0.35, 0.8, 1.0}) {
    for (int64_t mode : {0, 1}) {
      nn::DispersionCorrection dc(5, alpha, mode);
      Tensor x = tensor({1.0, 2.0, 4.0, -1.0, 0.5}, {1, 5}, kFloat64);
      Tensor y = F::dispersion_correction(x, dc.weight.to(kFloat64) * 3, alpha, mode, 1e-6);
      double mu = 6.5 / 5, ss = 0;
      std::vector<double> xs{1, 2, 4, -1, 0.5};
      for (double v : xs) ss += (v - alpha * mu) * (v - alpha * mu) / 5;
      double r = mode == 1 ? 1 / std::sqrt(ss + 1e-6) : 1.0;
      for (int j = 0; j < 5; ++j) EXPECT_NEAR(at2(y, 0, j), 3 * (xs[j] - alpha * mu) * r, 1e-12) << alpha << " " << mode;
      // gradcheck of x and weight, cpu (float64)
      Tensor xg = randn({3, 5}, kFloat64).requires_grad_(), wg = (rand({5}, kFloat64) + 0.5).requires_grad_();
      auto fn = [&](const std::vector<Tensor>& in) { return F::dispersion_correction(in[0], in[1], alpha, mode); };
      EXPECT_TRUE(autograd::gradcheck(fn, {xg, wg})) << alpha << " " << mode;
      // and through the NPU kernels (float64 is supported there too): inputs moved inside fn
      auto fn_npu = [&](const std::vector<Tensor>& in) {
        Tensor y = F::dispersion_correction(in[0].npu(), in[1].npu(), alpha, mode);
        EXPECT_TRUE(y.is_npu());
        return y.cpu();
      };
      EXPECT_TRUE(autograd::gradcheck(fn_npu, {xg, wg})) << "npu " << alpha << " " << mode;
    }
  }
  ember_test::expect_error<ValueError>([] { nn::DispersionCorrection(4, 1.5); }, {"alpha must be in [0, 1]", "1.5"});
  ember_test::expect_error<ValueError>([] { nn::DispersionCorrection(4, 0.5, 2); }, {"mode must be 0", "got 2"});
  ember_test::expect_error<ValueError>([] { F::dispersion_correction(ones({2, 4}), ones({4}), -0.1); },
                                       {"dispersion_correction", "alpha"});
  ember_test::expect_error<ValueError>([] { F::dispersion_correction(ones({2, 4}).npu(), ones({4}).npu(), 0.5, 3); },
                                       {"dispersion_correction", "mode"});
  // alpha = 0, mode 1 is RMSNorm
  Tensor x = randn({6, 16});
  EXPECT_TRUE(allclose(F::dispersion_correction(x, ones({16}), 0.0, 1, 1e-6), F::rms_norm(x, ones({16}), 1e-6), 1e-5, 1e-6));
}

TEST(Modules, SwiGluLlamaBlockSequentialAndModuleList) {
  manual_seed(5);
  auto block = std::make_shared<nn::LlamaMLPBlock>(8, 16);
  std::vector<std::string> names;
  for (auto& [n, p] : block->named_parameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"norm.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
                                             "mlp.down_proj.weight"}));
  EXPECT_EQ(block->mlp->gate_proj->weight.sizes(), (Shape{16, 8}));
  EXPECT_EQ(block->mlp->down_proj->weight.sizes(), (Shape{8, 16}));
  // x + down(silu(gate(n)) * up(n)), n = rmsnorm(x), in float64 by hand
  block->to(kFloat64);
  Tensor x = randn({3, 8}, kFloat64);
  Tensor y = (*block)(x);
  auto& mlp = *block->mlp;
  Tensor n = F::rms_norm(x, block->norm->named_parameters()[0].second, 1e-6);
  for (int64_t i = 0; i < 3; ++i) {
    std::vector<double> h(16);
    for (int64_t f = 0; f < 16; ++f) {
      double g = 0, u = 0;
      for (int64_t k = 0; k < 8; ++k) {
        g += at2(n, i, k) * at2(mlp.gate_proj->weight, f, k);
        u += at2(n, i, k) * at2(mlp.up_proj->weight, f, k);
      }
      h[static_cast<size_t>(f)] = g / (1 + std::exp(-g)) * u;
    }
    for (int64_t o = 0; o < 8; ++o) {
      double s = at2(x, i, o);
      for (int64_t f = 0; f < 16; ++f) s += h[static_cast<size_t>(f)] * at2(mlp.down_proj->weight, o, f);
      EXPECT_NEAR(at2(y, i, o), s, 1e-10);
    }
  }
  // with a DispersionCorrection norm
  auto dcb = std::make_shared<nn::LlamaMLPBlock>(8, 16, std::make_shared<nn::DispersionCorrection>(8, 0.5));
  EXPECT_EQ(dcb->named_parameters()[0].first, "norm.weight");
  EXPECT_EQ((*dcb)(randn({2, 8})).sizes(), (Shape{2, 8}));

  auto seq = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Linear>(4, 6), std::make_shared<nn::RMSNorm>(6), std::make_shared<nn::Linear>(6, 2)});
  EXPECT_EQ((*seq)(randn({5, 4})).sizes(), (Shape{5, 2}));
  EXPECT_EQ(seq->named_parameters()[2].first, "1.weight");
  nn::ModuleList list{std::make_shared<nn::Linear>(2, 2), std::make_shared<nn::Linear>(2, 2)};
  EXPECT_EQ(list.size(), 2u);
  EXPECT_EQ(list.named_parameters().size(), 4u);
  ember_test::expect_error<IndexError>([&] { list[2]; }, {"ModuleList", "index 2"});
}

TEST(Modules, LossesMatchTheirDefinitions) {
  Tensor logits = tensor({1.0, 2.0, 0.5, -1.0, 0.0, 3.0}, {2, 3}, kFloat64);
  Tensor target = tensor({int64_t(1), int64_t(2)});
  double l0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(0.5)) - 2.0;
  double l1 = std::log(std::exp(-1.0) + std::exp(0.0) + std::exp(3.0)) - 3.0;
  EXPECT_NEAR(F::cross_entropy(logits, target).item<double>(), (l0 + l1) / 2, 1e-12);
  EXPECT_NEAR(F::cross_entropy(logits, tensor({int64_t(-100), int64_t(2)})).item<double>(), l1, 1e-12);
  EXPECT_NEAR(F::cross_entropy(logits.npu(), target.npu()).item<double>(), (l0 + l1) / 2, 1e-12);
  ember_test::expect_error<IndexError>([&] { F::cross_entropy(logits, tensor({int64_t(3), int64_t(0)})); },
                                       {"cross_entropy", "target 3"});
  ember_test::expect_error<DTypeError>([&] { F::cross_entropy(logits, tensor({1.0, 2.0})); }, {"int64"});
  EXPECT_NEAR(F::mse_loss(tensor({1.0, 2.0}), tensor({0.0, 4.0})).item<double>(), 2.5, 1e-12);
}

// The loss modules compute their functional forms with their options; values are worked by hand.
TEST(Modules, LossModulesAndActivationModules) {
  for (const char* dev : {"cpu", "npu:0"}) {
    Device d(dev);
    Tensor x = tensor({0.5, -2.0, 3.0}, {}, kFloat64).to(d), y = tensor({0.0, 0.0, 1.0}, {}, kFloat64).to(d);
    // d = 0.5, -2, 2
    EXPECT_NEAR(nn::MSELoss()(x, y).item<double>(), (0.25 + 4 + 4) / 3, 1e-12) << dev;
    EXPECT_NEAR(nn::MSELoss(Reduction::Sum)(x, y).item<double>(), 8.25, 1e-12) << dev;
    EXPECT_NEAR(nn::L1Loss()(x, y).item<double>(), 4.5 / 3, 1e-12) << dev;
    // smooth l1, beta 1: 0.125, 1.5, 1.5
    EXPECT_NEAR(nn::SmoothL1Loss()(x, y).item<double>(), 3.125 / 3, 1e-12) << dev;
    // beta 4: 0.5 d^2 / 4 = 0.03125, 0.5, 0.5
    EXPECT_NEAR(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(4))(x, y).item<double>(), 1.03125 / 3, 1e-12) << dev;
    Tensor per = nn::SmoothL1Loss(Reduction::None)(x, y);
    EXPECT_EQ(per.sizes(), IntArrayRef({3})) << dev;

    // nll: rows of log-probabilities, class weights, an ignored row
    Tensor lp = tensor({-0.1, -2.0, -3.0, -1.5, -0.4, -2.5, -0.7, -0.9, -1.9}, {3, 3}, kFloat64).to(d);
    Tensor t = tensor({int64_t(0), int64_t(1), int64_t(-100)}).to(d);
    EXPECT_NEAR(nn::NLLLoss()(lp, t).item<double>(), (0.1 + 0.4) / 2, 1e-12) << dev;
    Tensor w = tensor({2.0, 0.5, 1.0}, {}, kFloat64).to(d);
    EXPECT_NEAR(nn::NLLLoss(nn::NLLLossOptions().weight(w))(lp, t).item<double>(), (2 * 0.1 + 0.5 * 0.4) / 2.5, 1e-12)
        << dev;
    EXPECT_NEAR(F::nll_loss(lp, t, {}, Reduction::Sum).item<double>(), 0.5, 1e-12) << dev;
    ember_test::expect_error<IndexError>([&] { F::nll_loss(lp, tensor({int64_t(0), int64_t(3), int64_t(1)}).to(d)); },
                                         {"nll_loss", "outside [0, 3)"});
    // CrossEntropyLoss with weights = log_softmax + weighted nll
    Tensor logits = tensor({1.0, 2.0, 0.5, -1.0, 0.0, 3.0}, {2, 3}, kFloat64).to(d);
    Tensor t2 = tensor({int64_t(1), int64_t(2)}).to(d);
    double l0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(0.5)) - 2.0;
    double l1 = std::log(std::exp(-1.0) + std::exp(0.0) + std::exp(3.0)) - 3.0;
    EXPECT_NEAR(nn::CrossEntropyLoss()(logits, t2).item<double>(), (l0 + l1) / 2, 1e-12) << dev;
    EXPECT_NEAR(nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().weight(w))(logits, t2).item<double>(),
                (0.5 * l0 + 1.0 * l1) / 1.5, 1e-12)
        << dev;
    EXPECT_NEAR(nn::CrossEntropyLoss(Reduction::Sum)(logits, t2).item<double>(), l0 + l1, 1e-12) << dev;

    // BCE on probabilities, and with logits (= BCE of the sigmoid), pos_weight scaling y log p
    Tensor p = tensor({0.9, 0.2, 0.5}, {}, kFloat64).to(d), yb = tensor({1.0, 0.0, 1.0}, {}, kFloat64).to(d);
    double bce = -(std::log(0.9) + std::log(0.8) + std::log(0.5)) / 3;
    EXPECT_NEAR(nn::BCELoss()(p, yb).item<double>(), bce, 1e-12) << dev;
    Tensor z = tensor({2.0, -1.0, 0.0}, {}, kFloat64).to(d);
    auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
    double bcel = -(std::log(sig(2)) + std::log(1 - sig(-1)) + std::log(sig(0))) / 3;
    EXPECT_NEAR(nn::BCEWithLogitsLoss()(z, yb).item<double>(), bcel, 1e-12) << dev;
    Tensor pw = full({3}, 3.0, kFloat64).to(d);
    double bcepw = -(3 * std::log(sig(2)) + std::log(1 - sig(-1)) + 3 * std::log(sig(0))) / 3;
    EXPECT_NEAR(nn::BCEWithLogitsLoss(nn::BCEWithLogitsLossOptions().pos_weight(pw))(z, yb).item<double>(), bcepw,
                1e-12)
        << dev;
    // log is clamped at -100: probabilities 0 and 1 give finite losses
    EXPECT_NEAR(F::binary_cross_entropy(tensor({0.0, 1.0}, {}, kFloat64).to(d), tensor({1.0, 0.0}, {}, kFloat64).to(d))
                    .item<double>(),
                100.0, 1e-12)
        << dev;
    ember_test::expect_error<ValueError>(
        [&] { F::binary_cross_entropy(tensor({1.5}, {}, kFloat64).to(d), tensor({1.0}, {}, kFloat64).to(d)); },
        {"binary_cross_entropy", "between 0 and 1"});

    Tensor a = tensor({-2.0, 0.0, 3.0}, {}, kFloat64).to(d);
    EXPECT_EQ(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2))(a).to_vector<double>(),
              (std::vector<double>{-0.4, 0.0, 3.0}))
        << dev;
    EXPECT_NEAR(nn::Sigmoid()(a).to_vector<double>()[2], sig(3), 1e-15) << dev;
    EXPECT_NEAR(nn::Tanh()(a).to_vector<double>()[0], std::tanh(-2.0), 1e-15) << dev;
  }
  ember_test::expect_error<ValueError>([&] { F::mse_loss(ones({2}), ones({2}), 7); }, {"mse_loss", "reduction"});
  nn::Sequential seq(std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::LeakyReLU>(), nn::ModuleHolder<nn::Tanh>());
  EXPECT_EQ(seq.size(), 3u);
  EXPECT_EQ(seq.forward(ones({2, 3})).sizes(), IntArrayRef({2, 4}));
}

}  // namespace

// libtorch modules declare forward(Tensor x) by value: that hides ember's virtual
// forward(const Tensor&). Where ember knows the module's type (register_module, holders,
// Sequential, ModuleList) it records that forward and the virtual calls it; a module it never saw
// the type of names the fix when called through the virtual.
namespace by_value_forward {
struct ByValue : nn::Module {
  Tensor forward(Tensor x) { return x * 2; }
};
struct ConstByValue : nn::Module {
  Tensor forward(Tensor x) const { return x * 3; }
};
struct ByRef : nn::Module {  // a non-const reference it may rebind: the caller's tensor stays
  Tensor forward(Tensor& x) {
    x = x * 5;
    return x;
  }
};
struct Parent : nn::Module {
  Parent() {
    a = register_module("a", std::make_shared<ByValue>());
    b = register_module("b", std::make_shared<ConstByValue>());
    c = register_module("c", std::make_shared<ByRef>());
  }
  Tensor forward(Tensor x) { return (*a)((*b)((*c)(x))); }  // through the virtual, with hooks
  std::shared_ptr<ByValue> a;
  std::shared_ptr<ConstByValue> b;
  std::shared_ptr<ByRef> c;
};
struct BlockImpl : nn::Module {
  BlockImpl() { fc = register_module("fc", std::make_shared<nn::Linear>(3, 3)); }
  Tensor forward(Tensor x) { return (*fc)(x) + 1; }
  std::shared_ptr<nn::Linear> fc;
};
TORCH_MODULE(Block);
struct Overrides : nn::Module {
  Tensor forward(const Tensor& x) override { return x * 2; }
};
struct Inherits : Overrides {};
struct TwoInputs : nn::Module {  // not an attempted override: allowed, called directly
  Tensor forward(Tensor a, Tensor b) { return a + b; }
};
static_assert(nn::detail::forward_hides_virtual<ByValue>::value, "by value hides");
static_assert(!nn::detail::forward_hides_virtual<Overrides>::value, "an override does not");
static_assert(!nn::detail::forward_hides_virtual<Inherits>::value, "an inherited override does not");
static_assert(!nn::detail::forward_hides_virtual<TwoInputs>::value, "two inputs are another function");
static_assert(!nn::detail::forward_hides_virtual<nn::Linear>::value, "built-in modules override");
}  // namespace by_value_forward

TEST(Module, ByValueForwardIsNamedWhenCalledThroughTheVirtual) {
  auto m = std::make_shared<by_value_forward::ByValue>();
  EXPECT_EQ(m->forward(ones({2})).sum().item<double>(), 4);  // direct calls work
  try {
    (*m)(ones({2}));
    ADD_FAILURE() << "no error";
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("declare Tensor forward(const Tensor& x) override"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("register_module"), std::string::npos) << e.what();
  }
  nn::Module plain;  // no forward of any kind: still refused
  ember_test::expect_error<NotImplementedError>([&] { plain(ones({2})); }, {"forward(const Tensor&)"});
}

TEST(Module, ByValueForwardsRunAsChildrenInContainersAndThroughHolders) {
  using namespace by_value_forward;
  Parent p;
  Tensor x = full({2}, 1.0);
  EXPECT_EQ(p.forward(x).to_vector<double>(), std::vector<double>({30, 30}));  // ((x * 5) * 3) * 2
  EXPECT_EQ(x.to_vector<double>(), std::vector<double>({1, 1}));               // ByRef rebound its own handle
  // Through the virtual, a registered child runs its hooks.
  int calls = 0;
  p.child("a")->register_forward_hook([&](nn::Module&, const Tensor&, const Tensor& out) -> std::optional<Tensor> {
    ++calls;
    return out + 1;
  });
  EXPECT_EQ(p.forward(x).to_vector<double>(), std::vector<double>({31, 31}));
  EXPECT_EQ((*p.child("b"))(x).to_vector<double>(), std::vector<double>({3, 3}));
  EXPECT_EQ(calls, 1);

  // In a Sequential and a ModuleList, as pointers and as holders; the parameters are the module's.
  manual_seed(0);
  Block held;
  auto ptr = std::make_shared<BlockImpl>();
  nn::Sequential seq(held, ptr);
  nn::Sequential pushed;
  pushed.push_back(std::make_shared<ConstByValue>());
  nn::ModuleList list;
  list.push_back(std::make_shared<ByValue>());
  Tensor in = randn({2, 3});
  Tensor want = ptr->forward(held->forward(in));
  EXPECT_TRUE(allclose(seq.forward(in), want, 0, 0));
  EXPECT_EQ(pushed.forward(x).to_vector<double>(), std::vector<double>({3, 3}));
  EXPECT_EQ((*list[0])(x).to_vector<double>(), std::vector<double>({2, 2}));
  EXPECT_EQ(seq.parameters().size(), 4u);
  EXPECT_TRUE(seq.parameters()[0].is_same(held->fc->weight));

  // Gradients flow through the adopted forward.
  seq.forward(in).sum().backward();
  ASSERT_TRUE(ptr->fc->weight.grad().defined());
  ASSERT_TRUE(held->fc->weight.grad().defined());
  // d sum(h W^T + b + 1) / dW = ones(3, 1) @ sum over the batch of h, h the first block's output.
  Tensor h = held->forward(in).detach();
  EXPECT_TRUE(allclose(ptr->fc->weight.grad(), ones({3, 1}).matmul(h.sum(0).reshape({1, 3})), 1e-6, 1e-6));
}

// ---- libtorch's module holders (TORCH_MODULE) ----
namespace holders {
// Written as libtorch code is: a by-value forward, holders as members, registered holders.
struct TinyImpl : nn::Module {
  TinyImpl(int64_t in, int64_t out) : fc(register_module("fc", std::make_shared<nn::Linear>(in, out))) {}
  Tensor forward(Tensor x) { return (*fc)(x).relu(); }
  std::shared_ptr<nn::Linear> fc;
};
TORCH_MODULE(Tiny);

struct PairImpl : nn::Module {  // a two-input forward, called through the holder
  Tensor forward(Tensor a, Tensor b) { return a * b; }
};
TORCH_MODULE(Pair);

struct StackImpl : nn::Module {
  StackImpl() {
    first = register_module("first", Tiny(4, 8));
    second = register_module("second", nn::ModuleHolder<nn::Linear>(8, 2));
  }
  Tensor forward(const Tensor& x) override { return second(first(x)); }
  Tiny first{nullptr};
  nn::ModuleHolder<nn::Linear> second{nullptr};
};
TORCH_MODULE(Stack);
}  // namespace holders

TEST(ModuleHolder, TorchModuleHoldersWorkAsInLibtorch) {
  holders::Stack net;  // default constructor: a new StackImpl
  Tensor x = randn({3, 4});
  Tensor y = net(x);
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(equal(y, net->forward(x)));
  // The holders registered their modules: parameters by dotted name, in order.
  std::vector<std::string> names;
  for (auto& [n, t] : net->named_parameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"first.fc.weight", "first.fc.bias", "second.weight", "second.bias"}));
  // A by-value forward works through the holder (never through the virtual).
  holders::Tiny tiny(4, 3);
  EXPECT_TRUE(equal(tiny(x), (*tiny->fc)(x).relu()));
  holders::Pair pair;
  EXPECT_TRUE(equal(pair(x, x), x * x));
  // Shared like shared_ptr; usable where a ModulePtr is wanted.
  holders::Tiny alias = tiny;
  EXPECT_EQ(alias.get(), tiny.get());
  nn::ModulePtr as_module = tiny;
  EXPECT_EQ(as_module->num_parameters(), 4 * 3 + 3);
  // Hooks apply when the forward is ember's virtual one.
  int calls = 0;
  net->second->register_forward_hook([&](nn::Module&, const Tensor&, const Tensor&) -> std::optional<Tensor> {
    ++calls;
    return std::nullopt;
  });
  net(x);
  EXPECT_EQ(calls, 1);
  // Empty holders say so.
  holders::Tiny empty{nullptr};
  EXPECT_TRUE(empty.is_empty());
  EXPECT_FALSE(static_cast<bool>(empty));
  try {
    empty(x);
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("empty module holder"), std::string::npos) << e.what();
  }
}

TEST(ModuleHolder, LinearOptionsBuilderAndNpuAvailability) {
  nn::ModuleHolder<nn::Linear> fc(nn::LinearOptions(4, 5).bias(false));
  EXPECT_EQ(fc->in_features, 4);
  EXPECT_EQ(fc->out_features, 5);
  EXPECT_FALSE(fc->bias.defined());
  EXPECT_EQ(fc->num_parameters(), 20);
  nn::Linear with_bias(nn::LinearOptions(2, 3));
  EXPECT_TRUE(with_bias.bias.defined());
  EXPECT_TRUE(npu::is_available());  // the emulator's 2 devices by default
  EXPECT_EQ(npu::device_count() > 0, npu::is_available());
}

// ---------------------------------------------------------------- layers (nn/layers.h)
namespace layers {

TEST(Layers, ConvolutionModulesAndTheirOptions) {
  manual_seed(5);
  nn::Conv2d conv(nn::Conv2dOptions(3, 8, 3).stride(2).padding(1).bias(true));
  EXPECT_EQ(conv.weight.sizes(), IntArrayRef({8, 3, 3, 3}));
  double bound = 1.0 / std::sqrt(27.0);  // kaiming_uniform(a = sqrt 5) over fan_in = 3 * 3 * 3
  EXPECT_LE(conv.weight.abs().max().item<double>(), bound);
  EXPECT_LE(conv.bias.abs().max().item<double>(), bound);
  Tensor x = randn({2, 3, 9, 9});
  Tensor y = conv.forward(x);
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 8, 5, 5}));
  EXPECT_TRUE(allclose(y, conv2d(x, conv.weight, conv.bias, {2}, {1})));
  nn::Conv2d grouped(nn::Conv2dOptions(4, 6, {3, 1}).groups(2).bias(false));
  EXPECT_EQ(grouped.weight.sizes(), IntArrayRef({6, 2, 3, 1}));
  EXPECT_FALSE(grouped.bias.defined());
  ember_test::expect_error<ValueError>([] { nn::Conv2d bad(nn::Conv2dOptions(3, 8, 3).groups(2)); },
                                       {"Conv2d", "divisible by groups"});

  nn::Conv1d conv1(nn::Conv1dOptions(3, 5, 4).stride(2).padding(2).dilation(1));
  EXPECT_EQ(conv1.weight.sizes(), IntArrayRef({5, 3, 4}));
  EXPECT_LE(conv1.weight.abs().max().item<double>(), 1.0 / std::sqrt(12.0));  // fan_in = 3 * 4
  Tensor seq = randn({2, 3, 10});
  Tensor y1 = conv1.forward(seq);
  EXPECT_EQ(y1.sizes(), IntArrayRef({2, 5, 6}));  // (10 + 4 - 3 - 1) / 2 + 1
  // The same numbers as a 2-D convolution over one row (the oracle is the sample's direct loop).
  EXPECT_TRUE(allclose(y1, conv2d(seq.unsqueeze(2), conv1.weight.unsqueeze(2), conv1.bias, {1, 2}, {0, 2}).squeeze(2)));
  EXPECT_EQ(conv1.forward(seq[0]).sizes(), IntArrayRef({5, 6}));
  ember_test::expect_error<ValueError>([&] { conv1d(seq, conv1.weight, std::nullopt, {1, 2}); },
                                       {"conv1d", "stride needs 1 value"});
  ember_test::expect_error<ShapeError>([&] { conv1d(seq, conv1.weight.unsqueeze(0)); }, {"conv1d", "weight"});

  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(8, 3, 4).stride(2).padding(1).bias(false));
  EXPECT_EQ(up.weight.sizes(), IntArrayRef({8, 3, 4, 4}));
  EXPECT_EQ(up.forward(y).sizes(), IntArrayRef({2, 3, 10, 10}));  // (5 - 1) 2 - 2 + 3 + 1

  // conv_transpose2d is conv2d's input gradient: <conv(x), g> = <x, convT(g)>
  Tensor w = randn({4, 3, 3, 3}, kFloat64), xs = randn({1, 3, 7, 7}, kFloat64), g = randn({1, 4, 3, 3}, kFloat64);
  double lhs = (conv2d(xs, w, std::nullopt, {2}) * g).sum().item<double>();
  double rhs = (xs * conv_transpose2d(g, w, std::nullopt, {2})).sum().item<double>();
  EXPECT_NEAR(lhs, rhs, 1e-10);

  nn::MaxPool2d pool(nn::MaxPool2dOptions(2));
  Tensor m = pool.forward(arange(16, kFloat32).view({1, 1, 4, 4}));
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{5, 7, 13, 15}));
  // ceil_mode: 5 -> 3 windows of 2 (the last one over the edge holds a single column)
  nn::MaxPool2d ceil_pool(nn::MaxPool2dOptions(2).ceil_mode(true));
  EXPECT_EQ(ceil_pool.forward(arange(25, kFloat32).view({1, 1, 5, 5})).to_vector<float>(),
            (std::vector<float>{6, 8, 9, 16, 18, 19, 21, 23, 24}));
  nn::AvgPool2d ceil_avg(nn::AvgPool2dOptions(2).ceil_mode(true));
  EXPECT_EQ(ceil_avg.forward(arange(25, kFloat32).view({1, 1, 5, 5})).to_vector<float>(),
            (std::vector<float>{3, 5, 6.5, 13, 15, 16.5, 20.5, 22.5, 24}));
  nn::AvgPool2d avg(nn::AvgPool2dOptions(2));
  EXPECT_EQ(avg.forward(arange(16, kFloat32).view({1, 1, 4, 4})).to_vector<float>(),
            (std::vector<float>{2.5f, 4.5f, 10.5f, 12.5f}));
  nn::AdaptiveAvgPool2d gap(1);
  EXPECT_EQ(gap.forward(arange(16, kFloat32).view({1, 1, 4, 4})).to_vector<float>(), (std::vector<float>{7.5f}));
  // 5 -> 2 takes PyTorch's overlapping windows [0, 3) and [2, 5)
  // (as two products with 1/3 weights: float32 rounding, not exact)
  EXPECT_TRUE(allclose(adaptive_avg_pool2d(arange(25, kFloat32).view({1, 1, 5, 5}), {2}),
                       tensor({6.0, 8.0, 16.0, 18.0}).view({1, 1, 2, 2}), 1e-6, 1e-5));
  ember_test::expect_error<ValueError>([] { max_pool2d(ones({1, 1, 2, 2}), {3}); }, {"max_pool2d", "larger than"});
}

// A layer y = f(x, w, b) on the CPU and on the NPU, forward and backward for one random output
// gradient: the output and the three gradients agree (bf16: both paths round inputs alike and
// accumulate in fp32, then round the result to 8 bits). Returns the two graphs' node names.
using Layer = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>;
std::pair<std::string, std::string> expect_cpu_and_npu_agree(const Layer& f, const Tensor& x, const Tensor& w,
                                                             const Tensor& b, const std::string& what) {
  const DType dt = x.dtype();
  Tensor gy;
  auto run = [&](Device d, std::string* node) {
    Tensor xs = x.to(d).detach().requires_grad_(), ws = w.to(d).detach().requires_grad_(),
           bs = b.to(d).detach().requires_grad_();
    Tensor y = f(xs, ws, bs);
    if (!gy.defined()) gy = randn(y.sizes()).to(dt);
    (y * gy.to(d)).sum().backward();
    *node = y.grad_fn()->name();
    return std::vector<Tensor>{y.cpu().to(kFloat64), xs.grad().cpu().to(kFloat64), ws.grad().cpu().to(kFloat64),
                               bs.grad().cpu().to(kFloat64)};
  };
  std::string cpu_node, npu_node;
  auto c = run(Device("cpu"), &cpu_node), n = run(Device("npu:0"), &npu_node);
  const double tol = dt == kFloat32 ? 1e-4 : 3e-2;
  const char* part[4] = {"output", "input grad", "weight grad", "bias grad"};
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(allclose(c[i], n[i], tol, tol)) << what << " " << dt << " " << part[i] << ": max diff "
                                                << (c[i] - n[i]).abs().max().item<double>();
  return {cpu_node, npu_node};
}

// On the CPU conv2d runs oneDNN's convolution in float32 (and bfloat16 where the CPU has bf16
// dot products), on the NPU CANN's aclnnConvolution (im2col + GEMMs in the emulator): the two
// agree forward and backward, also with groups, stride, padding and dilation, and the CPU's
// graph holds oneDNN's node when it ran.
TEST(Layers, Conv2dOnOneDnnAgreesWithTheGemmPath) {
  for (DType dt : {kFloat32, kBFloat16}) {
    manual_seed(3);
    Tensor x = randn({3, 6, 11, 9}).to(dt), w = (randn({8, 3, 3, 3}) * 0.3).to(dt), b = randn({8}).to(dt);
    auto [cpu_node, npu_node] = expect_cpu_and_npu_agree(
        [](const Tensor& xs, const Tensor& ws, const Tensor& bs) {
          return conv2d(xs, ws, bs, {2, 1}, {1}, {1, 2}, /*groups=*/2);
        },
        x, w, b, "conv2d");
    EXPECT_EQ(cpu_node, cpu::onednn_conv2d_supported(dt) ? "ConvolutionBackward0" : "AddBackward") << dt;
    EXPECT_EQ(npu_node, "ConvolutionBackward0");  // aclnnConvolution
  }
}

// conv_transpose2d on the CPU runs oneDNN (conv2d's backward-data convolution) where conv2d does,
// on the NPU aclnnConvolution (transposed): the two agree forward and backward, with groups,
// stride, padding, output_padding and dilation; an output_padding the windows cannot give back
// takes the col2im composite.
TEST(Layers, ConvTranspose2dOnOneDnnAgreesWithTheNpu) {
  struct Case {
    Shape s, p, op, d;
    int64_t groups;
    bool onednn;  // (where the build and CPU have oneDNN's convolution)
  };
  const Case cases[] = {{{2, 2}, {1, 1}, {0, 0}, {1, 1}, 1, true},
                        {{2, 1}, {1, 0}, {1, 0}, {1, 2}, 2, true},
                        {{2, 2}, {0, 0}, {1, 1}, {1, 1}, 1, true},   // output_padding past the padding
                        {{1, 1}, {0, 0}, {1, 1}, {2, 2}, 1, false}};  // output_padding >= stride
  for (DType dt : {kFloat32, kBFloat16}) {
    for (const Case& k : cases) {
      manual_seed(8);
      Tensor x = randn({2, 4, 5, 6}).to(dt), w = (randn({4, 3, 3, 3}) * 0.3).to(dt), b = randn({3 * k.groups}).to(dt);
      auto [cpu_node, npu_node] = expect_cpu_and_npu_agree(
          [&k](const Tensor& xs, const Tensor& ws, const Tensor& bs) {
            return conv_transpose2d(xs, ws, bs, k.s, k.p, k.op, k.groups, k.d);
          },
          x, w, b, "conv_transpose2d groups " + std::to_string(k.groups));
      const bool onednn = k.onednn && cpu::onednn_conv2d_supported(dt);
      EXPECT_EQ(cpu_node == "ConvolutionBackward0", onednn) << dt << " " << cpu_node;
      EXPECT_EQ(npu_node, "ConvolutionBackward0");
    }
  }
}

TEST(Layers, BatchNormTrainsItsRunningStatisticsAndEvaluatesWithThem) {
  for (const char* dev : {"cpu", "npu:0"}) {
    nn::BatchNorm2d bn(nn::BatchNormOptions(2).momentum(0.5));
    bn.to(Device(dev));
    // channel 0: values 1..4, channel 1: 10 (constant)
    Tensor x = tensor({1.0, 2.0, 10.0, 10.0, 3.0, 4.0, 10.0, 10.0}, {2, 2, 1, 2}).to(Device(dev));
    Tensor y = bn.forward(x);
    // channel 0: mean 2.5, biased var 1.25
    double s = 1.0 / std::sqrt(1.25 + 1e-5);
    std::vector<float> got = y.to_vector<float>();
    EXPECT_NEAR(got[0], (1 - 2.5) * s, 1e-5) << dev;
    EXPECT_NEAR(got[5], (4 - 2.5) * s, 1e-5) << dev;
    EXPECT_NEAR(got[2], 0.0, 1e-5) << dev;  // a constant channel normalises to 0
    // running = 0.5 * initial + 0.5 * batch (unbiased var: 1.25 * 4 / 3)
    std::vector<float> rm = bn.running_mean.to_vector<float>(), rv = bn.running_var.to_vector<float>();
    EXPECT_NEAR(rm[0], 1.25, 1e-6) << dev;
    EXPECT_NEAR(rm[1], 5.0, 1e-6) << dev;
    EXPECT_NEAR(rv[0], 0.5 + 0.5 * 1.25 * 4 / 3, 1e-6) << dev;
    EXPECT_NEAR(rv[1], 0.5, 1e-6) << dev;
    EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1) << dev;
    bn.eval();
    Tensor e = bn.forward(x);
    EXPECT_NEAR(e.to_vector<float>()[0], (1 - 1.25) / std::sqrt(rv[0] + 1e-5), 1e-5) << dev;
    EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1) << dev;
    // gradients reach weight and bias
    bn.train();
    bn.forward(x).pow(2).sum().backward();
    EXPECT_TRUE(bn.weight.grad().defined() && bn.bias.grad().defined()) << dev;
  }
  nn::BatchNorm1d bn1(3);
  EXPECT_EQ(bn1.forward(randn({4, 3})).sizes(), IntArrayRef({4, 3}));
  ember_test::expect_error<ShapeError>([&] { bn1.forward(randn({4, 5})); }, {"BatchNorm1d", "3 channels"});
  ember_test::expect_error<ValueError>([&] { bn1.forward(randn({1, 3})); }, {"more than 1 value per channel"});
}

TEST(Layers, LayerNormGroupNormAndDropout) {
  Tensor x = tensor({1.0, 2.0, 3.0, 6.0}, {1, 4}, kFloat64);
  nn::LayerNorm ln(nn::LayerNormOptions({4}).eps(0));
  // mean 3, var (4 + 1 + 0 + 9) / 4 = 3.5
  std::vector<double> want;
  for (double v : {1.0, 2.0, 3.0, 6.0}) want.push_back((v - 3) / std::sqrt(3.5));
  ln.to(kFloat64);
  std::vector<double> got = ln.forward(x).to_vector<double>();
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(got[i], want[i], 1e-12);
  nn::GroupNorm gn(nn::GroupNormOptions(2, 4).eps(0));
  gn.to(kFloat64);
  // groups {1, 2} and {3, 6}: each normalised on its own
  std::vector<double> gg = gn.forward(x.view({1, 4, 1})).to_vector<double>();
  EXPECT_NEAR(gg[0], -1.0, 1e-12);
  EXPECT_NEAR(gg[1], 1.0, 1e-12);
  EXPECT_NEAR(gg[3], 1.0, 1e-12);

  manual_seed(9);
  nn::Dropout drop(0.25);
  Tensor ones_in = ones({100000});
  Tensor d = drop.forward(ones_in);
  double zeros_frac = d.eq(0).sum().item<double>() / 100000.0;
  EXPECT_NEAR(zeros_frac, 0.25, 0.01);  // 25000 +- 137 (one std)
  EXPECT_NEAR(d.max().item<double>(), 1 / 0.75, 1e-6);
  drop.eval();
  EXPECT_TRUE(drop.forward(ones_in).is_same(ones_in));
  nn::Dropout2d drop2(0.5);
  Tensor maps = drop2.forward(ones({4, 16, 3, 3}));
  Tensor per_map = maps.amax({2, 3});
  EXPECT_TRUE(per_map.eq(maps.amin({2, 3})).all().item<bool>());  // whole channels kept or zeroed
  ember_test::expect_error<ValueError>([] { nn::Dropout bad(1.5); }, {"between 0 and 1"});
}

}  // namespace layers

namespace {
int64_t profiled_calls(const profiler::KeyAverages& k, const std::string& name) {
  for (const auto& r : k.rows)
    if (r.name == name) return r.calls;
  return 0;
}
}  // namespace

// On the NPU each fused loss (and leaky_relu) runs CANN's kernel forward and backward, under
// libtorch's node name, and agrees with the CPU's composition of elementwise ops.
TEST(Losses, FusedLossesRunCannKernelsOnTheNpuAndAgreeWithTheCpu) {
  manual_seed(5);
  Tensor x = randn({6, 5}), p = rand({6, 5}) * 0.9 + 0.05, y = rand({6, 5}), w = rand({5}) + 0.5;
  Tensor logp = log_softmax(randn({6, 5}), 1), cls = tensor(std::vector<int64_t>{0, 4, -100, 2, 2, 1}, {6});
  struct Case {
    const char* acl;
    const char* node;
    std::function<Tensor(const Tensor&, Device)> loss;
    Tensor input;
  };
  std::vector<Case> cases = {
      {"aclnnMseLoss", "MseLossBackward0", [&](const Tensor& a, Device d) { return mse_loss(a, y.to(d)); }, x},
      {"aclnnL1Loss", "L1LossBackward0", [&](const Tensor& a, Device d) { return l1_loss(a, y.to(d)); }, x},
      {"aclnnSmoothL1Loss", "SmoothL1LossBackward0",
       [&](const Tensor& a, Device d) { return smooth_l1_loss(a, y.to(d), Reduction::Sum, 0.5); }, x},
      {"aclnnBinaryCrossEntropy", "BinaryCrossEntropyBackward0",
       [&](const Tensor& a, Device d) { return binary_cross_entropy(a, y.to(d), w.to(d)); }, p},
      {"aclnnBinaryCrossEntropyWithLogits", "BinaryCrossEntropyWithLogitsBackward0",
       [&](const Tensor& a, Device d) {
         return binary_cross_entropy_with_logits(a, y.to(d), std::nullopt, w.to(d), Reduction::None).sum();
       },
       x},
      {"aclnnNLLLoss", "NllLossBackward0",
       [&](const Tensor& a, Device d) { return nll_loss(a, cls.to(d), w.to(d)); }, logp},
      {"aclnnLeakyRelu", "LeakyReluBackward0", [&](const Tensor& a, Device) { return leaky_relu(a, 0.1).sum(); }, x},
  };
  for (const Case& c : cases) {
    std::vector<Tensor> values, grads;
    for (Device d : {Device("cpu"), Device("npu:0")}) {
      Tensor a = c.input.to(d).detach().requires_grad_();
      profiler::Profile prof;
      Tensor l = c.loss(a, d);
      l.backward();
      prof.stop();
      values.push_back(l.detach().cpu());
      grads.push_back(a.grad().cpu());
      if (d.is_npu()) {
        profiler::KeyAverages k = prof.key_averages();
        EXPECT_EQ(profiled_calls(k, std::string(c.acl) + "GetWorkspaceSize"), 1) << c.acl << "\n" << k.table();
        EXPECT_EQ(profiled_calls(k, std::string(c.acl) + "BackwardGetWorkspaceSize"), 1) << c.acl << "\n" << k.table();
        Tensor again = c.loss(a, d);
        const autograd::Node* node = again.grad_fn().get();
        // (a sum over the loss for the unreduced ones: the loss's node is the sum's input)
        if (node->name() == "SumBackward") node = node->next_edges()[0].fn.get();
        EXPECT_EQ(node->name(), c.node);
      }
    }
    EXPECT_TRUE(allclose(values[1], values[0], 1e-5, 1e-6)) << c.acl;
    EXPECT_TRUE(allclose(grads[1], grads[0], 1e-5, 1e-6)) << c.acl << "\n" << grads[0] << grads[1];
  }
}

// dropout's mask comes from the counter-based stream: the same seed drops the same elements on
// the CPU and the NPU (CANN's aclnnDropoutGenMask there), at about the asked rate.
TEST(Layers, DropoutDrawsTheSameMaskOnCpuAndNpuAtTheAskedRate) {
  Tensor x = ones({100, 100});
  manual_seed(42);
  Tensor yc = nn::functional::dropout(x, 0.3, true);
  manual_seed(42);
  Tensor yn = nn::functional::dropout(x.to(Device("npu:0")), 0.3, true).cpu();
  EXPECT_TRUE(yc.equal(yn));
  const double dropped = yc.eq(0).to(kFloat64).mean().item<double>();
  EXPECT_NEAR(dropped, 0.3, 0.02);  // 10000 draws: the standard deviation is 0.0046
  EXPECT_NEAR(yc.max().item<double>(), 1 / 0.7, 1e-6);
  // The backward applies the same mask.
  Tensor xs = x.detach().requires_grad_();
  manual_seed(42);
  nn::functional::dropout(xs, 0.3, true).sum().backward();
  EXPECT_TRUE(xs.grad().equal(yc));
  // Dropout2d drops whole channels.
  Tensor z = nn::functional::dropout2d(ones({8, 16, 3, 3}), 0.5, true);
  Tensor per_channel = z.amax({2, 3}) - z.amin({2, 3});
  EXPECT_EQ(per_channel.abs().max().item<double>(), 0.0);
}

// max_pool2d: a NaN in a window wins (PyTorch's rule) and its index is where it is; a window of
// -inf values points at its first tap. The same on the CPU's loops and the NPU's kernel.
// Whether oneDNN has a max pooling kernel for this input shape and window.
bool onednn_pools(const Shape& in, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil, DType dt) {
  cpu::Pool2d g;
  EXPECT_EQ(cpu::pool2d(in[in.size() - 2], in.back(), k, s, p, d, ceil, &g), "");
  return cpu::onednn_max_pool2d_workspace(
             cpu::MaxPool2dProblem{in.size() == 4 ? in[0] : 1, in[in.size() - 3], g, dt}) >= 0;
}

// On the CPU max_pool2d runs oneDNN's max pooling where it has a kernel (float32; bfloat16 with
// AVX-512) and the input holds no NaN: values, gradients (ties included: the first tap wins on
// both paths) and second derivatives agree with max_pool2d_with_indices' loops.
TEST(Layers, MaxPoolOnOneDnnAgreesWithTheLoops) {
  struct Case {
    Shape in;
    Shape k, s, p, d;
    bool ceil;
  };
  // (the dilated case has only oneDNN's reference loops: ember's own run)
  const Case cases[] = {{{2, 5, 13, 11}, {3}, {2}, {1}, {1}, false},
                        {{3, 9, 10}, {2, 3}, {1, 2}, {1, 0}, {2, 1}, true},
                        {{1, 2, 7, 7}, {3}, {3}, {1}, {1}, true}};
  int onednn_cases = 0;
  for (DType dt : {kFloat32, kBFloat16}) {
    for (const Case& c : cases) {
      onednn_cases += onednn_pools(c.in, c.k, c.s, c.p, c.d, c.ceil, dt);
      manual_seed(5);
      // Small integers after a relu: many ties, and -inf in one row.
      Tensor x = randint(-3, 4, c.in).to(kFloat32).relu();
      x.select(-2, 0).fill_(-INFINITY);
      x = x.to(dt);
      auto run = [&](bool fast) {
        Tensor xs = x.detach().requires_grad_();
        Tensor y = fast ? max_pool2d(xs, c.k, c.s, c.p, c.d, c.ceil)
                        : std::get<0>(max_pool2d_with_indices(xs, c.k, c.s, c.p, c.d, c.ceil));
        const bool onednn = fast && onednn_pools(c.in, c.k, c.s, c.p, c.d, c.ceil, dt);
        EXPECT_EQ(y.grad_fn()->name(), onednn ? "MkldnnMaxPool2DBackward0" : "MaxPool2DWithIndicesBackward0");
        manual_seed(6);
        Tensor gy = randn(y.sizes()).to(dt).requires_grad_();
        Tensor gx = autograd::grad({y}, {xs}, {gy}, std::nullopt, /*create_graph=*/true)[0];
        Tensor v = randn(x.sizes()).to(dt);
        Tensor ggy = autograd::grad({(gx * v).sum()}, {gy})[0];
        return std::vector<Tensor>{y.detach().to(kFloat64), gx.detach().to(kFloat64), ggy.to(kFloat64)};
      };
      auto a = run(true), b = run(false);
      // Both pick the same taps: the same values, bit for bit, and the same gradients up to the
      // order in which overlapping windows add into one input (a rounding of the dtype: 2^-24
      // relative in float32, 2^-9 in bfloat16, per addition).
      EXPECT_TRUE(a[0].equal(b[0])) << dt << IntArrayRef(c.in) << " output:\n" << a[0] << "\n" << b[0];
      const double tol = dt == kFloat32 ? 1e-5 : 2e-2;
      const char* what[3] = {"output", "input grad", "grad of the grad"};
      for (int i = 1; i < 3; ++i)
        EXPECT_TRUE(allclose(a[i], b[i], tol, tol)) << dt << IntArrayRef(c.in) << " " << what[i] << ":\n" << a[i]
                                                    << "\n" << b[i];
    }
  }
  // oneDNN ran where the build has it (float32 under any cap; bfloat16 needs AVX-512).
  if (cpu::onednn_conv2d_supported(kFloat32)) {
    EXPECT_EQ(onednn_cases, cpu::cpu_has(cpu::Isa::Avx512) ? 4 : 2);
  }
  // A NaN wins (the loops' rule), which oneDNN's max would skip; the gradient goes to it.
  Tensor x = zeros({1, 1, 4, 4});
  x.view({-1}).narrow(0, 5, 1).fill_(NAN);
  Tensor xs = x.requires_grad_();
  Tensor y = max_pool2d(xs, {2});
  EXPECT_TRUE(std::isnan(y.to_vector<float>()[0]));
  EXPECT_EQ(y.grad_fn()->name(),
            onednn_pools({1, 1, 4, 4}, {2}, {}, {0}, {1}, false, kFloat32) ? "MkldnnMaxPool2DBackward0"
                                                                              : "MaxPool2DWithIndicesBackward0");
  y.sum().backward();
  EXPECT_EQ(xs.grad().to_vector<float>()[5], 1.f);
}

TEST(Layers, MaxPoolPropagatesNaNWithItsIndex) {
  std::vector<float> v(16, 0.f);
  v[5] = std::nanf("");
  for (int i : {2, 3, 6, 7}) v[static_cast<size_t>(i)] = -INFINITY;
  Tensor x = tensor(v, {1, 1, 4, 4});
  for (Device d : {Device("cpu"), Device("npu:0")}) {
    auto [y, idx] = max_pool2d_with_indices(x.to(d), {2}, {2});
    std::vector<float> yv = y.cpu().to_vector<float>();
    std::vector<int64_t> iv = idx.cpu().to_vector<int64_t>();
    EXPECT_TRUE(std::isnan(yv[0])) << d;
    EXPECT_EQ(iv[0], 5) << d;
    EXPECT_EQ(yv[1], -INFINITY) << d;
    EXPECT_EQ(iv[1], 2) << d;
    EXPECT_EQ(yv[2], 0.f) << d;
    EXPECT_EQ(iv[2], 8) << d;
  }
}
