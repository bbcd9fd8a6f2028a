// ember_testing (internal): small helpers of the sliding-window samples (testing/samples/conv.cpp
// and pool.cpp): 2-D arguments from a sample's stack, 4-D element access, window counts.
#pragma once

#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
namespace testing {
namespace windows {

// Argument i as 2 values (one value for both dims), dflt when absent, None or empty.
inline Shape ints(const Stack& a, size_t i, Shape dflt) {
  if (a.size() <= i || a[i].is_none()) return dflt;
  Shape v = a[i].to_int_list();
  if (v.empty()) return dflt;
  return v.size() == 1 ? Shape{v[0], v[0]} : v;
}
inline double at4(const Tensor& t, int64_t a, int64_t b, int64_t c, int64_t d) { return testing::at(t, {a, b, c, d}); }
inline Tensor as4(const Tensor& t) { return t.dim() == 4 ? t : t.unsqueeze(0); }
// Windows along one dim of n for kernel k, dilation d, padding p, stride s.
inline int64_t out_size(int64_t in, int64_t k, int64_t d, int64_t p, int64_t s) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

// The input position of output row y, tap i (or -1 outside).
inline int64_t src(int64_t y, int64_t i, int64_t s, int64_t p, int64_t d, int64_t n) {
  int64_t v = y * s - p + i * d;
  return v >= 0 && v < n ? v : -1;
}

}  // namespace windows
}  // namespace testing
}  // namespace ember
