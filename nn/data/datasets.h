// ember::data::datasets::MNIST and CSVDataset: readers of files on disk.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ember/nn/data/dataset.h"

namespace ember {
namespace data {
namespace datasets {

// The MNIST files in root (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
// t10k-labels-idx1-ubyte; IDX format, uncompressed), read whole: images as float32 [N, 1, H, W]
// in [0, 1], targets as int64 [N]. Any file that is missing, truncated, of the wrong kind (magic
// number) or disagreeing with its partner is an error naming the file.
class MNIST : public Dataset<MNIST> {
 public:
  enum class Mode { kTrain, kTest };
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);
  Example<> get(size_t index) override;
  std::optional<size_t> size() const override;
  bool is_train() const noexcept { return train_; }
  const Tensor& images() const { return images_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor images_, targets_;
  bool train_;
};

// Rows of numbers from a CSV file: each row's target_column (negative: from the end; -1 the
// last) is its target, the other columns its data (float32 [columns - 1]). Targets are int64
// class labels (the value must be a whole number) or float32 values (target_dtype). A first row
// that is not all numbers is read as a header (header: yes / no / auto). Quoted fields, ragged
// rows, empty fields and non-numbers are errors naming the line and column.
class CSVDataset : public Dataset<CSVDataset> {
 public:
  struct Options {
    int64_t target_column = -1;
    DType target_dtype = kInt64;
    char delimiter = ',';
    std::optional<bool> header;  // nullopt: a first row that does not parse as numbers is a header
  };
  explicit CSVDataset(const std::string& path, Options options);
  explicit CSVDataset(const std::string& path) : CSVDataset(path, Options()) {}
  Example<> get(size_t index) override;
  std::optional<size_t> size() const override;
  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor data_, targets_;
};

}  // namespace datasets
}  // namespace data
}  // namespace ember
