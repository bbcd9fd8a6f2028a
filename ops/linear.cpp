// linear(x, weight[, bias]) = x weight^T (+ bias): weight [out, in]. An op of its own (composed
// of matmul and add) so that autocast can give it one policy for all its operands.
#include "ember/ops/op_util.h"
#include "ember/ops/testing/reference.h"

namespace ember {
namespace {
void check_linear(const Tensor& x, const Tensor& w) {
  EMBER_CHECK_SHAPE(w.dim() == 2, "linear: weight must be 2-D [out_features, in_features], got shape ", w.sizes());
  EMBER_CHECK_SHAPE(x.dim() >= 1 && x.size(-1) == w.size(1), "linear: input of shape ", x.sizes(),
                    " does not end in in_features = ", w.size(1), " (weight ", w.sizes(), ")");
}
Tensor linear_composite(const Tensor& x, const Tensor& w) {
  check_linear(x, w);
  return x.matmul(w.t());
}
Tensor linear_bias_composite(const Tensor& x, const Tensor& w, const Tensor& b) {
  check_linear(x, w);
  EMBER_CHECK_SHAPE(b.dim() == 1 && b.size(0) == w.size(0), "linear: bias of shape ", b.sizes(), " for weight ",
                    w.sizes(), " (expected [", w.size(0), "])");
  return x.matmul(w.t()) + b;
}
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("linear(Tensor input, Tensor weight) -> Tensor", &linear_composite);
  m.def("linear.bias(Tensor input, Tensor weight, Tensor bias) -> Tensor", &linear_bias_composite);
}

Tensor linear(const Tensor& x, const Tensor& weight) {
  return EMBER_OP("ember::linear", Tensor(const Tensor&, const Tensor&)).call(x, weight);
}
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (!bias.defined()) return linear(x, weight);
  return EMBER_OP("ember::linear.bias", Tensor(const Tensor&, const Tensor&, const Tensor&)).call(x, weight, bias);
}

namespace {
std::vector<testing::Sample> linear_samples(DType dt, bool bias) {
  using testing::make_tensor;
  auto s = [&](Shape xs, int64_t out, uint64_t seed, const char* desc) {
    Stack args{make_tensor(xs, dt, -1, 1, seed), make_tensor({out, xs.back()}, dt, -1, 1, seed + 1)};
    if (bias) args.push_back(make_tensor({out}, dt, -1, 1, seed + 2));
    return testing::Sample{args, desc};
  };
  return {s({4, 5}, 3, 1, "2-d input"), s({2, 3, 6}, 4, 4, "3-d input"), s({7}, 2, 7, "1-d input")};
}
Tensor ref_linear(const Stack& a) {
  const Tensor &x = a[0].to_tensor(), &w = a[1].to_tensor();
  int64_t in = w.size(1), out = w.size(0), rows = x.numel() / in;
  Shape shape = x.sizes();
  shape.back() = out;
  Tensor y = empty(shape, kFloat64);
  Tensor xc = testing::ref_contiguous(x, kFloat64), wc = testing::ref_contiguous(w, kFloat64);
  const double *xp = xc.data_ptr<double>(), *wp = wc.data_ptr<double>();
  double* yp = y.data_ptr<double>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = a.size() > 2 ? testing::at(a[2].to_tensor(), {o}) : 0.0;
      for (int64_t i = 0; i < in; ++i) s += xp[r * in + i] * wp[o * in + i];
      yp[r * out + o] = s;
    }
  return y;
}
}  // namespace
EMBER_OP_INFO("ember::linear", info) {
  info.samples = [](DType dt) { return linear_samples(dt, false); };
  info.reference = [](const Stack& a) -> Stack { return {ref_linear(a)}; };
  info.tol_scale = 2;
}
EMBER_OP_INFO("ember::linear.bias", info) {
  info.samples = [](DType dt) { return linear_samples(dt, true); };
  info.reference = [](const Stack& a) -> Stack { return {ref_linear(a)}; };
  info.tol_scale = 2;
}

}  // namespace ember
