// Conformance: every registered op has samples, and on each sample, in each dtype, the kernel
// agrees with the op's float64 reference within a tolerance justified by the output dtype.
#include <cmath>
#include <sstream>

#include "ember/testing/reference.h"
#include "test_util.h"

using namespace ember;
using ember::testing::OpInfo;

namespace {

// Output rounding dominates for fp16/bf16 (inputs are exact: samples are generated in the
// dtype and the reference reads those values): a correctly rounded result is within half an
// ulp, 2^-11 (fp16) and 2^-8 (bf16) relative; we allow ~2x for fp32 compute ahead of rounding.
// fp32 results carry fp32 accumulation error.
struct Tol {
  double atol, rtol;
};
Tol tolerance(DType out, const OpInfo& info) {
  if (info.exact || !is_floating_point(out)) return {0, 0};
  double s = info.tol_scale;
  switch (out) {
    case kFloat64: return {1e-10 * s, 1e-9 * s};
    case kFloat32: return {1e-5 * s, 1e-5 * s};
    case kFloat16: return {1e-3 * s, 1e-3 * s};
    case kBFloat16: return {8e-3 * s, 8e-3 * s};
    default: return {0, 0};
  }
}

std::string describe(const OpInfo& info, DType dt, const ember::testing::Sample& s) {
  std::ostringstream os;
  os << info.name << " [" << dt << "] sample '" << s.desc << "'";
  return os.str();
}

void compare_tensor(const Tensor& got, const Tensor& ref, const OpInfo& info, const std::string& where) {
  ASSERT_TRUE(got.defined()) << where << ": undefined output";
  ASSERT_EQ(got.sizes(), ref.sizes()) << where << ": shape";
  Tol tol = tolerance(got.dtype(), info);
  std::vector<double> g = got.to_vector<double>();
  Tensor refc = ember::testing::ref_contiguous(ref, kFloat64);
  const double* r = refc.data_ptr<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    double want = r[i];
    // The reference is float64; an exact comparison is against the value rounded to the dtype.
    if (tol.atol == 0 && tol.rtol == 0 && !std::isnan(want)) {
      Tensor one = ember::testing::ref_contiguous(refc.reshape({-1}).narrow(0, static_cast<int64_t>(i), 1), got.dtype());
      want = one.to_vector<double>()[0];
    }
    if (std::isnan(want) && std::isnan(g[i])) continue;
    double err = std::fabs(g[i] - want);
    if (!(err <= tol.atol + tol.rtol * std::fabs(want))) {
      ADD_FAILURE() << where << ": element " << i << " (of " << g.size() << ") is " << g[i] << ", reference " << want
                    << ", error " << err << " > atol " << tol.atol << " + rtol " << tol.rtol;
      return;
    }
  }
}

class OpConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(OpConformance, MatchesFloat64Reference) {
  const std::string& name = GetParam();
  const OpInfo* info = ember::testing::find_op_info(name);
  ASSERT_NE(info, nullptr) << name << " has no EMBER_OP_INFO samples (declare them in its op file)";
  ASSERT_TRUE(info->samples && info->reference) << name << ": OpInfo without samples or reference";
  OperatorHandle op = Dispatcher::singleton().find_schema(name);
  int cases = 0;
  for (DType dt : info->dtypes) {
    std::vector<ember::testing::Sample> samples = info->samples(dt);
    ASSERT_FALSE(samples.empty()) << name << " [" << dt << "]: no samples";
    for (const auto& s : samples) {
      std::string where = describe(*info, dt, s);
      Stack ref_in = ember::testing::to_float64(s.args);
      Stack args;
      for (const IValue& v : s.args) args.push_back(v.is_tensor() ? IValue(ember_test::deep_copy(v.to_tensor())) : v);
      Tensor self = args.empty() || !args[0].is_tensor() ? Tensor() : args[0].to_tensor();
      uint32_t version = self.defined() ? self.version() : 0;
      Stack out = args;
      try {
        op.call_boxed(&out);
      } catch (const std::exception& e) {
        ADD_FAILURE() << where << ": threw " << e.what();
        continue;
      }
      Stack ref = info->reference(ref_in);
      ASSERT_EQ(out.size(), ref.size()) << where << ": number of outputs";
      for (size_t i = 0; i < out.size(); ++i) {
        if (out[i].is_tensor_list()) {
          const auto& g = out[i].to_tensor_list();
          const auto& r = ref[i].to_tensor_list();
          ASSERT_EQ(g.size(), r.size()) << where << ": list length";
          for (size_t k = 0; k < g.size(); ++k) compare_tensor(g[k], r[k], *info, where + " item " + std::to_string(k));
        } else {
          compare_tensor(out[i].to_tensor(), ref[i].to_tensor(), *info, where);
        }
      }
      if (info->inplace) {
        EXPECT_TRUE(out[0].to_tensor().is_same(self)) << where << ": in-place op must return self";
        EXPECT_GT(self.version(), version) << where << ": in-place op must bump the version counter";
      }
      if (info->view) {
        EXPECT_TRUE(out[0].to_tensor().is_alias_of(self)) << where << ": view must share storage with its input";
      }
      ++cases;
    }
  }
  EXPECT_GT(cases, 0);
}

std::vector<std::string> registered_ops() { return Dispatcher::singleton().list_ops(); }

std::string param_name(const ::testing::TestParamInfo<std::string>& p) {
  std::string s;
  for (char c : p.param) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpConformance, ::testing::ValuesIn(registered_ops()), param_name);

TEST(Conformance, EveryRegisteredOpHasSamples) {
  std::vector<std::string> missing;
  for (const auto& op : registered_ops())
    if (!ember::testing::find_op_info(op)) missing.push_back(op);
  EXPECT_TRUE(missing.empty()) << "ops without samples: " << ::testing::PrintToString(missing);
}

TEST(Conformance, EverySampleSetNamesARegisteredOp) {
  for (const OpInfo* info : ember::testing::all_op_infos())
    EXPECT_TRUE(Dispatcher::singleton().find(info->name).has_value()) << info->name << " has samples but no schema";
}

TEST(Conformance, NoRegistrationErrors) {
  EXPECT_TRUE(Dispatcher::singleton().registration_errors().empty())
      << ::testing::PrintToString(Dispatcher::singleton().registration_errors());
}

// The shared library keeps every static registration: the built-in op count is pinned here so
// a dropped translation unit is noticed.
TEST(Conformance, BuiltinOpsAreAllRegistered) {
  size_t n = 0;
  for (const auto& op : registered_ops())
    if (op.rfind("ember::", 0) == 0) ++n;
  EXPECT_GE(n, 100u);
}

}  // namespace
