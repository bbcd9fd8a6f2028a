// aclnn Embedding / EmbeddingDenseBackward / Im2col / Im2colBackward / CrossEntropyLoss (CANN's
// argument lists), and ember's CrossEntropy / CrossEntropyGrad extensions. Non-contiguous inputs
// are staged in the workspace; outputs must be contiguous. AdamW: aclnn_adam_w.cpp.
#include <cmath>

#include "ember/device/cpu/nn.h"
#include "ember/device/npu/aclnn_common.h"
#include "ember/device/npu/descriptors.h"
#include "ember/core/error.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {
const std::initializer_list<DType> kIndex = {DType::Int64, DType::Int32};
}  // namespace

extern "C" aclnnStatus aclnnEmbeddingGetWorkspaceSize(const aclTensor* weight, const aclTensor* indices,
                                                      const aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnEmbedding";
  if (aclnnStatus s = check_not_null(op, {{"weight", weight}, {"indices", indices}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"weight", weight}, {"indices", indices}, {"out", out}})) return s;
  if (aclnnStatus s = check_dtype(op, "indices", indices, kIndex)) return s;
  IntArrayRef w = shape_of(weight), ix = shape_of(indices);
  if (w.size() != 2) return invalid(op, "weight must be 2-D, got shape " + shape_str(w));
  std::vector<int64_t> expect(ix.begin(), ix.end());
  expect.push_back(w[1]);
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef(expect))) return s;
  if (dtype_of(out) != dtype_of(weight)) return invalid(op, "out must have weight's dtype");
  if (aclnnStatus s = check_contiguous(op, "out", out)) return s;
  uint64_t wsb = 0;
  StagedInput sw = stage_if_strided(weight, &wsb), si = stage_if_strided(indices, &wsb);
  TensorRef ro = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided wv = sw.view(k), iv = si.view(k), ov = k.view(ro);
    cpu::embedding(ov, wv, iv, "aclnnEmbedding");
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnEmbedding)

extern "C" aclnnStatus aclnnEmbeddingDenseBackwardGetWorkspaceSize(const aclTensor* grad, const aclTensor* sortIndices,
                                                                   uint64_t numWeights, uint64_t paddingIdx,
                                                                   bool scaleGradByFreq, const aclTensor* out, uint64_t* ws,
                                                                   aclOpExecutor** ex) {
  const char* op = "aclnnEmbeddingDenseBackward";
  if (aclnnStatus s = check_not_null(op, {{"grad", grad}, {"sortIndices", sortIndices}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"grad", grad}, {"sortIndices", sortIndices}, {"out", out}})) return s;
  if (aclnnStatus s = check_dtype(op, "sortIndices", sortIndices, kIndex)) return s;
  if (aclnnStatus s = check_dtype(op, "grad", grad, kFloats)) return s;
  IntArrayRef g = shape_of(grad), ix = shape_of(sortIndices);
  int64_t n = numel_of(ix);
  if (g.empty() || numel_of(g) != n * g.back())
    return invalid(op, "grad of shape " + shape_str(g) + " does not hold one row per index of " + shape_str(ix));
  std::vector<int64_t> expect{static_cast<int64_t>(numWeights), g.back()};
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef(expect))) return s;
  if (aclnnStatus s = check_contiguous(op, "out", out)) return s;
  uint64_t wsb = 0;
  StagedInput sg = stage_if_strided(grad, &wsb), si = stage_if_strided(sortIndices, &wsb);
  TensorRef ro = ref(out);
  int64_t pad = paddingIdx >= numWeights ? -1 : static_cast<int64_t>(paddingIdx);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided gv = sg.view(k), iv = si.view(k), ov = k.view(ro);
    cpu::embedding_backward(ov, gv, iv, pad, scaleGradByFreq, "aclnnEmbeddingDenseBackward");
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnEmbeddingDenseBackward)

namespace {
// The windows of an Im2col / Im2colBackward over the spatial size hw, or an error status.
aclnnStatus plan_window(const char* op, int64_t h, int64_t w, const aclIntArray* k, const aclIntArray* d,
                        const aclIntArray* p, const aclIntArray* s, cpu::Window2d* win) {
  std::vector<int64_t> kv = int_array(k), dv = int_array(d), pv = int_array(p), sv = int_array(s);
  std::string err = cpu::window2d(h, w, kv, dv, pv, sv, win);
  return err.empty() ? ACLNN_SUCCESS : invalid(op, err);
}
}  // namespace

extern "C" aclnnStatus aclnnIm2colGetWorkspaceSize(const aclTensor* self, const aclIntArray* kernelSize,
                                                   const aclIntArray* dilation, const aclIntArray* padding,
                                                   const aclIntArray* stride, const aclTensor* out, uint64_t* ws,
                                                   aclOpExecutor** ex) {
  const char* op = "aclnnIm2col";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (!kernelSize || !dilation || !padding || !stride) return invalid(op, "kernelSize, dilation, padding and stride must not be null");
  if (aclnnStatus s = check_all(op, {{"self", self}, {"out", out}})) return s;
  if (aclnnStatus s = check_dtype(op, "self", self, kFloats)) return s;
  if (dtype_of(out) != dtype_of(self)) return invalid(op, "out must have self's dtype");
  IntArrayRef x = shape_of(self);
  if (x.size() != 3 && x.size() != 4) return invalid(op, "self must be 3-D or 4-D, got shape " + shape_str(x));
  const bool batched = x.size() == 4;
  const int64_t N = batched ? x[0] : 1, C = x[x.size() - 3];
  cpu::Window2d win;
  if (aclnnStatus s = plan_window(op, x[x.size() - 2], x.back(), kernelSize, dilation, padding, stride, &win)) return s;
  std::vector<int64_t> expect{C * win.kh * win.kw, win.oh * win.ow};
  if (batched) expect.insert(expect.begin(), N);
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef(expect))) return s;
  if (aclnnStatus s = check_contiguous(op, "out", out)) return s;
  uint64_t wsb = 0;
  StagedInput sx = stage_if_strided(self, &wsb);
  TensorRef ro = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided xv = sx.view(k), ov = k.view(ro);
    DimVector sz{N, C, win.h, win.w};
    cpu::Strided x4(xv.data, xv.dtype, sz, contiguous_strides(sz));
    cpu::im2col(ov, x4, win);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnIm2col)

extern "C" aclnnStatus aclnnIm2colBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclIntArray* inputSize,
                                                           const aclIntArray* kernelSize, const aclIntArray* dilation,
                                                           const aclIntArray* padding, const aclIntArray* stride,
                                                           aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnIm2colBackward";
  if (aclnnStatus s = check_not_null(op, {{"gradOutput", gradOutput}, {"out", out}})) return s;
  if (!inputSize || !kernelSize || !dilation || !padding || !stride)
    return invalid(op, "inputSize, kernelSize, dilation, padding and stride must not be null");
  if (aclnnStatus s = check_all(op, {{"gradOutput", gradOutput}, {"out", out}})) return s;
  if (aclnnStatus s = check_dtype(op, "gradOutput", gradOutput, kFloats)) return s;
  if (dtype_of(out) != dtype_of(gradOutput)) return invalid(op, "out must have gradOutput's dtype");
  std::vector<int64_t> hw = int_array(inputSize);
  if (hw.size() != 2) return invalid(op, "inputSize needs 2 values (H, W), got " + shape_str(hw));
  IntArrayRef g = shape_of(gradOutput);
  if (g.size() != 2 && g.size() != 3) return invalid(op, "gradOutput must be 2-D or 3-D, got shape " + shape_str(g));
  const bool batched = g.size() == 3;
  cpu::Window2d win;
  if (aclnnStatus s = plan_window(op, hw[0], hw[1], kernelSize, dilation, padding, stride, &win)) return s;
  const int64_t kk = win.kh * win.kw, N = batched ? g[0] : 1, rows = g[g.size() - 2];
  if (rows % kk != 0 || g.back() != win.oh * win.ow)
    return invalid(op, "gradOutput of shape " + shape_str(g) + " does not hold " + std::to_string(win.oh * win.ow) +
                           " windows of a multiple of " + std::to_string(kk) + " values");
  const int64_t C = rows / kk;
  std::vector<int64_t> expect{C, hw[0], hw[1]};
  if (batched) expect.insert(expect.begin(), N);
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef(expect))) return s;
  if (aclnnStatus s = check_contiguous(op, "out", out)) return s;
  uint64_t wsb = 0;
  StagedInput sg = stage_if_strided(gradOutput, &wsb);
  TensorRef ro = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided gv = sg.view(k), ov = k.view(ro);
    DimVector sz{N, C, win.h, win.w};
    cpu::Strided o4(ov.data, ov.dtype, sz, contiguous_strides(sz));
    cpu::col2im(o4, gv, win);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnIm2colBackward)

namespace {
aclnnStatus check_logits_target(const char* op, const aclTensor* logits, const aclTensor* target) {
  if (aclnnStatus s = check_dtype(op, "logits", logits, kFloats)) return s;
  if (aclnnStatus s = check_dtype(op, "target", target, {DType::Int64})) return s;
  IntArrayRef l = shape_of(logits), t = shape_of(target);
  if (l.size() != 2 || t.size() != 1 || t[0] != l[0])
    return invalid(op, "expects logits [N, C] and target [N], got " + shape_str(l) + " and " + shape_str(t));
  return ACLNN_SUCCESS;
}
}  // namespace

extern "C" aclnnStatus aclnnEmberCrossEntropyGetWorkspaceSize(const aclTensor* logits, const aclTensor* target,
                                                              int64_t ignoreIndex, aclTensor* out, uint64_t* ws,
                                                              aclOpExecutor** ex) {
  const char* op = "aclnnEmberCrossEntropy";
  if (aclnnStatus s = check_not_null(op, {{"logits", logits}, {"target", target}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"logits", logits}, {"target", target}, {"out", out}})) return s;
  if (aclnnStatus s = check_logits_target(op, logits, target)) return s;
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef())) return s;
  if (aclnnStatus s = check_dtype(op, "out", out, kFloats)) return s;
  uint64_t wsb = 0;
  StagedInput sl = stage_if_strided(logits, &wsb), st = stage_if_strided(target, &wsb);
  TensorRef ro = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided lv = sl.view(k), tv = st.view(k), ov = k.view(ro);
    cpu::cross_entropy(ov, lv, tv, ignoreIndex, "aclnnEmberCrossEntropy");
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnEmberCrossEntropy)

extern "C" aclnnStatus aclnnEmberCrossEntropyGradGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* logits,
                                                                  const aclTensor* target, int64_t ignoreIndex,
                                                                  aclTensor* gradInput, uint64_t* ws,
                                                                  aclOpExecutor** ex) {
  const char* op = "aclnnEmberCrossEntropyGrad";
  if (aclnnStatus s = check_not_null(op, {{"gradOutput", gradOutput}, {"logits", logits}, {"target", target},
                                          {"gradInput", gradInput}}))
    return s;
  if (aclnnStatus s = check_all(op, {{"gradOutput", gradOutput}, {"logits", logits}, {"target", target},
                                     {"gradInput", gradInput}}))
    return s;
  if (aclnnStatus s = check_logits_target(op, logits, target)) return s;
  if (aclnnStatus s = check_shape(op, "gradOutput", gradOutput, IntArrayRef())) return s;
  if (aclnnStatus s = check_shape(op, "gradInput", gradInput, shape_of(logits))) return s;
  if (aclnnStatus s = check_contiguous(op, "gradInput", gradInput)) return s;
  uint64_t wsb = 0;
  StagedInput sl = stage_if_strided(logits, &wsb), st = stage_if_strided(target, &wsb);
  TensorRef rg = ref(gradOutput), ro = ref(gradInput);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided lv = sl.view(k), tv = st.view(k), gv = k.view(rg), ov = k.view(ro);
    cpu::cross_entropy_backward(ov, gv, lv, tv, ignoreIndex, "aclnnEmberCrossEntropyGrad");
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnEmberCrossEntropyGrad)

// CANN's CrossEntropyLoss: input [N, C] (FLOAT/FLOAT16/BF16), target [N] (INT32/INT64),
// weightOptional [C] (FLOAT), reduction "mean" / "sum" / "none", ignoreIndex, labelSmoothing in
// [0, 1]; lossOut ([N] for "none", else [1]) and logProbOut [N, C] in input's dtype. As PyTorch:
//   loss_n = w[y_n] * ((1 - ls) * -logp[n, y_n]) + ls / C * sum_c w[c] * -logp[n, c]
// ("mean" divides by the sum of w[y_n] over the rows not ignored): cpu::cross_entropy_loss, in
// float64 from a float64 copy of input in the workspace. zloss is not supported (as on CANN today): returnZloss
// must be false, and zlossOut / lseForZlossOut are not written.
namespace {
// CrossEntropyLoss's tensors: input [N, C] floating (C > 0), target [N] int32/int64, weight [C]
// float32, logProbOut input's shape, lossOut [N] for "none" (else one value), both input's dtype.
aclnnStatus check_ce_tensors(const char* op, const aclTensor* input, const aclTensor* target,
                             const aclTensor* weightOptional, const std::string& reduction, const aclTensor* lossOut,
                             const aclTensor* logProbOut) {
  if (aclnnStatus s = check_dtype(op, "input", input, kFloats)) return s;
  if (aclnnStatus s = check_dtype(op, "target", target, kIndex)) return s;
  IntArrayRef xs = shape_of(input);
  if (xs.size() != 2 || xs[1] <= 0) return invalid(op, "input must be [N, C] with C > 0, got " + shape_str(xs));
  const int64_t N = xs[0], C = xs[1];
  if (aclnnStatus s = check_shape(op, "target", target, {N})) return s;
  if (weightOptional) {
    if (aclnnStatus s = check_dtype(op, "weightOptional", weightOptional, {DType::Float32})) return s;
    if (aclnnStatus s = check_shape(op, "weightOptional", weightOptional, {C})) return s;
  }
  if (aclnnStatus s = check_shape(op, "logProbOut", logProbOut, xs)) return s;
  if (reduction == "none") {
    if (aclnnStatus s = check_shape(op, "lossOut", lossOut, {N})) return s;
  } else if (numel_of(shape_of(lossOut)) != 1) {
    return invalid(op, "lossOut must hold one value for reduction \"" + reduction + "\", got " +
                           shape_str(shape_of(lossOut)));
  }
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"lossOut", lossOut}, {"logProbOut", logProbOut}})
    if (dtype_of(t) != dtype_of(input)) return invalid(op, std::string(name) + " must have input's dtype");
  return ACLNN_SUCCESS;
}
}  // namespace

extern "C" aclnnStatus aclnnCrossEntropyLossGetWorkspaceSize(
    const aclTensor* input, const aclTensor* target, const aclTensor* weightOptional, char* reductionOptional,
    int64_t ignoreIndex, double labelSmoothing, double lseSquareScaleForZloss, bool returnZloss,
    const aclTensor* lossOut, const aclTensor* logProbOut, const aclTensor* zlossOut, const aclTensor* lseForZlossOut,
    uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnCrossEntropyLoss";
  (void)lseSquareScaleForZloss;
  (void)zlossOut;
  (void)lseForZlossOut;
  if (aclnnStatus s = check_not_null(op, {{"input", input}, {"target", target}, {"lossOut", lossOut},
                                          {"logProbOut", logProbOut}}))
    return s;
  if (aclnnStatus s = check_all(op, {{"input", input}, {"target", target}, {"lossOut", lossOut},
                                     {"logProbOut", logProbOut}}))
    return s;
  if (weightOptional)
    if (aclnnStatus s = check_tensor(op, "weightOptional", weightOptional)) return s;
  const std::string reduction = reductionOptional ? reductionOptional : "mean";
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return invalid(op, "reductionOptional must be \"mean\", \"sum\" or \"none\", got \"" + reduction + "\"");
  if (returnZloss) return invalid(op, "returnZloss is not supported (as on CANN)");
  if (!(labelSmoothing >= 0 && labelSmoothing <= 1))
    return invalid(op, "labelSmoothing must be in [0, 1], got " + std::to_string(labelSmoothing));
  if (aclnnStatus s = check_ce_tensors(op, input, target, weightOptional, reduction, lossOut, logProbOut)) return s;
  const int64_t N = shape_of(input)[0], C = shape_of(input)[1];
  uint64_t wsb = 0, rows_by_classes = 0;
  if (aclnnStatus s = workspace_bytes(op, N, C, &rows_by_classes)) return s;
  if (aclnnStatus s = workspace_bytes(op, static_cast<int64_t>(rows_by_classes), 8, &wsb)) return s;
  TensorRef rx = ref(input), rt = ref(target), rl = ref(lossOut), rp = ref(logProbOut);
  TensorRef rw = weightOptional ? ref(weightOptional) : TensorRef();
  const bool has_w = weightOptional != nullptr;
  cpu::CrossEntropyLossOptions o;
  o.ignore_index = ignoreIndex;
  o.label_smoothing = labelSmoothing;
  o.reduction = reduction == "none" ? 0 : reduction == "sum" ? 1 : 2;
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::cross_entropy_loss(k.view(rl), k.view(rp), k.view(rx), k.view(rt), has_w ? k.view(rw) : cpu::Strided(), o,
                            static_cast<double*>(k.workspace()), op);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnCrossEntropyLoss)


}  // namespace npu
}  // namespace ember
