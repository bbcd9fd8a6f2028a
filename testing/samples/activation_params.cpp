// Samples and float64 references for the ops of ops/activation_params.cpp (ember_testing: linked
// by tests, benchmarks and fuzzers only, never part of libember).
#include <cmath>
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
namespace {
double scalar_arg(const Stack& a, size_t i, double dflt) { return a.size() > i ? a[i].to_scalar().to_double() : dflt; }
// The unary set plus a sample with the parameters given (a scalar each).
template <class... P>
void with_params(testing::OpInfo& info, const char* desc, P... params) {
  auto base = info.samples;
  info.samples = [base, desc, params...](DType dt) {
    auto s = base(dt);
    Stack args{testing::make_tensor({4, 5}, dt, -3, 3, 21)};
    (args.push_back(IValue(Scalar(params))), ...);
    s.push_back({args, desc});
    return s;
  };
}
}  // namespace

EMBER_OP_INFO("ember::softplus", info) {
  testing::set_unary_info(info, [](double x) { return std::log1p(std::exp(x)); });
  with_params(info, "beta 2, threshold 3", 2.0, 3.0);
  info.reference = [](const Stack& a) -> Stack {
    const double b = scalar_arg(a, 1, 1), t = scalar_arg(a, 2, 20);
    return {testing::ref_map(a[0].to_tensor(), [b, t](double x) { return b * x > t ? x : std::log1p(std::exp(b * x)) / b; })};
  };
}
EMBER_OP_INFO("ember::elu", info) {
  testing::set_unary_info(info, [](double x) { return x > 0 ? x : std::expm1(x); });
  with_params(info, "alpha 0.5, scale 2, input_scale 1.5", 0.5, 2.0, 1.5);
  info.reference = [](const Stack& a) -> Stack {
    const double al = scalar_arg(a, 1, 1), s = scalar_arg(a, 2, 1), is = scalar_arg(a, 3, 1);
    return {testing::ref_map(a[0].to_tensor(), [al, s, is](double x) { return x > 0 ? s * x : al * s * std::expm1(is * x); })};
  };
}
EMBER_OP_INFO("ember::threshold", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64};
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({4, 5}, dt, -3, 3, 1), IValue(Scalar(0.5)), IValue(Scalar(-2.0))}, "threshold 0.5, value -2"},
        {{testing::make_noncontig({3, 6}, dt, -3, 3, 2), IValue(Scalar(0.0)), IValue(Scalar(0.0))}, "relu-like, strided"},
        {{make_tensor({}, dt, -3, 3, 3), IValue(Scalar(1.0)), IValue(Scalar(7.0))}, "0-d"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const double t = a[1].to_scalar().to_double(), v = a[2].to_scalar().to_double();
    return {testing::ref_map(a[0].to_tensor(), [t, v](double e) { return e <= t ? v : e; })};
  };
}

}  // namespace ember
