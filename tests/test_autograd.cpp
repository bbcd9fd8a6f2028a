// Autograd behaviour: accumulation, retain_graph, graph freeing, diamonds, broadcasting,
// retain_grad, hooks, in-place checks, grad mode, custom functions and custom ops, and a
// 2-layer MLP against hand-derived float64 gradients.
#include <atomic>
#include <cmath>
#include <future>
#include <thread>

#include "ember/testing/reference.h"
#include "test_util.h"

using namespace ember;
using ember_test::expect_error;

namespace {

TEST(Autograd, GradFnNamesAndLeaves) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  EXPECT_TRUE(x.is_leaf());
  EXPECT_EQ(x.grad_fn(), nullptr);
  Tensor y = x * 2;
  EXPECT_FALSE(y.is_leaf());
  EXPECT_TRUE(y.requires_grad());
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward");
  EXPECT_EQ((x * x).grad_fn()->name(), "MulBackward");
  EXPECT_EQ(x.unsqueeze(0).matmul(x.unsqueeze(1)).grad_fn()->name(), "MmBackward");  // matmul: a composite over mm
  EXPECT_EQ(x.sum().grad_fn()->name(), "SumBackward");
  EXPECT_EQ(y.str(), "tensor([2., 4.], grad_fn=<MulBackward>)");
  EXPECT_EQ(x.str(), "tensor([1., 2.], requires_grad=True)");
  EXPECT_FALSE(tensor({1.0}).requires_grad());
}

TEST(Autograd, NonDifferentiableOutputsSaySo) {
  Tensor x = tensor({1.0, 3.0, 2.0}).requires_grad_();
  EXPECT_FALSE((x > 1).requires_grad());
  EXPECT_FALSE(x.argmax().requires_grad());
  EXPECT_FALSE(x.detach().requires_grad());
  EXPECT_EQ(Dispatcher::singleton().find_schema("ember::argmax").autograd_support(),
            OperatorHandle::AutogradSupport::NotDifferentiable);
  expect_error<Error>([&] { x.argmax().backward(); }, {"does not require grad and does not have a grad_fn"});
  expect_error<DTypeError>([] { ones({2}, kInt64).requires_grad_(); }, {"floating point", "int64"});
}

TEST(Autograd, GradientsAccumulateOverTwoBackwardCalls) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  (x * 3).sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{3, 3}));
  (x * x).sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{5, 7}));  // 3 + 2x
}

TEST(Autograd, RetainGraphAllowsASecondBackwardAndFreeingForbidsIt) {
  Tensor x = tensor({2.0}).requires_grad_();
  Tensor y = (x * x * x).sum();  // dy/dx = 3x^2 = 12
  y.backward(Tensor(), true);
  y.backward(Tensor(), false);
  EXPECT_EQ(x.grad().item<double>(), 24.0);
  expect_error<Error>([&] { y.backward(); }, {"MulBackward", "backward through the graph a second time", "retain_graph"});
}

TEST(Autograd, DiamondSumsBothPaths) {
  Tensor x = tensor({3.0}).requires_grad_();
  Tensor a = x * 2, b = x * x;  // x used twice
  Tensor y = (a + b) * a;       // a used twice: y = 2x(2x + x^2) = 4x^2 + 2x^3; dy/dx = 8x + 6x^2 = 78
  y.backward();
  EXPECT_EQ(x.grad().item<double>(), 78.0);
}

TEST(Autograd, BroadcastGradientsAreReducedToTheInputShape) {
  Tensor a = ones({3, 1}).requires_grad_(), b = ones({4}).requires_grad_(), s = scalar_tensor(2.0).requires_grad_();
  ((a + b) * s).sum().backward();
  EXPECT_EQ(a.grad().sizes(), (Shape{3, 1}));
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{8, 8, 8}));
  EXPECT_EQ(b.grad().to_vector<float>(), (std::vector<float>{6, 6, 6, 6}));
  EXPECT_EQ(s.grad().item<double>(), 24.0);
}

TEST(Autograd, MixedDtypeGradsComeBackInTheInputDtype) {
  Tensor h = ones({3}, kBFloat16).requires_grad_();
  Tensor f = full({3}, 0.5).requires_grad_();
  (h * f).sum().backward();  // promoted to float32
  EXPECT_EQ(h.grad().dtype(), kBFloat16);
  EXPECT_EQ(f.grad().dtype(), kFloat32);
  EXPECT_EQ(h.grad().to_vector<float>(), (std::vector<float>{0.5, 0.5, 0.5}));
}

TEST(Autograd, RetainGradKeepsANonLeafGradient) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = x * 3;
  Tensor z = (y * y).sum();
  y.retain_grad();
  z.backward();
  EXPECT_EQ(y.grad().to_vector<float>(), (std::vector<float>{6, 12}));  // 2y
  Tensor w = x * 2;
  (w * w).sum().backward();
  EXPECT_FALSE(w.grad().defined());  // not retained
}

TEST(Autograd, HooksSeeAndReplaceGradients) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor seen;
  x.register_hook([&](const Tensor& g) {
    seen = g.clone();
    return g * 10;
  });
  Tensor y = x * x;
  y.register_hook([](const Tensor& g) { return g + 1; });  // non-leaf hook
  y.sum().backward();
  // dL/dy = 1 -> hook -> 2; dL/dx = 2 * 2x = [4, 8] (seen); leaf hook scales by 10.
  EXPECT_EQ(seen.to_vector<float>(), (std::vector<float>{4, 8}));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{40, 80}));
}

TEST(Autograd, VersionCounterCatchesInPlaceModificationOfSavedTensors) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = x * 2;
  Tensor z = y * y;  // saves y (version 0)
  y.add_(1);         // y is at version 1 now
  expect_error<Error>([&] { z.sum().backward(); },
                      {"MulBackward", "modified by an in-place operation", "version 1", "expected version 0"});
}

TEST(Autograd, InPlaceOnNonLeafIsDifferentiated) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = x * 2;
  y.mul_(y);  // y = (2x)^2, d/dx = 8x
  y.add_(1);
  y.sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{8, 16}));
  EXPECT_EQ(y.grad_fn()->name(), "AddBackward");
}

TEST(Autograd, InPlaceOnALeafOrAViewOfOneIsRejected) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  expect_error<Error>([&] { x.add_(1); }, {"add_", "leaf tensor that requires grad", "NoGradGuard"});
  expect_error<Error>([&] { x.slice(0, 0, 1).mul_(2); }, {"mul_", "view of a leaf tensor that requires grad"});
  {
    NoGradGuard g;
    x.add_(1);  // allowed without grad mode (optimizers do this)
  }
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{2, 3}));
  // A view of a non-contiguous base (a strided from_blob): refused by name rather than
  // differentiated wrongly.
  float data[4] = {0, 0, 0, 0};
  Tensor m = from_blob(data, {2}, {2}, kFloat32);
  EXPECT_FALSE(m.is_contiguous());
  expect_error<Error>([&] { m.slice(0, 0, 2).copy_(x); }, {"copy_", "non-contiguous"});
  // Outside grad mode, views are written freely.
  Tensor buf = zeros({4});
  NoGradGuard g;
  buf.slice(0, 1, 3).copy_(x);
  EXPECT_EQ(buf.to_vector<float>(), (std::vector<float>{0, 2, 3, 0}));
}

// Note [In-place on views]: the base's history is rewritten (CopySlices), as in PyTorch.
TEST(Autograd, InPlaceOnAViewRewritesItsBasesHistory) {
  for (Device dev : {Device("cpu"), Device("npu:0")}) {
    Tensor x = tensor({1.0, 2.0}).requires_grad_();
    // y = x * 3, then y[0] *= 2: d(sum y)/dx = [6, 3].
    Tensor y = x.to(dev) * 3.0;
    Tensor v = y.slice(0, 0, 1);
    v.mul_(2);
    EXPECT_EQ(y.grad_fn()->name(), "CopySlices");
    EXPECT_EQ(v.grad_fn()->name(), "AsStridedBackward0");
    y.sum().backward();
    EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{6, 3}));
    // A buffer that needs no grad takes the gradient of what is written into it:
    // buf[1:3] = w, loss = sum(buf * [1, 2, 3, 4]) -> dw = [2, 3].
    Tensor w = tensor({5.0, 7.0}).requires_grad_();
    Tensor buf = zeros({4}, dev);
    buf.narrow(0, 1, 2).copy_(w.to(dev));
    EXPECT_TRUE(buf.requires_grad());
    (buf * tensor({1.0, 2.0, 3.0, 4.0}).to(dev)).sum().backward();
    EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{2, 3}));
    EXPECT_EQ(buf.cpu().to_vector<float>(), (std::vector<float>{0, 5, 7, 0}));
  }
}

TEST(Autograd, ViewsMadeBeforeAnInPlaceWriteFollowTheBase) {
  Tensor w = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor buf = zeros({4});
  Tensor tail = buf.slice(0, 2, 4);  // made before buf needed grad, overlapping the write below
  buf.slice(0, 1, 4).copy_(w);       // buf = [0, 1, 2, 3]
  EXPECT_TRUE(tail.requires_grad());
  (tail * tail).sum().backward();   // tail = [2, 3] = w[1:3]: dw = [0, 4, 6]
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{0, 4, 6}));
  // Two writes into one base: the later one wins where they overlap.
  Tensor a = tensor({1.0, 1.0}).requires_grad_(), b = tensor({1.0}).requires_grad_();
  Tensor base = zeros({3});
  base.slice(0, 0, 2).copy_(a * 2.0);
  base.slice(0, 1, 2).copy_(b * 5.0);  // base = [2, 5, 0]
  base.sum().backward();
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{2, 0}));
  EXPECT_EQ(b.grad().to_vector<float>(), (std::vector<float>{5}));
}

TEST(Autograd, InPlaceOnViewsPassesGradcheck) {
  Tensor a = randn({3, 4}, kFloat64).requires_grad_(), b = randn({3, 2}, kFloat64).requires_grad_();
  EXPECT_TRUE(autograd::gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor y = in[0] * 1.0;
        y.narrow(1, 1, 2).mul_(in[1]);                                              // a view times a tensor
        y.select(0, 2).copy_(in[1].select(1, 0).sigmoid().repeat({2}).narrow(0, 0, 4));  // a row overwritten
        Tensor z = y.slice(0, 0, 2);
        z.masked_fill_(z > 0.5, 0.25);  // a masked write through a view (ember's composite: copy_ of a where)
        return y * y;
      },
      {a, b}));
}

TEST(Autograd, NoGradGuardIsThreadLocalAndRecordsNothing) {
  Tensor x = tensor({1.0}).requires_grad_();
  {
    NoGradGuard g;
    EXPECT_FALSE(autograd::is_grad_enabled());
    Tensor y = x * 2;
    EXPECT_FALSE(y.requires_grad());
    bool other = true;
    std::thread([&] { other = autograd::is_grad_enabled(); }).join();
    EXPECT_TRUE(other);
    {
      AutoGradMode on(true);
      EXPECT_TRUE((x * 2).requires_grad());
    }
  }
  EXPECT_TRUE(autograd::is_grad_enabled());
  EXPECT_TRUE((x * 2).requires_grad());
}

TEST(Autograd, GradFunctionReturnsGradientsWithoutTouchingDotGrad) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_(), w = tensor({3.0, 4.0}).requires_grad_();
  Tensor y = (x * w).sum();
  std::vector<Tensor> g = autograd::grad({y}, {w}, {}, true);
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_FALSE(w.grad().defined());
  EXPECT_FALSE(x.grad().defined());
  Tensor unused = tensor({1.0}).requires_grad_();
  expect_error<Error>([&] { autograd::grad({y}, {unused}, {}, true); }, {"appears to not have been used"});
  EXPECT_FALSE(autograd::grad({y}, {unused}, {}, true, false, true)[0].defined());
  Tensor h = x * x;  // gradient w.r.t. a non-leaf
  EXPECT_EQ(autograd::grad({(h * 3).sum()}, {h})[0].to_vector<float>(), (std::vector<float>{3, 3}));
}

TEST(Autograd, BackwardChecksGradShapeAndScalarness) {
  Tensor x = ones({3}).requires_grad_();
  Tensor y = x * 2;
  expect_error<ValueError>([&] { y.backward(); }, {"only for scalar outputs", "[3]"});
  expect_error<ShapeError>([&] { y.backward(ones({2})); }, {"grad_output 0 has shape [2]", "[3]"});
  y.backward(tensor({1.0, 2.0, 3.0}));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 4, 6}));
}

// A 2-layer MLP, loss = mean((relu(x W1^T + b1) W2^T + b2 - t)^2), against gradients derived by
// hand and computed with plain loops in float64.
TEST(Autograd, TwoLayerMlpMatchesHandDerivedGradients) {
  manual_seed(11);
  const int64_t N = 5, D = 4, H = 6, O = 3;
  Tensor x = randn({N, D}, kFloat64), t = randn({N, O}, kFloat64);
  Tensor W1 = randn({H, D}, kFloat64).requires_grad_(), b1 = randn({H}, kFloat64).requires_grad_();
  Tensor W2 = randn({O, H}, kFloat64).requires_grad_(), b2 = randn({O}, kFloat64).requires_grad_();
  Tensor h = (x.matmul(W1.t()) + b1).relu();
  Tensor y = h.matmul(W2.t()) + b2;
  Tensor loss = (y - t).square().mean();
  loss.backward();

  auto X = x.to_vector<double>(), T = t.to_vector<double>();
  auto w1 = W1.to_vector<double>(), c1 = b1.to_vector<double>(), w2 = W2.to_vector<double>(), c2 = b2.to_vector<double>();
  std::vector<double> gw1(H * D, 0), gb1(H, 0), gw2(O * H, 0), gb2(O, 0);
  for (int64_t n = 0; n < N; ++n) {
    std::vector<double> pre(H), act(H), out(O), dy(O), dh(H, 0);
    for (int64_t j = 0; j < H; ++j) {
      pre[j] = c1[j];
      for (int64_t k = 0; k < D; ++k) pre[j] += X[n * D + k] * w1[j * D + k];
      act[j] = pre[j] > 0 ? pre[j] : 0;
    }
    for (int64_t o = 0; o < O; ++o) {
      out[o] = c2[o];
      for (int64_t j = 0; j < H; ++j) out[o] += act[j] * w2[o * H + j];
      dy[o] = 2 * (out[o] - T[n * O + o]) / (N * O);  // d mean(e^2) / dy
      gb2[o] += dy[o];
      for (int64_t j = 0; j < H; ++j) {
        gw2[o * H + j] += dy[o] * act[j];
        dh[j] += dy[o] * w2[o * H + j];
      }
    }
    for (int64_t j = 0; j < H; ++j) {
      double dpre = pre[j] > 0 ? dh[j] : 0;
      gb1[j] += dpre;
      for (int64_t k = 0; k < D; ++k) gw1[j * D + k] += dpre * X[n * D + k];
    }
  }
  auto near = [](const std::vector<double>& a, const std::vector<double>& b) {
    for (size_t i = 0; i < a.size(); ++i)
      if (std::fabs(a[i] - b[i]) > 1e-12) return false;
    return a.size() == b.size();
  };
  EXPECT_TRUE(near(W1.grad().to_vector<double>(), gw1));
  EXPECT_TRUE(near(b1.grad().to_vector<double>(), gb1));
  EXPECT_TRUE(near(W2.grad().to_vector<double>(), gw2));
  EXPECT_TRUE(near(b2.grad().to_vector<double>(), gb2));
}

// ---- custom functions and custom ops ----

struct Cube : autograd::Function<Cube> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, double scale) {
    ctx->save_for_backward({x});
    ctx->saved_data["scale"] = scale;
    return x * x * x * scale;
  }
  static std::vector<Tensor> backward(autograd::AutogradContext* ctx, std::vector<Tensor> g) {
    Tensor x = ctx->get_saved_variables()[0];
    double s = ctx->saved_data["scale"].to_double();
    return {ctx->needs_input_grad(0) ? g[0] * x * x * (3 * s) : Tensor()};
  }
};

TEST(CustomFunction, ForwardBackwardAndGradcheck) {
  Tensor x = tensor({1.0, -2.0}, {}, kFloat64).requires_grad_();
  Tensor y = Cube::apply(x, 2.0);
  EXPECT_EQ(y.grad_fn()->name(), "Cube");
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{2, -16}));
  y.sum().backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{6, 24}));
  EXPECT_TRUE(autograd::gradcheck([](const std::vector<Tensor>& in) { return Cube::apply(in[0], 0.5); },
                                  {randn({4, 3}, kFloat64).requires_grad_()}));
  // Saved tensors are version-checked here too.
  Tensor z = Cube::apply(x * 1, 1.0);
  Tensor w = x * 1;
  Tensor v = Cube::apply(w, 1.0);
  w.add_(1);
  EXPECT_THROW(v.sum().backward(), Error);
  (void)z;
}

// pytorch/examples' LinearFunction pattern: bias is optional, and backward always lists three
// gradients; apply() without a bias leaves a trailing undefined one, which libtorch accepts.
struct LinearFn : autograd::Function<LinearFn> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, const Tensor& w, const Tensor& b = Tensor()) {
    ctx->save_for_backward({x, w});
    Tensor y = matmul(x, w.t());
    return b.defined() ? y + b : y;
  }
  static std::vector<Tensor> backward(autograd::AutogradContext* ctx, std::vector<Tensor> g) {
    auto saved = ctx->get_saved_variables();
    return {matmul(g[0], saved[1]), matmul(g[0].t(), saved[0]), Tensor()};
  }
};

struct ExtraDefinedGrad : autograd::Function<ExtraDefinedGrad> {
  static Tensor forward(autograd::AutogradContext*, const Tensor& x) { return x * 2; }
  static std::vector<Tensor> backward(autograd::AutogradContext*, std::vector<Tensor> g) { return {g[0] * 2, g[0]}; }
};

TEST(CustomFunction, TrailingUndefinedGradientsAreDroppedAsInLibtorch) {
  Tensor x = randn({3, 4}, kFloat64).requires_grad_(), w = randn({2, 4}, kFloat64).requires_grad_();
  LinearFn::apply(x, w).sum().backward();
  EXPECT_TRUE(allclose(x.grad(), ones({3, 2}, kFloat64).matmul(w)));
  EXPECT_TRUE(allclose(w.grad(), ones({3, 2}, kFloat64).t().matmul(x)));
  EXPECT_TRUE(autograd::gradcheck([](const std::vector<Tensor>& in) { return LinearFn::apply(in[0], in[1]); },
                                  {randn({3, 4}, kFloat64).requires_grad_(), randn({2, 4}, kFloat64).requires_grad_()}));
  // A defined extra gradient is still a mistake, named.
  Tensor y = randn({3}, kFloat64).requires_grad_();
  try {
    ExtraDefinedGrad::apply(y).sum().backward();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ExtraDefinedGrad: backward returned 2 gradients, expected 1"), std::string::npos)
        << e.what();
  }
}

// A custom dispatcher op made differentiable the way PyTorch's C++ extensions do it: the
// Autograd-key kernel is a Function whose forward calls the op below autograd.
Tensor softclip_cpu(const Tensor& x, double limit) { return (x / limit).tanh() * limit; }
EMBER_LIBRARY(ag_test, m) { m.def("softclip(Tensor x, float limit=1.0) -> Tensor"); }
EMBER_LIBRARY_IMPL(ag_test, CPU, m) { m.impl("softclip", &softclip_cpu); }

struct SoftClip : autograd::Function<SoftClip> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, double limit) {
    static auto op = Dispatcher::singleton().find_schema("ag_test::softclip").typed<Tensor(const Tensor&, double)>();
    Tensor y = op.call(x, limit);  // grad mode is off here: this reaches the CPU kernel
    ctx->save_for_backward({y});
    ctx->saved_data["limit"] = limit;
    return y;
  }
  // d/dx L tanh(x / L) = 1 - tanh^2 = 1 - (y / L)^2
  static std::vector<Tensor> backward(autograd::AutogradContext* ctx, std::vector<Tensor> g) {
    Tensor y = ctx->get_saved_variables()[0];
    double L = ctx->saved_data["limit"].to_double();
    return {g[0] * (1 - (y / L).square()), Tensor()};
  }
};
Tensor softclip_autograd(const Tensor& x, double limit) { return SoftClip::apply(x, limit); }
EMBER_LIBRARY_IMPL(ag_test, Autograd, m) { m.impl("softclip", &softclip_autograd); }

EMBER_OP_INFO("ag_test::softclip", info) {
  info.dtypes = {kFloat32, kFloat64};
  info.samples = [](DType dt) {
    auto s = ember::testing::unary_samples(dt, -3, 3);
    for (auto& u : s) u.args.push_back(IValue(2.0));
    return s;
  };
  info.reference = [](const Stack& a) -> Stack {
    double L = a[1].to_double();
    return {ember::testing::ref_map(a[0].to_tensor(), [L](double x) { return std::tanh(x / L) * L; })};
  };
}

TEST(CustomOp, AutogradKernelThroughTheDispatcherGradchecks) {
  auto op = Dispatcher::singleton().find_schema("ag_test::softclip").typed<Tensor(const Tensor&, double)>();
  Tensor x = randn({3, 5}, kFloat64).requires_grad_();
  Tensor y = op.call(x, 1.5);
  EXPECT_EQ(y.grad_fn()->name(), "SoftClip");
  EXPECT_TRUE(autograd::gradcheck([&](const std::vector<Tensor>& in) { return op.call(in[0], 1.5); }, {x}));
}

TEST(CustomOp, AnOpWithoutAnAutogradKernelRefusesInputsThatRequireGrad) {
  Library def(Library::Kind::Def, "ag_missing");
  def.def("f(Tensor x) -> Tensor");
  Library cpu(Library::Kind::Impl, "ag_missing", DispatchKey::CPU);
  cpu.impl("f", +[](const Tensor& x) { return x * 2; });
  auto op = Dispatcher::singleton().find_schema("ag_missing::f").typed<Tensor(const Tensor&)>();
  EXPECT_EQ(op.call(ones({2})).sum().item<double>(), 4.0);
  expect_error<NotImplementedError>([&] { op.call(ones({2}).requires_grad_()); },
                                    {"ag_missing::f", "no autograd kernel", "NoGradGuard"});
  NoGradGuard g;
  EXPECT_EQ(op.call(ones({2}).requires_grad_()).sum().item<double>(), 4.0);
}

TEST(Gradcheck, CatchesAWrongBackward) {
  struct Wrong : autograd::Function<Wrong> {
    static Tensor forward(autograd::AutogradContext*, const Tensor& x) { return x * x; }
    static std::vector<Tensor> backward(autograd::AutogradContext*, std::vector<Tensor> g) { return {g[0]}; }
  };
  auto r = autograd::gradcheck_detailed([](const std::vector<Tensor>& in) { return Wrong::apply(in[0]); },
                                        {tensor({1.0, 2.0}, {}, kFloat64).requires_grad_()});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("analytic"), std::string::npos);
  // Above 256 elements gradcheck compares random projections (fast mode): it must catch it too.
  Tensor big = rand({300}, kFloat64).requires_grad_();
  auto fast = autograd::gradcheck_detailed([](const std::vector<Tensor>& in) { return Wrong::apply(in[0]); }, {big});
  EXPECT_FALSE(fast.ok);
  EXPECT_NE(fast.message.find("random direction"), std::string::npos) << fast.message;
  // A right backward passes in both modes.
  auto square = [](const std::vector<Tensor>& in) { return in[0] * in[0]; };
  EXPECT_TRUE(autograd::gradcheck_detailed(square, {big}).ok);
  EXPECT_TRUE(autograd::gradcheck_detailed(square, {tensor({1.0, 2.0}, {}, kFloat64).requires_grad_()}).ok);
}

TEST(Gradcheck, CatchesAnOutputThatDependsOnAnInputWithoutAGraph) {
  // detach() hides the dependence from autograd; the numeric derivative still sees it.
  auto r = autograd::gradcheck_detailed([](const std::vector<Tensor>& in) { return in[0].detach() * 3; },
                                        {tensor({1.0, 2.0}, {}, kFloat64).requires_grad_()});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("does not require grad but depends on input 0"), std::string::npos) << r.message;
  auto constant = autograd::gradcheck_detailed([](const std::vector<Tensor>&) { return ones({2}, kFloat64); },
                                               {tensor({1.0, 2.0}, {}, kFloat64).requires_grad_()});
  EXPECT_TRUE(constant.ok) << constant.message;
}

}  // namespace

// Two host threads each run backward 2000 times into the same leaf (Hogwild training,
// data-parallel threads): one accumulator, every contribution added exactly once, on cpu and on
// npu:0 (both threads on the default stream).
TEST(AutogradThreads, ConcurrentBackwardIntoASharedLeafLosesNothing) {
  for (DeviceType type : {DeviceType::CPU, DeviceType::NPU}) {
    Device dev(type, 0);
    Tensor w = ones({4, 3}, dev).requires_grad_();
    Tensor x = ones({2, 4}, dev);
    const int iters = 2000;
    std::atomic<int> errors{0};
    auto worker = [&] {
      try {
        for (int i = 0; i < iters; ++i) x.matmul(w).sum().backward();
      } catch (const std::exception&) {
        ++errors;
      }
    };
    std::thread a(worker), b(worker);
    a.join();
    b.join();
    EXPECT_EQ(errors.load(), 0);
    // d sum(x w) / dw = x^T 1 = 2 in every element, per pass; 2 threads x 2000 passes.
    std::vector<float> g = w.grad().cpu().to_vector<float>();
    for (float v : g) EXPECT_EQ(v, 2.0f * 2 * iters);
  }
}

// zero_grad on one thread while backward passes on another add into the same leaf: zero_grad
// takes the lock accumulation holds, so each pass adds to a whole gradient (zeroed or not), never
// to one half reset; afterwards .grad holds a whole number of passes (TSan runs this too).
TEST(AutogradThreads, ZeroGradWhileAnotherThreadAccumulates) {
  for (DeviceType type : {DeviceType::CPU, DeviceType::NPU}) {
    Device dev(type, 0);
    Tensor w = ones({64}, dev).requires_grad_();
    std::atomic<bool> done{false};
    std::atomic<int> errors{0};
    std::thread backward([&] {
      try {
        for (int i = 0; i < 300; ++i) (w * 2).sum().backward();
      } catch (const std::exception&) {
        ++errors;
      }
      done = true;
    });
    std::thread zeroing([&] {
      try {
        for (int i = 0; !done.load(); ++i) nn::zero_grad({w}, /*set_to_none=*/i % 2 == 0);
      } catch (const std::exception&) {
        ++errors;
      }
    });
    backward.join();
    zeroing.join();
    EXPECT_EQ(errors.load(), 0);
    Tensor g = w.grad();
    if (g.defined()) {
      std::vector<float> v = g.cpu().to_vector<float>();
      for (float x : v) {
        EXPECT_EQ(x, v[0]) << "every element saw the same passes";
        EXPECT_EQ(std::fmod(x, 2.0f), 0.0f);
      }
    }
  }
}

// Host threads on npu:0 streams of their own: backward passes into a shared leaf add on each
// thread's stream, ordered after the stream that last wrote .grad; an event orders one thread's
// work before another's.
TEST(NpuThreads, BackwardIntoASharedLeafFromThreadsOnTheirOwnStreams) {
  Device dev(DeviceType::NPU, 0);
  Tensor w = ones({8, 3}, dev).requires_grad_();
  Tensor x = ones({5, 8}, dev);
  const int iters = 300;
  npu::default_stream(0).synchronize();  // w and x were made on the default stream
  npu::Stream s1 = npu::Stream::create(0), s2 = npu::Stream::create(0);
  auto worker = [&](npu::Stream s) {
    npu::StreamGuard g(s);
    for (int i = 0; i < iters; ++i) x.matmul(w).sum().backward();
  };
  std::thread a(worker, s1), b(worker, s2);
  a.join();
  b.join();
  s1.synchronize();
  s2.synchronize();
  for (float v : w.grad().cpu().to_vector<float>()) EXPECT_EQ(v, 5.0f * 2 * iters);
  s1.destroy();
  s2.destroy();
}

TEST(NpuThreads, AnEventOrdersOneThreadsWorkBeforeAnothers) {
  Device dev(DeviceType::NPU, 0);
  npu::Stream s1 = npu::Stream::create(0), s2 = npu::Stream::create(0);
  Tensor x = zeros({1 << 16}, dev), y;
  npu::default_stream(0).synchronize();  // x was zeroed on the default stream
  npu::Event done;
  std::promise<void> recorded;
  std::thread producer([&] {
    npu::StreamGuard g(s1);
    for (int i = 0; i < 20; ++i) x.add_(1);
    done.record(s1);
    recorded.set_value();
  });
  std::thread consumer([&] {
    recorded.get_future().wait();
    npu::StreamGuard g(s2);
    done.wait(s2);
    y = x * 2;
    s2.synchronize();
  });
  producer.join();
  consumer.join();
  std::vector<float> v = y.cpu().to_vector<float>();
  EXPECT_EQ(v.front(), 40.0f);
  EXPECT_EQ(v.back(), 40.0f);
  s1.destroy();
  s2.destroy();
}

// The hook runs after accumulation (it sees .grad with this pass's contribution added), once per
// backward; queue_callback's functions run after the last node, before backward returns.
TEST(AutogradHooks, PostAccumulateGradHookAndQueuedCallbacks) {
  Tensor w = tensor({1.0, 2.0}).requires_grad_(true);
  std::vector<std::vector<double>> seen;
  std::vector<std::string> order;
  w.register_post_accumulate_grad_hook([&](const Tensor& leaf) {
    seen.push_back(leaf.grad().to_vector<double>());
    order.push_back("hook");
    autograd::queue_callback([&] { order.push_back("callback"); });
  });
  (w * w).sum().backward();  // grad 2w = [2, 4]
  (w * 3.0).sum().backward();  // + [3, 3]
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (std::vector<double>{2.0, 4.0}));
  EXPECT_EQ(seen[1], (std::vector<double>{5.0, 7.0}));
  EXPECT_EQ(order, (std::vector<std::string>{"hook", "callback", "hook", "callback"}));
  expect_error<ValueError>([] { autograd::queue_callback([] {}); }, {"no backward pass is running"});
  Tensor nonleaf = w * 2.0;
  expect_error<Error>([&] { nonleaf.register_post_accumulate_grad_hook([](const Tensor&) {}); },
                      {"only leaf tensors"});
}

// ---------------------------------------------------------------- create_graph
namespace create_graph {

// f(x) = sum(x^3): the gradient 3x^2 has a graph, and differentiating grad . v gives the
// Hessian-vector product 6 x v.
TEST(CreateGraph, HessianVectorProductOnCpuAndNpu) {
  for (const char* dev : {"cpu", "npu:0"}) {
    Device d(dev);
    Tensor x = tensor({0.5, -1.0, 2.0}, {}, kFloat64).to(d).requires_grad_();
    Tensor v = tensor({1.0, 2.0, -0.5}, {}, kFloat64).to(d);
    Tensor g = autograd::grad({x.pow(3).sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    EXPECT_TRUE(g.requires_grad()) << dev;
    EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{0.75, 3.0, 12.0})) << dev;
    Tensor hv = autograd::grad({(g * v).sum()}, {x})[0];
    EXPECT_EQ(hv.to_vector<double>(), (std::vector<double>{3.0, -12.0, -6.0})) << dev;
  }
}

// A gradient penalty (WGAN-GP's): the input gradient's norm enters the loss, and the weights
// get its derivative. out = x W^T, d sum(out) / dx = the column sums c of W (every row), so the
// penalty sum over rows of |c|^2 = N |c|^2 has d/dW_ij = 2 N c_j.
TEST(CreateGraph, GradientPenaltyReachesTheWeights) {
  for (const char* dev : {"cpu", "npu:0"}) {
    Device d(dev);
    Tensor w = tensor({1.0, 2.0, -1.0, 0.5, 0.0, 3.0}, {2, 3}, kFloat64).to(d).requires_grad_();
    Tensor x = randn({4, 3}, kFloat64).to(d).requires_grad_();
    Tensor out = x.mm(w.t());
    Tensor gx = autograd::grad({out}, {x}, {ones_like(out)}, std::nullopt, true)[0];
    Tensor penalty = gx.pow(2).sum();
    penalty.backward();
    std::vector<double> c = {1.5, 2.0, 2.0};  // column sums of w
    std::vector<double> want;
    for (int i = 0; i < 2; ++i)
      for (double cj : c) want.push_back(2 * 4 * cj);
    EXPECT_EQ(w.grad().to_vector<double>(), want) << dev;
    EXPECT_FALSE(x.grad().defined()) << dev << ": the penalty does not depend on x (out is linear in it)";
  }
}

// backward(create_graph) leaves a .grad with a graph; backward through it accumulates the second
// derivative.
TEST(CreateGraph, BackwardKeepsTheGraphOfGrad) {
  Tensor x = tensor({1.0, 3.0}, {}, kFloat64).requires_grad_();
  Tensor y = (x * x * x).sum();
  y.backward(Tensor(), std::nullopt, /*create_graph=*/true);
  ASSERT_TRUE(x.grad().requires_grad());
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{3.0, 27.0}));
  Tensor g1 = x.grad();
  x.set_grad(Tensor());
  g1.sum().backward();  // d/dx sum(3x^2) = 6x
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{6.0, 18.0}));
}

// An op whose backward is a kernel without a derivative: the first backward with create_graph
// works, the second one names the kernel.
TEST(CreateGraph, AKernelWithoutDerivativeIsANamedError) {
  Tensor logits = randn({3, 4}, kFloat64).requires_grad_();
  Tensor target = tensor({int64_t(0), int64_t(3), int64_t(1)});
  Tensor g = autograd::grad({cross_entropy(logits, target)}, {logits}, {}, std::nullopt, true)[0];
  ember_test::expect_error<NotImplementedError>([&] { g.pow(2).sum().backward(); },
                                                {"cross_entropy_backward", "double backward is not implemented"});
  // log_softmax + nll_loss: the composite's parts are differentiable, so this works.
  Tensor g2 = autograd::grad({nll_loss(logits.log_softmax(1), target)}, {logits}, {}, std::nullopt, true)[0];
  EXPECT_TRUE(g2.requires_grad());
  ember_test::expect_error<NotImplementedError>([&] { g2.pow(2).sum().backward(); }, {"log_softmax_backward"});
}

// A custom Function whose backward leaves the graph (a host loop) cannot be differentiated
// again: an error, never a missing term.
struct HostSquare : autograd::Function<HostSquare> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
    ctx->save_for_backward({x});
    return x * x;
  }
  static std::vector<Tensor> backward(autograd::AutogradContext* ctx, std::vector<Tensor> g) {
    Tensor x = ctx->get_saved_variables()[0];
    Tensor out = empty(x.sizes(), kFloat64);
    std::vector<double> xs = x.to_vector<double>(), gs = g[0].to_vector<double>();
    for (size_t i = 0; i < xs.size(); ++i) out.data_ptr<double>()[i] = 2 * xs[i] * gs[i];
    return {out};
  }
};
TEST(CreateGraph, AGradientComputedOffTheGraphIsANamedError) {
  Tensor x = tensor({1.0, 2.0}, {}, kFloat64).requires_grad_();
  Tensor v = tensor({1.0, 1.0}, {}, kFloat64).requires_grad_();
  Tensor g = autograd::grad({HostSquare::apply(x)}, {x}, {v}, std::nullopt, true)[0];
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{2.0, 4.0}));
  ember_test::expect_error<NotImplementedError>([&] { autograd::grad({g.sum()}, {x}); },
                                                {"HostSquare", "without recording it"});
}

// The 2-norm at zero has gradient 0 (PyTorch's subgradient), first and second order.
TEST(CreateGraph, NormAtZeroHasAZeroGradient) {
  Tensor x = zeros({3}, kFloat64).requires_grad_();
  Tensor g = autograd::grad({x.norm()}, {x}, {}, std::nullopt, true)[0];
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{0, 0, 0}));
  Tensor g2 = autograd::grad({x.norm(2, {0})}, {x}, {}, std::nullopt, true)[0];
  EXPECT_EQ(g2.to_vector<double>(), (std::vector<double>{0, 0, 0}));
}

// norm(p, dim) is one op (node NormBackward1): CANN's aclnnNorm on the NPU, agreeing with the CPU
// forward and backward.
TEST(CreateGraph, NormIsOneOpRunningAclnnNormOnTheNpu) {
  manual_seed(4);
  Tensor x = randn({4, 5});
  for (double p : {2.0, 1.0, 3.0, double(INFINITY), 0.0}) {
    std::vector<Tensor> y, g;
    for (Device d : {Device("cpu"), Device("npu:0")}) {
      Tensor xs = x.to(d).detach().requires_grad_();
      profiler::Profile prof;
      Tensor n = xs.norm(p, {1});
      prof.stop();
      EXPECT_EQ(n.grad_fn()->name(), "NormBackward1");
      if (d.is_npu()) {
        int64_t calls = 0;
        for (const auto& r : prof.key_averages().rows)
          if (r.name == "aclnnNormGetWorkspaceSize") calls += r.calls;
        EXPECT_EQ(calls, 1) << p;
      }
      n.sum().backward();
      y.push_back(n.detach().cpu());
      g.push_back(xs.grad().cpu());
    }
    EXPECT_TRUE(allclose(y[0], y[1], 1e-5, 1e-5)) << p << "\n" << y[0] << y[1];
    EXPECT_TRUE(allclose(g[0], g[1], 1e-5, 1e-5)) << p << "\n" << g[0] << g[1];
  }
}

// mean is one op, with libtorch's node names (MeanBackward0 for every element, MeanBackward1 over
// dims) and CANN's aclnnMean on the NPU.
TEST(CreateGraph, MeanIsOneOpWithLibtorchsNodeNames) {
  for (Device d : {Device("cpu"), Device("npu:0")}) {
    Tensor x = arange(6, TensorOptions(kFloat32).device(d)).view({2, 3}).requires_grad_();
    profiler::Profile prof;
    Tensor all = x.mean(), rows = x.mean({1}, true);
    prof.stop();
    EXPECT_EQ(all.grad_fn()->name(), "MeanBackward0");
    EXPECT_EQ(rows.grad_fn()->name(), "MeanBackward1");
    EXPECT_NEAR(all.item<double>(), 2.5, 1e-6);
    (all + rows.sum()).backward();
    for (float g : x.grad().cpu().to_vector<float>()) EXPECT_NEAR(g, 1.0 / 6 + 1.0 / 3, 1e-6) << d;
    int64_t calls = 0;
    for (const auto& r : prof.key_averages().rows)
      if (r.name == "aclnnMeanGetWorkspaceSize") calls += r.calls;
    EXPECT_EQ(calls, d.is_npu() ? 2 : 0) << d;
  }
}

TEST(CreateGraph, GradgradcheckCatchesAWrongSecondDerivative) {
  // sin's first derivative written as cos, its second taken from a formula of the wrong sign.
  struct BadSin : autograd::Function<BadSin> {
    static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
      ctx->save_for_backward({x});
      return x.sin();
    }
    static std::vector<Tensor> backward(autograd::AutogradContext* ctx, std::vector<Tensor> g) {
      Tensor x = ctx->get_saved_variables()[0];
      Tensor c = x.cos().detach() + (x - x.detach()) * x.sin().detach();  // value cos x, slope +sin x
      return {g[0] * c};
    }
  };
  Tensor x = tensor({0.3, -1.2, 2.0}, {}, kFloat64).requires_grad_();
  auto fn = [](const std::vector<Tensor>& in) { return BadSin::apply(in[0]); };
  EXPECT_TRUE(autograd::gradcheck(fn, {x}));
  auto r = autograd::gradgradcheck_detailed(fn, {x});
  EXPECT_FALSE(r.ok);
  auto good = [](const std::vector<Tensor>& in) { return in[0].sin(); };
  EXPECT_TRUE(autograd::gradgradcheck(good, {x}));
}

}  // namespace create_graph
