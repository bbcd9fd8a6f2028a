// The samplers: sequential, random (ember's generator) and the distributed shares.
#include "ember/nn/data/samplers.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "ember/core/error.h"
#include "ember/core/shuffle.h"
#include "ember/ops/ops.h"

namespace ember {
namespace data {
namespace samplers {
namespace {
// The next up-to-n entries of order from index (advanced), nullopt at the end.
std::optional<std::vector<size_t>> take(const std::vector<size_t>& order, size_t& index, size_t n) {
  EMBER_CHECK_VALUE(n > 0, "sampler: batch_size must be positive");
  if (index >= order.size()) return std::nullopt;
  size_t end = std::min(order.size(), index + n);
  std::vector<size_t> out(order.begin() + static_cast<std::ptrdiff_t>(index), order.begin() + static_cast<std::ptrdiff_t>(end));
  index = end;
  return out;
}
}  // namespace

void SequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}
std::optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
  EMBER_CHECK_VALUE(batch_size > 0, "SequentialSampler: batch_size must be positive");
  if (index_ >= size_) return std::nullopt;
  size_t end = std::min(size_, index_ + batch_size);
  std::vector<size_t> out(end - index_);
  std::iota(out.begin(), out.end(), index_);
  index_ = end;
  return out;
}

RandomSampler::RandomSampler(int64_t size) {
  EMBER_CHECK_VALUE(size >= 0, "RandomSampler: size must be non-negative, got ", size);
  reset(static_cast<size_t>(size));
}
void RandomSampler::reset(std::optional<size_t> new_size) {
  size_t n = new_size ? *new_size : order_.size();
  std::vector<int64_t> perm = randperm(static_cast<int64_t>(n)).to_vector<int64_t>();
  order_.assign(perm.begin(), perm.end());
  index_ = 0;
}
std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) { return take(order_, index_, batch_size); }

DistributedSampler::DistributedSampler(size_t size, size_t num_replicas, size_t rank, bool allow_duplicates)
    : size_(size), num_replicas_(num_replicas), rank_(rank), allow_duplicates_(allow_duplicates) {
  EMBER_CHECK_VALUE(num_replicas >= 1, "DistributedSampler: num_replicas must be at least 1, got ", num_replicas);
  EMBER_CHECK_VALUE(rank < num_replicas, "DistributedSampler: rank ", rank, " is not below num_replicas ", num_replicas);
}
size_t DistributedSampler::local_sample_count() const {
  return allow_duplicates_ ? (size_ + num_replicas_ - 1) / num_replicas_ : size_ / num_replicas_;
}
void DistributedSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  std::vector<size_t> order(size_);
  std::iota(order.begin(), order.end(), size_t(0));
  arrange(order);
  size_t local = local_sample_count(), total = local * num_replicas_;
  for (size_t k = 0; order.size() < total && !order.empty(); ++k) order.push_back(order[k]);  // pad
  order.resize(total);                                                                          // or cut
  auto begin = order.begin() + static_cast<std::ptrdiff_t>(rank_ * local);
  indices_.assign(begin, begin + static_cast<std::ptrdiff_t>(local));
  index_ = 0;
  started_ = true;
}
std::optional<std::vector<size_t>> DistributedSampler::next(size_t batch_size) {
  if (!started_) reset();
  return take(indices_, index_, batch_size);
}

void DistributedRandomSampler::arrange(std::vector<size_t>& order) const {
  std::mt19937_64 gen(static_cast<uint64_t>(epoch()));  // the same shuffle on every rank
  shuffle_in_place(order, gen);
}

}  // namespace samplers
}  // namespace data
}  // namespace ember
