// ember::data::make_data_loader: batches of a dataset in a sampler's order, made by background
// worker threads ahead of the training loop (libtorch's StatelessDataLoader).
//
//   auto loader = data::make_data_loader(std::move(dataset),
//                                        data::DataLoaderOptions().batch_size(64).workers(2));
//   for (auto& batch : *loader) { ... batch.data, batch.target ... }   // one epoch per loop
//
// workers = 0 makes each batch on the calling thread when the loop asks for it. With workers,
// up to max_jobs batches (default 2 per worker) are requested ahead; each worker has its own
// copy of the dataset (when the dataset can be copied; otherwise they share it, and get must be
// safe to call from several threads). Batches arrive in the sampler's order unless
// enforce_ordering(false). Workers never take the intra-op thread pool (SerialGuard): their ops
// run on their own thread, so the training step keeps the pool. An exception thrown while making
// a batch is rethrown by the loop at that batch.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/error.h"
#include "ember/device/parallel.h"
#include "ember/nn/data/samplers.h"

namespace ember {
namespace data {

class DataLoaderOptions {
 public:
  DataLoaderOptions() = default;
  DataLoaderOptions(size_t batch_size) : batch_size_(batch_size) {}  // NOLINT: implicit, as libtorch's
  DataLoaderOptions& batch_size(size_t v) {
    batch_size_ = v;
    return *this;
  }
  DataLoaderOptions& workers(size_t v) {
    workers_ = v;
    return *this;
  }
  // Batches requested ahead at most (default: 2 per worker).
  DataLoaderOptions& max_jobs(size_t v) {
    max_jobs_ = v;
    return *this;
  }
  // Drop a last batch smaller than batch_size.
  DataLoaderOptions& drop_last(bool v) {
    drop_last_ = v;
    return *this;
  }
  DataLoaderOptions& enforce_ordering(bool v) {
    enforce_ordering_ = v;
    return *this;
  }
  size_t batch_size() const { return batch_size_; }
  size_t workers() const { return workers_; }
  size_t max_jobs() const { return max_jobs_ ? max_jobs_ : 2 * workers_; }
  bool drop_last() const { return drop_last_; }
  bool enforce_ordering() const { return enforce_ordering_; }

 private:
  size_t batch_size_ = 1, workers_ = 0, max_jobs_ = 0;
  bool drop_last_ = false, enforce_ordering_ = true;
};

template <class Dataset, class Sampler>
class StatelessDataLoader {
 public:
  using BatchType = typename Dataset::BatchType;
  using BatchRequestType = typename Dataset::BatchRequestType;

  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : dataset_(std::move(dataset)), sampler_(std::move(sampler)), options_(options) {
    EMBER_CHECK_VALUE(options_.batch_size() > 0, "DataLoader: batch_size must be positive");
    EMBER_CHECK_VALUE(options_.workers() == 0 || options_.max_jobs() > 0, "DataLoader: max_jobs must be positive");
    for (size_t w = 0; w < options_.workers(); ++w) threads_.emplace_back([this] { work(); });
  }
  ~StatelessDataLoader() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    jobs_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  StatelessDataLoader(const StatelessDataLoader&) = delete;
  StatelessDataLoader& operator=(const StatelessDataLoader&) = delete;

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = BatchType;
    using difference_type = std::ptrdiff_t;
    using pointer = BatchType*;
    using reference = BatchType&;
    Iterator() = default;
    explicit Iterator(StatelessDataLoader* loader) : loader_(loader) {}
    BatchType& operator*() const {
      check();
      return *loader_->current_;
    }
    BatchType* operator->() const { return &**this; }
    Iterator& operator++() {
      check();
      if (!loader_->advance()) loader_ = nullptr;
      return *this;
    }
    bool operator==(const Iterator& o) const { return loader_ == o.loader_; }
    bool operator!=(const Iterator& o) const { return !(*this == o); }

   private:
    void check() const { EMBER_CHECK_VALUE(loader_, "DataLoader: the iterator is past the end of the epoch"); }
    StatelessDataLoader* loader_ = nullptr;
  };

  // Starts an epoch (the sampler is reset; batches of a previous, unfinished one are dropped).
  Iterator begin() {
    drain();
    sampler_.reset();
    sampler_done_ = false;
    return advance() ? Iterator(this) : Iterator();
  }
  Iterator end() { return Iterator(); }
  const DataLoaderOptions& options() const { return options_; }
  const Dataset& dataset() const { return dataset_; }

 private:
  struct Result {
    std::optional<BatchType> batch;
    std::exception_ptr error;
  };

  // The next request from the sampler, or nullopt at the end of the epoch.
  std::optional<BatchRequestType> next_request() {
    if (sampler_done_) return std::nullopt;
    auto idx = sampler_.next(options_.batch_size());
    if (!idx || idx->empty() || (options_.drop_last() && idx->size() < options_.batch_size())) {
      sampler_done_ = true;
      return std::nullopt;
    }
    return BatchRequestType(std::move(*idx));
  }

  // Keeps max_jobs requests in flight (caller holds no lock).
  void fill_jobs() {
    while (in_flight_ < options_.max_jobs()) {
      std::optional<BatchRequestType> r = next_request();
      if (!r) break;
      {
        std::lock_guard<std::mutex> lock(mu_);
        jobs_.emplace_back(next_seq_++, std::move(*r));
      }
      ++in_flight_;
      jobs_cv_.notify_one();
    }
  }

  // Moves the next batch into current_; false at the end of the epoch.
  bool advance() {
    current_.reset();
    if (threads_.empty()) {
      std::optional<BatchRequestType> r = next_request();
      if (!r) return false;
      current_.emplace(dataset_.get_batch(std::move(*r)));
      return true;
    }
    fill_jobs();
    if (in_flight_ == 0) return false;
    Result res;
    {
      std::unique_lock<std::mutex> lock(mu_);
      results_cv_.wait(lock, [&] {
        return options_.enforce_ordering() ? results_.count(next_expected_) > 0 : !results_.empty();
      });
      auto it = options_.enforce_ordering() ? results_.find(next_expected_) : results_.begin();
      res = std::move(it->second);
      results_.erase(it);
    }
    ++next_expected_;
    --in_flight_;
    fill_jobs();
    if (res.error) std::rethrow_exception(res.error);
    current_ = std::move(res.batch);
    return true;
  }

  // Waits for the batches still being made and drops them.
  void drain() {
    current_.reset();
    if (threads_.empty()) return;
    std::unique_lock<std::mutex> lock(mu_);
    jobs_.clear();  // not started: nothing to wait for
    in_flight_ = busy_;
    results_cv_.wait(lock, [&] { return busy_ == 0; });
    results_.clear();
    in_flight_ = 0;
    next_expected_ = next_seq_;
  }

  void work() {
    SerialGuard serial;  // never the intra-op pool: the training step keeps it
    auto body = [this](auto& dataset) {
      while (true) {
        std::pair<size_t, BatchRequestType> job;
        {
          std::unique_lock<std::mutex> lock(mu_);
          jobs_cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
          if (stop_) return;
          job = std::move(jobs_.front());
          jobs_.erase(jobs_.begin());
          ++busy_;
        }
        Result r;
        try {
          r.batch.emplace(dataset.get_batch(std::move(job.second)));
        } catch (...) {
          r.error = std::current_exception();
        }
        {
          std::lock_guard<std::mutex> lock(mu_);
          results_.emplace(job.first, std::move(r));
          --busy_;
        }
        results_cv_.notify_all();
      }
    };
    if constexpr (std::is_copy_constructible<Dataset>::value) {
      Dataset own = [this] {
        std::lock_guard<std::mutex> lock(mu_);
        return dataset_;
      }();
      body(own);
    } else {
      body(dataset_);
    }
  }

  Dataset dataset_;
  Sampler sampler_;
  DataLoaderOptions options_;
  std::optional<BatchType> current_;
  bool sampler_done_ = false;
  size_t in_flight_ = 0, next_seq_ = 0, next_expected_ = 0;  // (the loop's thread only)
  std::mutex mu_;  // guards what follows
  std::condition_variable jobs_cv_, results_cv_;
  std::vector<std::pair<size_t, BatchRequestType>> jobs_;
  std::map<size_t, Result> results_;
  size_t busy_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// A loader over dataset with a Sampler (RandomSampler by default, as libtorch) of its size.
template <class Sampler = samplers::RandomSampler, class Dataset>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset,
                                                                        DataLoaderOptions options = {}) {
  std::optional<size_t> size = dataset.size();
  EMBER_CHECK_VALUE(size.has_value(), "make_data_loader: the dataset has no size; give the sampler explicitly");
  Sampler sampler(*size);
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), std::move(sampler), options);
}
template <class Dataset, class Sampler,
          std::enable_if_t<std::is_base_of<samplers::Sampler, Sampler>::value, int> = 0>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset, Sampler sampler,
                                                                        DataLoaderOptions options = {}) {
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), std::move(sampler), options);
}

}  // namespace data
}  // namespace ember
