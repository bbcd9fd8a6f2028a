// Samples and float64 references for the ops of ops/clamp.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <algorithm>
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
std::vector<testing::Sample> clamp_samples(DType dt) {
  std::vector<testing::Sample> s;
  for (auto& u : testing::unary_samples(dt, -3, 3)) {
    testing::Sample a = u;
    a.args.push_back(IValue(-1.0));
    a.args.push_back(IValue(int64_t(2)));
    a.desc += ", [-1, 2]";
    s.push_back(a);
  }
  s.push_back({{testing::make_tensor({4, 5}, dt, -3, 3), IValue(), IValue(0.5)}, "max only"});
  s.push_back({{testing::make_tensor({4, 5}, dt, -3, 3), IValue(int64_t(0))}, "min only"});
  return s;
}
Stack clamp_ref(const Stack& a) {
  bool has_lo = a.size() > 1 && !a[1].is_none(), has_hi = a.size() > 2 && !a[2].is_none();
  double lo = has_lo ? a[1].to_double() : 0, hi = has_hi ? a[2].to_double() : 0;
  return {testing::ref_map(a[0].to_tensor(), [=](double x) {
    if (has_lo) x = std::max(x, lo);
    if (has_hi) x = std::min(x, hi);
    return x;
  })};
}
}  // namespace

EMBER_OP_INFO("ember::clamp", info) {
  info.samples = clamp_samples;
  info.reference = clamp_ref;
}
EMBER_OP_INFO("ember::clamp_", info) {
  info.samples = clamp_samples;
  info.reference = clamp_ref;
  info.inplace = true;
}

}  // namespace ember
