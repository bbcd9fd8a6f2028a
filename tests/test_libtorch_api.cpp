// libtorch's Tensor API families over ember (issue 34): indexing, max/min over a dim, flip,
// masked_fill, in-place view ops, to() overloads, from_blob forms, shape helpers, predicates,
// multinomial. Values are checked against ones worked out here; gradients against finite
// differences (gradcheck) or by hand. Every case runs on the CPU and the emulated NPU.
#include <cmath>
#include <limits>

#include <ember/torch.h>

#include "test_util.h"

namespace {
using namespace torch::indexing;

std::vector<torch::Device> devices() { return {torch::Device("cpu"), torch::Device("npu:0")}; }

std::vector<float> vals(const torch::Tensor& t) { return t.to(torch::kFloat).cpu().contiguous().to_vector<float>(); }

TEST(LibtorchApi, BasicIndexingGivesViewsWithPythonsRules) {
  for (auto dev : devices()) {
    torch::Tensor x = torch::arange(24, torch::TensorOptions(torch::kFloat).device(dev)).view({2, 3, 4});
    torch::Tensor a = x.index({1, Slice(None, None, 2), -1});  // x[1, ::2, -1]
    EXPECT_EQ(a.sizes(), (std::vector<int64_t>{2}));
    EXPECT_EQ(vals(a), (std::vector<float>{15, 23}));
    EXPECT_TRUE(a.is_alias_of(x));
    torch::Tensor b = x.index({"...", None, Slice(1, 3)});  // x[..., None, 1:3]
    EXPECT_EQ(b.sizes(), (std::vector<int64_t>{2, 3, 1, 2}));
    EXPECT_EQ(vals(b.index({0, 0, 0})), (std::vector<float>{1, 2}));
    EXPECT_EQ(x.index({Ellipsis, 0}).sizes(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(x.index({true}).sizes(), (std::vector<int64_t>{1, 2, 3, 4}));
    EXPECT_EQ(x.index({false}).sizes(), (std::vector<int64_t>{0, 2, 3, 4}));
    EXPECT_EQ(x.index({Slice(-1)}).size(0), 1);
    EXPECT_THROW(x.index({0, 0, 0, 0}), torch::IndexError);
    EXPECT_THROW(x.index({2}), torch::IndexError);
    EXPECT_THROW(x.index({Ellipsis, "..."}), torch::IndexError);
  }
}

TEST(LibtorchApi, AdvancedIndexingPlacesIndexedDimsAsPyTorch) {
  for (auto dev : devices()) {
    auto i64 = torch::TensorOptions(torch::kInt64).device(dev);
    torch::Tensor x = torch::arange(24, torch::TensorOptions(torch::kFloat).device(dev)).view({2, 3, 4});
    // x[:, [2, 0]] -> [2, 2, 4]; x[:, [2, 0], [1, 3]] -> [2, 2] (adjacent: stay in place);
    // x[[1, 0], :, [3, 3]] -> [2, 3] (not adjacent: the index dims go first).
    torch::Tensor a = x.index({Slice(), torch::tensor({2, 0}, i64)});
    EXPECT_EQ(a.sizes(), (std::vector<int64_t>{2, 2, 4}));
    EXPECT_EQ(vals(a.index({1, 0})), (std::vector<float>{20, 21, 22, 23}));
    torch::Tensor b = x.index({Slice(), torch::tensor({2, 0}, i64), torch::tensor({1, 3}, i64)});
    EXPECT_EQ(vals(b), (std::vector<float>{9, 3, 21, 15}));
    torch::Tensor c = x.index({torch::tensor({1, 0}, i64), Slice(), torch::tensor({3, 3}, i64)});
    EXPECT_EQ(c.sizes(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(vals(c), (std::vector<float>{15, 19, 23, 3, 7, 11}));
    // A bool mask over two dims, negative indices, and an index out of range.
    torch::Tensor m = x.index({0}) > 8.0;
    EXPECT_EQ(vals(x.index({0}).index({m})), (std::vector<float>{9, 10, 11}));
    EXPECT_EQ(vals(x.index({Slice(), -1, torch::tensor({-1}, i64)})), (std::vector<float>{11, 23}));
    EXPECT_THROW(x.index({torch::tensor({3}, i64)}), torch::IndexError);
  }
}

TEST(LibtorchApi, IndexPutWritesBasicAndAdvancedPositions) {
  for (auto dev : devices()) {
    auto f = torch::TensorOptions(torch::kFloat).device(dev);
    torch::Tensor x = torch::zeros({3, 4}, f);
    x.index_put_({Slice(), 1}, 5.0);
    x.index_put_({torch::tensor({0, 2}, torch::TensorOptions(torch::kInt64).device(dev)), Slice(2, 4)},
                 torch::tensor({1.0f, 2.0f}, f));
    x.index_put_({x < 0.5}, -1.0);  // a mask: every still-zero element
    EXPECT_EQ(vals(x), (std::vector<float>{-1, 5, 1, 2, -1, 5, -1, -1, -1, 5, 1, 2}));
    torch::Tensor n = torch::zeros({4}, torch::TensorOptions(torch::kInt64).device(dev));
    n.index_put_({torch::tensor({3, 1, 3}, torch::TensorOptions(torch::kInt64).device(dev))},
                 torch::tensor({7, 8, 9}, torch::TensorOptions(torch::kInt64).device(dev)));
    EXPECT_EQ(n.cpu().to_vector<int64_t>(), (std::vector<int64_t>{0, 8, 0, 9}));  // the last write wins
  }
}

TEST(LibtorchApi, AdvancedIndexingDifferentiates) {
  for (auto dev : devices()) {
    // gradcheck's inputs are float64 CPU tensors; the function runs on dev.
    auto f = torch::TensorOptions(torch::kDouble);
    torch::Tensor x = torch::randn({3, 4}, f).requires_grad_(true);
    torch::Tensor idx = torch::tensor({2, 0, 2}, torch::TensorOptions(torch::kInt64).device(dev));
    EXPECT_TRUE(torch::autograd::gradcheck([&](const std::vector<torch::Tensor>& in) {
      return (in[0].to(dev).index({idx, Slice(1, 3)}) * 2.0).cpu();
    }, {x}));
    // index_put_ on a non-leaf: the written rows take v's gradient, the others x's.
    torch::Tensor v = torch::randn({2, 4}, f).requires_grad_(true);
    EXPECT_TRUE(torch::autograd::gradcheck([&](const std::vector<torch::Tensor>& in) {
      torch::Tensor y = in[0].to(dev) * 1.0;
      y.index_put_({torch::tensor({1, 1}, torch::TensorOptions(torch::kInt64).device(dev))}, in[1].to(dev) * 3.0);
      return y.cpu();
    }, {x, v}));
    // Basic indices write through a view: the base's history is rewritten (CopySlices).
    EXPECT_TRUE(torch::autograd::gradcheck([&](const std::vector<torch::Tensor>& in) {
      torch::Tensor y = in[0].to(dev) * 2.0;  // (exp would save y, which the write then changes: an error, as in libtorch)
      y.index_put_({Slice(1, 3), 0}, in[1].to(dev).select(0, 0).slice(0, 0, 2));
      return y.cpu();
    }, {x, v}));
  }
}

TEST(LibtorchApi, MaxMinOverADimGiveValuesAndFirstIndices) {
  for (auto dev : devices()) {
    auto f = torch::TensorOptions(torch::kFloat).device(dev);
    torch::Tensor x = torch::tensor({1.0f, 5.0f, 5.0f, -2.0f, 0.0f, -2.0f}, f).view({2, 3}).requires_grad_(true);
    auto [v, i] = torch::max(x, 1);
    EXPECT_EQ(vals(v), (std::vector<float>{5, 0}));
    EXPECT_EQ(i.cpu().to_vector<int64_t>(), (std::vector<int64_t>{1, 1}));
    v.sum().backward();
    EXPECT_EQ(vals(x.grad()), (std::vector<float>{0, 1, 0, 0, 1, 0}));  // the first maximum only
    auto [mv, mi] = x.min(0, /*keepdim=*/true);
    EXPECT_EQ(mv.sizes(), (std::vector<int64_t>{1, 3}));
    EXPECT_EQ(vals(mv), (std::vector<float>{-2, 0, -2}));
    EXPECT_EQ(mi.cpu().to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1}));
    auto [iv, ii] = torch::max(torch::tensor({3, 9, 4}, torch::TensorOptions(torch::kInt64).device(dev)), 0);
    EXPECT_EQ(iv.item<int64_t>(), 9);
    EXPECT_EQ(ii.item<int64_t>(), 1);
    EXPECT_EQ(vals(x.max(torch::zeros({3}, f))), (std::vector<float>{1, 5, 5, 0, 0, 0}));
  }
}

TEST(LibtorchApi, FlipAndShapeHelpers) {
  for (auto dev : devices()) {
    auto f = torch::TensorOptions(torch::kFloat).device(dev);
    torch::Tensor x = torch::arange(6, f).view({2, 3});
    EXPECT_EQ(vals(x.flip({0, 1})), (std::vector<float>{5, 4, 3, 2, 1, 0}));
    EXPECT_EQ(vals(torch::fliplr(x)), (std::vector<float>{2, 1, 0, 5, 4, 3}));
    EXPECT_EQ(vals(x.flipud()), (std::vector<float>{3, 4, 5, 0, 1, 2}));
    EXPECT_THROW(x.flip({0, -2}), torch::ValueError);
    EXPECT_EQ(x.unflatten(1, {3, 1}).sizes(), (std::vector<int64_t>{2, 3, 1}));
    EXPECT_EQ(vals(x.unbind(1)[2]), (std::vector<float>{2, 5}));
    auto parts = x.split({1, 2}, 1);
    EXPECT_EQ(parts[1].sizes(), (std::vector<int64_t>{2, 2}));
    EXPECT_THROW(x.split_with_sizes({1, 1}, 1), ember::ShapeError);
    torch::Tensor y = torch::zeros({2, 3, 4}, f);
    EXPECT_EQ(y.movedim(0, 2).sizes(), (std::vector<int64_t>{3, 4, 2}));
    EXPECT_EQ(torch::movedim(y, {0, 1}, {2, 0}).sizes(), (std::vector<int64_t>{3, 4, 2}));
    EXPECT_EQ(vals(torch::tile(torch::arange(2, f), {2, 2})), (std::vector<float>{0, 1, 0, 1, 0, 1, 0, 1}));
    auto g = torch::meshgrid({torch::arange(2, f), torch::arange(3, f)}, "xy");
    EXPECT_EQ(g[0].sizes(), (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(vals(g[1].select(1, 0)), (std::vector<float>{0, 1, 2}));
    EXPECT_EQ(torch::hstack({torch::arange(2, f), torch::arange(3, f)}).size(0), 5);
    EXPECT_EQ(torch::vstack({torch::arange(3, f), torch::arange(3, f)}).sizes(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(torch::dstack({x, x}).sizes(), (std::vector<int64_t>{2, 3, 2}));
    auto bt = torch::broadcast_tensors({torch::zeros({3, 1}, f), torch::zeros({4}, f)});
    EXPECT_EQ(bt[1].sizes(), (std::vector<int64_t>{3, 4}));
  }
}

TEST(LibtorchApi, InPlaceViewOpsChangeTheTensorItself) {
  for (auto dev : devices()) {
    auto f = torch::TensorOptions(torch::kFloat).device(dev);
    torch::Tensor x = torch::arange(6, f).view({2, 3});
    torch::Tensor same = x;
    x.unsqueeze_(0);
    EXPECT_EQ(same.sizes(), (std::vector<int64_t>{1, 2, 3}));
    x.squeeze_();
    x.t_();
    EXPECT_EQ(same.sizes(), (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(vals(same), (std::vector<float>{0, 3, 1, 4, 2, 5}));
    // On a non-leaf the history follows: d/dw of (w * 2).unsqueeze_(0).sum() is 2.
    torch::Tensor w = torch::ones({3}, f).requires_grad_(true);
    torch::Tensor h = w * 2.0;
    h.unsqueeze_(0).transpose_(0, 1);
    EXPECT_EQ(h.sizes(), (std::vector<int64_t>{3, 1}));
    (h * h).sum().backward();
    EXPECT_EQ(vals(w.grad()), (std::vector<float>{8, 8, 8}));
    EXPECT_THROW(w.unsqueeze_(0), torch::Error);  // a leaf that requires grad
    h.detach_();
    EXPECT_FALSE(h.requires_grad());
  }
}

TEST(LibtorchApi, MaskedFillAndPredicates) {
  for (auto dev : devices()) {
    auto f = torch::TensorOptions(torch::kFloat).device(dev);
    const float inf = std::numeric_limits<float>::infinity();
    torch::Tensor x = torch::tensor({1.0f, -inf, NAN, inf, 2.0f}, f);
    EXPECT_EQ(x.isnan().cpu().to_vector<bool>(), (std::vector<bool>{false, false, true, false, false}));
    EXPECT_EQ(x.isinf().cpu().to_vector<bool>(), (std::vector<bool>{false, true, false, true, false}));
    EXPECT_EQ(torch::isfinite(x).cpu().to_vector<bool>(), (std::vector<bool>{true, false, false, false, true}));
    EXPECT_EQ(x.isposinf().cpu().to_vector<bool>(), (std::vector<bool>{false, false, false, true, false}));
    EXPECT_EQ(vals(x.masked_fill(torch::logical_not(torch::isfinite(x)), 0.0)), (std::vector<float>{1, 0, 0, 0, 2}));
    torch::Tensor y = torch::arange(4, f).requires_grad_(true);
    torch::Tensor v = torch::tensor(3.0f, f).requires_grad_(true);
    torch::Tensor z = y.masked_fill(y > 1.5, v);
    z.sum().backward();
    EXPECT_EQ(vals(z), (std::vector<float>{0, 1, 3, 3}));
    EXPECT_EQ(vals(y.grad()), (std::vector<float>{1, 1, 0, 0}));
    EXPECT_EQ(v.grad().item<float>(), 2.0f);
    torch::Tensor w = torch::zeros({3}, f);
    w.masked_fill_(torch::tensor({true, false, true}, torch::TensorOptions(torch::kBool).device(dev)), 7);
    EXPECT_EQ(vals(w), (std::vector<float>{7, 0, 7}));
    EXPECT_THROW(y.masked_fill(y, 1.0), ember::DTypeError);
    EXPECT_EQ(torch::logical_xor(torch::tensor({1, 0, 1}), torch::tensor({1, 1, 0})).to_vector<bool>(),
              (std::vector<bool>{false, true, true}));
    EXPECT_TRUE(torch::tensor({2.0}).is_nonzero());
    EXPECT_THROW(torch::zeros({2}).is_nonzero(), torch::ValueError);
  }
}

TEST(LibtorchApi, ToOverloadsAndFactories) {
  torch::Tensor x = torch::arange(6).view({2, 3}).t();
  torch::Tensor c = x.to(torch::kFloat, /*non_blocking=*/false, /*copy=*/false, torch::MemoryFormat::Contiguous);
  EXPECT_TRUE(c.is_contiguous());
  torch::Tensor f = torch::ones({2});
  EXPECT_TRUE(f.to(torch::kFloat).is_same(f));
  EXPECT_FALSE(f.to(torch::kFloat, false, /*copy=*/true).is_same(f));
  EXPECT_EQ(f.to(torch::zeros({1}, torch::kInt64)).dtype(), torch::kInt64);
  EXPECT_EQ(f.to(torch::Device("npu:0"), torch::kDouble).device(), torch::Device("npu:0"));
  EXPECT_THROW(f.contiguous(torch::MemoryFormat::ChannelsLast), torch::NotImplementedError);
  EXPECT_TRUE(torch::zeros({1, 3, 2, 2}).permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2}).is_contiguous(
      torch::MemoryFormat::ChannelsLast));
  float data[6] = {1, 2, 3, 4, 5, 6};
  int freed = 0;
  {
    torch::Tensor b = torch::from_blob(data, {2, 3});  // float32 by default, as libtorch
    EXPECT_EQ(b.dtype(), torch::kFloat);
    EXPECT_EQ(static_cast<float*>(b.data_ptr())[4], 5.0f);
    torch::Tensor d = torch::from_blob(data, {3}, {2}, [&](void*) { ++freed; }, torch::kFloat);
    EXPECT_EQ(vals(d), (std::vector<float>{1, 3, 5}));
  }
  EXPECT_EQ(freed, 1);
  EXPECT_THROW(torch::from_blob(data, {2}, torch::Device("npu:0")), ember::DeviceError);
  EXPECT_EQ(vals(torch::eye(2, 3)), (std::vector<float>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(vals(torch::logspace(0, 2, 3)), (std::vector<float>{1, 10, 100}));
  EXPECT_EQ(torch::tril_indices(3, 3).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 2, 2, 2, 0, 0, 1, 0, 1, 2}));
  EXPECT_EQ(torch::triu_indices(2, 3, 1).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 1, 2, 2}));
  torch::Tensor r = torch::randint(5, {100});
  EXPECT_GE(r.min().item<int64_t>(), 0);
  EXPECT_LT(r.max().item<int64_t>(), 5);
  torch::Tensor s = torch::empty_strided({2, 2}, {1, 2});
  EXPECT_EQ(s.strides(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(f.new_full({3}, 2.0).dtype(), torch::kFloat);
  EXPECT_EQ(vals(f.new_ones({2}, torch::kInt64)), (std::vector<float>{1, 1}));
}

TEST(LibtorchApi, MultinomialFollowsTheWeights) {
  for (auto dev : devices()) {
    torch::manual_seed(7);
    auto f = torch::TensorOptions(torch::kFloat).device(dev);
    torch::Tensor w = torch::tensor({0.0f, 1.0f, 3.0f}, f);
    torch::Tensor s = torch::multinomial(w, 4000, /*replacement=*/true);
    EXPECT_EQ(s.device(), dev);
    std::vector<int64_t> v = s.cpu().to_vector<int64_t>();
    int64_t ones = 0, twos = 0;
    for (int64_t e : v) {
      ASSERT_TRUE(e == 1 || e == 2);  // a zero weight is never drawn
      ones += e == 1;
      twos += e == 2;
    }
    EXPECT_NEAR(static_cast<double>(twos) / static_cast<double>(v.size()), 0.75, 0.03);  // 4000 draws: sd 0.007
    EXPECT_EQ(ones + twos, 4000);
    torch::Tensor rows = torch::tensor({1.0f, 1.0f, 1.0f, 0.0f, 1.0f, 2.0f}, f).view({2, 3});
    torch::Tensor nr = rows.multinomial(2);
    EXPECT_EQ(nr.sizes(), (std::vector<int64_t>{2, 2}));
    std::vector<int64_t> r = nr.cpu().to_vector<int64_t>();
    EXPECT_NE(r[0], r[1]);  // without replacement
    EXPECT_TRUE((r[2] == 1 && r[3] == 2) || (r[2] == 2 && r[3] == 1));  // row 1: both positive categories
    EXPECT_THROW(rows.multinomial(3), torch::ValueError);  // row 1 has two positive weights
    EXPECT_THROW(torch::multinomial(torch::tensor({-1.0f, 1.0f}, f), 1), torch::ValueError);
  }
}

TEST(LibtorchApi, C10AndAtSpellings) {
  c10::optional<int64_t> none = c10::nullopt;
  EXPECT_FALSE(none.has_value());
  at::Tensor t = at::zeros({2}, at::kFloat);
  EXPECT_EQ(t.numel(), 2);
  try {
    torch::zeros({2}).view({3});
    FAIL();
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("view"), std::string::npos);
  }
}

}  // namespace

namespace {
TEST(LibtorchApi, GatherScatterSortAndMath) {
  for (auto dev : devices()) {
    SCOPED_TRACE(dev.str());
    auto f = torch::TensorOptions(torch::kFloat).device(dev);
    auto l = torch::TensorOptions(torch::kInt64).device(dev);
    torch::Tensor x = torch::tensor({3.0f, 1.0f, 2.0f, -1.0f, 5.0f, 4.0f}, f).view({2, 3});
    EXPECT_EQ(vals(x.gather(1, torch::tensor({2, 0, 1, 1}, l).view({2, 2}))), (std::vector<float>{2, 3, 5, 5}));
    EXPECT_EQ(vals(x.scatter(1, torch::tensor({2, 0}, l).view({2, 1}), 9.0)), (std::vector<float>{3, 1, 9, 9, 5, 4}));
    auto [sv, si] = x.sort(1);
    EXPECT_EQ(vals(sv), (std::vector<float>{1, 2, 3, -1, 4, 5}));
    EXPECT_EQ(si.cpu().to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 0, 0, 2, 1}));
    auto [tv, ti] = torch::topk(x.view({-1}), 2);
    EXPECT_EQ(vals(tv), (std::vector<float>{5, 4}));
    EXPECT_EQ(ti.cpu().to_vector<int64_t>(), (std::vector<int64_t>{4, 5}));
    EXPECT_EQ(vals(x.prod(1)), (std::vector<float>{6, -20}));
    EXPECT_EQ(vals(torch::remainder(x, 2.0)), (std::vector<float>{1, 1, 0, 1, 1, 0}));
    EXPECT_EQ(vals(torch::fmod(x, 2.0)), (std::vector<float>{1, 1, 0, -1, 1, 0}));
    EXPECT_EQ(vals(x.index_add(1, torch::tensor({0, 0}, l), torch::ones({2, 2}, f))), (std::vector<float>{5, 1, 2, 1, 5, 4}));
    EXPECT_EQ(vals(x.diagonal()), (std::vector<float>{3, 5}));
    EXPECT_EQ(x.unfold(1, 2, 1).sizes(), (std::vector<int64_t>{2, 2, 2}));
    EXPECT_EQ(vals(torch::logsumexp(torch::zeros({2, 4}, f), {1})), (std::vector<float>{std::log(4.0f), std::log(4.0f)}));
    EXPECT_EQ(torch::nonzero(x > 2.5).cpu().to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 1, 1, 2}));
    EXPECT_THROW(x.gather(1, torch::tensor({3}, l).view({1, 1})), ember::IndexError);
    // Differentiable through the gathers: d/dx of sum(sort(x) * w) puts w back in x's order.
    torch::Tensor xg = torch::tensor({3.0, 1.0, 2.0}).requires_grad_(true);
    (std::get<0>(xg.to(dev).sort(0)) * torch::tensor({1.0, 10.0, 100.0}).to(dev)).sum().backward();
    EXPECT_EQ(xg.grad().to_vector<double>(), (std::vector<double>{100, 1, 10}));
    torch::Tensor y = torch::ones({3}, f).requires_grad_(true) * 1.0;
    y.exp_();  // the old value is kept for exp's backward
    EXPECT_NEAR(vals(y)[0], std::exp(1.0f), 1e-6);
  }
}
}  // namespace

namespace {
// Found by the fuzz smoke: a 0-d tensor rolled with dims read a size it does not have.
TEST(LibtorchApi, RollOfAZeroDimTensorIsItself) {
  for (auto dev : devices()) {
    torch::Tensor x = torch::full({}, 3.0, torch::TensorOptions(torch::kFloat).device(dev));
    torch::Tensor r = torch::roll(x, {5}, {0});
    EXPECT_EQ(r.dim(), 0);
    EXPECT_EQ(r.item<float>(), 3.0f);
    EXPECT_EQ(torch::roll(x, {-2}, {-1}).item<float>(), 3.0f);
  }
}
}  // namespace
