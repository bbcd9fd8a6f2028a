// DistributedSampler: a seeded shuffle shared by every rank, padded or cut, strided per rank.
#include "ember/distributed/sampler.h"

#include <numeric>
#include <random>

#include "ember/core/error.h"
#include "ember/core/shuffle.h"
#include "ember/distributed/process_group.h"

namespace ember {
namespace distributed {

DistributedSampler::DistributedSampler(int64_t dataset_size, int num_replicas, int rank, bool shuffle, uint64_t seed,
                                       bool drop_last)
    : size_(dataset_size), shuffle_(shuffle), seed_(seed) {
  EMBER_CHECK_VALUE(dataset_size >= 0, "DistributedSampler: dataset_size must be >= 0, got ", dataset_size);
  num_replicas_ = num_replicas >= 0 ? num_replicas : get_world_size();
  rank_ = rank >= 0 ? rank : get_rank();
  EMBER_CHECK_VALUE(num_replicas_ >= 1, "DistributedSampler: num_replicas must be >= 1, got ", num_replicas_);
  EMBER_CHECK_VALUE(rank_ < num_replicas_, "DistributedSampler: rank ", rank_, " is not below num_replicas ",
                    num_replicas_);
  const int64_t n = num_replicas_;
  num_samples_ = drop_last ? size_ / n : (size_ + n - 1) / n;
}

std::vector<int64_t> DistributedSampler::indices() const {
  std::vector<int64_t> order(static_cast<size_t>(size_));
  std::iota(order.begin(), order.end(), int64_t(0));
  if (shuffle_) {
    std::mt19937_64 gen(seed_ + static_cast<uint64_t>(epoch_));  // the same permutation on every rank
    shuffle_in_place(order, gen);
  }
  const size_t total = static_cast<size_t>(total_size());
  for (size_t k = 0; order.size() < total && !order.empty(); ++k) order.push_back(order[k]);  // pad
  order.resize(total);                                                                          // or cut
  std::vector<int64_t> mine;
  mine.reserve(static_cast<size_t>(num_samples_));
  for (size_t k = static_cast<size_t>(rank_); k < total; k += static_cast<size_t>(num_replicas_))
    mine.push_back(order[k]);
  return mine;
}

}  // namespace distributed
}  // namespace ember
