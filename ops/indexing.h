// ember::indexing: libtorch's tensor indexing API (torch::indexing), as Python's x[...]:
//
//   using namespace torch::indexing;
//   x.index({Slice(1, None), 0, "..."});          // x[1:, 0, ...]: a view
//   x.index({torch::tensor({0, 2})});             // x[[0, 2]]: a copy (advanced indexing)
//   x.index_put_({mask}, 0.0);                    // x[mask] = 0
//
// An index is an integer (selects, removing the dim), a Slice(start, stop, step) (None: the
// ends), None (a new dim of size 1), Ellipsis or "..." (as many full slices as needed), a bool
// (true: a new dim of size 1; false: one of size 0), or a tensor: int64/int32 (the positions
// along its dim) or bool (a mask over as many dims as it has). Integers, slices, None and
// Ellipsis give views; tensors give copies, with PyTorch's placement of the indexed dims (where
// the first tensor index was when the tensor indices are adjacent, else in front).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ember/tensor/tensor.h"

namespace ember {
namespace indexing {

constexpr int64_t INDEX_MAX = INT64_MAX;
constexpr int64_t INDEX_MIN = INT64_MIN;

struct EllipsisIndexType {};
constexpr EllipsisIndexType Ellipsis{};
constexpr std::nullopt_t None = std::nullopt;

// A slice start:stop:step; an end left out (None) is the dim's end, as in Python.
class Slice {
 public:
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt);
  int64_t start() const { return start_; }
  int64_t stop() const { return stop_; }
  int64_t step() const { return step_; }

 private:
  int64_t start_, stop_, step_;
};

class TensorIndex {
 public:
  enum class Kind { None, Ellipsis, Integer, Boolean, Slice, Tensor };
  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}                   // NOLINT
  TensorIndex(EllipsisIndexType) : kind_(Kind::Ellipsis) {}            // NOLINT
  TensorIndex(const char* s);                                           // NOLINT: "..."
  TensorIndex(int64_t i) : kind_(Kind::Integer), integer_(i) {}       // NOLINT
  TensorIndex(int i) : TensorIndex(static_cast<int64_t>(i)) {}        // NOLINT
  TensorIndex(bool b) : kind_(Kind::Boolean), boolean_(b) {}          // NOLINT
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}             // NOLINT
  TensorIndex(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_ellipsis() const { return kind_ == Kind::Ellipsis; }
  bool is_integer() const { return kind_ == Kind::Integer; }
  bool is_boolean() const { return kind_ == Kind::Boolean; }
  bool is_slice() const { return kind_ == Kind::Slice; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return boolean_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  bool boolean_ = false;
  Slice slice_;
  Tensor tensor_;
};

std::ostream& operator<<(std::ostream& os, const Slice& s);
std::ostream& operator<<(std::ostream& os, const TensorIndex& i);

}  // namespace indexing

// x[indices] (Tensor::index) and x[indices] = value (Tensor::index_put_), as free functions.
Tensor index(const Tensor& x, const std::vector<indexing::TensorIndex>& indices);
Tensor& index_put_(Tensor& x, const std::vector<indexing::TensorIndex>& indices, const Tensor& value);

}  // namespace ember
