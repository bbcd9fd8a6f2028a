// aclnn NLLLoss and NLLLossBackward (CANN's argument lists): self [N, C] or [C] log-probabilities,
// target classes, weight [C]; ignoreIndex rows count for nothing. Inputs are staged as float64 in
// the workspace (class indices are exact in double), phase 2 runs device/cpu's nll_loss kernels.
#include <tuple>

#include "ember/device/cpu/nn.h"
#include "ember/device/npu/aclnn_common.h"
#include "ember/device/npu/descriptors.h"
#include "ember/core/error.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {
// self [N, C] or [C], target [N] or [] (int64/int32/uint8 classes), weight [C].
struct NllShape {
  int64_t N = 1, C = 0;
  bool batched = true;
};
aclnnStatus nll_check(const char* op, const aclTensor* self, const aclTensor* target, const aclTensor* weight,
                      int64_t reduction, NllShape* s) {
  if (aclnnStatus st = check_not_null(op, {{"self", self}, {"target", target}, {"weight", weight}})) return st;
  if (aclnnStatus st = check_all(op, {{"self", self}, {"target", target}, {"weight", weight}})) return st;
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
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"gradOutput", gradOutput},
                         {"totalWeight", totalWeight}, {"out", out}}) {
    if (aclnnStatus st = check_tensor(op, name, t)) return st;
    if (aclnnStatus st = check_dtype(op, name, t, kFloats)) return st;
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
