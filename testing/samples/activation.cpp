// Samples and float64 references for the ops of ops/activation.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <cmath>
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
double ref_gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double ref_gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
}  // namespace

EMBER_OP_INFO("ember::leaky_relu", info) {
  testing::set_unary_info(info, [](double x) { return x > 0 ? x : 0.01 * x; });
  auto base = info.samples;
  info.samples = [base](DType dt) {
    auto s = base(dt);
    s.push_back({{testing::make_tensor({4, 5}, dt, -2, 2, 21), IValue(Scalar(0.2))}, "negative_slope 0.2"});
    return s;
  };
  info.reference = [](const Stack& a) -> Stack {
    double k = a.size() > 1 ? a[1].to_scalar().to_double() : 0.01;
    return {testing::ref_map(a[0].to_tensor(), [k](double x) { return x > 0 ? x : k * x; })};
  };
}
// (grad, self, negative_slope[, self_is_result])
EMBER_OP_INFO("ember::leaky_relu_backward", info) {
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({4, 5}, dt, -2, 2, 31), make_tensor({4, 5}, dt, -2, 2, 32), IValue(Scalar(0.01))}, "0.01"},
        {{make_tensor({3, 6}, dt, -2, 2, 33), testing::make_noncontig({3, 6}, dt, -2, 2, 34), IValue(Scalar(0.2)),
          IValue(true)},
         "non-contiguous self, self is the result"},
        {{make_tensor({6}, dt, -2, 2, 35), make_tensor({2, 6}, dt, -2, 2, 36), IValue(Scalar(-0.5))},
         "grad broadcast, negative slope"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    double k = a[2].to_scalar().to_double();
    return {testing::ref_map2(a[0].to_tensor(), a[1].to_tensor(), [k](double g, double x) { return x > 0 ? g : k * g; })};
  };
}
EMBER_OP_INFO("ember::relu", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32};
  testing::set_unary_info(info, [](double x) { return x > 0 ? x : 0.0; });
}
EMBER_OP_INFO("ember::relu_", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64};
  info.inplace = true;
  testing::set_unary_info(info, [](double x) { return x > 0 ? x : 0.0; });
}
EMBER_OP_INFO("ember::gelu_backward", info) {
  info.samples = [](DType dt) {
    std::vector<testing::Sample> s;
    for (auto& b : testing::binary_samples(dt, -4, 4)) {
      s.push_back(b);
      b.args.push_back(IValue("tanh"));
      b.desc += ", approximate='tanh'";
      s.push_back(b);
    }
    return s;
  };
  // Reference: the analytic derivatives in double (std::erf, std::tanh).
  info.reference = [](const Stack& a) -> Stack {
    bool tanh = a.size() > 2 && a[2].to_string() == "tanh";
    return {testing::ref_map2(a[0].to_tensor(), a[1].to_tensor(), [tanh](double g, double x) {
      if (!tanh) return g * (0.5 * (1 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI));
      const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
      double t = std::tanh(k * (x + c * x * x * x));
      return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x));
    })};
  };
  info.tol_scale = 2;
}
EMBER_OP_INFO("ember::gelu", info) {
  info.samples = [](DType dt) {
    std::vector<testing::Sample> s = testing::unary_samples(dt, -4, 4);
    for (auto& u : testing::unary_samples(dt, -4, 4)) {
      u.args.push_back(IValue("tanh"));
      u.desc += ", approximate='tanh'";
      s.push_back(u);
    }
    return s;
  };
  info.reference = [](const Stack& a) -> Stack {
    bool tanh = a.size() > 1 && a[1].to_string() == "tanh";
    return {testing::ref_map(a[0].to_tensor(), tanh ? ref_gelu_tanh : ref_gelu)};
  };
}

}  // namespace ember
