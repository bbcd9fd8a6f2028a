#include "ember/nn/init.h"

#include <cmath>

#include "ember/autograd/grad_mode.h"
#include "ember/ops/ops.h"

namespace ember {
namespace nn {
namespace init {
namespace {
Tensor& assign(Tensor& t, const Tensor& values) {
  NoGradGuard ng;
  t.copy_(values);
  return t;
}
TensorOptions f64_on(const Tensor& t) { return TensorOptions(kFloat64).device(t.device()); }
}  // namespace

Tensor& uniform_(Tensor& t, double a, double b) {
  EMBER_CHECK_VALUE(a <= b, "init::uniform_: expects a <= b, got ", a, " and ", b);
  return assign(t, rand(t.sizes(), f64_on(t)) * (b - a) + a);
}
Tensor& normal_(Tensor& t, double mean, double std) {
  EMBER_CHECK_VALUE(std >= 0, "init::normal_: expects std >= 0, got ", std);
  return assign(t, randn(t.sizes(), f64_on(t)) * std + mean);
}
Tensor& constant_(Tensor& t, double value) {
  NoGradGuard ng;
  t.fill_(value);
  return t;
}
Tensor& zeros_(Tensor& t) { return constant_(t, 0.0); }
Tensor& ones_(Tensor& t) { return constant_(t, 1.0); }

std::pair<int64_t, int64_t> fan_in_and_out(const Tensor& t) {
  EMBER_CHECK_SHAPE(t.dim() >= 2, "init: fan in and fan out need a tensor with at least 2 dims, got shape ", t.sizes());
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

Tensor& kaiming_uniform_(Tensor& t, double a) {
  double fan_in = static_cast<double>(fan_in_and_out(t).first);
  double bound = std::sqrt(6.0 / ((1 + a * a) * fan_in));
  return uniform_(t, -bound, bound);
}
Tensor& kaiming_normal_(Tensor& t, double a) {
  double fan_in = static_cast<double>(fan_in_and_out(t).first);
  return normal_(t, 0.0, std::sqrt(2.0 / ((1 + a * a) * fan_in)));
}
Tensor& xavier_uniform_(Tensor& t, double gain) {
  auto [in, out] = fan_in_and_out(t);
  double bound = gain * std::sqrt(6.0 / static_cast<double>(in + out));
  return uniform_(t, -bound, bound);
}
Tensor& xavier_normal_(Tensor& t, double gain) {
  auto [in, out] = fan_in_and_out(t);
  return normal_(t, 0.0, gain * std::sqrt(2.0 / static_cast<double>(in + out)));
}

}  // namespace init
}  // namespace nn
}  // namespace ember
