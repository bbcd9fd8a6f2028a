// Samples and float64 references for ops/round_to.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// Each sample rounds to a 16-bit float other than its own dtype where that rounds anything (f32
// and f16 to bf16, bf16 to f16, which holds every bf16 value of this range); float64 samples round
// to float64 (no change): finite differences of a rounding say nothing, test_gradients.cpp checks
// the float64 ones by them, and the f32 and bf16 gradients against those.
EMBER_OP_INFO("ember::_round_to", info) {
  info.samples = [](DType dt) {
    using testing::make_tensor;
    const DType to = dt == kFloat64 ? kFloat64 : dt == kBFloat16 ? kFloat16 : kBFloat16;
    return std::vector<testing::Sample>{
        {{make_tensor({37, 20}, dt, -300, 300), to}, "contiguous"},
        {{testing::make_noncontig({9, 14}, dt, -300, 300), to}, "non-contiguous"},
        {{make_tensor({4099}, dt, -2, 2, 3), dt == kFloat32 ? kFloat16 : to}, "a long run (f32 to f16)"},
        {{make_tensor({0, 3}, dt), to}, "empty"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();
    return {testing::ref_contiguous(testing::ref_contiguous(x, a[1].to_dtype()), kFloat64)};
  };
  info.exact = true;
}
}  // namespace ember
