// Samples and float64 references for neg and the unary table (core/tables/unary_ops.def; ember_testing:
// linked by tests and fuzzers only, never part of libember).
#include <cmath>

#include "ember/core/tables/unary_ops.def"
#include "ember/device/cpu/elementwise.h"
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
namespace {
const std::vector<DType> kWithInts{kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32};
}  // namespace

EMBER_OP_INFO("ember::neg", info) {
  info.dtypes = kWithInts;
  testing::set_unary_info(info, [](double x) { return -x; });
}
#define EMBER_INFO(name, Acl, kind, expr, saves, grad, ref, lo, hi, amp) \
  EMBER_OP_INFO("ember::" #name, info) {                                 \
    if (cpu::kKeepsInts_##kind) info.dtypes = kWithInts;                 \
    testing::set_unary_info(info, ref, lo, hi);                          \
  }
EMBER_UNARY_OPS(EMBER_INFO)
#undef EMBER_INFO

}  // namespace ember
