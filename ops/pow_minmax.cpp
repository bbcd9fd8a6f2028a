// pow(x, exponent) for a tensor or scalar exponent; maximum/minimum (elementwise, NaN
// propagates). pow computes in floating point (integer inputs promote to the default float).
#include <cmath>

#include "ember/device/cpu/elementwise.h"
#include "ember/ops/elementwise_util.h"
#include "ember/ops/testing/reference.h"

namespace ember {
namespace {
using namespace ops;

using Kernel = void (*)(const cpu::Strided&, const cpu::Strided&, const cpu::Strided&, DType);

template <Kernel K, ResultKind kKind>
Tensor binary2_cpu(const Tensor& a, const Tensor& b) {
  ElementwiseMeta m = binary_meta("binary", a, b, kKind);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  K(strided(out), strided_as(a, m.shape), strided_as(b, m.shape), m.compute);
  return out;
}

Tensor pow_scalar_cpu(const Tensor& x, const Scalar& e) {
  ElementwiseMeta m = scalar_meta("pow", x, e, ResultKind::PromoteFloat);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  cpu::pow_scalar(strided(out), strided(x), e.to_double());
  return out;
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("pow(Tensor self, Tensor exponent) -> Tensor");
  m.def("pow.Scalar(Tensor self, Scalar exponent) -> Tensor");
  m.def("maximum(Tensor self, Tensor other) -> Tensor");
  m.def("minimum(Tensor self, Tensor other) -> Tensor");
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl("pow", &binary2_cpu<cpu::pow, ResultKind::PromoteFloat>);
  m.impl("pow.Scalar", &pow_scalar_cpu);
  m.impl("maximum", &binary2_cpu<cpu::maximum, ResultKind::Promote>);
  m.impl("minimum", &binary2_cpu<cpu::minimum, ResultKind::Promote>);
}

using T2 = Tensor(const Tensor&, const Tensor&);
Tensor pow(const Tensor& a, const Tensor& e) { return EMBER_OP("ember::pow", T2).call(a, e); }
Tensor pow(const Tensor& a, const Scalar& e) {
  return EMBER_OP("ember::pow.Scalar", Tensor(const Tensor&, const Scalar&)).call(a, e);
}
Tensor maximum(const Tensor& a, const Tensor& b) { return EMBER_OP("ember::maximum", T2).call(a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return EMBER_OP("ember::minimum", T2).call(a, b); }
Tensor Tensor::pow(const Tensor& e) const { return ember::pow(*this, e); }
Tensor Tensor::pow(const Scalar& e) const { return ember::pow(*this, e); }
Tensor Tensor::maximum(const Tensor& o) const { return ember::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return ember::minimum(*this, o); }

// ---------------------------------------------------------------- samples
EMBER_OP_INFO("ember::pow", info) {
  testing::set_binary_info(info, [](double a, double b) { return std::pow(a, b); }, 0.25, 2.0);
}
EMBER_OP_INFO("ember::pow.Scalar", info) {
  info.samples = [](DType dt) {
    std::vector<testing::Sample> s;
    for (double e : {2.0, 0.5, 3.0, -1.5}) {
      for (auto& u : testing::unary_samples(dt, 0.25, 2.0)) {
        u.args.push_back(IValue(e));
        u.desc += ", exponent " + std::to_string(e);
        s.push_back(u);
      }
    }
    s.push_back({{testing::make_tensor({3, 4}, dt, -2, 2), IValue(int64_t(2))}, "negative base, integer exponent"});
    return s;
  };
  info.reference = [](const Stack& a) -> Stack {
    double e = a[1].to_double();
    return {testing::ref_map(a[0].to_tensor(), [e](double x) { return std::pow(x, e); })};
  };
}
EMBER_OP_INFO("ember::maximum", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32};
  testing::set_binary_info(info, [](double a, double b) { return std::max(a, b); });
  info.exact = true;
}
EMBER_OP_INFO("ember::minimum", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32};
  testing::set_binary_info(info, [](double a, double b) { return std::min(a, b); });
  info.exact = true;
}

}  // namespace ember
