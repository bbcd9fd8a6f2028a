// ember::data: datasets as libtorch's torch::data has them.
//
//   struct Pairs : data::datasets::Dataset<Pairs> {            // one example per index
//     data::Example<> get(size_t i) override { return {x[i], y[i]}; }
//     std::optional<size_t> size() const override { return n; }
//   };
//   auto ds = Pairs(...).map(data::transforms::Normalize<>(0.5, 0.25))   // per example
//                       .map(data::transforms::Stack<>());             // a batch into one Example
//
// A BatchDataset returns a whole batch for a request (a list of indices); Dataset builds it from
// get(i). map() wraps a dataset in a MapDataset that applies a transform to each batch.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "ember/core/error.h"
#include "ember/tensor/tensor.h"

namespace ember {
namespace data {

// One example: data and its target (a label, a regression value, ...).
template <class Data = Tensor, class Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;
  Example() = default;
  Example(Data d, Target t) : data(std::move(d)), target(std::move(t)) {}
  Data data;
  Target target;
};

namespace datasets {

template <class Source, class AppliedTransform>
class MapDataset;

template <class Self, class Batch, class BatchRequest = std::vector<size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;
  virtual ~BatchDataset() = default;
  // The batch for these indices.
  virtual Batch get_batch(BatchRequest request) = 0;
  // The number of examples (nullopt: unknown, a stream).
  virtual std::optional<size_t> size() const = 0;

  // This dataset with transform applied to each of its batches (a copy of it; a moved-from one
  // for an rvalue, as in make(...).map(t)).
  template <class T>
  MapDataset<Self, T> map(T transform) & {
    return MapDataset<Self, T>(static_cast<Self&>(*this), std::move(transform));
  }
  template <class T>
  MapDataset<Self, T> map(T transform) && {
    return MapDataset<Self, T>(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

// A dataset of single examples: get(index) is the one thing to write.
template <class Self, class SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;
  virtual SingleExample get(size_t index) = 0;
  std::vector<SingleExample> get_batch(std::vector<size_t> indices) override {
    std::vector<SingleExample> batch;
    batch.reserve(indices.size());
    for (size_t i : indices) batch.push_back(get(i));
    return batch;
  }
};

// A dataset whose batches are its source's, transformed (what map() makes).
template <class Source, class AppliedTransform>
class MapDataset : public BatchDataset<MapDataset<Source, AppliedTransform>, typename AppliedTransform::OutputBatchType,
                                       typename Source::BatchRequestType> {
 public:
  using DatasetType = Source;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename Source::BatchRequestType;
  using OutputBatchType = typename AppliedTransform::OutputBatchType;

  MapDataset(Source dataset, AppliedTransform transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}
  OutputBatchType get_batch(BatchRequestType request) override {
    return transform_.apply_batch(dataset_.get_batch(std::move(request)));
  }
  std::optional<size_t> size() const override { return dataset_.size(); }
  const Source& dataset() const { return dataset_; }
  const AppliedTransform& transform() const { return transform_; }

 private:
  Source dataset_;
  AppliedTransform transform_;
};

namespace detail {
// Row index of data and of targets (undefined targets stay undefined), the index checked.
inline Example<> row_example(const char* who, const Tensor& data, const Tensor& targets, size_t index) {
  EMBER_CHECK_INDEX(index < static_cast<size_t>(data.size(0)), who, ": index ", index, " out of range for ",
                    data.size(0), " examples");
  int64_t i = static_cast<int64_t>(index);
  return {data[i], targets.defined() ? targets[i] : Tensor()};
}
}  // namespace detail

// Rows of a tensor as examples with an undefined target (libtorch's TensorDataset), or rows of
// data and of targets as pairs.
class TensorDataset : public Dataset<TensorDataset> {
 public:
  explicit TensorDataset(Tensor data, Tensor targets = Tensor()) : data_(std::move(data)), targets_(std::move(targets)) {
    EMBER_CHECK_SHAPE(data_.dim() >= 1, "TensorDataset: data needs a first (example) dimension, got shape ", data_.sizes());
    EMBER_CHECK_SHAPE(!targets_.defined() || (targets_.dim() >= 1 && targets_.size(0) == data_.size(0)),
                      "TensorDataset: targets of shape ", targets_.sizes(), " do not match data of shape ",
                      data_.sizes(), " in the first dimension");
  }
  Example<> get(size_t index) override { return detail::row_example("TensorDataset", data_, targets_, index); }
  std::optional<size_t> size() const override { return static_cast<size_t>(data_.size(0)); }
  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor data_, targets_;
};

}  // namespace datasets
}  // namespace data
}  // namespace ember
