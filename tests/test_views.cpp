// Views share storage; writes through a view are visible in the base and vice versa.
#include "test_util.h"

using namespace ember;

namespace {

TEST(Views, ShareStorageAndSeeWrites) {
  Tensor a = arange(12).reshape({3, 4}).to(kFloat32);
  Tensor row = a[1];
  Tensor col = a.select(1, 2);
  Tensor tr = a.t();
  Tensor sl = a.slice(1, 1, 4, 2);
  for (const Tensor& v : {row, col, tr, sl, a.view({4, 3}), a.unsqueeze(0), a.expand({2, 3, 4}), a.narrow(0, 1, 2)})
    EXPECT_TRUE(v.is_alias_of(a));
  row.fill_(-1);
  EXPECT_EQ(a.select(0, 1).to_vector<float>(), (std::vector<float>{-1, -1, -1, -1}));
  EXPECT_EQ(col.to_vector<float>(), (std::vector<float>{2, -1, 10}));
  EXPECT_EQ(tr.select(0, 2).to_vector<float>(), (std::vector<float>{2, -1, 10}));
  EXPECT_EQ(sl.sizes(), (Shape{3, 2}));
  EXPECT_EQ(sl.strides(), (Shape{4, 2}));
  EXPECT_EQ(sl.to_vector<float>(), (std::vector<float>{1, 3, -1, -1, 9, 11}));
}

TEST(Views, ContiguityAndReshape) {
  Tensor a = arange(6).reshape({2, 3});
  EXPECT_TRUE(a.is_contiguous());
  EXPECT_FALSE(a.t().is_contiguous());
  EXPECT_TRUE(a.t().contiguous().is_contiguous());
  EXPECT_FALSE(a.t().contiguous().is_alias_of(a));
  EXPECT_TRUE(a.contiguous().is_same(a));
  EXPECT_TRUE(a.reshape({3, 2}).is_alias_of(a));   // viewable: no copy
  EXPECT_FALSE(a.t().reshape({6}).is_alias_of(a));  // not viewable: copies
  EXPECT_EQ(a.t().reshape({6}).to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(a.view({-1}).sizes(), (Shape{6}));
  EXPECT_EQ(a.flatten().sizes(), (Shape{6}));
  EXPECT_EQ(zeros({2, 3, 4, 5}).flatten(1, 2).sizes(), (Shape{2, 12, 5}));
}

TEST(Views, ExpandUsesZeroStrides) {
  Tensor a = tensor({1.0, 2.0, 3.0}).unsqueeze(1);
  Tensor e = a.expand({3, 4});
  EXPECT_EQ(e.strides(), (Shape{1, 0}));
  EXPECT_EQ(e.sum().item<double>(), 24.0);
  EXPECT_EQ(a.expand({2, -1, 5}).sizes(), (Shape{2, 3, 5}));
}

TEST(Views, SqueezePermuteTranspose) {
  Tensor a = zeros({1, 3, 1, 2});
  EXPECT_EQ(a.squeeze().sizes(), (Shape{3, 2}));
  EXPECT_EQ(a.squeeze(2).sizes(), (Shape{1, 3, 2}));
  EXPECT_EQ(a.squeeze(1).sizes(), (Shape{1, 3, 1, 2}));
  EXPECT_EQ(a.unsqueeze(-1).sizes(), (Shape{1, 3, 1, 2, 1}));
  EXPECT_EQ(zeros({2, 3, 4}).permute({2, 0, 1}).sizes(), (Shape{4, 2, 3}));
  EXPECT_EQ(zeros({2, 3, 4}).transpose(0, 2).strides(), (Shape{1, 4, 12}));
  EXPECT_THROW(zeros({2, 3, 4}).t(), ShapeError);
  EXPECT_EQ(zeros({5}).t().sizes(), (Shape{5}));
}

TEST(Views, SliceSemanticsMatchPython) {
  Tensor a = arange(10);
  EXPECT_EQ(a.slice(0, -3).to_vector<int64_t>(), (std::vector<int64_t>{7, 8, 9}));
  EXPECT_EQ(a.slice(0, 2, 100, 3).to_vector<int64_t>(), (std::vector<int64_t>{2, 5, 8}));
  EXPECT_EQ(a.slice(0, 5, 2).numel(), 0);
  EXPECT_EQ(a[-1].item<int64_t>(), 9);
}

TEST(Views, ChunkAndSplit) {
  Tensor a = arange(10);
  auto c = a.chunk(3);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].numel(), 4);
  EXPECT_EQ(c[2].numel(), 2);
  auto s = a.split(4);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[2].to_vector<int64_t>(), (std::vector<int64_t>{8, 9}));
  for (const auto& p : s) EXPECT_TRUE(p.is_alias_of(a));
}

TEST(Views, InPlaceThroughAViewOfATranspose) {
  Tensor a = zeros({3, 3});
  a.t().select(0, 1).copy_(tensor({1.0, 2.0, 3.0}));  // writes column 1
  EXPECT_EQ(a.select(1, 1).to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(a.sum().item<double>(), 6.0);
}

}  // namespace
