// Samples and float64 references for the ops of ops/argmax.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <cmath>
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
std::vector<testing::Sample> arg_samples(DType dt) {
  using testing::make_int_valued;
  using testing::make_tensor;
  // Small integer values make ties, so "first index wins" is checked.
  return {{{make_int_valued({5, 7}, dt, -3, 3), IValue(int64_t(1))}, "dim 1, ties"},
          {{make_int_valued({5, 7}, dt, -3, 3), IValue(int64_t(0)), IValue(true)}, "dim 0, keepdim"},
          {{make_tensor({3, 4, 5}, dt)}, "flattened"},
          {{testing::make_noncontig({6, 4}, dt), IValue(int64_t(-1))}, "non-contiguous"},
          {{make_tensor({40, 3000}, dt), IValue(int64_t(1))}, "large"}};
}
Stack arg_ref(const Stack& a, bool is_max) {
  Tensor x = a[0].to_tensor();
  bool has_dim = a.size() > 1 && !a[1].is_none();
  bool keep = a.size() > 2 && a[2].to_bool();
  Shape orig = x.sizes();
  if (!has_dim) x = testing::ref_contiguous(x, kFloat64).reshape({-1});
  int64_t d = has_dim ? (a[1].to_int() < 0 ? a[1].to_int() + x.dim() : a[1].to_int()) : 0;
  Tensor r = testing::ref_reduce(x, {d}, keep && has_dim, [is_max](const std::vector<double>& v) {
    size_t best = 0;
    for (size_t i = 1; i < v.size(); ++i)
      if (is_max ? v[i] > v[best] : v[i] < v[best]) best = i;
    return static_cast<double>(best);
  });
  if (!has_dim && keep) r = r.reshape(Shape(orig.size(), 1));
  return {r};
}
}  // namespace

EMBER_OP_INFO("ember::argmax", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32};
  info.samples = arg_samples;
  info.reference = [](const Stack& a) { return arg_ref(a, true); };
  info.exact = true;
}
EMBER_OP_INFO("ember::argmin", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32};
  info.samples = arg_samples;
  info.reference = [](const Stack& a) { return arg_ref(a, false); };
  info.exact = true;
}

}  // namespace ember
