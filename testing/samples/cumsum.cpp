// Samples and float64 references for the ops of ops/cumsum.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
namespace {
// The running sum of a slice, from the start or from the end.
std::vector<double> running_sum(const std::vector<double>& v, bool reverse) {
  std::vector<double> out(v.size());
  double acc = 0;
  for (size_t j = 0; j < v.size(); ++j) {
    size_t i = reverse ? v.size() - 1 - j : j;
    acc += v[i];
    out[i] = acc;
  }
  return out;
}
Stack ref_cumsum(const Stack& a, bool reverse) {
  Tensor x = a[0].to_tensor();
  if (a.size() > 2 && !a[2].is_none()) x = x.to(a[2].to_dtype());  // cast first, as the op does
  int64_t d = a[1].to_int() < 0 ? a[1].to_int() + std::max<int64_t>(x.dim(), 1) : a[1].to_int();
  if (x.dim() == 0) return {testing::ref_contiguous(x, kFloat64)};
  return {testing::ref_along(x, d, [reverse](const std::vector<double>& v) { return running_sum(v, reverse); })};
}
std::vector<testing::Sample> cumsum_samples(DType dt, bool with_dtype) {
  using testing::make_tensor;
  std::vector<testing::Sample> s = {
      {{make_tensor({4, 7}, dt, -3, 3, 1), IValue(int64_t(-1))}, "last dim"},
      {{make_tensor({3, 5, 4}, dt, -3, 3, 2), IValue(int64_t(1))}, "middle dim (strided rows)"},
      {{testing::make_noncontig({6, 5}, dt, -3, 3, 3), IValue(int64_t(0))}, "non-contiguous, dim 0"},
      {{make_tensor({}, dt, -3, 3, 4), IValue(int64_t(0))}, "0-d"},
      {{make_tensor({0, 3}, dt, -3, 3, 5), IValue(int64_t(1))}, "empty"},
      {{make_tensor({16, 1000}, dt, -1, 1, 6), IValue(int64_t(1))}, "long rows"}};
  if (with_dtype) s.push_back({{make_tensor({3, 4}, dt, -3, 3, 7), IValue(int64_t(0)), IValue(kFloat64)}, "dtype=float64"});
  return s;
}
}  // namespace

EMBER_OP_INFO("ember::cumsum", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kInt8, kBool};
  info.samples = [](DType dt) { return cumsum_samples(dt, true); };
  info.reference = [](const Stack& a) { return ref_cumsum(a, false); };
  info.tol_scale = 10;  // sums of up to 1000 terms, rounded once to the output's dtype
}
EMBER_OP_INFO("ember::cumsum_backward", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64};
  info.samples = [](DType dt) { return cumsum_samples(dt, false); };
  info.reference = [](const Stack& a) { return ref_cumsum(a, true); };
  info.tol_scale = 10;
}

}  // namespace ember
