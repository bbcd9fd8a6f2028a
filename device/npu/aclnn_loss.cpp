// aclnn MseLoss / L1Loss / SmoothL1Loss / BinaryCrossEntropy / BinaryCrossEntropyWithLogits / NLLLoss and
// their Backward ops, LeakyRelu / InplaceLeakyRelu / LeakyReluBackward (CANN's argument lists).
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

// ---------------------------------------------------------------- NLLLoss
namespace {
// self [N, C] or [C], target [N] or [] (int64/int32/uint8 classes), weight [C].
struct NllShape {
  int64_t N = 1, C = 0;
  bool batched = true;
};
aclnnStatus nll_check(const char* op, const aclTensor* self, const aclTensor* target, const aclTensor* weight,
                      int64_t reduction, NllShape* s) {
  if (aclnnStatus st = check_not_null(op, {{"self", self}, {"target", target}, {"weight", weight}})) return st;
  for (Named n : {Named{"self", self}, Named{"target", target}, Named{"weight", weight}})
    if (aclnnStatus st = check_tensor(op, n.name, n.t)) return st;
  if (aclnnStatus st = check_dtype(op, "self", self, kFloats)) return st;
  if (aclnnStatus st = check_dtype(op, "weight", weight, kFloats)) return st;
  if (aclnnStatus st = check_dtype(op, "target", target, {DType::Int64, DType::Int32, DType::UInt8})) return st;
  if (reduction < 0 || reduction > 2)
    return invalid(op, "reduction must be 0 (none), 1 (mean) or 2 (sum), got " + std::to_string(reduction));
  IntArrayRef x = shape_of(self), t = shape_of(target);
  s->batched = x.size() == 2;
  if (!((x.size() == 2 && t.size() == 1 && t[0] == x[0]) || (x.size() == 1 && t.empty())))
    return invalid(op, "expects self [N, C] with target [N] (or [C] with a 0-d target), got " + shape_str(x) +
                           " and " + shape_str(t));
  s->N = s->batched ? x[0] : 1;
  s->C = x.back();
  if (shape_of(weight) != IntArrayRef({s->C}))
    return invalid(op, "weight must have shape [" + std::to_string(s->C) + "], got " + shape_str(shape_of(weight)));
  return ACLNN_SUCCESS;
}

// Row i's class, checked: ignoreIndex, or inside [0, C) (an IndexError otherwise).
// Stages self [N, C], target [N] and weight [C] as float64 (class indices are exact in double).
struct NllInputs {
  F64Input x, t, w;
  DimVector xs, ts, wss;
  aclnnStatus plan(const char* op, const aclTensor* self, const aclTensor* target, const aclTensor* weight,
                   const NllShape& s, uint64_t* wsb) {
    xs = DimVector{s.N, s.C};
    ts = DimVector{s.N};
    wss = DimVector{s.C};
    for (auto [in, t, n] : {std::tuple<F64Input*, const aclTensor*, int64_t>{&x, self, s.N * s.C},
                            {&this->t, target, s.N}, {&w, weight, s.C}}) {
      in->ref = ref(t);
      in->present = true;
      if (aclnnStatus st = reserve_f64(op, n, wsb, &in->offset)) return st;
    }
    if (!s.batched) {  // self [C] and target [] read as [1, C] and [1]
      x.ref.view = DimVector{1, s.C};
      x.ref.strides = DimVector{0, strides_of(self)[0]};
      this->t.ref.view = DimVector{1};
      this->t.ref.strides = DimVector{0};
    }
    return ACLNN_SUCCESS;
  }
};
}  // namespace

// out: per row -w[t] self[i, t] (0 for ignored rows), reduced; totalWeightOut: the sum of w[t] over
// the rows not ignored (mean divides by it).
extern "C" aclnnStatus aclnnNLLLossGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                    const aclTensor* weight, int64_t reduction, int64_t ignoreIndex,
                                                    aclTensor* out, aclTensor* totalWeightOut, uint64_t* ws,
                                                    aclOpExecutor** ex) {
  const char* op = "aclnnNLLLoss";
  NllShape s;
  if (aclnnStatus st = nll_check(op, self, target, weight, reduction, &s)) return st;
  if (aclnnStatus st = check_not_null(op, {{"out", out}, {"totalWeightOut", totalWeightOut}})) return st;
  if (aclnnStatus st = check_tensor(op, "out", out)) return st;
  if (aclnnStatus st = check_tensor(op, "totalWeightOut", totalWeightOut)) return st;
  if (aclnnStatus st = check_dtype(op, "out", out, kFloats)) return st;
  if (aclnnStatus st = check_dtype(op, "totalWeightOut", totalWeightOut, kFloats)) return st;
  // out: [N] per row, else one element ([] or [1], as CANN's examples give it); totalWeightOut: one element.
  if (reduction == 0 && s.batched) {
    if (aclnnStatus st = check_shape(op, "out", out, {s.N})) return st;
  } else if (numel_of(shape_of(out)) != 1) {
    return invalid(op, "out must hold one element, got shape " + shape_str(shape_of(out)));
  }
  if (numel_of(shape_of(totalWeightOut)) != 1)
    return invalid(op, "totalWeightOut must hold one element, got shape " + shape_str(shape_of(totalWeightOut)));
  uint64_t wsb = 0, vals = 0;
  NllInputs in;
  if (aclnnStatus st = in.plan(op, self, target, weight, s, &wsb)) return st;
  if (aclnnStatus st = reserve_f64(op, s.N, &wsb, &vals)) return st;
  TensorRef ro = ref(out), rt = ref(totalWeightOut);
  return make_executor(op, wsb, [=](KernelContext& k) {
    const double *x = in.x.load(k, in.xs), *t = in.t.load(k, in.ts), *w = in.w.load(k, in.wss);
    auto* l = reinterpret_cast<double*>(static_cast<char*>(k.workspace()) + vals);
    const double total = cpu::nll_loss_f64(l, x, t, w, s.N, s.C, ignoreIndex, op);
    double sum = 0;
    for (int64_t i = 0; i < s.N; ++i) sum += l[i];
    cpu::fill(k.view(rt), total);
    cpu::Strided ov = k.view(ro);
    if (reduction == 0) {
      cpu::copy(ov, cpu::Strided(l, DType::Float64, ov.sizes, contiguous_strides(ov.sizes)));
    } else {
      cpu::fill(ov, reduction == 1 ? sum / total : sum);
    }
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnNLLLoss)

namespace {
// NLLLossBackward's gradOutput ([N] per row, else one value), totalWeight (one value) and out
// (self's shape), all floating.
aclnnStatus check_nll_grads(const char* op, const aclTensor* self, const aclTensor* gradOutput,
                            const aclTensor* totalWeight, const aclTensor* out, bool per_row, int64_t reduction,
                            const NllShape& s) {
  if (aclnnStatus st = check_not_null(op, {{"gradOutput", gradOutput}, {"totalWeight", totalWeight}, {"out", out}}))
    return st;
  for (Named n : {Named{"gradOutput", gradOutput}, Named{"totalWeight", totalWeight}, Named{"out", out}}) {
    if (aclnnStatus st = check_tensor(op, n.name, n.t)) return st;
    if (aclnnStatus st = check_dtype(op, n.name, n.t, kFloats)) return st;
  }
  if (per_row ? shape_of(gradOutput) != IntArrayRef({s.N}) : numel_of(shape_of(gradOutput)) != 1)
    return invalid(op, "gradOutput of shape " + shape_str(shape_of(gradOutput)) + " does not match reduction " +
                           std::to_string(reduction) + " of self " + shape_str(shape_of(self)));
  if (numel_of(shape_of(totalWeight)) != 1) return invalid(op, "totalWeight must hold one value");
  return check_shape(op, "out", out, shape_of(self));
}
}  // namespace

// out [N, C] (self's shape): -w[t] g_i at (i, t[i]) (divided by totalWeight for mean), else 0.
extern "C" aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                            const aclTensor* target, const aclTensor* weight,
                                                            int64_t reduction, int64_t ignoreIndex,
                                                            const aclTensor* totalWeight, aclTensor* out, uint64_t* ws,
                                                            aclOpExecutor** ex) {
  const char* op = "aclnnNLLLossBackward";
  NllShape s;
  if (aclnnStatus st = nll_check(op, self, target, weight, reduction, &s)) return st;
  const bool per_row = reduction == 0 && s.batched;
  if (aclnnStatus st = check_nll_grads(op, self, gradOutput, totalWeight, out, per_row, reduction, s)) return st;
  const int64_t gn = numel_of(shape_of(gradOutput));
  uint64_t wsb = 0, gofs = 0, twofs = 0, vals = 0;
  NllInputs in;
  if (aclnnStatus st = in.plan(op, self, target, weight, s, &wsb)) return st;
  if (aclnnStatus st = reserve_f64(op, gn, &wsb, &gofs)) return st;
  if (aclnnStatus st = reserve_f64(op, 1, &wsb, &twofs)) return st;
  if (aclnnStatus st = reserve_f64(op, s.N * s.C, &wsb, &vals)) return st;
  TensorRef rg = ref(gradOutput), rtw = ref(totalWeight), ro = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    const double *t = in.t.load(k, in.ts), *w = in.w.load(k, in.wss);
    auto at = [&](uint64_t off) { return reinterpret_cast<double*>(static_cast<char*>(k.workspace()) + off); };
    cpu::Strided gv = k.view(rg), twv = k.view(rtw);
    DimVector gs{gn}, one{1};
    // gradOutput: [N] per row, else its one value (any shape of one element); totalWeight likewise.
    cpu::copy(cpu::Strided(at(gofs), DType::Float64, gs, one),
              per_row ? gv : cpu::Strided(gv.data, gv.dtype, one, DimVector{0}));
    cpu::copy(cpu::Strided(at(twofs), DType::Float64, one, one), cpu::Strided(twv.data, twv.dtype, one, DimVector{0}));
    const double* g = at(gofs);
    const double denom = reduction == 1 ? *at(twofs) : 1.0;
    double* r = at(vals);
    cpu::nll_loss_backward_f64(r, g, per_row, denom, t, w, s.N, s.C, ignoreIndex, op);
    cpu::Strided ov = k.view(ro);
    DimVector xs{s.N, s.C};
    cpu::Strided o2(ov.data, ov.dtype, xs, DimVector{s.batched ? ov.strides[0] : 0, ov.strides.back()});
    cpu::copy(o2, cpu::Strided(r, DType::Float64, xs, contiguous_strides(xs)));
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnNLLLossBackward)

}  // namespace npu
}  // namespace ember
