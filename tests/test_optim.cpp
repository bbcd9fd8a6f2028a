// optim: SGD and AdamW against updates computed by hand in float64, on cpu and npu; the cosine
// schedule; clip_grad_norm_.
#include <algorithm>
#include <cmath>
#include <memory>

#include "test_util.h"

using namespace ember;

namespace {

// A parameter with a fixed gradient.
Tensor param_with_grad(std::vector<double> p, std::vector<double> g, Device dev, DType dt = kFloat64) {
  Tensor t = tensor(p, {}, dt).to(dev).requires_grad_();
  t.set_grad(tensor(g, {}, dt).to(dev));
  return t;
}

TEST(Optim, SgdPlainMomentumNesterovAndWeightDecay) {
  for (Device dev : {Device("cpu"), Device("npu:0")}) {
    // plain: p -= lr g
    Tensor a = param_with_grad({1.0, -2.0}, {0.5, 0.25}, dev);
    optim::SGD plain({a}, {0.1});
    plain.step();
    EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{1.0 - 0.05, -2.0 - 0.025}));
    // momentum 0.9, weight decay 0.1, two steps with the same grad
    Tensor b = param_with_grad({1.0}, {0.5}, dev);
    optim::SGD mom({b}, {0.1, 0.9, 0.1});
    double p = 1.0, buf = 0;
    for (int s = 0; s < 2; ++s) {
      mom.step();
      double g = 0.5 + 0.1 * p;
      buf = s == 0 ? g : 0.9 * buf + g;
      p -= 0.1 * buf;
      EXPECT_NEAR(b.item<double>(), p, 1e-15) << dev << " step " << s;
    }
    EXPECT_TRUE(mom.state(b).count("momentum_buffer"));
    // nesterov
    Tensor c = param_with_grad({2.0}, {1.0}, dev);
    optim::SGD nest({c}, {0.5, 0.5, 0.0, true});
    nest.step();
    nest.step();  // buf: 1, then 1.5; updates: g + 0.5 buf = 1.5, then 1.75
    EXPECT_NEAR(c.item<double>(), 2.0 - 0.5 * 1.5 - 0.5 * 1.75, 1e-15) << dev;
  }
  ember_test::expect_error<ValueError>([] { optim::SGD({ones({1}).requires_grad_()}, {0.1, 0.0, 0.0, true}); },
                                       {"nesterov"});
}

TEST(Optim, AdamWMatchesTheUpdateRuleOnCpuAndNpu) {
  const double lr = 1e-2, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.05;
  for (Device dev : {Device("cpu"), Device("npu:0")}) {
    Tensor p = param_with_grad({0.5, -1.5, 2.0}, {0.1, -0.2, 0.3}, dev);
    optim::AdamW opt({p}, {lr, {b1, b2}, eps, wd});
    std::vector<double> x{0.5, -1.5, 2.0}, m(3, 0), v(3, 0);
    for (int t = 1; t <= 3; ++t) {
      std::vector<double> g{0.1 * t, -0.2, 0.3 / t};
      p.set_grad(tensor(g, {}, kFloat64).to(dev));
      opt.step();
      for (int i = 0; i < 3; ++i) {
        x[i] *= 1 - lr * wd;
        m[i] = b1 * m[i] + (1 - b1) * g[i];
        v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
        double mhat_scale = lr / (1 - std::pow(b1, t));
        x[i] -= mhat_scale * m[i] / (std::sqrt(v[i]) / std::sqrt(1 - std::pow(b2, t)) + eps);
      }
      std::vector<double> got = p.to_vector<double>();
      // float32 hyperparameters on the NPU (CANN's aclnnApplyAdamWV2 takes floats)
      double tol = dev.is_npu() ? 1e-7 : 1e-14;
      for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[i], x[i], tol) << dev << " step " << t << " element " << i;
    }
    const auto& st = opt.state(p);
    EXPECT_EQ(st.at("step").item<int64_t>(), 3);
    EXPECT_EQ(st.at("exp_avg").device(), dev);
    EXPECT_NEAR(st.at("exp_avg_sq").to_vector<double>()[1], v[1], (dev.is_npu() ? 5e-5 : 1e-12) * v[1]);  // 1 - float(0.999) is off by 1.3e-5 relative
  }
  // A parameter without a gradient is skipped; defaults are PyTorch's.
  Tensor q = ones({2}).requires_grad_();
  optim::AdamW opt({q});
  EXPECT_EQ(opt.options().weight_decay, 1e-2);
  EXPECT_EQ(opt.options().betas.second, 0.999);
  opt.step();
  EXPECT_TRUE(opt.state(q).empty());
  ember_test::expect_error<ValueError>([] { optim::AdamW({ones({1}).requires_grad_()}, {1e-3, {1.0, 0.9}}); }, {"betas"});
}

// AdamW's update (decoupled decay, bias corrections, AMSGrad, maximize) in float64, by hand.
struct AdamWRule {
  double lr, b1, b2, eps, wd;
  bool amsgrad, maximize;
  void step(std::vector<double>& x, std::vector<double>& m, std::vector<double>& v, std::vector<double>& vmax,
            const std::vector<double>& g, int t) const {
    for (size_t i = 0; i < x.size(); ++i) {
      double gi = maximize ? -g[i] : g[i];
      x[i] *= 1 - lr * wd;
      m[i] = b1 * m[i] + (1 - b1) * gi;
      v[i] = b2 * v[i] + (1 - b2) * gi * gi;
      vmax[i] = std::max(vmax[i], v[i]);
      double denom = std::sqrt(amsgrad ? vmax[i] : v[i]) / std::sqrt(1 - std::pow(b2, t)) + eps;
      x[i] -= lr / (1 - std::pow(b1, t)) * m[i] / denom;
    }
  }
};

// AMSGrad divides by the running max of v (the gradients shrink, so v falls below its max after
// the first step); maximize negates the gradient. Both against the update computed by hand.
TEST(Optim, AdamWAmsgradAndMaximizeMatchTheUpdateRuleOnCpuAndNpu) {
  const double lr = 1e-2, b1 = 0.9, b2 = 0.6, eps = 1e-8, wd = 0.05;
  for (Device dev : {Device("cpu"), Device("npu:0")}) {
    for (bool amsgrad : {false, true}) {
      for (bool maximize : {false, true}) {
        if (!amsgrad && !maximize) continue;  // the plain rule has its own test
        Tensor p = param_with_grad({0.5, -1.5}, {0, 0}, dev);
        optim::AdamWOptions o{lr, {b1, b2}, eps, wd};
        o.amsgrad = amsgrad;
        o.maximize = maximize;
        optim::AdamW opt({p}, o);
        const AdamWRule rule{lr, b1, b2, eps, wd, amsgrad, maximize};
        std::vector<double> x{0.5, -1.5}, m(2, 0), v(2, 0), vmax(2, 0);
        for (int t = 1; t <= 4; ++t) {
          std::vector<double> g{1.0 / (t * t * t), -0.5 / t};
          p.set_grad(tensor(g, {}, kFloat64).to(dev));
          opt.step();
          rule.step(x, m, v, vmax, g, t);
          std::vector<double> got = p.to_vector<double>();
          double tol = dev.is_npu() ? 1e-7 : 1e-14;
          for (int i = 0; i < 2; ++i)
            EXPECT_NEAR(got[i], x[i], tol) << dev << " amsgrad " << amsgrad << " maximize " << maximize << " step " << t;
        }
        // AMSGrad really used the max: v of element 0 fell well below its max.
        if (amsgrad) {
          EXPECT_LT(v[0], 0.9 * vmax[0]);
          std::vector<double> mx = opt.state(p).at("max_exp_avg_sq").to_vector<double>();
          EXPECT_NEAR(mx[0], vmax[0], (dev.is_npu() ? 1e-4 : 1e-12) * vmax[0]) << dev;
        } else {
          EXPECT_EQ(opt.state(p).count("max_exp_avg_sq"), 0u);
        }
        // maximize ascends: element 1's gradient is negative, so it moved down (plain AdamW: up).
        if (maximize) {
          EXPECT_LT(p.to_vector<double>()[1], -1.5) << dev;
        }
      }
    }
  }
}

// float32 runs the fused one-pass update (8 lanes, then the scalar tail): 301 elements cover both,
// with every option, against the rule in float64. Tolerance: x and the update are O(1) and O(lr);
// each step rounds a dozen float32 operations (6e-8 relative each) and lr, betas and the decay
// factor are rounded to float once, so 4 steps stay well within 2e-6.
TEST(Optim, AdamWFloat32MatchesTheUpdateRuleAcrossVectorAndTail) {
  const int n = 8 * 37 + 5;
  const double lr = 0.1, b1 = 0.9, b2 = 0.6, eps = 1e-8, wd = 0.05;
  for (Device dev : {Device("cpu"), Device("npu:0")}) {
    for (int variant = 0; variant < 4; ++variant) {
      const bool amsgrad = variant & 1, maximize = variant & 2;
      std::vector<double> x(n), m(n, 0), v(n, 0), vmax(n, 0);
      for (int i = 0; i < n; ++i) x[i] = std::sin(0.37 * i);
      // Start from the float32 values the tensor holds.
      for (double& xi : x) xi = static_cast<float>(xi);
      Tensor p = tensor(x, {}, kFloat32).to(dev).requires_grad_();
      optim::AdamWOptions o{lr, {b1, b2}, eps, wd};
      o.amsgrad = amsgrad;
      o.maximize = maximize;
      optim::AdamW opt({p}, o);
      const AdamWRule rule{lr, b1, b2, eps, wd, amsgrad, maximize};
      for (int t = 1; t <= 4; ++t) {
        std::vector<double> g(n);
        for (int i = 0; i < n; ++i) g[i] = static_cast<float>(std::cos(0.11 * i * t) / (t * t));
        p.set_grad(tensor(g, {}, kFloat32).to(dev));
        opt.step();
        rule.step(x, m, v, vmax, g, t);
      }
      std::vector<double> got = p.to(kFloat64).to_vector<double>();
      double worst = 0;
      for (int i = 0; i < n; ++i) worst = std::max(worst, std::fabs(got[i] - x[i]));
      EXPECT_LE(worst, 2e-6) << dev << " amsgrad " << amsgrad << " maximize " << maximize;
    }
  }
}

// Checkpoint and resume: an optimizer restored from a safetensors file of another one's
// state_dict continues with exactly the same updates (on cpu and npu, AdamW and SGD momentum).
TEST(Optim, StateDictRoundTripsThroughSafetensorsAndResumesExactly) {
  for (Device dev : {Device("cpu"), Device("npu:0")}) {
    for (bool adam : {true, false}) {
      auto make_params = [&] {
        return std::vector<Tensor>{tensor({0.5, -1.5, 2.0}, {}, kFloat32).to(dev).requires_grad_(),
                                   tensor({1.0, 2.0}, {}, kFloat32).to(dev).requires_grad_()};
      };
      auto make_opt = [&](std::vector<Tensor> ps) -> std::unique_ptr<optim::Optimizer> {
        if (adam) {
          optim::AdamWOptions o{1e-2};
          o.amsgrad = true;
          return std::make_unique<optim::AdamW>(ps, o);
        }
        return std::make_unique<optim::SGD>(ps, optim::SGDOptions{0.1, 0.9});
      };
      auto grads = [&](std::vector<Tensor>& ps, int t) {
        ps[0].set_grad(tensor({0.1 * t, -0.2, 0.3 / t}, {}, kFloat32).to(dev));
        ps[1].set_grad(tensor({-0.5 / t, 0.25 * t}, {}, kFloat32).to(dev));
      };
      std::vector<Tensor> a = make_params(), b = make_params();
      auto oa = make_opt(a), ob = make_opt(b);
      for (int t = 1; t <= 3; ++t) {
        grads(a, t);
        oa->step();
      }
      oa->set_lr(oa->lr() * 0.5);
      // b starts from a's parameters and a's optimizer state, read back from a file.
      {
        NoGradGuard ng;
        for (size_t i = 0; i < a.size(); ++i) b[i].copy_(a[i]);
      }
      std::string path = ::testing::TempDir() + "ember_optim_state.safetensors";
      nn::save_safetensors(oa->state_dict(), path);
      ob->load_state_dict(nn::load_safetensors(path));
      EXPECT_EQ(ob->steps(), 3);
      EXPECT_EQ(ob->lr(), oa->lr());
      EXPECT_EQ(ob->state(b[0]).begin()->second.device(), dev);
      for (int t = 4; t <= 5; ++t) {
        grads(a, t);
        grads(b, t);
        oa->step();
        ob->step();
      }
      for (size_t i = 0; i < a.size(); ++i)
        EXPECT_EQ(a[i].to_vector<float>(), b[i].to_vector<float>()) << dev << (adam ? " AdamW" : " SGD") << " param " << i;
    }
  }
}

TEST(Optim, LoadStateDictReportsEveryProblemAndLoadsNothing) {
  Tensor p = tensor({1.0f, 2.0f}).requires_grad_(), q = ones({2, 2}).requires_grad_();
  optim::AdamW src({p, q});
  p.set_grad(ones({2}));
  q.set_grad(ones({2, 2}));
  src.step();
  std::map<std::string, Tensor> sd = src.state_dict();
  EXPECT_EQ(sd.size(), 8u);  // 2 x (step, exp_avg, exp_avg_sq) + lr + steps
  EXPECT_TRUE(sd.count("state.1.exp_avg_sq"));

  Tensor p2 = zeros({2}).requires_grad_(), q2 = zeros({2, 2}).requires_grad_();
  optim::AdamW dst({p2, q2}, {5e-3});
  auto bad = sd;
  bad["state.0.exp_avg"] = zeros({3});           // shape
  bad["state.1.exp_avg_sq"] = zeros({2, 2}, kFloat64);  // dtype
  bad.erase("state.1.step");                     // partial state
  bad["state.7.exp_avg"] = zeros({2});           // index out of range
  bad["state.0.momentum_buffer"] = zeros({2});   // not AdamW's
  bad["extra"] = zeros({1});                     // malformed key
  ember_test::expect_error<ValueError>([&] { dst.load_state_dict(bad); },
                                       {"AdamW.load_state_dict: 6 problem(s), nothing was loaded", "'state.0.exp_avg': shape [3]",
                                        "'state.1.exp_avg_sq': dtype float64", "parameter 1 lacks 'state.1.step'",
                                        "index 7 out of range (2 parameters)", "keeps no state 'momentum_buffer'",
                                        "unexpected key 'extra'"});
  EXPECT_TRUE(dst.state(p2).empty());
  EXPECT_EQ(dst.lr(), 5e-3);
  EXPECT_EQ(dst.steps(), 0);
  auto no_lr = sd;
  no_lr.erase("lr");
  ember_test::expect_error<ValueError>([&] { dst.load_state_dict(no_lr); }, {"missing key 'lr'"});
  // AMSGrad's extra state is refused by a plain AdamW and required by an AMSGrad one.
  optim::AdamWOptions ams;
  ams.amsgrad = true;
  optim::AdamW dst_ams({p2, q2}, ams);
  ember_test::expect_error<ValueError>([&] { dst_ams.load_state_dict(sd); }, {"lacks 'state.0.max_exp_avg_sq'"});
  dst.load_state_dict(sd);
  EXPECT_EQ(dst.steps(), 1);
  EXPECT_EQ(dst.state(q2).at("exp_avg").to_vector<float>(), src.state(q).at("exp_avg").to_vector<float>());
  EXPECT_FALSE(dst.state(q2).at("exp_avg").is_same(src.state(q).at("exp_avg")));  // copied, not aliased
}

TEST(Optim, TrainingAnMlpLowersTheLossAndZeroGradClears) {
  manual_seed(0);
  auto net = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Linear>(4, 16), std::make_shared<nn::RMSNorm>(16), std::make_shared<nn::Linear>(16, 1)});
  Tensor x = randn({64, 4}), y = x.sum({1}, true);
  optim::AdamW opt(net->parameters(), {3e-2});
  double first = 0, last = 0;
  for (int s = 0; s < 60; ++s) {
    opt.zero_grad();
    Tensor loss = nn::functional::mse_loss((*net)(x), y);
    loss.backward();
    opt.step();
    (s == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, 0.1 * first);
  opt.zero_grad();
  for (const Tensor& p : net->parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(Optim, CosineScheduleWarmsUpThenDecays) {
  Tensor p = ones({1}).requires_grad_();
  optim::SGD opt({p}, {1.0});
  optim::CosineSchedule sched(opt, 4, 14, 0.1);
  std::vector<double> lrs;
  for (int t = 0; t < 16; ++t) {
    lrs.push_back(opt.lr());
    sched.step();
  }
  EXPECT_DOUBLE_EQ(lrs[0], 0.25);
  EXPECT_DOUBLE_EQ(lrs[3], 1.0);
  EXPECT_DOUBLE_EQ(lrs[4], 1.0);                                       // peak after warmup
  EXPECT_NEAR(lrs[9], 0.1 + 0.9 * 0.5 * (1 + std::cos(M_PI * 0.5)), 1e-15);  // halfway
  EXPECT_DOUBLE_EQ(lrs[14], 0.1);
  EXPECT_DOUBLE_EQ(lrs[15], 0.1);  // held at min_lr
  ember_test::expect_error<ValueError>([&] { optim::CosineSchedule(opt, 5, 3); }, {"warmup_steps <= total_steps"});
  // Resuming: a fresh schedule set to step 9 continues exactly as the one stepped there.
  Tensor q = ones({1}).requires_grad_();
  optim::SGD opt2({q}, {1.0});
  optim::CosineSchedule resumed(opt2, 4, 14, 0.1);
  resumed.set_step(9);
  EXPECT_EQ(resumed.last_step(), 9);
  EXPECT_DOUBLE_EQ(opt2.lr(), lrs[9]);
  resumed.step();
  EXPECT_DOUBLE_EQ(opt2.lr(), lrs[10]);
}

TEST(Optim, ClipGradNormScalesOnlyWhenAboveTheLimit) {
  for (Device dev : {Device("cpu"), Device("npu:0")}) {
    Tensor a = param_with_grad({0, 0}, {3.0, 0.0}, dev), b = param_with_grad({0}, {4.0}, dev);
    EXPECT_NEAR(nn::clip_grad_norm_({a, b}, 10.0), 5.0, 1e-12);
    EXPECT_EQ(b.grad().item<double>(), 4.0);  // untouched
    EXPECT_NEAR(nn::clip_grad_norm_({a, b}, 1.0), 5.0, 1e-12);
    EXPECT_NEAR(a.grad().to_vector<double>()[0], 3.0 / (5.0 + 1e-6), 1e-12);
    EXPECT_NEAR(b.grad().item<double>(), 4.0 / (5.0 + 1e-6), 1e-12);
  }
  Tensor inf = param_with_grad({0}, {INFINITY}, Device("cpu"));
  EXPECT_TRUE(std::isinf(nn::clip_grad_norm_({inf}, 1.0)));
}

}  // namespace

// ---- learning-rate schedulers (PyTorch's closed forms; the expected values are listed by hand) ----

TEST(Schedulers, StepMultiStepAndExponentialFollowPyTorch) {
  Tensor p = zeros({2}).requires_grad_();
  auto lrs = [](optim::Optimizer& opt, optim::LRScheduler& s, int n) {
    std::vector<double> out{opt.lr()};
    for (int e = 1; e < n; ++e) {
      s.step();
      out.push_back(opt.lr());
    }
    return out;
  };
  auto near = [](const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (std::fabs(a[i] - b[i]) > 1e-12 * std::max(1.0, std::fabs(b[i]))) return false;
    return true;
  };
  {
    optim::SGD opt({p}, {0.8});
    optim::StepLR s(opt, 3, 0.5);
    EXPECT_TRUE(near(lrs(opt, s, 8), {0.8, 0.8, 0.8, 0.4, 0.4, 0.4, 0.2, 0.2}));
    s.set_epoch(9);  // resuming
    EXPECT_NEAR(opt.lr(), 0.1, 1e-15);
    EXPECT_EQ(s.last_epoch(), 9);
  }
  {
    optim::SGD opt({p}, {1.0});
    optim::MultiStepLR s(opt, {2, 5}, 0.1);
    EXPECT_TRUE(near(lrs(opt, s, 7), {1, 1, 0.1, 0.1, 0.1, 0.01, 0.01}));
  }
  {
    optim::AdamW opt({p}, {1.0});
    optim::ExponentialLR s(opt, 0.9);
    EXPECT_TRUE(near(lrs(opt, s, 4), {1, 0.9, 0.81, 0.729}));
    EXPECT_DOUBLE_EQ(s.base_lr(), 1.0);
  }
  optim::SGD opt({p}, {1.0});
  EXPECT_THROW(optim::StepLR(opt, 0), ValueError);
  EXPECT_THROW(optim::MultiStepLR(opt, {3, 2}), ValueError);
  EXPECT_THROW(optim::ExponentialLR(opt, -1), ValueError);
}

TEST(Schedulers, ReduceLROnPlateauFollowsPyTorch) {
  Tensor p = zeros({2}).requires_grad_();
  optim::SGD opt({p}, {1.0});
  optim::ReduceLROnPlateauOptions o;
  o.patience = 2;
  o.factor = 0.5;
  o.cooldown = 1;
  o.threshold = 0.1;  // relative: an improvement is below best * 0.9
  optim::ReduceLROnPlateau s(opt, o);
  // Traced by hand with torch.optim.lr_scheduler.ReduceLROnPlateau's rules: 9.5, 9.2, 9.1 are not
  // below 10 * 0.9, so the third bad epoch (> patience 2) halves the lr; 9.05 falls in the
  // cooldown; 9.0 is not below 9.0; 8.0 is; three more 8.0 halve it again.
  const std::vector<double> metrics = {10, 9.5, 9.2, 9.1, 9.05, 9.0, 8.0, 8.0, 8.0, 8.0};
  const std::vector<double> want = {1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25};
  for (size_t i = 0; i < metrics.size(); ++i) {
    s.step(metrics[i]);
    EXPECT_DOUBLE_EQ(opt.lr(), want[i]) << "epoch " << i + 1;
  }
  EXPECT_DOUBLE_EQ(s.best(), 8.0);
  // NaN is never an improvement; min_lr bounds the reductions, and a reduction below eps is skipped.
  optim::SGD opt2({p}, {1.0});
  optim::ReduceLROnPlateauOptions o2;
  o2.mode = "max";
  o2.threshold_mode = "abs";
  o2.patience = 0;
  o2.min_lr = 0.3;
  optim::ReduceLROnPlateau s2(opt2, o2);
  s2.step(1.0);  // better than -inf
  EXPECT_DOUBLE_EQ(opt2.lr(), 1.0);
  s2.step(std::nan(""));
  EXPECT_DOUBLE_EQ(opt2.lr(), 0.3);  // max(1.0 * 0.1, 0.3)
  s2.step(0.5);
  EXPECT_DOUBLE_EQ(opt2.lr(), 0.3);  // at min_lr already: skipped
  EXPECT_EQ(s2.last_epoch(), 3);
  optim::ReduceLROnPlateauOptions bad;
  bad.mode = "lowest";
  try {
    optim::ReduceLROnPlateau(opt2, bad);
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("mode must be \"min\" or \"max\", got \"lowest\""), std::string::npos) << e.what();
  }
}

// ---- Adam (L2), RMSprop, Adagrad against float64 loops written here from PyTorch's docs ----

namespace optim_oracle {
constexpr int kN = 6, kSteps = 5;
double grad_at(int t, int j) { return std::sin(0.7 * t + 1.3 * j) + (j % 2 ? 0.2 : -0.1); }
std::vector<double> start() {
  std::vector<double> p(kN);
  for (int j = 0; j < kN; ++j) p[j] = 0.5 - 0.3 * j;
  return p;
}

std::vector<double> adam(const optim::AdamOptions& o) {
  auto p = start();
  std::vector<double> m(kN, 0), v(kN, 0), vmax(kN, 0);
  for (int t = 1; t <= kSteps; ++t)
    for (int j = 0; j < kN; ++j) {
      double g = (o.maximize ? -1 : 1) * grad_at(t, j) + o.weight_decay * p[j];
      m[j] = o.betas.first * m[j] + (1 - o.betas.first) * g;
      v[j] = o.betas.second * v[j] + (1 - o.betas.second) * g * g;
      double bc1 = 1 - std::pow(o.betas.first, t), bc2 = 1 - std::pow(o.betas.second, t);
      vmax[j] = std::max(vmax[j], v[j]);
      double denom = std::sqrt((o.amsgrad ? vmax[j] : v[j]) / bc2) + o.eps;
      p[j] -= o.lr / bc1 * m[j] / denom;
    }
  return p;
}

std::vector<double> rmsprop(const optim::RMSpropOptions& o) {
  auto p = start();
  std::vector<double> v(kN, 0), m(kN, 0), buf(kN, 0);
  for (int t = 1; t <= kSteps; ++t)
    for (int j = 0; j < kN; ++j) {
      double g = (o.maximize ? -1 : 1) * grad_at(t, j) + o.weight_decay * p[j];
      v[j] = o.alpha * v[j] + (1 - o.alpha) * g * g;
      double avg;
      if (o.centered) {
        m[j] = o.alpha * m[j] + (1 - o.alpha) * g;
        avg = std::sqrt(v[j] - m[j] * m[j]) + o.eps;
      } else {
        avg = std::sqrt(v[j]) + o.eps;
      }
      if (o.momentum > 0) {
        buf[j] = o.momentum * buf[j] + g / avg;
        p[j] -= o.lr * buf[j];
      } else {
        p[j] -= o.lr * g / avg;
      }
    }
  return p;
}

std::vector<double> adagrad(const optim::AdagradOptions& o) {
  auto p = start();
  std::vector<double> sum(kN, o.initial_accumulator_value);
  for (int t = 1; t <= kSteps; ++t)
    for (int j = 0; j < kN; ++j) {
      double g = (o.maximize ? -1 : 1) * grad_at(t, j) + o.weight_decay * p[j];
      double clr = o.lr / (1 + (t - 1) * o.lr_decay);
      sum[j] += g * g;
      p[j] -= clr * g / (std::sqrt(sum[j]) + o.eps);
    }
  return p;
}

// Runs optimizer Opt (made by make(params)) for kSteps with the same gradients; max |diff| / max |want|.
template <class Make>
double run(Make make, const std::vector<double>& want, Device dev, DType dt) {
  Tensor p = tensor(start(), {kN}).to(dev, dt).requires_grad_();
  auto opt = make(std::vector<Tensor>{p});
  for (int t = 1; t <= kSteps; ++t) {
    std::vector<double> g(kN);
    for (int j = 0; j < kN; ++j) g[j] = grad_at(t, j);
    p.set_grad(tensor(g, {kN}).to(dev, dt));
    opt->step();
  }
  auto got = p.cpu().to(kFloat64).to_vector<double>();
  double worst = 0, scale = 0;
  for (int j = 0; j < kN; ++j) {
    worst = std::max(worst, std::fabs(got[j] - want[j]));
    scale = std::max(scale, std::fabs(want[j]));
  }
  return worst / scale;
}
}  // namespace optim_oracle

TEST(Optim, AdamRMSpropAdagradMatchPyTorchsRulesOnCpuAndNpu) {
  using namespace optim_oracle;
  // float64 on cpu: the same arithmetic as the oracle up to rounding order (1e-12); float32 on
  // npu: a few roundings of 6e-8 per step over 5 steps, amplified by the divisions (1e-5).
  const std::pair<Device, DType> where[] = {{Device("cpu"), kFloat64}, {Device("npu:0"), kFloat32}};
  for (auto [dev, dt] : where) {
    const double tol = dt == kFloat64 ? 1e-12 : 1e-5;
    for (bool ams : {false, true}) {
      optim::AdamOptions o;
      o.lr = 0.1, o.weight_decay = 0.3, o.amsgrad = ams, o.maximize = ams;
      EXPECT_LE(run([&](std::vector<Tensor> ps) { return std::make_unique<optim::Adam>(ps, o); }, adam(o), dev, dt), tol)
          << dev << " Adam amsgrad=" << ams;
    }
    for (int variant = 0; variant < 3; ++variant) {
      optim::RMSpropOptions o;
      o.lr = 0.05, o.weight_decay = variant == 1 ? 0.2 : 0.0;
      o.momentum = variant >= 1 ? 0.9 : 0.0, o.centered = variant == 2, o.maximize = variant == 2;
      EXPECT_LE(run([&](std::vector<Tensor> ps) { return std::make_unique<optim::RMSprop>(ps, o); }, rmsprop(o), dev, dt),
                tol)
          << dev << " RMSprop variant " << variant;
    }
    for (int variant = 0; variant < 2; ++variant) {
      optim::AdagradOptions o;
      o.lr = 0.2, o.lr_decay = variant ? 0.1 : 0.0, o.weight_decay = variant ? 0.1 : 0.0;
      o.initial_accumulator_value = variant ? 0.5 : 0.0, o.maximize = variant == 1;
      EXPECT_LE(run([&](std::vector<Tensor> ps) { return std::make_unique<optim::Adagrad>(ps, o); }, adagrad(o), dev, dt),
                tol)
          << dev << " Adagrad variant " << variant;
    }
  }
  // Adam's weight decay is L2 (added to the gradient), not AdamW's decoupled decay.
  optim::AdamOptions l2;
  l2.weight_decay = 0.5;
  optim::AdamWOptions decoupled;
  decoupled.weight_decay = 0.5;
  auto adamw_p = [&] {
    Tensor p = tensor(start(), {kN}).to(kFloat64).requires_grad_();
    optim::AdamW opt({p}, decoupled);
    p.set_grad(ones({kN}, kFloat64));
    opt.step();
    return p.to_vector<double>();
  }();
  Tensor p = tensor(start(), {kN}).to(kFloat64).requires_grad_();
  optim::Adam opt({p}, l2);
  p.set_grad(ones({kN}, kFloat64));
  opt.step();
  EXPECT_NE(p.to_vector<double>(), adamw_p);
  EXPECT_THROW(optim::RMSprop({p}, optim::RMSpropOptions{0.01, 1.5}), ValueError);
  // State for checkpoints, by PyTorch's names.
  optim::RMSpropOptions ro;
  ro.momentum = 0.9, ro.centered = true;
  optim::RMSprop r({p}, ro);
  r.step();
  std::vector<std::string> names;
  for (const auto& kv : r.state(p)) names.push_back(kv.first);
  EXPECT_EQ(names, (std::vector<std::string>{"grad_avg", "momentum_buffer", "square_avg", "step"}));
  optim::RMSprop r2({p}, ro);
  r2.load_state_dict(r.state_dict());
  EXPECT_EQ(r2.steps(), 1);
}
