// ember (internal to nn/): helpers the composite layers share.
#pragma once

#include <optional>
#include <vector>

#include "ember/ops/ops.h"

namespace ember {
namespace nn {
namespace detail {
// Positions computed on the host as an int64 tensor on like's device (shaped as asked, 1-D by default).
inline Tensor host_index(const std::vector<int64_t>& v, const Tensor& like, IntArrayRef shape = {}) {
  return tensor(v, shape).to(like.device());
}
// An optional tensor argument from a possibly undefined one (the options' Tensor() means none).
inline std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }
}  // namespace detail
}  // namespace nn
}  // namespace ember
