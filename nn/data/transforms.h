// ember::data::transforms: what map() applies to a dataset's batches (libtorch's names).
//   Transform<In, Out>:  per example (apply);   BatchTransform<InBatch, OutBatch>: per batch;
//   TensorTransform:     per example's data tensor;  Normalize: (x - mean) / stddev per channel;
//   Stack<>:             a batch of Examples into one Example of stacked tensors.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "ember/nn/data/dataset.h"
#include "ember/ops/ops.h"

namespace ember {
namespace data {
namespace transforms {

template <class InputBatch, class OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;
  virtual ~BatchTransform() = default;
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

template <class Input, class Output = Input>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;
  virtual Output apply(Input input) = 0;
  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> out;
    out.reserve(input_batch.size());
    for (Input& x : input_batch) out.push_back(apply(std::move(x)));
    return out;
  }
};

// Transforms each example's data tensor (the target passes through).
template <class Target = Tensor>
class TensorTransform : public Transform<Example<Tensor, Target>> {
 public:
  using E = Example<Tensor, Target>;
  virtual Tensor operator()(Tensor input) = 0;
  E apply(E input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

// A TensorTransform from a function.
template <class Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  explicit TensorLambda(std::function<Tensor(Tensor)> fn) : fn_(std::move(fn)) {}
  Tensor operator()(Tensor input) override { return fn_(std::move(input)); }

 private:
  std::function<Tensor(Tensor)> fn_;
};

// (x - mean) / stddev: one value for all, or one per channel (the first dim of each example).
template <class Target = Tensor>
class Normalize : public TensorTransform<Target> {
 public:
  Normalize(double mean, double stddev) : Normalize(std::vector<double>{mean}, std::vector<double>{stddev}) {}
  Normalize(std::vector<double> mean, std::vector<double> stddev) {
    EMBER_CHECK_VALUE(!mean.empty() && mean.size() == stddev.size(), "Normalize: mean and stddev need the same, "
                      "non-zero number of values, got ", mean.size(), " and ", stddev.size());
    for (double s : stddev) EMBER_CHECK_VALUE(s != 0, "Normalize: a stddev of 0 would divide by zero");
    Shape shape = mean.size() == 1 ? Shape{} : Shape{static_cast<int64_t>(mean.size()), 1, 1};
    mean_ = ember::tensor(mean, {}, kFloat64).reshape(shape);
    stddev_ = ember::tensor(stddev, {}, kFloat64).reshape(shape);
  }
  Tensor operator()(Tensor input) override {
    EMBER_CHECK_DTYPE(input.is_floating_point(), "Normalize: expects floating data, got ", input.dtype());
    if (mean_.dim() > 0)
      EMBER_CHECK_SHAPE(input.dim() == 3 && input.size(0) == mean_.size(0),
                        "Normalize: ", mean_.size(0), " per-channel values need data of shape [", mean_.size(0),
                        ", H, W], got ", input.sizes());
    Tensor m = mean_.to(input.device(), input.dtype()), s = stddev_.to(input.device(), input.dtype());
    return (input - m) / s;
  }

 private:
  Tensor mean_, stddev_;
};

// Stacks a batch of examples' data and targets (each along a new first dimension).
template <class E = Example<>>
struct Stack;

template <>
struct Stack<Example<>> : public BatchTransform<std::vector<Example<>>, Example<>> {
  Example<> apply_batch(std::vector<Example<>> examples) override {
    EMBER_CHECK_VALUE(!examples.empty(), "Stack: cannot stack an empty batch");
    std::vector<Tensor> data, targets;
    data.reserve(examples.size());
    targets.reserve(examples.size());
    for (Example<>& e : examples) {
      data.push_back(std::move(e.data));
      targets.push_back(std::move(e.target));
    }
    return {ember::stack(data), targets[0].defined() ? ember::stack(targets) : Tensor()};
  }
};

}  // namespace transforms
}  // namespace data
}  // namespace ember
