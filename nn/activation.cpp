#include "ember/nn/activation.h"


#include "ember/autograd/grad_mode.h"
#include "ember/nn/init.h"
#include "ember/nn/internal/repr.h"
#include "ember/ops/ops.h"

namespace ember {
namespace nn {
using detail::repr_number;
namespace functional {
namespace {
// inplace: the result written into x (libtorch's name_ forms), else returned.
Tensor maybe_inplace(const Tensor& x, const Tensor& r, bool inplace) {
  if (!inplace) return r;
  Tensor t = x;
  t.copy_(r);
  return t;
}
Tensor zeros_as(const Tensor& x) { return zeros({}, x.options()); }
}  // namespace

Tensor elu(const Tensor& x, const ELUFuncOptions& o) {
  return maybe_inplace(x, ember::elu(x, o.alpha(), 1, 1), o.inplace());
}
Tensor selu(const Tensor& x, const SELUFuncOptions& o) {
  // The constants of Klambauer et al. (2017), as PyTorch's.
  return maybe_inplace(x, ember::elu(x, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946, 1),
                       o.inplace());
}
Tensor celu(const Tensor& x, const CELUFuncOptions& o) {
  EMBER_CHECK_VALUE(o.alpha() != 0, "celu: alpha must not be 0");
  return maybe_inplace(x, ember::elu(x, o.alpha(), 1, 1.0 / o.alpha()), o.inplace());
}
Tensor hardshrink(const Tensor& x, const HardshrinkFuncOptions& o) {
  return where(logical_or(x > o.lambda(), x < -o.lambda()), x, zeros_as(x));
}
Tensor softshrink(const Tensor& x, const SoftshrinkFuncOptions& o) {
  EMBER_CHECK_VALUE(o.lambda() >= 0, "softshrink: lambda must be non-negative, got ", o.lambda());
  return where(x > o.lambda(), x - o.lambda(), where(x < -o.lambda(), x + o.lambda(), zeros_as(x)));
}
Tensor hardtanh(const Tensor& x, const HardtanhFuncOptions& o) {
  EMBER_CHECK_VALUE(o.min_val() <= o.max_val(), "hardtanh: min_val (", o.min_val(), ") must not exceed max_val (",
                    o.max_val(), ")");
  // clamp's values; the gradient passes strictly inside (min_val, max_val) only, as libtorch's
  // hardtanh_backward (clamp's passes at the bounds too).
  Tensor inside = logical_and(x > o.min_val(), x < o.max_val());
  return maybe_inplace(x, where(inside, x, ember::clamp(x, Scalar(o.min_val()), Scalar(o.max_val())).detach()),
                       o.inplace());
}
Tensor relu(const Tensor& x, const ReLUFuncOptions& o) { return maybe_inplace(x, ember::relu(x), o.inplace()); }
Tensor relu6(const Tensor& x, const ReLU6FuncOptions& o) {
  return hardtanh(x, HardtanhFuncOptions().min_val(0).max_val(6).inplace(o.inplace()));
}
Tensor rrelu(const Tensor& x, const RReLUFuncOptions& o) {
  EMBER_CHECK_VALUE(o.lower() <= o.upper(), "rrelu: lower (", o.lower(), ") must not exceed upper (", o.upper(), ")");
  Tensor r;
  if (o.training()) {
    Tensor slope = rand_like(x) * (o.upper() - o.lower()) + o.lower();  // one per element, ember's generator
    r = where(x >= 0.0, x, x * slope);
  } else {
    r = ember::leaky_relu(x, (o.lower() + o.upper()) / 2);
  }
  return maybe_inplace(x, r, o.inplace());
}
Tensor gelu(const Tensor& x, const GELUFuncOptions& o) { return ember::gelu(x, o.approximate()); }
Tensor glu(const Tensor& x, const GLUFuncOptions& o) {
  EMBER_CHECK_SHAPE(x.dim() > 0, "glu: does not take a 0-dim tensor");
  const int64_t d = o.dim() < 0 ? o.dim() + x.dim() : o.dim();
  EMBER_CHECK_INDEX(d >= 0 && d < x.dim(), "glu: dim ", o.dim(), " is out of range for shape ", x.sizes());
  EMBER_CHECK_SHAPE(x.size(d) % 2 == 0, "glu: halving dimension must be even, but dimension ", d, " is size ",
                    x.size(d));
  auto h = x.chunk(2, d);
  return h[0] * h[1].sigmoid();
}
Tensor softplus(const Tensor& x, const SoftplusFuncOptions& o) { return ember::softplus(x, o.beta(), o.threshold()); }
Tensor threshold(const Tensor& x, const ThresholdFuncOptions& o) {
  return maybe_inplace(x, ember::threshold(x, o.threshold(), o.value()), o.inplace());
}
Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& o) {
  return ember::softmax(o.dtype() ? x.to(*o.dtype()) : x, o.dim());
}
Tensor softmin(const Tensor& x, const SoftminFuncOptions& o) {
  return ember::softmax(-(o.dtype() ? x.to(*o.dtype()) : x), o.dim());
}
Tensor log_softmax(const Tensor& x, const LogSoftmaxFuncOptions& o) {
  return ember::log_softmax(o.dtype() ? x.to(*o.dtype()) : x, o.dim());
}
Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& o) {
  EMBER_CHECK_VALUE(o.tau() > 0, "gumbel_softmax: tau must be positive, got ", o.tau());
  // Gumbel(0, 1) noise: -log(E) with E ~ Exp(1) = -log(U), U uniform in (0, 1].
  Tensor u = 1.0 - rand_like(logits);
  Tensor g = -(-u.log()).log();
  Tensor y = ember::softmax((logits + g) / o.tau(), o.dim());
  if (!o.hard()) return y;
  const int64_t d = o.dim() < 0 ? o.dim() + logits.dim() : o.dim();
  DimVector view(static_cast<size_t>(logits.dim()), 1);
  view[static_cast<size_t>(d)] = logits.size(d);
  Tensor pos = arange(logits.size(d), TensorOptions(kInt64).device(logits.device())).view(view);
  Tensor hard = (pos == y.argmax(d, true)).to(y.dtype());
  return hard - y.detach() + y;  // the straight-through estimator: hard values, y's gradient
}
Tensor logsigmoid(const Tensor& x) { return -ember::softplus(-x, 1, 20); }
Tensor mish(const Tensor& x) { return x * ember::softplus(x, 1, 20).tanh(); }
Tensor softsign(const Tensor& x) { return x / (x.abs() + 1.0); }
Tensor tanhshrink(const Tensor& x) { return x - x.tanh(); }
Tensor prelu(const Tensor& x, const Tensor& weight) {
  EMBER_CHECK_SHAPE(weight.dim() <= 1, "prelu: weight must be 0-D or 1-D, got shape ", weight.sizes());
  Tensor w = weight.reshape({-1});
  if (w.numel() > 1) {
    EMBER_CHECK_SHAPE(x.dim() >= 2 && x.size(1) == w.numel(), "prelu: ", w.numel(), " slopes need an input with ",
                      w.numel(), " channels in dim 1, got shape ", x.sizes());
    DimVector view(static_cast<size_t>(x.dim() - 1), 1);
    view[0] = w.numel();
    w = w.view(view);
  }
  return where(x > 0.0, x, x * w);  // at 0 the slope's side, as libtorch's gradient
}
}  // namespace functional

namespace F = functional;
namespace {
std::string with_inplace(std::string s, bool inplace) { return inplace ? s + ", inplace=true" : s; }
}  // namespace

#define EMBER_DEFINE_ACTIVATION(Name, fn, repr)                       \
  Name::Name(const Name##Options& options_) : options(options_) {}    \
  Tensor Name::forward(const Tensor& x) { return F::fn(x, options); } \
  std::string Name::extra_repr() const { return repr; }
EMBER_DEFINE_ACTIVATION(ELU, elu, with_inplace("alpha=" + repr_number(options.alpha()), options.inplace()))
EMBER_DEFINE_ACTIVATION(SELU, selu, options.inplace() ? "inplace=true" : "")
EMBER_DEFINE_ACTIVATION(CELU, celu, with_inplace("alpha=" + repr_number(options.alpha()), options.inplace()))
EMBER_DEFINE_ACTIVATION(Hardshrink, hardshrink, repr_number(options.lambda()))
EMBER_DEFINE_ACTIVATION(Softshrink, softshrink, repr_number(options.lambda()))
EMBER_DEFINE_ACTIVATION(Hardtanh, hardtanh,
                        with_inplace("min_val=" + repr_number(options.min_val()) +
                                         ", max_val=" + repr_number(options.max_val()),
                                     options.inplace()))
EMBER_DEFINE_ACTIVATION(ReLU6, relu6, options.inplace() ? "inplace=true" : "")
EMBER_DEFINE_ACTIVATION(GLU, glu, "dim=" + std::to_string(options.dim()))
EMBER_DEFINE_ACTIVATION(Softplus, softplus,
                        "beta=" + repr_number(options.beta()) + ", threshold=" + repr_number(options.threshold()))
EMBER_DEFINE_ACTIVATION(Threshold, threshold,
                        with_inplace("threshold=" + repr_number(options.threshold()) +
                                         ", value=" + repr_number(options.value()),
                                     options.inplace()))
#undef EMBER_DEFINE_ACTIVATION

RReLU::RReLU(const RReLUOptions& o) : options(o) {}
Tensor RReLU::forward(const Tensor& x) {
  return F::rrelu(x, F::RReLUFuncOptions()
                         .lower(options.lower())
                         .upper(options.upper())
                         .training(is_training())
                         .inplace(options.inplace()));
}
std::string RReLU::extra_repr() const {
  return with_inplace("lower=" + repr_number(options.lower()) + ", upper=" + repr_number(options.upper()),
                      options.inplace());
}
#define EMBER_DEFINE_SOFTMAX(Name, fn)                                      \
  Name::Name(const Name##Options& o) : options(o) {}                        \
  Tensor Name::forward(const Tensor& x) { return F::fn(x, options.dim()); } \
  std::string Name::extra_repr() const { return "dim=" + std::to_string(options.dim()); }
EMBER_DEFINE_SOFTMAX(Softmax, softmax)
EMBER_DEFINE_SOFTMAX(LogSoftmax, log_softmax)
#undef EMBER_DEFINE_SOFTMAX
Softmin::Softmin(const SoftminOptions& o) : options(o) {}
Tensor Softmin::forward(const Tensor& x) { return F::softmin(x, F::SoftminFuncOptions(options.dim())); }
std::string Softmin::extra_repr() const { return "dim=" + std::to_string(options.dim()); }

Tensor LogSigmoid::forward(const Tensor& x) { return F::logsigmoid(x); }
Tensor Mish::forward(const Tensor& x) { return F::mish(x); }
Tensor Softsign::forward(const Tensor& x) { return F::softsign(x); }
Tensor Tanhshrink::forward(const Tensor& x) { return F::tanhshrink(x); }
Tensor Softmax2d::forward(const Tensor& x) {
  EMBER_CHECK_SHAPE(x.dim() == 3 || x.dim() == 4, "Softmax2d: expects a 3-D or 4-D input, got shape ", x.sizes());
  return ember::softmax(x, -3);
}
Tensor Identity::forward(const Tensor& x) { return x; }

PReLU::PReLU(const PReLUOptions& o) : options(o) {
  EMBER_CHECK_VALUE(o.num_parameters() > 0, "PReLU: num_parameters must be positive, got ", o.num_parameters());
  weight = register_parameter("weight", empty({o.num_parameters()}));
  reset_parameters();
}
void PReLU::reset_parameters() {
  NoGradGuard g;
  weight.fill_(options.init());
}
Tensor PReLU::forward(const Tensor& x) { return F::prelu(x, weight); }
std::string PReLU::extra_repr() const { return "num_parameters=" + std::to_string(options.num_parameters()); }

}  // namespace nn
}  // namespace ember
