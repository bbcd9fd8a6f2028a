// Samples and float64 references for the ops of ops/compare.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"
#include "ember/core/tables/compare_ops.def"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
const std::vector<DType> kCmpTypes{kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kInt8};
// Small integers make ties (==) likely, so eq/ne/le/ge are really exercised.
std::vector<testing::Sample> cmp_samples(DType dt) {
  std::vector<testing::Sample> s;
  s.push_back({{testing::make_int_valued({6, 7}, dt, -2, 2, 61), testing::make_int_valued({6, 7}, dt, -2, 2, 62)},
               "small integers, same shape"});
  s.push_back({{testing::make_int_valued({3, 1}, dt, -2, 2, 63), testing::make_int_valued({4}, dt, -2, 2, 64)},
               "broadcast"});
  s.push_back({{testing::make_noncontig({4, 6}, dt, -2, 2, 65), testing::make_tensor({}, kFloat64, -1, 1, 66)},
               "non-contiguous x 0-d float64"});
  return s;
}
void cmp_info(testing::OpInfo& info, bool (*f)(double, double), bool scalar) {
  info.dtypes = kCmpTypes;
  info.exact = true;
  if (scalar) {
    testing::set_scalar_info(info, [f](double a, double b) { return f(a, b) ? 1.0 : 0.0; });
    auto base = info.samples;
    info.samples = [base](DType dt) {
      auto s = base(dt);
      s.push_back({{testing::make_int_valued({5, 5}, dt, -2, 2, 67), IValue(int64_t(1))}, "ties with 1"});
      return s;
    };
  } else {
    info.samples = cmp_samples;
    info.reference = [f](const Stack& a) -> Stack {
      return {testing::ref_map2(a[0].to_tensor(), a[1].to_tensor(), [f](double x, double y) { return f(x, y) ? 1.0 : 0.0; })};
    };
  }
}
bool f_eq(double a, double b) { return a == b; }
bool f_ne(double a, double b) { return a != b; }
bool f_lt(double a, double b) { return a < b; }
bool f_le(double a, double b) { return a <= b; }
bool f_gt(double a, double b) { return a > b; }
bool f_ge(double a, double b) { return a >= b; }
}  // namespace

#define EMBER_INFO(name)                                                        \
  EMBER_OP_INFO("ember::" #name, info) { cmp_info(info, f_##name, false); }     \
  EMBER_OP_INFO("ember::" #name ".Scalar", info) { cmp_info(info, f_##name, true); }
EMBER_COMPARE_OPS(EMBER_INFO)
#undef EMBER_INFO

EMBER_OP_INFO("ember::logical_and", info) {
  info.dtypes = {kBool, kFloat32, kInt64};
  info.exact = true;
  info.samples = cmp_samples;
  info.reference = [](const Stack& a) -> Stack {
    return {testing::ref_map2(a[0].to_tensor(), a[1].to_tensor(), [](double x, double y) { return (x != 0 && y != 0) ? 1.0 : 0.0; })};
  };
}
EMBER_OP_INFO("ember::logical_or", info) {
  info.dtypes = {kBool, kFloat32, kInt64};
  info.exact = true;
  info.samples = cmp_samples;
  info.reference = [](const Stack& a) -> Stack {
    return {testing::ref_map2(a[0].to_tensor(), a[1].to_tensor(), [](double x, double y) { return (x != 0 || y != 0) ? 1.0 : 0.0; })};
  };
}
EMBER_OP_INFO("ember::logical_not", info) {
  info.dtypes = {kBool, kFloat32, kInt64};
  info.exact = true;
  info.samples = [](DType dt) {
    return std::vector<testing::Sample>{{{testing::make_int_valued({5, 6}, dt, -1, 1)}, "with zeros"},
                                        {{testing::make_noncontig({4, 4}, dt, -1, 1)}, "non-contiguous"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    return {testing::ref_map(a[0].to_tensor(), [](double x) { return x == 0 ? 1.0 : 0.0; })};
  };
}
EMBER_OP_INFO("ember::where", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64};
  info.exact = true;
  info.samples = [](DType dt) {
    std::vector<testing::Sample> s;
    Tensor c = testing::make_int_valued({4, 5}, kBool, 0, 1, 71);
    s.push_back({{c, testing::make_tensor({4, 5}, dt), testing::make_tensor({4, 5}, dt, -1, 1, 72)}, "same shape"});
    s.push_back({{testing::make_int_valued({3, 1}, kBool, 0, 1, 73), testing::make_tensor({4}, dt),
                  testing::make_tensor({}, dt, -1, 1, 74)},
                 "broadcast cond [3, 1], a [4], b 0-d"});
    s.push_back({{c.t(), testing::make_noncontig({5, 4}, dt), testing::make_tensor({5, 4}, kFloat64, -1, 1, 75)},
                 "non-contiguous, mixed dtypes"});
    return s;
  };
  info.reference = [](const Stack& a) -> Stack {
    return {testing::ref_map3(a[0].to_tensor(), a[1].to_tensor(), a[2].to_tensor(),
                              [](double c, double x, double y) { return c != 0 ? x : y; })};
  };
}

}  // namespace ember
