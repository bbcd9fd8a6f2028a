// Samples and float64 references for the ops of ops/fill.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <cmath>
#include <random>

#include "ember/core/shuffle.h"
#include "ember/device/cpu/random.h"
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
const std::vector<DType> kAll{kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kInt8, kBool};

// Reference for the random fills: the same Philox stream mapped to the distribution here.
Tensor ref_random(const Tensor& self, int kind, double a, double b, int64_t seed, int64_t offset) {
  Tensor out = empty(self.sizes_ref(), kFloat64);
  double* o = out.data_ptr<double>();
  for (int64_t i = 0; i < self.numel(); ++i) {
    uint32_t r[4];
    cpu::philox4x32(static_cast<uint64_t>(seed), static_cast<uint64_t>(offset + i), r);
    double u = static_cast<double>((static_cast<uint64_t>(r[0]) << 21) ^ (r[1] >> 11)) / 9007199254740992.0;
    double u2 = static_cast<double>((static_cast<uint64_t>(r[2]) << 21) ^ (r[3] >> 11)) / 9007199254740992.0;
    double v = 0;
    if (kind == 0) v = a + (b - a) * u;
    if (kind == 1) v = a + b * std::sqrt(-2.0 * std::log(1.0 - u)) * std::cos(2.0 * M_PI * u2);
    if (kind == 2) v = a + static_cast<double>(((static_cast<uint64_t>(r[0]) << 32) | r[1]) % static_cast<uint64_t>(b - a));
    o[i] = is_integral(self.dtype(), true) && kind != 2 ? std::trunc(v) : v;
  }
  return out;
}
}  // namespace

EMBER_OP_INFO("ember::fill_", info) {
  info.dtypes = kAll;
  info.inplace = true;
  info.exact = true;
  info.samples = [](DType dt) {
    std::vector<testing::Sample> s;
    s.push_back({{testing::make_tensor({3, 4}, dt), IValue(int64_t(1))}, "int value"});
    s.push_back({{testing::make_noncontig({4, 5}, dt), IValue(dt == kBool ? 1.0 : 2.5)}, "non-contiguous, float value"});
    s.push_back({{testing::make_tensor({}, dt), IValue(true)}, "0-d, bool value"});
    return s;
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor self = a[0].to_tensor();
    double v = a[1].to_scalar().to_double();
    return {testing::ref_contiguous(testing::ref_map(self, [v](double) { return v; }), self.dtype())};
  };
}
EMBER_OP_INFO("ember::zero_", info) {
  info.dtypes = kAll;
  info.inplace = true;
  info.exact = true;
  testing::set_unary_info(info, [](double) { return 0.0; });
}
EMBER_OP_INFO("ember::arange_fill_", info) {
  info.dtypes = kAll;
  info.inplace = true;
  info.samples = [](DType dt) {
    std::vector<testing::Sample> s;
    s.push_back({{testing::make_tensor({10}, dt), IValue(int64_t(0)), IValue(int64_t(1))}, "0, 1, 2, ..."});
    s.push_back({{testing::make_tensor({2, 3}, dt), IValue(int64_t(5)), IValue(int64_t(-2))}, "2-d, negative step"});
    if (is_floating_point(dt)) s.push_back({{testing::make_tensor({7}, dt), IValue(-1.0), IValue(0.25)}, "float step"});
    return s;
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor self = a[0].to_tensor();
    double start = a[1].to_scalar().to_double(), step = a[2].to_scalar().to_double();
    Tensor out = empty(self.sizes_ref(), kFloat64);
    for (int64_t i = 0; i < self.numel(); ++i) out.data_ptr<double>()[i] = start + static_cast<double>(i) * step;
    return {testing::ref_contiguous(out, self.dtype())};
  };
}
EMBER_OP_INFO("ember::uniform_", info) {
  info.inplace = true;
  info.samples = [](DType dt) {
    return std::vector<testing::Sample>{
        {{testing::make_tensor({1000}, dt), IValue(-2.0), IValue(3.0), IValue(int64_t(7)), IValue(int64_t(0))}, "[-2, 3)"},
        {{testing::make_noncontig({30, 20}, dt), IValue(0.0), IValue(1.0), IValue(int64_t(1)), IValue(int64_t(123))},
         "non-contiguous, offset 123"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    return {ref_random(a[0].to_tensor(), 0, a[1].to_double(), a[2].to_double(), a[3].to_int(), a[4].to_int())};
  };
}
EMBER_OP_INFO("ember::normal_", info) {
  info.inplace = true;
  info.samples = [](DType dt) {
    return std::vector<testing::Sample>{
        {{testing::make_tensor({1000}, dt), IValue(0.0), IValue(1.0), IValue(int64_t(7)), IValue(int64_t(0))}, "N(0, 1)"},
        {{testing::make_noncontig({30, 20}, dt), IValue(2.0), IValue(0.5), IValue(int64_t(3)), IValue(int64_t(77))},
         "non-contiguous N(2, 0.25)"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    return {ref_random(a[0].to_tensor(), 1, a[1].to_double(), a[2].to_double(), a[3].to_int(), a[4].to_int())};
  };
}
EMBER_OP_INFO("ember::random_", info) {
  info.dtypes = {kInt64, kInt32, kFloat32, kFloat64};
  info.inplace = true;
  info.exact = true;
  info.samples = [](DType dt) {
    return std::vector<testing::Sample>{
        {{testing::make_tensor({500}, dt), IValue(int64_t(-5)), IValue(int64_t(17)), IValue(int64_t(9)), IValue(int64_t(4))},
         "[-5, 17)"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    return {ref_random(a[0].to_tensor(), 2, static_cast<double>(a[1].to_int()), static_cast<double>(a[2].to_int()),
                       a[3].to_int(), a[4].to_int())};
  };
}

// (self, seed, offset): the permutation mt19937_64(seed * 0x9E3779B97F4A7C15 ^ offset) shuffles
// 0 .. n - 1 into (Fisher-Yates, core/shuffle.h). Every element appears once.
EMBER_OP_INFO("ember::randperm_fill_", info) {
  info.dtypes = {kInt64, kInt32, kFloat32, kFloat64, kFloat16, kBFloat16, kUInt8, kInt8};
  info.inplace = true;
  info.exact = true;
  info.samples = [](DType dt) {
    return std::vector<testing::Sample>{
        {{testing::make_tensor({100}, dt), IValue(int64_t(7)), IValue(int64_t(12))}, "100 elements"},
        {{testing::make_tensor({1}, dt), IValue(int64_t(1)), IValue(int64_t(0))}, "one element"},
        {{testing::make_tensor({0}, dt), IValue(int64_t(1)), IValue(int64_t(0))}, "empty"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const int64_t n = a[0].to_tensor().numel();
    std::mt19937_64 gen(static_cast<uint64_t>(a[1].to_int()) * 0x9E3779B97F4A7C15ull ^
                        static_cast<uint64_t>(a[2].to_int()));
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>(i);
    shuffle_in_place(v, gen);
    return {tensor(v, {n}, kFloat64)};
  };
}

}  // namespace ember
