// ember::distributed without a launcher: the DistributedSampler's shares (ranks given explicitly),
// and what the process-group functions say before init_process_group.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "test_util.h"

using namespace ember;
using ember_test::expect_error;
namespace dist = ember::distributed;

TEST(DistributedSampler, SharesCoverTheDatasetAndReshufflePerEpoch) {
  const int64_t n = 10;
  const int replicas = 3;
  std::vector<std::vector<int64_t>> shares;
  for (int r = 0; r < replicas; ++r) {
    dist::DistributedSampler s(n, replicas, r, /*shuffle=*/true, /*seed=*/7);
    s.set_epoch(3);
    EXPECT_EQ(s.num_samples(), 4);
    shares.push_back(s.indices());
    EXPECT_EQ(shares.back().size(), 4u);
  }
  // 12 slots: every index at least once, two of them twice (the padding).
  std::multiset<int64_t> all;
  for (const auto& sh : shares) all.insert(sh.begin(), sh.end());
  EXPECT_EQ(all.size(), 12u);
  for (int64_t i = 0; i < n; ++i) EXPECT_GE(all.count(i), 1u) << i;
  // The same epoch and seed give the same shares; another epoch another order.
  dist::DistributedSampler again(n, replicas, 1, true, 7);
  again.set_epoch(3);
  EXPECT_EQ(again.indices(), shares[1]);
  again.set_epoch(4);
  std::vector<std::vector<int64_t>> next;
  for (int r = 0; r < replicas; ++r) {
    dist::DistributedSampler s(n, replicas, r, true, 7);
    s.set_epoch(4);
    next.push_back(s.indices());
  }
  EXPECT_NE(next, shares);
  EXPECT_EQ(again.indices(), next[1]);
  // Without shuffling: strided, padded from the start.
  dist::DistributedSampler plain(n, replicas, 1, /*shuffle=*/false);
  EXPECT_EQ(plain.indices(), (std::vector<int64_t>{1, 4, 7, 0}));
  // drop_last: 3 each, all distinct.
  std::set<int64_t> kept;
  for (int r = 0; r < replicas; ++r) {
    dist::DistributedSampler s(n, replicas, r, true, 1, /*drop_last=*/true);
    auto idx = s.indices();
    EXPECT_EQ(idx.size(), 3u);
    kept.insert(idx.begin(), idx.end());
  }
  EXPECT_EQ(kept.size(), 9u);
  EXPECT_TRUE(dist::DistributedSampler(0, 2, 1).indices().empty());
  expect_error<ValueError>([] { dist::DistributedSampler(5, 2, 2); }, {"rank 2 is not below num_replicas 2"});
}

TEST(Distributed, WithoutAProcessGroup) {
  EXPECT_FALSE(dist::is_initialized());
  expect_error<ValueError>([] { dist::get_rank(); }, {"not initialised", "init_process_group"});
  expect_error<ValueError>([] { dist::DistributedSampler(5); }, {"not initialised"});
  expect_error<ValueError>([] { dist::init_process_group("nccl"); }, {"unknown backend \"nccl\""});
  dist::destroy_process_group();  // nothing to destroy: no error
}
