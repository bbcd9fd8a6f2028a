// ember: each rank's share of a dataset for data-parallel training (torch's DistributedSampler).
//
//   dist::DistributedSampler sampler(dataset_size);          // ranks from the default group
//   for (int64_t epoch = 0; ...; ++epoch) {
//     sampler.set_epoch(epoch);                              // a new shuffle, the same on every rank
//     for (int64_t i : sampler.indices()) ...                // this rank's examples
//   }
//
// The indices 0 .. size-1 are shuffled with a generator seeded by seed + epoch (the same
// permutation on every rank), then padded by repeating from the start to a multiple of the number
// of replicas (or, with drop_last, cut down to one), and rank r takes every num_replicas-th index
// from position r. So the ranks' shares are disjoint when size divides evenly, and each has
// num_samples() indices.
#pragma once

#include <cstdint>
#include <vector>

namespace ember {
namespace distributed {

class DistributedSampler {
 public:
  // num_replicas / rank: -1 for the default process group's size and this process's rank.
  explicit DistributedSampler(int64_t dataset_size, int num_replicas = -1, int rank = -1, bool shuffle = true,
                              uint64_t seed = 0, bool drop_last = false);
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }
  std::vector<int64_t> indices() const;
  int64_t num_samples() const { return num_samples_; }
  int64_t total_size() const { return num_samples_ * num_replicas_; }

 private:
  int64_t size_;
  int num_replicas_, rank_;
  bool shuffle_;
  uint64_t seed_;
  int64_t num_samples_;
  int64_t epoch_ = 0;
};

}  // namespace distributed
}  // namespace ember
