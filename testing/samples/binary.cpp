// Samples and float64 references for the ops of ops/binary.cpp and the binary table
// (core/tables/binary_ops.def; ember_testing: linked by tests, benchmarks and fuzzers only, never part
// of libember).
#include <algorithm>
#include <cmath>

#include "ember/core/tables/binary_ops.def"
#include "ember/device/cpu/elementwise.h"
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
void keep_in_place_samples(testing::OpInfo& info);
const std::vector<DType> kArith{kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kInt8};
void arith(testing::OpInfo& info, std::function<double(double, double)> f, bool alpha, bool scalar,
           bool inplace, bool is_div = false) {
  info.dtypes = kArith;
  if (is_div) info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  if (scalar) {
    testing::set_scalar_info(info, f, -2.0, 2.0, alpha);
  } else {
    testing::set_binary_info(info, f, is_div ? 0.5 : -2.0, 2.0, alpha);
  }
  info.inplace = inplace;
  if (inplace && !scalar) keep_in_place_samples(info);
}
// In place, the output keeps self's shape and dtype: only samples whose broadcast shape and
// promoted dtype are self's.
void keep_in_place_samples(testing::OpInfo& info) {
  {
    auto base = info.samples;
    info.samples = [base](DType dt) {
      std::vector<testing::Sample> out;
      for (auto& s : base(dt)) {
        const Tensor& a = s.args[0].to_tensor();
        const Tensor& b = s.args[1].to_tensor();
        if (IntArrayRef(broadcast_shapes(a.sizes_ref(), b.sizes_ref())) == a.sizes_ref() &&
            promote_types(a.dtype(), b.dtype()) == a.dtype())
          out.push_back(s);
      }
      return out;
    };
  }
}
double f_add(double a, double b) { return a + b; }
double f_sub(double a, double b) { return a - b; }
double f_mul(double a, double b) { return a * b; }
double f_div(double a, double b) { return a / b; }
}  // namespace

EMBER_OP_INFO("ember::add", info) { arith(info, f_add, true, false, false); }
EMBER_OP_INFO("ember::add.Scalar", info) { arith(info, f_add, true, true, false); }
EMBER_OP_INFO("ember::add_", info) { arith(info, f_add, true, false, true); }
EMBER_OP_INFO("ember::add_.Scalar", info) { arith(info, f_add, true, true, true); }
EMBER_OP_INFO("ember::sub", info) { arith(info, f_sub, true, false, false); }
EMBER_OP_INFO("ember::sub.Scalar", info) { arith(info, f_sub, true, true, false); }
EMBER_OP_INFO("ember::sub_", info) { arith(info, f_sub, true, false, true); }
EMBER_OP_INFO("ember::sub_.Scalar", info) { arith(info, f_sub, true, true, true); }
EMBER_OP_INFO("ember::mul", info) { arith(info, f_mul, false, false, false); }
EMBER_OP_INFO("ember::mul.Scalar", info) { arith(info, f_mul, false, true, false); }
EMBER_OP_INFO("ember::mul_", info) { arith(info, f_mul, false, false, true); }
EMBER_OP_INFO("ember::mul_.Scalar", info) { arith(info, f_mul, false, true, true); }
EMBER_OP_INFO("ember::div", info) { arith(info, f_div, false, false, false, true); }
EMBER_OP_INFO("ember::div.Scalar", info) { arith(info, f_div, false, true, false, true); }
EMBER_OP_INFO("ember::div_", info) { arith(info, f_div, false, false, true, true); }
EMBER_OP_INFO("ember::div_.Scalar", info) { arith(info, f_div, false, true, true, true); }

#define EMBER_INFO(name, Acl, kind, expr, saves, ga, gb, ref, lo, hi, is_exact, amp, ...) \
  EMBER_OP_INFO("ember::" #name, info) {                                                  \
    if (cpu::kKeepsInts_##kind) info.dtypes = kArith;                                     \
    testing::set_binary_info(info, ref, lo, hi);                                          \
    info.exact = is_exact;                                                                \
  }
EMBER_BINARY_OPS(EMBER_INFO)
#undef EMBER_INFO
// The in-place forms (rows marked I): the same samples where self can hold the result.
#define EMBER_INFO_INPLACE_N(name, kind, ref, lo, hi, is_exact)
#define EMBER_INFO_INPLACE_I(name, kind, ref, lo, hi, is_exact) \
  EMBER_OP_INFO("ember::" #name "_", info) {                    \
    if (cpu::kKeepsInts_##kind) info.dtypes = kArith;           \
    testing::set_binary_info(info, ref, lo, hi);                \
    info.exact = is_exact;                                      \
    info.inplace = true;                                        \
    keep_in_place_samples(info);                                \
  }
#define EMBER_INFO(name, Acl, kind, expr, saves, ga, gb, ref, lo, hi, is_exact, amp, inplace) \
  EMBER_INFO_INPLACE_##inplace(name, kind, ref, lo, hi, is_exact)
EMBER_BINARY_OPS(EMBER_INFO)
#undef EMBER_INFO

}  // namespace ember
