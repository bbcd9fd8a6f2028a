// aclnn MseLoss / L1Loss / SmoothL1Loss / BinaryCrossEntropy / BinaryCrossEntropyWithLogits and
// their Backward ops, LeakyRelu / InplaceLeakyRelu / LeakyReluBackward (CANN's argument lists).
// NLLLoss is in aclnn_nll_loss.cpp.
//
// The elementwise ones share one plan: every input is read as float64 of the broadcast shape of
// all of them (staged in the workspace), each element's value is computed in double, and the
// result is written once, rounded to out's dtype: a loss's reduction (0 none, 1 mean, 2 sum)
// sums in double; a backward op scales by 1 / n for mean.
#include <cmath>

#include "ember/device/cpu/nn.h"
#include "ember/device/npu/aclnn_common.h"
#include "ember/device/npu/descriptors.h"
#include "ember/core/error.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {

// One element's value from the inputs' values at i (in the order given; absent optionals null).
using ElementFn = std::function<double(const double* const* v, int64_t i)>;
enum class Mode { Loss, Backward, Map };

struct Named {
  const char* name;
  const aclTensor* t;
};

// The inputs (the present optionals among them): floating tensors whose shapes broadcast to
// *shape.
aclnnStatus broadcast_inputs(const char* op, std::initializer_list<Named> required, std::initializer_list<Named> optional,
                             std::vector<int64_t>* shape) {
  for (const Named& n : required)
    if (aclnnStatus s = check_not_null(op, n.name, n.t)) return s;
  std::vector<Named> all(required);
  for (const Named& n : optional)
    if (n.t) all.push_back(n);
  for (const Named& n : all) {
    if (aclnnStatus s = check_tensor(op, n.name, n.t)) return s;
    if (aclnnStatus s = check_dtype(op, n.name, n.t, kFloats)) return s;
    std::vector<int64_t> b;
    if (!broadcast(IntArrayRef(*shape), shape_of(n.t), &b))
      return invalid(op, std::string(n.name) + " of shape " + shape_str(shape_of(n.t)) +
                             " does not broadcast with the other inputs' shape " + shape_str(*shape));
    *shape = b;
  }
  return ACLNN_SUCCESS;
}

// Each input (absent optionals: not present) staged as float64 at the broadcast size n.
aclnnStatus stage_inputs(const char* op, std::initializer_list<Named> required, std::initializer_list<Named> optional,
                         int64_t n, uint64_t* wsb, std::vector<F64Input>* ins) {
  for (std::initializer_list<Named> group : {required, optional})
    for (const Named& r : group) {
      F64Input in;
      if (r.t) {
        in.ref = ref(r.t);
        in.present = true;
        if (aclnnStatus s = reserve_f64(op, n, wsb, &in.offset)) return s;
      }
      ins->push_back(in);
    }
  return ACLNN_SUCCESS;
}

// Phase 1 of an elementwise loss (Mode::Loss: out is the reduced value, or the per-element
// values for reduction 0), of its backward (Mode::Backward: out has the broadcast shape, scaled
// by 1 / n for mean) or of a plain map (Mode::Map).
aclnnStatus elementwise_plan(const char* op, std::initializer_list<Named> required, std::initializer_list<Named> optional,
                             int64_t reduction, Mode mode, const aclTensor* out, ElementFn f, uint64_t* ws,
                             aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, "out", out)) return s;
  std::vector<int64_t> shape;
  if (aclnnStatus s = broadcast_inputs(op, required, optional, &shape)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (aclnnStatus s = check_dtype(op, "out", out, kFloats)) return s;
  if (mode != Mode::Map && (reduction < 0 || reduction > 2))
    return invalid(op, "reduction must be 0 (none), 1 (mean) or 2 (sum), got " + std::to_string(reduction));
  const bool reduce = mode == Mode::Loss && reduction != 0;
  if (reduce ? numel_of(shape_of(out)) != 1 : shape_of(out) != IntArrayRef(shape))  // a reduced out: [] or [1]
    return invalid(op, "out has shape " + shape_str(shape_of(out)) + ", expected " +
                           (reduce ? std::string("one element") : shape_str(shape)));
  const int64_t n = numel_of(shape);
  uint64_t wsb = 0, vals = 0;
  std::vector<F64Input> ins;
  if (aclnnStatus s = stage_inputs(op, required, optional, n, &wsb, &ins)) return s;
  if (aclnnStatus s = reserve_f64(op, n, &wsb, &vals)) return s;
  TensorRef ro = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    std::vector<const double*> v;
    for (const F64Input& in : ins) v.push_back(in.load(k, shape));
    auto* r = reinterpret_cast<double*>(static_cast<char*>(k.workspace()) + vals);
    const double scale = mode == Mode::Backward && reduction == 1 ? 1.0 / static_cast<double>(n) : 1.0;
    for (int64_t i = 0; i < n; ++i) r[i] = f(v.data(), i) * scale;
    cpu::Strided ov = k.view(ro);
    if (!reduce) {
      cpu::copy(ov, cpu::Strided(r, DType::Float64, DimVector(IntArrayRef(shape)), contiguous_strides(shape)));
      return;
    }
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += r[i];
    cpu::fill(ov, reduction == 1 ? sum / static_cast<double>(n) : sum);  // mean of nothing: NaN, as PyTorch
  }, ws, ex);
}

double weight_at(const double* w, int64_t i) { return w ? w[i] : 1.0; }
// -log(sigmoid(-x))... softplus(-x) = log(1 + exp(-x)), stable for large |x|.
double softplus_neg(double x) { return std::log1p(std::exp(-std::fabs(x))) + std::max(-x, 0.0); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
}  // namespace

extern "C" aclnnStatus aclnnMseLossGetWorkspaceSize(const aclTensor* self, const aclTensor* target, int64_t reduction,
                                                    aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return elementwise_plan("aclnnMseLoss", {{"self", self}, {"target", target}}, {}, reduction, Mode::Loss, out,
                          [](const double* const* v, int64_t i) {
                            double d = v[0][i] - v[1][i];
                            return d * d;
                          }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnMseLoss)

extern "C" aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                            const aclTensor* target, int64_t reduction, aclTensor* out,
                                                            uint64_t* ws, aclOpExecutor** ex) {
  return elementwise_plan("aclnnMseLossBackward", {{"gradOutput", gradOutput}, {"self", self}, {"target", target}}, {},
                          reduction, Mode::Backward, out,
                          [](const double* const* v, int64_t i) { return 2.0 * (v[1][i] - v[2][i]) * v[0][i]; }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnMseLossBackward)

extern "C" aclnnStatus aclnnL1LossGetWorkspaceSize(const aclTensor* self, const aclTensor* target, int64_t reduction,
                                                   aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return elementwise_plan("aclnnL1Loss", {{"self", self}, {"target", target}}, {}, reduction, Mode::Loss, out,
                          [](const double* const* v, int64_t i) { return std::fabs(v[0][i] - v[1][i]); }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnL1Loss)

// sign(self - target) gradOutput (0 where they are equal, as PyTorch's).
extern "C" aclnnStatus aclnnL1LossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                           const aclTensor* target, int64_t reduction,
                                                           aclTensor* gradInput, uint64_t* ws, aclOpExecutor** ex) {
  return elementwise_plan("aclnnL1LossBackward", {{"gradOutput", gradOutput}, {"self", self}, {"target", target}}, {},
                          reduction, Mode::Backward, gradInput,
                          [](const double* const* v, int64_t i) {
                            const double d = v[1][i] - v[2][i];
                            return ((d > 0) - (d < 0)) * v[0][i];
                          }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnL1LossBackward)

namespace {
aclnnStatus check_beta(const char* op, float beta) {
  return beta >= 0 ? ACLNN_SUCCESS : invalid(op, "beta must be non-negative, got " + std::to_string(beta));
}
}  // namespace

// |d| < beta: 0.5 d^2 / beta, else |d| - 0.5 beta (beta 0: |d|).
extern "C" aclnnStatus aclnnSmoothL1LossGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                         int64_t reduction, float beta, aclTensor* result, uint64_t* ws,
                                                         aclOpExecutor** ex) {
  if (aclnnStatus s = check_beta("aclnnSmoothL1Loss", beta)) return s;
  const double b = beta;
  return elementwise_plan("aclnnSmoothL1Loss", {{"self", self}, {"target", target}}, {}, reduction, Mode::Loss, result,
                          [b](const double* const* v, int64_t i) {
                            double a = std::fabs(v[0][i] - v[1][i]);
                            return a < b ? 0.5 * a * a / b : a - 0.5 * b;
                          }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnSmoothL1Loss)

extern "C" aclnnStatus aclnnSmoothL1LossBackwardGetWorkspaceSize(const aclTensor* gradOut, const aclTensor* self,
                                                                 const aclTensor* target, int64_t reduction, float beta,
                                                                 aclTensor* gradInput, uint64_t* ws,
                                                                 aclOpExecutor** ex) {
  if (aclnnStatus s = check_beta("aclnnSmoothL1LossBackward", beta)) return s;
  const double b = beta;
  return elementwise_plan("aclnnSmoothL1LossBackward", {{"gradOut", gradOut}, {"self", self}, {"target", target}}, {},
                          reduction, Mode::Backward, gradInput,
                          [b](const double* const* v, int64_t i) {
                            double d = v[1][i] - v[2][i];
                            double slope = std::fabs(d) < b ? d / b : (d > 0) - (d < 0);
                            return slope * v[0][i];
                          }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnSmoothL1LossBackward)

// -w (y log(x) + (1 - y) log(1 - x)), each log clamped at -100 (PyTorch's rule).
extern "C" aclnnStatus aclnnBinaryCrossEntropyGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                               const aclTensor* weight, int64_t reduction,
                                                               aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return elementwise_plan("aclnnBinaryCrossEntropy", {{"self", self}, {"target", target}}, {{"weight", weight}},
                          reduction, Mode::Loss, out,
                          [](const double* const* v, int64_t i) {
                            double x = v[0][i], y = v[1][i];
                            double l = -(y * std::max(std::log(x), -100.0) + (1 - y) * std::max(std::log1p(-x), -100.0));
                            return l * weight_at(v[2], i);
                          }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnBinaryCrossEntropy)

// g w (x - y) / max(x (1 - x), 1e-12)
extern "C" aclnnStatus aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(const aclTensor* gradOutput,
                                                                       const aclTensor* self, const aclTensor* target,
                                                                       const aclTensor* weightOptional,
                                                                       int64_t reduction, aclTensor* out, uint64_t* ws,
                                                                       aclOpExecutor** ex) {
  return elementwise_plan("aclnnBinaryCrossEntropyBackward",
                          {{"gradOutput", gradOutput}, {"self", self}, {"target", target}},
                          {{"weightOptional", weightOptional}}, reduction, Mode::Backward, out,
                          [](const double* const* v, int64_t i) {
                            double x = v[1][i], y = v[2][i];
                            return v[0][i] * weight_at(v[3], i) * (x - y) / std::max(x * (1 - x), 1e-12);
                          }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnBinaryCrossEntropyBackward)

// w ((1 - y) x + (1 + (pw - 1) y) softplus(-x))
extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                                         const aclTensor* weightOptional,
                                                                         const aclTensor* posWeightOptional,
                                                                         int64_t reduction, aclTensor* out,
                                                                         uint64_t* ws, aclOpExecutor** ex) {
  return elementwise_plan("aclnnBinaryCrossEntropyWithLogits", {{"self", self}, {"target", target}},
                          {{"weightOptional", weightOptional}, {"posWeightOptional", posWeightOptional}}, reduction,
                          Mode::Loss, out,
                          [](const double* const* v, int64_t i) {
                            double x = v[0][i], y = v[1][i], lw = 1 + (weight_at(v[3], i) - 1) * y;
                            return weight_at(v[2], i) * ((1 - y) * x + lw * softplus_neg(x));
                          }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnBinaryCrossEntropyWithLogits)

// g w ((1 + (pw - 1) y) sigmoid(x) - pw y)
extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(
    const aclTensor* gradOutput, const aclTensor* self, const aclTensor* target, const aclTensor* weightOptional,
    const aclTensor* posWeightOptional, int64_t reduction, aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return elementwise_plan("aclnnBinaryCrossEntropyWithLogitsBackward",
                          {{"gradOutput", gradOutput}, {"self", self}, {"target", target}},
                          {{"weightOptional", weightOptional}, {"posWeightOptional", posWeightOptional}}, reduction,
                          Mode::Backward, out,
                          [](const double* const* v, int64_t i) {
                            double x = v[1][i], y = v[2][i], pw = weight_at(v[4], i);
                            return v[0][i] * weight_at(v[3], i) * ((1 + (pw - 1) * y) * sigmoid(x) - pw * y);
                          }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnBinaryCrossEntropyWithLogitsBackward)

// x > 0 ? x : negativeSlope x
extern "C" aclnnStatus aclnnLeakyReluGetWorkspaceSize(const aclTensor* self, const aclScalar* negativeSlope,
                                                      aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  if (!negativeSlope) return null_arg("aclnnLeakyRelu", "negativeSlope");
  if (self && out && dtype_of(self) != dtype_of(out)) return invalid("aclnnLeakyRelu", "out must have self's dtype");
  if (self && out && shape_of(self) != shape_of(out)) return invalid("aclnnLeakyRelu", "out must have self's shape");
  const double k = scalar_value(negativeSlope);
  return elementwise_plan("aclnnLeakyRelu", {{"self", self}}, {}, 0, Mode::Map, out,
                          [k](const double* const* v, int64_t i) { return v[0][i] > 0 ? v[0][i] : k * v[0][i]; }, ws,
                          ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnLeakyRelu)

extern "C" aclnnStatus aclnnInplaceLeakyReluGetWorkspaceSize(aclTensor* selfRef, const aclScalar* negativeSlope,
                                                             uint64_t* ws, aclOpExecutor** ex) {
  if (!negativeSlope) return null_arg("aclnnInplaceLeakyRelu", "negativeSlope");
  const double k = scalar_value(negativeSlope);
  return elementwise_plan("aclnnInplaceLeakyRelu", {{"selfRef", selfRef}}, {}, 0, Mode::Map, selfRef,
                          [k](const double* const* v, int64_t i) { return v[0][i] > 0 ? v[0][i] : k * v[0][i]; }, ws,
                          ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceLeakyRelu)

// gradOutput where self > 0, else negativeSlope gradOutput. selfIsResult: self is the forward's
// output (the same sign as its input when negativeSlope > 0, which CANN then requires).
extern "C" aclnnStatus aclnnLeakyReluBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                              const aclScalar* negativeSlope, bool selfIsResult,
                                                              aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnLeakyReluBackward";
  if (!negativeSlope) return null_arg(op, "negativeSlope");
  const double k = scalar_value(negativeSlope);
  if (selfIsResult && !(k > 0))
    return invalid(op, "selfIsResult needs a positive negativeSlope, got " + std::to_string(k));
  return elementwise_plan(op, {{"gradOutput", gradOutput}, {"self", self}}, {}, 0, Mode::Map, out,
                          [k](const double* const* v, int64_t i) { return v[1][i] > 0 ? v[0][i] : k * v[0][i]; }, ws,
                          ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnLeakyReluBackward)

}  // namespace npu
}  // namespace ember
