// Samples and float64 references for ops/dropout.cpp (ember_testing: linked by tests, benchmarks
// and fuzzers only, never part of libember).
#include "ember/device/cpu/random.h"
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
namespace {
// The mask's bytes for n elements: element i kept when the 53-bit uniform of Philox(seed,
// offset + i) is >= p; bit i % 8 of byte i / 8; padded to 128 elements.
Tensor ref_mask(int64_t n, double p, int64_t seed, int64_t offset) {
  const int64_t bytes = (n + 127) / 128 * 16;
  Tensor m = zeros({bytes}, kUInt8);
  uint8_t* pm = m.data_ptr<uint8_t>();
  for (int64_t i = 0; i < n; ++i) {
    uint32_t r[4];
    cpu::philox4x32(static_cast<uint64_t>(seed), static_cast<uint64_t>(offset + i), r);
    double u = static_cast<double>((static_cast<uint64_t>(r[0]) << 21) ^ (r[1] >> 11)) / 9007199254740992.0;
    if (u >= p) pm[i / 8] = static_cast<uint8_t>(pm[i / 8] | (1u << (i % 8)));
  }
  return m;
}
// x / (1 - p) where kept, else 0.
Tensor ref_apply(const Tensor& x, const Tensor& mask, double p) {
  std::vector<double> v = testing::ref_contiguous(x, kFloat64).to_vector<double>();
  const uint8_t* pm = mask.data_ptr<uint8_t>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = (pm[i / 8] >> (i % 8)) & 1u ? v[i] / (1 - p) : 0.0;
  return tensor(v, {}, kFloat64).reshape(x.sizes());
}
std::vector<testing::Sample> dropout_samples(DType dt) {
  using testing::make_tensor;
  auto args = [](Tensor x, double p, int64_t seed, int64_t offset) {
    return Stack{x, IValue(p), IValue(seed), IValue(offset)};
  };
  return {{args(make_tensor({1000}, dt, -2, 2, 1), 0.3, 7, 0), "1000 elements, p 0.3"},
          {args(testing::make_noncontig({30, 20}, dt, -2, 2, 2), 0.5, 3, 123), "non-contiguous, p 0.5, offset 123"},
          {args(make_tensor({3, 5}, dt, -2, 2, 3), 0.0, 1, 0), "p 0 keeps all"},
          {args(make_tensor({3, 5}, dt, -2, 2, 4), 1.0, 1, 0), "p 1 drops all"}};
}
}  // namespace

EMBER_OP_INFO("ember::_dropout", info) {
  info.samples = dropout_samples;
  info.reference = [](const Stack& a) -> Stack {
    Tensor x = a[0].to_tensor();
    double p = a[1].to_double();
    Tensor m = ref_mask(x.numel(), p, a[2].to_int(), a[3].to_int());
    return {ref_apply(x, m, p), m};
  };
}
// (grad, mask, p): the mask of a forward sample.
EMBER_OP_INFO("ember::_dropout_backward", info) {
  info.samples = [](DType dt) {
    std::vector<testing::Sample> out;
    uint64_t seed = 10;
    for (const testing::Sample& s : dropout_samples(dt)) {
      Tensor x = s.args[0].to_tensor();
      Tensor m = ref_mask(x.numel(), s.args[1].to_double(), s.args[2].to_int(), s.args[3].to_int());
      out.push_back({{testing::make_tensor(x.sizes(), dt, -1, 1, seed++), m, s.args[1]}, s.desc});
    }
    return out;
  };
  info.reference = [](const Stack& a) -> Stack {
    return {ref_apply(a[0].to_tensor(), a[1].to_tensor(), a[2].to_double())};
  };
}

}  // namespace ember
