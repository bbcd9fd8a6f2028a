// ember::data::samplers: the order in which a DataLoader asks for examples (libtorch's names).
// next(n) returns up to n indices, nullopt once the epoch is done; reset() starts a new epoch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ember {
namespace data {
namespace samplers {

class Sampler {
 public:
  using BatchRequestType = std::vector<size_t>;
  virtual ~Sampler() = default;
  // A new epoch (over new_size examples if given).
  virtual void reset(std::optional<size_t> new_size = std::nullopt) = 0;
  virtual std::optional<std::vector<size_t>> next(size_t batch_size) = 0;
};

// 0, 1, 2, ... in order.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(size_t size) : size_(size) {}
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const { return index_; }

 private:
  size_t size_, index_ = 0;
};

// A new random permutation each epoch, drawn from ember's global generator (manual_seed).
class RandomSampler : public Sampler {
 public:
  explicit RandomSampler(int64_t size);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const { return index_; }

 private:
  std::vector<size_t> order_;
  size_t index_ = 0;
};

// Each of num_replicas processes takes its own share (rank's): the indices, shuffled per epoch
// by a generator seeded with the epoch (DistributedRandomSampler) or in order
// (DistributedSequentialSampler), padded by repeating from the start to a multiple of
// num_replicas (allow_duplicates, libtorch's default) or cut down to one, then split into
// num_replicas contiguous parts. set_epoch(e) before each epoch gives every rank the same
// shuffle, a new one per epoch.
class DistributedSampler : public Sampler {
 public:
  DistributedSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);
  void set_epoch(size_t epoch) { epoch_ = epoch; }
  size_t epoch() const { return epoch_; }
  size_t local_sample_count() const;
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;

 protected:
  // Puts 0 .. size-1 in the epoch's order.
  virtual void arrange(std::vector<size_t>& order) const = 0;

 private:
  size_t size_, num_replicas_, rank_;
  bool allow_duplicates_;
  size_t epoch_ = 0;
  std::vector<size_t> indices_;  // this rank's share of the epoch
  size_t index_ = 0;
  bool started_ = false;
};

class DistributedRandomSampler : public DistributedSampler {
 public:
  using DistributedSampler::DistributedSampler;

 protected:
  void arrange(std::vector<size_t>& order) const override;
};

class DistributedSequentialSampler : public DistributedSampler {
 public:
  using DistributedSampler::DistributedSampler;

 protected:
  void arrange(std::vector<size_t>&) const override {}
};

}  // namespace samplers
}  // namespace data
}  // namespace ember
