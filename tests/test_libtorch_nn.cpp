// libtorch's nn families over ember (issue 34): modules with their options, F::xxx with
// FuncOptions, each against a float64 reference worked out here, with gradients checked by
// finite differences, on the CPU and the emulated NPU.
#include <cmath>
#include <functional>
#include <sstream>

#include <ember/torch.h>

#include "test_util.h"

namespace {
namespace F = torch::nn::functional;

std::vector<torch::Device> devices() { return {torch::Device("cpu"), torch::Device("npu:0")}; }

// Points away from every kink of the functions below (|x| = 0.5, 1, 3, 6).
std::vector<double> points() { return {-7.1, -3.3, -1.7, -0.8, -0.31, -0.05, 0.07, 0.26, 0.71, 1.4, 2.9, 6.6}; }

struct Case {
  const char* name;
  std::function<torch::Tensor(const torch::Tensor&)> f;
  std::function<double(double)> ref;
};

TEST(LibtorchNn, ActivationsMatchTheirFormulasAndDifferentiate) {
  const double selu_a = 1.6732632423543772, selu_s = 1.0507009873554805;
  torch::nn::ELU elu(torch::nn::ELUOptions().alpha(0.7));
  torch::nn::Hardtanh ht(torch::nn::HardtanhOptions().min_val(-2).max_val(1.5));
  torch::nn::Softplus sp(torch::nn::SoftplusOptions().beta(2).threshold(3));
  torch::nn::Threshold th(torch::nn::ThresholdOptions(0.1, -4));
  torch::nn::RReLU rr;
  rr->eval();
  std::vector<Case> cases = {
      {"elu", [&](const torch::Tensor& x) { return elu(x); },
       [](double v) { return v > 0 ? v : 0.7 * std::expm1(v); }},
      {"selu", [](const torch::Tensor& x) { return F::selu(x); },
       [=](double v) { return selu_s * (v > 0 ? v : selu_a * std::expm1(v)); }},
      {"celu", [](const torch::Tensor& x) { return F::celu(x, F::CELUFuncOptions().alpha(2.0)); },
       [](double v) { return v > 0 ? v : 2.0 * std::expm1(v / 2.0); }},
      {"hardshrink", [](const torch::Tensor& x) { return torch::nn::Hardshrink()(x); },
       [](double v) { return std::fabs(v) > 0.5 ? v : 0.0; }},
      {"softshrink", [](const torch::Tensor& x) { return F::softshrink(x, F::SoftshrinkFuncOptions(1.0)); },
       [](double v) { return v > 1 ? v - 1 : v < -1 ? v + 1 : 0.0; }},
      {"hardtanh", [&](const torch::Tensor& x) { return ht(x); },
       [](double v) { return std::min(std::max(v, -2.0), 1.5); }},
      {"relu6", [](const torch::Tensor& x) { return F::relu6(x); },
       [](double v) { return std::min(std::max(v, 0.0), 6.0); }},
      {"rrelu(eval)", [&](const torch::Tensor& x) { return rr(x); },
       [](double v) { return v >= 0 ? v : v * (1.0 / 8 + 1.0 / 3) / 2; }},
      {"softplus", [&](const torch::Tensor& x) { return sp(x); },
       [](double v) { return 2 * v > 3 ? v : std::log1p(std::exp(2 * v)) / 2; }},
      {"threshold", [&](const torch::Tensor& x) { return th(x); }, [](double v) { return v > 0.1 ? v : -4.0; }},
      {"logsigmoid", [](const torch::Tensor& x) { return torch::nn::LogSigmoid()(x); },
       [](double v) { return -std::log1p(std::exp(-v)); }},
      {"mish", [](const torch::Tensor& x) { return F::mish(x); },
       [](double v) { return v * std::tanh(std::log1p(std::exp(v))); }},
      {"softsign", [](const torch::Tensor& x) { return torch::nn::Softsign()(x); },
       [](double v) { return v / (1 + std::fabs(v)); }},
      {"tanhshrink", [](const torch::Tensor& x) { return F::tanhshrink(x); },
       [](double v) { return v - std::tanh(v); }},
      {"leaky_relu", [](const torch::Tensor& x) { return F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2)); },
       [](double v) { return v > 0 ? v : 0.2 * v; }},
      {"relu", [](const torch::Tensor& x) { return torch::nn::ReLU(torch::nn::ReLUOptions())(x); },
       [](double v) { return v > 0 ? v : 0.0; }},
      {"gelu(tanh)", [](const torch::Tensor& x) { return F::gelu(x, F::GELUFuncOptions().approximate("tanh")); },
       [](double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))); }},
      {"identity", [](const torch::Tensor& x) { return torch::nn::Identity()(x); }, [](double v) { return v; }},
  };
  const std::vector<double> p = points();
  for (auto dev : devices()) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.name) + " on " + dev.str());
      torch::Tensor x = torch::tensor(p, torch::kDouble).to(dev);
      std::vector<double> got = c.f(x).cpu().to_vector<double>();
      for (size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(got[i], c.ref(p[i]), 1e-12 * (1 + std::fabs(c.ref(p[i]))));
      torch::Tensor xc = torch::tensor(p, torch::kDouble).requires_grad_(true);
      EXPECT_TRUE(torch::autograd::gradcheck([&](const std::vector<torch::Tensor>& in) { return c.f(in[0].to(dev)).cpu(); },
                                             {xc}));
    }
  }
}

TEST(LibtorchNn, SoftmaxFamilyGluAndPrelu) {
  for (auto dev : devices()) {
    auto o = torch::TensorOptions(torch::kDouble).device(dev);
    torch::Tensor x = torch::tensor({0.5, -1.0, 2.0, 0.0, 1.0, -0.5}, o).view({2, 3});
    torch::Tensor sm = torch::nn::Softmax(1)(x);
    torch::Tensor smin = torch::nn::Softmin(torch::nn::SoftminOptions(1))(x);
    torch::Tensor lsm = F::log_softmax(x, F::LogSoftmaxFuncOptions(1).dtype(torch::kFloat));
    EXPECT_EQ(lsm.dtype(), torch::kFloat);
    std::vector<double> xs = x.cpu().to_vector<double>(), s = sm.cpu().to_vector<double>(),
                        sn = smin.cpu().to_vector<double>();
    for (int r = 0; r < 2; ++r) {
      double z = 0, zn = 0;
      for (int c = 0; c < 3; ++c) z += std::exp(xs[r * 3 + c]), zn += std::exp(-xs[r * 3 + c]);
      for (int c = 0; c < 3; ++c) {
        EXPECT_NEAR(s[r * 3 + c], std::exp(xs[r * 3 + c]) / z, 1e-14);
        EXPECT_NEAR(sn[r * 3 + c], std::exp(-xs[r * 3 + c]) / zn, 1e-14);
      }
    }
    // GLU over dim 1 of [2, 4]: a * sigmoid(b), a the first half.
    torch::Tensor g = torch::nn::GLU(1)(torch::tensor({1.0, 2.0, 0.0, -1.0, 3.0, 4.0, 2.0, 1.0}, o).view({2, 4}));
    std::vector<double> gv = g.cpu().to_vector<double>();
    EXPECT_NEAR(gv[1], 2.0 / (1 + std::exp(1.0)), 1e-14);
    EXPECT_NEAR(gv[2], 3.0 / (1 + std::exp(-2.0)), 1e-14);
    EXPECT_THROW(F::glu(torch::zeros({3}, o)), ember::ShapeError);
    // PReLU: one slope per channel of [N, C, L].
    torch::nn::PReLU pr(torch::nn::PReLUOptions().num_parameters(2).init(0.1));
    pr->to(dev);
    torch::Tensor y = pr(torch::tensor({-1.0, 2.0, -3.0, 4.0}, o).view({1, 2, 2}).to(torch::kFloat));
    EXPECT_EQ(y.cpu().to_vector<float>(), (std::vector<float>{-0.1f, 2.0f, -0.3f, 4.0f}));
    y.sum().backward();
    EXPECT_EQ(pr->weight.grad().cpu().to_vector<float>(), (std::vector<float>{-1.0f, -3.0f}));
    EXPECT_THROW(pr(torch::zeros({1, 3, 2}, torch::TensorOptions(torch::kFloat).device(dev))), ember::ShapeError);
  }
}

TEST(LibtorchNn, InplaceOptionWritesTheInput) {
  torch::Tensor x = torch::tensor({-1.0f, 2.0f});
  torch::Tensor y = F::relu(x, F::ReLUFuncOptions(true));
  EXPECT_TRUE(y.is_same(x));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0.0f, 2.0f}));
  torch::nn::ELU elu(torch::nn::ELUOptions().inplace(true));
  torch::Tensor z = torch::tensor({-1.0f});
  elu(z);
  EXPECT_NEAR(z.item<float>(), std::expm1(-1.0f), 1e-6);
}

TEST(LibtorchNn, GumbelSoftmaxIsADistributionAndHardIsOneHot) {
  torch::manual_seed(3);
  torch::Tensor logits = torch::randn({4, 5}, torch::kDouble).requires_grad_(true);
  torch::Tensor soft = F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().tau(0.5));
  EXPECT_TRUE(torch::allclose(soft.sum(1), torch::ones({4}, torch::kDouble)));
  torch::Tensor hard = F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().hard(true));
  std::vector<double> h = hard.to_vector<double>();
  for (int r = 0; r < 4; ++r) {
    int ones = 0;
    for (int c = 0; c < 5; ++c) {
      ones += h[r * 5 + c] == 1.0;
      EXPECT_TRUE(h[r * 5 + c] == 0.0 || h[r * 5 + c] == 1.0);
    }
    EXPECT_EQ(ones, 1);
  }
  (hard * torch::arange(5, torch::kDouble)).sum().backward();  // the straight-through gradient reaches logits
  EXPECT_GT(logits.grad().abs().sum().item<double>(), 0.0);
}

TEST(LibtorchNn, ModulesPrintWithTheirOptions) {
  torch::nn::Sequential seq(torch::nn::Linear(2, 3), torch::nn::ELU(torch::nn::ELUOptions().alpha(0.5)),
                            torch::nn::Hardtanh(), torch::nn::Softmax(1));
  std::ostringstream os;
  os << *seq;
  const std::string s = os.str();
  EXPECT_NE(s.find("ELU(alpha=0.5)"), std::string::npos) << s;
  EXPECT_NE(s.find("Hardtanh(min_val=-1, max_val=1)"), std::string::npos) << s;
  EXPECT_NE(s.find("Softmax(dim=1)"), std::string::npos) << s;
}

}  // namespace

namespace {
// A float64 reference of PyTorch's recurrent layers, written from the equations of
// torch.nn.RNN/LSTM/GRU's documentation over plain vectors.
using Vec = std::vector<double>;
Vec matvec(const torch::Tensor& w, const Vec& x) {
  std::vector<double> wv = w.to(torch::kDouble).cpu().to_vector<double>();
  const size_t rows = static_cast<size_t>(w.size(0)), cols = static_cast<size_t>(w.size(1));
  Vec y(rows, 0.0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) y[r] += wv[r * cols + c] * x[c];
  return y;
}
Vec addv(Vec a, const torch::Tensor& b) {
  if (!b.defined()) return a;
  std::vector<double> bv = b.to(torch::kDouble).cpu().to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) a[i] += bv[i];
  return a;
}
double sig(double v) { return 1 / (1 + std::exp(-v)); }

// seq[t] -> outputs (both directions concatenated), for one batch element.
std::vector<Vec> reference(const std::string& mode, torch::nn::Module& m, int layers, bool bidir, int hidden,
                           std::vector<Vec> seq) {
  auto params = m.named_parameters();
  auto get = [&](const std::string& n) {
    for (auto& p : params)
      if (p.first == n) return p.second;
    return torch::Tensor();
  };
  const size_t L = seq.size();
  for (int l = 0; l < layers; ++l) {
    std::vector<std::vector<Vec>> outs;
    for (int d = 0; d < (bidir ? 2 : 1); ++d) {
      std::string s = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      torch::Tensor wih = get("weight_ih" + s), whh = get("weight_hh" + s), bih = get("bias_ih" + s),
                    bhh = get("bias_hh" + s);
      Vec h(static_cast<size_t>(hidden), 0.0), c(static_cast<size_t>(hidden), 0.0);
      std::vector<Vec> out(L);
      for (size_t i = 0; i < L; ++i) {
        size_t t = d ? L - 1 - i : i;
        Vec gi = addv(matvec(wih, seq[t]), bih), gh = addv(matvec(whh, h), bhh);
        const size_t H = static_cast<size_t>(hidden);
        Vec nh(H);
        for (size_t k = 0; k < H; ++k) {
          if (mode == "rnn") {
            nh[k] = std::tanh(gi[k] + gh[k]);
          } else if (mode == "lstm") {
            double ig = sig(gi[k] + gh[k]), fg = sig(gi[H + k] + gh[H + k]), gg = std::tanh(gi[2 * H + k] + gh[2 * H + k]),
                   og = sig(gi[3 * H + k] + gh[3 * H + k]);
            c[k] = fg * c[k] + ig * gg;
            nh[k] = og * std::tanh(c[k]);
          } else {
            double r = sig(gi[k] + gh[k]), z = sig(gi[H + k] + gh[H + k]);
            double n = std::tanh(gi[2 * H + k] + r * gh[2 * H + k]);
            nh[k] = (1 - z) * n + z * h[k];
          }
        }
        h = nh;
        out[t] = h;
      }
      outs.push_back(out);
    }
    for (size_t t = 0; t < L; ++t) {
      seq[t] = outs[0][t];
      if (bidir) seq[t].insert(seq[t].end(), outs[1][t].begin(), outs[1][t].end());
    }
  }
  return seq;
}

TEST(LibtorchNn, RecurrentLayersMatchTheirEquations) {
  torch::manual_seed(11);
  const int I = 3, H = 4, T = 5, B = 2;
  for (auto dev : devices()) {
    for (std::string mode : {"rnn", "lstm", "gru"}) {
      SCOPED_TRACE(mode + " on " + dev.str());
      std::shared_ptr<torch::nn::Module> m;
      std::function<torch::Tensor(const torch::Tensor&)> run;
      if (mode == "rnn") {
        torch::nn::RNN r(torch::nn::RNNOptions(I, H).num_layers(2).bidirectional(true).batch_first(true));
        m = r.ptr();
        run = [r](const torch::Tensor& x) { return std::get<0>(r->forward(x)); };
      } else if (mode == "lstm") {
        torch::nn::LSTM r(torch::nn::LSTMOptions(I, H).num_layers(2).bidirectional(true).batch_first(true));
        m = r.ptr();
        run = [r](const torch::Tensor& x) { return std::get<0>(r->forward(x)); };
      } else {
        torch::nn::GRU r(torch::nn::GRUOptions(I, H).num_layers(2).bidirectional(true).batch_first(true));
        m = r.ptr();
        run = [r](const torch::Tensor& x) { return std::get<0>(r->forward(x)); };
      }
      m->to(torch::kDouble);
      m->to(dev);
      torch::Tensor x = torch::randn({B, T, I}, torch::kDouble);
      torch::Tensor y = run(x.to(dev)).cpu();
      ASSERT_EQ(y.sizes(), (std::vector<int64_t>{B, T, 2 * H}));
      std::vector<double> xv = x.to_vector<double>(), yv = y.to_vector<double>();
      for (int b = 0; b < B; ++b) {
        std::vector<Vec> seq(T);
        for (int t = 0; t < T; ++t) seq[static_cast<size_t>(t)] = Vec(xv.begin() + (b * T + t) * I, xv.begin() + (b * T + t + 1) * I);
        std::vector<Vec> ref = reference(mode, *m, 2, true, H, seq);
        for (int t = 0; t < T; ++t)
          for (int k = 0; k < 2 * H; ++k)
            EXPECT_NEAR(yv[static_cast<size_t>((b * T + t) * 2 * H + k)], ref[static_cast<size_t>(t)][static_cast<size_t>(k)], 1e-12);
      }
      // Gradients with respect to the input by finite differences (the parameters get theirs
      // through the same ops).
      torch::Tensor xs = torch::randn({B, 2, I}, torch::kDouble).requires_grad_(true);
      EXPECT_TRUE(torch::autograd::gradcheck([&](const std::vector<torch::Tensor>& in) { return run(in[0].to(dev)).cpu(); },
                                             {xs}));
    }
  }
}

TEST(LibtorchNn, RecurrentStatesShapesAndCells) {
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(3, 5).num_layers(2).proj_size(2));
  EXPECT_EQ(lstm->named_parameters().size(), 10u);  // per layer: w_ih, w_hh, b_ih, b_hh, w_hr
  auto out = lstm->forward(torch::randn({4, 2, 3}));
  EXPECT_EQ(std::get<0>(out).sizes(), (std::vector<int64_t>{4, 2, 2}));
  EXPECT_EQ(std::get<0>(std::get<1>(out)).sizes(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(std::get<1>(std::get<1>(out)).sizes(), (std::vector<int64_t>{2, 2, 5}));
  // The last output of a one-layer forward LSTM is its h_n; feeding (h_n, c_n) continues the sequence.
  torch::nn::LSTM one(3, 4);
  torch::Tensor seq = torch::randn({6, 1, 3});
  auto full = one->forward(seq);
  auto first = one->forward(seq.slice(0, 0, 3));
  auto rest = one->forward(seq.slice(0, 3, 6), std::get<1>(first));
  EXPECT_TRUE(torch::allclose(std::get<0>(full).select(0, 5), std::get<0>(std::get<1>(full)).select(0, 0)));
  EXPECT_TRUE(torch::allclose(std::get<0>(rest), std::get<0>(full).slice(0, 3, 6), 1e-5, 1e-6));
  // Unbatched input, and a wrong hidden state.
  torch::nn::GRU gru(3, 4);
  EXPECT_EQ(std::get<0>(gru->forward(torch::randn({6, 3}))).sizes(), (std::vector<int64_t>{6, 4}));
  EXPECT_THROW(gru->forward(torch::randn({6, 2, 3}), torch::zeros({1, 3, 4})), ember::ShapeError);
  EXPECT_THROW(gru->forward(torch::randn({6, 2, 5})), ember::ShapeError);
  // Cells: one step of the layer.
  torch::nn::LSTMCell cell(3, 4);
  torch::Tensor xin = torch::randn({2, 3});
  auto hc = cell->forward(xin);
  torch::Tensor gates = torch::nn::functional::linear(xin, cell->weight_ih, cell->bias_ih) + cell->bias_hh;
  auto g = gates.chunk(4, 1);
  torch::Tensor c = g[0].sigmoid() * g[2].tanh();
  EXPECT_TRUE(torch::allclose(std::get<1>(hc), c, 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(std::get<0>(hc), g[3].sigmoid() * c.tanh(), 1e-5, 1e-6));
  torch::nn::GRUCell gc(3, 4);
  EXPECT_EQ(gc(torch::randn({3})).sizes(), (std::vector<int64_t>{4}));
  torch::nn::RNNCell rc(torch::nn::RNNCellOptions(3, 4).nonlinearity(torch::kReLU));
  EXPECT_GE(rc(torch::randn({2, 3})).min().item<float>(), 0.0f);
  std::ostringstream os;
  os << *lstm;
  EXPECT_NE(os.str().find("LSTM(input_size=3, hidden_size=5, num_layers=2, proj_size=2)"), std::string::npos) << os.str();
}
}  // namespace

namespace {
TEST(LibtorchNn, LossFamilyMatchesItsFormulas) {
  for (auto dev : devices()) {
    SCOPED_TRACE(dev.str());
    auto o = torch::TensorOptions(torch::kDouble).device(dev);
    std::vector<double> xv{0.3, -1.2, 2.5, 0.05}, tv{1.0, -1.0, -1.0, 1.0}, pv{0.2, 0.1, 0.4, 0.3};
    torch::Tensor x = torch::tensor(xv, o), t = torch::tensor(tv, o), p = torch::tensor(pv, o);
    auto mean = [](const std::vector<double>& v) {
      double s = 0;
      for (double e : v) s += e;
      return s / static_cast<double>(v.size());
    };
    std::vector<double> huber, soft, hinge, rank, kl, pois;
    for (size_t i = 0; i < 4; ++i) {
      const double d = xv[i] - pv[i];
      huber.push_back(std::fabs(d) < 0.5 ? 0.5 * d * d : 0.5 * (std::fabs(d) - 0.25));
      soft.push_back(std::log1p(std::exp(-tv[i] * xv[i])));
      hinge.push_back(tv[i] == 1 ? xv[i] : std::max(0.0, 1.0 - xv[i]));
      rank.push_back(std::max(0.0, -tv[i] * (xv[i] - pv[i]) + 0.1));
      kl.push_back(pv[i] * (std::log(pv[i]) - xv[i]));
      pois.push_back(std::exp(xv[i]) - pv[i] * xv[i]);
    }
    EXPECT_NEAR(torch::nn::HuberLoss(torch::nn::HuberLossOptions().delta(0.5))(x, p).item<double>(), mean(huber), 1e-14);
    EXPECT_NEAR(F::soft_margin_loss(x, t).item<double>(), mean(soft), 1e-14);
    EXPECT_NEAR(F::hinge_embedding_loss(x, t).item<double>(), mean(hinge), 1e-14);
    EXPECT_NEAR(F::margin_ranking_loss(x, p, t, F::MarginRankingLossFuncOptions().margin(0.1)).item<double>(),
                mean(rank), 1e-14);
    EXPECT_NEAR(F::kl_div(x, p, F::KLDivFuncOptions(torch::kSum)).item<double>(), mean(kl) * 4, 1e-14);
    EXPECT_NEAR(F::kl_div(x.view({2, 2}), p.view({2, 2}), F::KLDivFuncOptions(torch::kBatchMean)).item<double>(),
                mean(kl) * 2, 1e-14);
    EXPECT_NEAR(torch::nn::PoissonNLLLoss()(x, p).item<double>(), mean(pois), 1e-14);
    EXPECT_EQ(F::mse_loss(x, p, F::MSELossFuncOptions(torch::kNone)).sizes(), (std::vector<int64_t>{4}));
    EXPECT_THROW(F::huber_loss(x, p, F::HuberLossFuncOptions(7)), ember::ValueError);
    // Two-row inputs: cosine embedding, triplet margin, multilabel soft margin, cross entropy with
    // a class weight (log-softmax + nll_loss).
    torch::Tensor a = torch::tensor({1.0, 2.0, 0.5, -1.0, 0.0, 3.0}, o).view({2, 3});
    torch::Tensor b = torch::tensor({0.5, 1.0, 1.0, 2.0, 1.0, -1.0}, o).view({2, 3});
    torch::Tensor y = torch::tensor({1.0, -1.0}, o);
    std::vector<double> av = a.cpu().to_vector<double>(), bv = b.cpu().to_vector<double>();
    double cos_loss = 0;
    for (int r = 0; r < 2; ++r) {
      double ab = 0, aa = 0, bb = 0;
      for (int c = 0; c < 3; ++c) ab += av[r * 3 + c] * bv[r * 3 + c], aa += av[r * 3 + c] * av[r * 3 + c],
                                 bb += bv[r * 3 + c] * bv[r * 3 + c];
      const double cs = ab / std::sqrt((aa + 1e-12) * (bb + 1e-12));
      cos_loss += r == 0 ? 1 - cs : std::max(0.0, cs - 0.2);
    }
    EXPECT_NEAR(F::cosine_embedding_loss(a, b, y, F::CosineEmbeddingLossFuncOptions().margin(0.2)).item<double>(),
                cos_loss / 2, 1e-14);
    torch::Tensor w = torch::tensor({1.0, 2.0, 0.5}, o);
    torch::Tensor target = torch::tensor({2, 0}, torch::TensorOptions(torch::kInt64).device(dev));
    double ce = 0, wsum = 0;
    for (int r = 0; r < 2; ++r) {
      double z = 0;
      for (int c = 0; c < 3; ++c) z += std::exp(av[r * 3 + c]);
      const int64_t k = r == 0 ? 2 : 0;
      const double wk = k == 2 ? 0.5 : 1.0;
      ce += -wk * (av[r * 3 + k] - std::log(z));
      wsum += wk;
    }
    EXPECT_NEAR(F::cross_entropy(a, target, F::CrossEntropyFuncOptions().weight(w)).item<double>(), ce / wsum, 1e-14);
    // Gradients of the composed losses by finite differences.
    torch::Tensor ac = a.cpu().requires_grad_(true), bc = b.cpu().requires_grad_(true);
    EXPECT_TRUE(torch::autograd::gradcheck([&](const std::vector<torch::Tensor>& in) {
      torch::Tensor i0 = in[0].to(dev), i1 = in[1].to(dev);
      return (F::triplet_margin_loss(i0, i1, i1.flip({0}), F::TripletMarginLossFuncOptions().swap(true)) +
              F::multilabel_soft_margin_loss(i0, (i1 > 0.7).to(torch::kDouble)) +
              F::cosine_embedding_loss(i0, i1, y) + F::huber_loss(i0, i1) + F::kl_div(i0, i1.abs()))
          .cpu();
    }, {ac, bc}));
  }
}

TEST(LibtorchNn, PoolingConvDistanceAndShapeForms) {
  for (auto dev : devices()) {
    SCOPED_TRACE(dev.str());
    auto o = torch::TensorOptions(torch::kFloat).device(dev);
    torch::Tensor x = torch::tensor({1.0f, 3.0f, 2.0f, 5.0f, 4.0f, 0.0f}, o).view({1, 1, 6});
    EXPECT_EQ(F::max_pool1d(x, F::MaxPool1dFuncOptions(2)).cpu().to_vector<float>(), (std::vector<float>{3, 5, 4}));
    EXPECT_EQ(torch::nn::AvgPool1d(torch::nn::AvgPool1dOptions(3))(x).cpu().to_vector<float>(),
              (std::vector<float>{2, 3}));
    EXPECT_EQ(F::adaptive_avg_pool1d(x, F::AdaptiveAvgPool1dFuncOptions(2)).cpu().to_vector<float>(),
              (std::vector<float>{2, 3}));
    // LP pooling with p = 2: sqrt of the window's sum of squares.
    std::vector<float> lp = F::lp_pool1d(x, F::LPPool1dFuncOptions(2, 2)).cpu().to_vector<float>();
    EXPECT_NEAR(lp[0], std::sqrt(10.0f), 1e-5);
    EXPECT_NEAR(lp[1], std::sqrt(29.0f), 1e-5);
    // conv1d and conv_transpose1d with FuncOptions: a [1, 1, 2] kernel of ones sums neighbours.
    torch::Tensor k = torch::ones({1, 1, 2}, o);
    EXPECT_EQ(F::conv1d(x, k, F::Conv1dFuncOptions().stride(2)).cpu().to_vector<float>(), (std::vector<float>{4, 7, 4}));
    EXPECT_EQ(F::conv_transpose1d(torch::ones({1, 1, 2}, o), k, F::ConvTranspose1dFuncOptions().bias(torch::ones({1}, o)))
                  .cpu().to_vector<float>(),
              (std::vector<float>{2, 3, 2}));
    EXPECT_EQ(F::conv2d(torch::ones({1, 1, 3, 3}, o), torch::ones({2, 1, 2, 2}, o), F::Conv2dFuncOptions().padding(1))
                  .sizes(),
              (std::vector<int64_t>{1, 2, 4, 4}));
    // Distances, normalize, one_hot, pixel (un)shuffle.
    torch::Tensor a = torch::tensor({3.0f, 4.0f, 1.0f, 0.0f}, o).view({2, 2});
    torch::Tensor b = torch::tensor({4.0f, 3.0f, 0.0f, 2.0f}, o).view({2, 2});
    std::vector<float> cs = torch::nn::CosineSimilarity()(a, b).cpu().to_vector<float>();
    EXPECT_NEAR(cs[0], 24.0f / 25.0f, 1e-6);
    EXPECT_NEAR(cs[1], 0.0f, 1e-6);
    std::vector<float> pd = F::pairwise_distance(a, b).cpu().to_vector<float>();
    EXPECT_NEAR(pd[0], std::sqrt(2.0f), 1e-5);
    EXPECT_NEAR(pd[1], std::sqrt(5.0f), 1e-5);
    EXPECT_EQ(F::normalize(a).cpu().to_vector<float>(), (std::vector<float>{0.6f, 0.8f, 1.0f, 0.0f}));
    torch::Tensor idx = torch::tensor({2, 0}, torch::TensorOptions(torch::kInt64).device(dev));
    EXPECT_EQ(F::one_hot(idx, 3).cpu().to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 1, 0, 0}));
    EXPECT_THROW(F::one_hot(idx, 2), ember::IndexError);
    torch::Tensor img = torch::arange(16, o).view({1, 4, 2, 2});
    torch::Tensor up = torch::nn::PixelShuffle(2)(img);
    EXPECT_EQ(up.sizes(), (std::vector<int64_t>{1, 1, 4, 4}));
    // out[0, 0, h * 2 + i, w * 2 + j] = in[0, i * 2 + j, h, w]
    EXPECT_EQ(up.view({16}).cpu().to_vector<float>(),
              (std::vector<float>{0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15}));
    EXPECT_TRUE(torch::equal(torch::nn::PixelUnshuffle(2)(up).cpu(), img.cpu()));
    EXPECT_EQ(torch::nn::Flatten()(img).sizes(), (std::vector<int64_t>{1, 16}));
    EXPECT_EQ(torch::nn::Unflatten(torch::nn::UnflattenOptions(1, {2, 2}))(img).sizes(),
              (std::vector<int64_t>{1, 2, 2, 2, 2}));
  }
}
}  // namespace

namespace {
TEST(LibtorchOptim, ParamGroupsOptionsDriveTheStep) {
  torch::Tensor w = torch::ones({2}).requires_grad_(true);
  torch::optim::SGD opt({w}, torch::optim::SGDOptions(0.1));
  ASSERT_EQ(opt.param_groups().size(), 1u);
  EXPECT_EQ(opt.param_groups()[0].params().size(), 1u);
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].options().get_lr(), 0.1);
  auto step = [&] {
    opt.zero_grad();
    (w * torch::tensor({1.0f, 2.0f})).sum().backward();
    opt.step();
  };
  // libtorch's idiom for a learning-rate change: through the group's options.
  for (auto& group : opt.param_groups()) static_cast<torch::optim::SGDOptions&>(group.options()).lr(0.5);
  step();
  EXPECT_EQ(w.detach().to_vector<float>(), (std::vector<float>{0.5f, 0.0f}));
  EXPECT_DOUBLE_EQ(opt.lr(), 0.5);
  // An lr set on the optimizer (as ember's schedulers do) shows in the group.
  opt.set_lr(0.25);
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].options().get_lr(), 0.25);
  opt.param_groups()[0].options().set_lr(1.0);
  step();
  EXPECT_EQ(w.detach().to_vector<float>(), (std::vector<float>{-0.5f, -2.0f}));
  // Other hyperparameters too: momentum from the second step on.
  static_cast<torch::optim::SGDOptions&>(opt.param_groups()[0].options()).lr(0.1).momentum(0.5);
  step();  // buf = g
  step();  // buf = 0.5 g + g
  EXPECT_NEAR(w.detach().to_vector<float>()[0], -0.5f - 0.1f - 0.15f, 1e-6);
  torch::optim::Adam adam({w}, torch::optim::AdamOptions(1e-3));
  auto& ao = static_cast<torch::optim::AdamOptions&>(adam.param_groups()[0].options());
  EXPECT_DOUBLE_EQ(std::get<0>(ao.betas()), 0.9);
  torch::optim::OptimizerParamGroup copy = adam.param_groups()[0];
  copy.options().set_lr(5.0);
  EXPECT_DOUBLE_EQ(adam.param_groups()[0].options().get_lr(), 1e-3);  // a copy has its own options
}
}  // namespace
