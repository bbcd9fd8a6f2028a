// Samples and float64 references for the ops of ops/copy.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
std::vector<testing::Sample> copy_samples(DType dt) {
  using testing::make_tensor;
  using testing::make_noncontig;
  std::vector<testing::Sample> s;
  s.push_back({{make_tensor({3, 4}, dt, -3, 3, 41), make_tensor({3, 4}, dt, -3, 3, 42)}, "same dtype"});
  s.push_back({{make_noncontig({4, 5}, dt, -3, 3, 43), make_tensor({4, 5}, kFloat64, -3, 3, 44)},
               "into non-contiguous, from float64"});
  s.push_back({{make_tensor({2, 3, 4}, dt, -3, 3, 45), make_tensor({4}, kInt64, -3, 3, 46)}, "broadcast from int64"});
  s.push_back({{make_tensor({5, 6}, dt, -3, 3, 47), make_noncontig({5, 6}, kFloat16, -3, 3, 48)},
               "from non-contiguous float16"});
  s.push_back({{make_tensor({300, 70}, dt, -3, 3, 49), make_tensor({70, 300}, kBFloat16, -3, 3, 50).t()},
               "large, from transposed bfloat16"});
  return s;
}
}  // namespace

EMBER_OP_INFO("ember::copy_", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kInt8, kBool};
  info.samples = copy_samples;
  info.inplace = true;
  // Reference: the source values rounded once to the destination dtype, broadcast.
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& dst = a[0].to_tensor();
    Tensor src = a[1].to_tensor();
    Tensor out = testing::ref_map2(dst, src, [](double, double s) { return s; });
    return {out};
  };
  info.exact = true;
}
EMBER_OP_INFO("ember::clone", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kInt8, kBool};
  testing::set_unary_info(info, [](double x) { return x; });
  info.exact = true;
}
EMBER_OP_INFO("ember::detach", info) {
  info.dtypes = {kFloat32, kFloat64, kInt64};
  testing::set_unary_info(info, [](double x) { return x; });
  info.exact = true;
  info.view = true;
}
EMBER_OP_INFO("ember::contiguous", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kBool};
  testing::set_unary_info(info, [](double x) { return x; });
  info.exact = true;
}
EMBER_OP_INFO("ember::to", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kInt8, kBool};
  info.samples = [](DType dt) {
    std::vector<testing::Sample> s;
    for (DType to : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kInt8, kBool}) {
      s.push_back({{testing::make_tensor({4, 5}, dt, -3, 3, 51), IValue(Device(DeviceType::CPU)), IValue(to)},
                   std::string("to ") + dtype_name(to)});
    }
    s.push_back({{testing::make_noncontig({6, 3}, dt, -3, 3, 52), IValue(Device(DeviceType::CPU)), IValue(kFloat32)},
                 "non-contiguous to float32"});
    return s;
  };
  // Converting through double then to the target dtype once gives the same rounding.
  info.reference = [](const Stack& a) -> Stack {
    Tensor x = a[0].to_tensor();
    DType to = a[2].to_dtype();
    return {testing::ref_contiguous(testing::ref_contiguous(x, kFloat64), to)};
  };
  info.exact = true;
}

}  // namespace ember
