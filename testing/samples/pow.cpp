// Samples and float64 references for the ops of ops/pow.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <cmath>
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
EMBER_OP_INFO("ember::pow", info) {
  testing::set_binary_info(info, [](double a, double b) { return std::pow(a, b); }, 0.25, 2.0);
}
EMBER_OP_INFO("ember::pow.Scalar", info) {
  info.samples = [](DType dt) {
    std::vector<testing::Sample> s;
    for (double e : {2.0, 0.5, 3.0, -1.5}) {
      for (auto& u : testing::unary_samples(dt, 0.25, 2.0)) {
        u.args.push_back(IValue(e));
        u.desc += ", exponent " + std::to_string(e);
        s.push_back(u);
      }
    }
    s.push_back({{testing::make_tensor({3, 4}, dt, -2, 2), IValue(int64_t(2))}, "negative base, integer exponent"});
    return s;
  };
  info.reference = [](const Stack& a) -> Stack {
    double e = a[1].to_double();
    return {testing::ref_map(a[0].to_tensor(), [e](double x) { return std::pow(x, e); })};
  };
}
}  // namespace ember
