// Samples and float64 references for the ops of ops/unary.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <cmath>
#include "ember/device/cpu/elementwise.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/elementwise_util.h"
#include "ember/ops/npu_exec.h"
#include "ember/testing/reference.h"

#include "ember/ops/unary_ops.def"

namespace ember {
namespace {
using ops::ResultKind;
constexpr ResultKind P = ResultKind::Promote;
constexpr ResultKind F = ResultKind::PromoteFloat;
const std::vector<DType> kWithInts{kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32};
}
EMBER_OP_INFO("ember::neg", info) {
  info.dtypes = kWithInts;
  testing::set_unary_info(info, [](double x) { return -x; });
}
#define EMBER_INFO(name, kind, ref, lo, hi)                         \
  EMBER_OP_INFO("ember::" #name, info) {                           \
    if (kind == ResultKind::Promote) info.dtypes = kWithInts;      \
    testing::set_unary_info(info, ref, lo, hi);                    \
  }
EMBER_UNARY_OPS(EMBER_INFO)
#undef EMBER_INFO

}  // namespace ember
