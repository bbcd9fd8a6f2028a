// aclnn MaxPool2dWithIndices / AvgPool2d / AdaptiveAvgPool2d and their Backward ops (CANN's
// argument lists) on device/cpu/pool.h's loops. self is [N, C, H, W] or [C, H, W];
// non-contiguous inputs are staged in the workspace; outputs must be contiguous.
#include "ember/device/cpu/pool.h"
#include "ember/device/npu/aclnn_common.h"
#include "ember/device/npu/descriptors.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {

// The planes of a 3-D or 4-D tensor: how many, and the shape of its results ([.., oh, ow]).
struct Planes {
  int64_t count = 0;
  std::vector<int64_t> out_shape;
};
aclnnStatus planes_of(const char* op, const aclTensor* self, int64_t oh, int64_t ow, Planes* p) {
  IntArrayRef x = shape_of(self);
  if (x.size() != 3 && x.size() != 4) return invalid(op, "self must be 3-D or 4-D, got shape " + shape_str(x));
  p->count = x.size() == 4 ? x[0] * x[1] : x[0];
  p->out_shape.assign(x.begin(), x.end() - 2);
  p->out_shape.push_back(oh);
  p->out_shape.push_back(ow);
  return ACLNN_SUCCESS;
}
// v (contiguous) as [planes, h, w].
cpu::Strided as_planes(const cpu::Strided& v, int64_t planes) {
  DimVector s{planes, v.sizes[v.sizes.size() - 2], v.sizes.back()};
  return cpu::Strided(v.data, v.dtype, s, contiguous_strides(s));
}
aclnnStatus check_out(const char* op, const char* name, const aclTensor* t, IntArrayRef shape, const aclTensor* like) {
  if (aclnnStatus s = check_tensor(op, name, t)) return s;
  if (aclnnStatus s = check_shape(op, name, t, shape)) return s;
  if (like && dtype_of(t) != dtype_of(like)) return invalid(op, std::string(name) + " must have self's dtype");
  if (!is_contiguous(t)) return invalid(op, std::string(name) + " must be contiguous");
  return ACLNN_SUCCESS;
}
aclnnStatus check_self(const char* op, const char* name, const aclTensor* self) {
  if (aclnnStatus s = check_not_null(op, name, self)) return s;
  if (aclnnStatus s = check_tensor(op, name, self)) return s;
  return check_dtype(op, name, self, kFloats);
}
aclnnStatus geometry(const char* op, const aclTensor* self, const aclIntArray* k, const aclIntArray* s,
                     const aclIntArray* p, const aclIntArray* d, bool ceil_mode, cpu::Pool2d* g) {
  if (!k || !s || !p) return invalid(op, "kernelSize, stride and padding must not be null");
  IntArrayRef x = shape_of(self);
  if (x.size() != 3 && x.size() != 4) return invalid(op, "self must be 3-D or 4-D, got shape " + shape_str(x));
  std::vector<int64_t> one{1}, dv = d ? int_array(d) : one;
  std::string err = cpu::pool2d(x[x.size() - 2], x.back(), int_array(k), int_array(s), int_array(p), dv, ceil_mode, g);
  return err.empty() ? ACLNN_SUCCESS : invalid(op, err);
}
}  // namespace

extern "C" aclnnStatus aclnnMaxPool2dWithIndicesGetWorkspaceSize(const aclTensor* self, const aclIntArray* kernelSize,
                                                                 const aclIntArray* stride, const aclIntArray* padding,
                                                                 const aclIntArray* dilation, bool ceilMode,
                                                                 aclTensor* out, aclTensor* indices, uint64_t* ws,
                                                                 aclOpExecutor** ex) {
  const char* op = "aclnnMaxPool2dWithIndices";
  if (aclnnStatus s = check_self(op, "self", self)) return s;
  if (aclnnStatus s = check_not_null(op, {{"out", out}, {"indices", indices}})) return s;
  if (!dilation) return invalid(op, "dilation must not be null");
  cpu::Pool2d g;
  if (aclnnStatus s = geometry(op, self, kernelSize, stride, padding, dilation, ceilMode, &g)) return s;
  Planes pl;
  if (aclnnStatus s = planes_of(op, self, g.oh, g.ow, &pl)) return s;
  if (aclnnStatus s = check_out(op, "out", out, pl.out_shape, self)) return s;
  if (aclnnStatus s = check_out(op, "indices", indices, pl.out_shape, nullptr)) return s;
  if (aclnnStatus s = check_dtype(op, "indices", indices, {DType::Int32, DType::Int64})) return s;
  uint64_t wsb = 0;
  StagedInput sx = stage_if_strided(self, &wsb);
  TensorRef ro = ref(out), ri = ref(indices);
  const int64_t n = pl.count;
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::max_pool2d(as_planes(k.view(ro), n), as_planes(k.view(ri), n), as_planes(sx.view(k), n), g);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnMaxPool2dWithIndices)

extern "C" aclnnStatus aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(
    const aclTensor* gradOutput, const aclTensor* self, const aclTensor* indices, const aclIntArray* kernelSize,
    const aclIntArray* stride, const aclIntArray* padding, const aclIntArray* dilation, bool ceilMode,
    aclTensor* gradInput, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnMaxPool2dWithIndicesBackward";
  if (aclnnStatus s = check_self(op, "self", self)) return s;
  if (aclnnStatus s = check_self(op, "gradOutput", gradOutput)) return s;
  if (aclnnStatus s = check_not_null(op, {{"indices", indices}, {"gradInput", gradInput}})) return s;
  if (aclnnStatus s = check_tensor(op, "indices", indices)) return s;
  if (aclnnStatus s = check_dtype(op, "indices", indices, {DType::Int32, DType::Int64})) return s;
  if (!dilation) return invalid(op, "dilation must not be null");
  cpu::Pool2d g;
  if (aclnnStatus s = geometry(op, self, kernelSize, stride, padding, dilation, ceilMode, &g)) return s;
  Planes pl;
  if (aclnnStatus s = planes_of(op, self, g.oh, g.ow, &pl)) return s;
  if (aclnnStatus s = check_shape(op, "gradOutput", gradOutput, pl.out_shape)) return s;
  if (aclnnStatus s = check_shape(op, "indices", indices, pl.out_shape)) return s;
  if (aclnnStatus s = check_out(op, "gradInput", gradInput, shape_of(self), self)) return s;
  uint64_t wsb = 0;
  StagedInput sg = stage_if_strided(gradOutput, &wsb), si = stage_if_strided(indices, &wsb);
  TensorRef rgx = ref(gradInput);
  const int64_t n = pl.count;
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::max_pool2d_backward(as_planes(k.view(rgx), n), as_planes(sg.view(k), n), as_planes(si.view(k), n), g);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnMaxPool2dWithIndicesBackward)

namespace {
aclnnStatus check_avg_args(const char* op, int64_t divisorOverride, int8_t cubeMathType) {
  if (divisorOverride < 0) return invalid(op, "divisorOverride must be 0 (none) or positive, got " + std::to_string(divisorOverride));
  if (cubeMathType < 0 || cubeMathType > 3)
    return invalid(op, "cubeMathType must be 0..3, got " + std::to_string(int(cubeMathType)));
  return ACLNN_SUCCESS;
}
}  // namespace

extern "C" aclnnStatus aclnnAvgPool2dGetWorkspaceSize(const aclTensor* self, const aclIntArray* kernelSize,
                                                      const aclIntArray* strides, const aclIntArray* paddings,
                                                      const bool ceilMode, const bool countIncludePad,
                                                      const int64_t divisorOverride, const int8_t cubeMathType,
                                                      aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnAvgPool2d";
  if (aclnnStatus s = check_self(op, "self", self)) return s;
  if (aclnnStatus s = check_not_null(op, "out", out)) return s;
  if (aclnnStatus s = check_avg_args(op, divisorOverride, cubeMathType)) return s;
  cpu::Pool2d g;
  if (aclnnStatus s = geometry(op, self, kernelSize, strides, paddings, nullptr, ceilMode, &g)) return s;
  Planes pl;
  if (aclnnStatus s = planes_of(op, self, g.oh, g.ow, &pl)) return s;
  if (aclnnStatus s = check_out(op, "out", out, pl.out_shape, self)) return s;
  uint64_t wsb = 0;
  StagedInput sx = stage_if_strided(self, &wsb);
  TensorRef ro = ref(out);
  const int64_t n = pl.count;
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::avg_pool2d(as_planes(k.view(ro), n), as_planes(sx.view(k), n), g, countIncludePad, divisorOverride);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnAvgPool2d)

extern "C" aclnnStatus aclnnAvgPool2dBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                              const aclIntArray* kernelSize, const aclIntArray* stride,
                                                              const aclIntArray* padding, bool ceilMode,
                                                              bool countIncludePad, int64_t divisorOverride,
                                                              int8_t cubeMathType, aclTensor* gradInput, uint64_t* ws,
                                                              aclOpExecutor** ex) {
  const char* op = "aclnnAvgPool2dBackward";
  if (aclnnStatus s = check_self(op, "self", self)) return s;
  if (aclnnStatus s = check_self(op, "gradOutput", gradOutput)) return s;
  if (aclnnStatus s = check_not_null(op, "gradInput", gradInput)) return s;
  if (aclnnStatus s = check_avg_args(op, divisorOverride, cubeMathType)) return s;
  cpu::Pool2d g;
  if (aclnnStatus s = geometry(op, self, kernelSize, stride, padding, nullptr, ceilMode, &g)) return s;
  Planes pl;
  if (aclnnStatus s = planes_of(op, self, g.oh, g.ow, &pl)) return s;
  if (aclnnStatus s = check_shape(op, "gradOutput", gradOutput, pl.out_shape)) return s;
  if (aclnnStatus s = check_out(op, "gradInput", gradInput, shape_of(self), self)) return s;
  uint64_t wsb = 0;
  StagedInput sg = stage_if_strided(gradOutput, &wsb);
  TensorRef rgx = ref(gradInput);
  const int64_t n = pl.count;
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::avg_pool2d_backward(as_planes(k.view(rgx), n), as_planes(sg.view(k), n), g, countIncludePad,
                             divisorOverride);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnAvgPool2dBackward)

extern "C" aclnnStatus aclnnAdaptiveAvgPool2dGetWorkspaceSize(const aclTensor* self, const aclIntArray* outputSize,
                                                              aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnAdaptiveAvgPool2d";
  if (aclnnStatus s = check_self(op, "self", self)) return s;
  if (aclnnStatus s = check_not_null(op, "out", out)) return s;
  if (!outputSize) return null_arg(op, "outputSize");
  std::vector<int64_t> o = int_array(outputSize);
  if (o.size() == 1) o.push_back(o[0]);
  if (o.size() != 2 || o[0] <= 0 || o[1] <= 0 || o[0] > (int64_t(1) << 31) || o[1] > (int64_t(1) << 31))
    return invalid(op, "outputSize needs 1 or 2 positive values, got " + shape_str(int_array(outputSize)));
  IntArrayRef x = shape_of(self);
  const int64_t lim = int64_t(1) << 31;  // i H stays far from overflow
  if ((x.size() == 3 || x.size() == 4) &&
      (x[x.size() - 2] <= 0 || x.back() <= 0 || x[x.size() - 2] > lim || x.back() > lim))
    return invalid(op, "cannot pool a plane of self " + shape_str(x) + " (empty, or a side above 2^31)");
  Planes pl;
  if (aclnnStatus s = planes_of(op, self, o[0], o[1], &pl)) return s;
  if (aclnnStatus s = check_out(op, "out", out, pl.out_shape, self)) return s;
  uint64_t wsb = 0;
  StagedInput sx = stage_if_strided(self, &wsb);
  TensorRef ro = ref(out);
  const int64_t n = pl.count;
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::adaptive_avg_pool2d(as_planes(k.view(ro), n), as_planes(sx.view(k), n));
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnAdaptiveAvgPool2d)

// gradOutput's last two dims are the pooled size.
extern "C" aclnnStatus aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize(const aclTensor* gradOutput,
                                                                      const aclTensor* self, aclTensor* out,
                                                                      uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnAdaptiveAvgPool2dBackward";
  if (aclnnStatus s = check_self(op, "self", self)) return s;
  if (aclnnStatus s = check_self(op, "gradOutput", gradOutput)) return s;
  if (aclnnStatus s = check_not_null(op, "out", out)) return s;
  IntArrayRef x = shape_of(self), gy = shape_of(gradOutput);
  if (gy.size() != x.size() || gy.size() < 3)
    return invalid(op, "gradOutput " + shape_str(gy) + " does not pool self " + shape_str(x));
  Planes pl;
  if (aclnnStatus s = planes_of(op, self, gy[gy.size() - 2], gy.back(), &pl)) return s;
  if (aclnnStatus s = check_shape(op, "gradOutput", gradOutput, pl.out_shape)) return s;
  const int64_t lim = int64_t(1) << 31;
  for (int64_t v : {gy[gy.size() - 2], gy.back(), x[x.size() - 2], x.back()})
    if (v <= 0 || v > lim) return invalid(op, "pooled and input planes must be non-empty with sides up to 2^31");
  if (aclnnStatus s = check_out(op, "out", out, x, self)) return s;
  uint64_t wsb = 0;
  StagedInput sg = stage_if_strided(gradOutput, &wsb);
  TensorRef rgx = ref(out);
  const int64_t n = pl.count;
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::adaptive_avg_pool2d_backward(as_planes(k.view(rgx), n), as_planes(sg.view(k), n));
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnAdaptiveAvgPool2dBackward)

// CANN header aclnnop/aclnn_max_pool.h: out = the max of each kernelShape window of self ([N,] C, H, W), ONNX-style arguments: autoPad 0 (NOTSET), pads {top, left, bottom, right} (or 2, 1, 0 values), dilations 1, ceilMode 0 or 1
extern "C" aclnnStatus aclnnMaxPoolGetWorkspaceSize(const aclTensor* self, const aclIntArray* kernelShape,
                                                   const aclIntArray* strides, const int64_t autoPad,
                                                   const aclIntArray* pads, const aclIntArray* dilations,
                                                   const int64_t ceilMode, aclTensor* out, uint64_t* workspaceSize,
                                                   aclOpExecutor** executor) {
  const char* op = "aclnnMaxPool";
  if (aclnnStatus s = check_self(op, "self", self)) return s;
  if (aclnnStatus s = check_not_null(op, "out", out)) return s;
  if (!kernelShape) return null_arg(op, "kernelShape");
  if (autoPad != 0) return invalid(op, "autoPad must be 0 (NOTSET), the only mode CANN supports; got " + std::to_string(autoPad));
  std::vector<int64_t> k = int_array(kernelShape), st = strides ? int_array(strides) : std::vector<int64_t>(),
                       p = pads ? int_array(pads) : std::vector<int64_t>(),
                       d = dilations ? int_array(dilations) : std::vector<int64_t>();
  if (k.empty() || k.size() > 2) return invalid(op, "kernelShape needs 1 or 2 values, got " + shape_str(IntArrayRef(k)));
  if (st.size() > 2) return invalid(op, "strides needs 0, 1 or 2 values, got " + shape_str(IntArrayRef(st)));
  if (st.empty()) st = {1};
  for (int64_t v : d)
    if (v != 1) return invalid(op, "dilations must all be 1 (CANN supports only 1), got " + shape_str(IntArrayRef(d)));
  if (p.size() == 4) {
    if (p[0] != p[2] || p[1] != p[3])
      return invalid(op, "pads " + shape_str(IntArrayRef(p)) +
                             " are not symmetric; the emulator pools with equal top/bottom and left/right padding");
    p.resize(2);
  } else if (p.size() == 3 || p.size() > 4) {
    return invalid(op, "pads needs 0, 1, 2 or 4 values, got " + shape_str(IntArrayRef(p)));
  }
  if (p.empty()) p = {0};
  std::vector<int64_t> one{1};
  IntArrayRef x = shape_of(self);
  if (x.size() != 3 && x.size() != 4) return invalid(op, "self must be 3-D or 4-D, got shape " + shape_str(x));
  cpu::Pool2d g;
  std::string err = cpu::pool2d(x[x.size() - 2], x.back(), k, st, p, one, ceilMode != 0, &g);
  if (!err.empty()) return invalid(op, err);
  Planes pl;
  if (aclnnStatus s = planes_of(op, self, g.oh, g.ow, &pl)) return s;
  if (aclnnStatus s = check_out(op, "out", out, pl.out_shape, self)) return s;
  uint64_t wsb = 0;
  StagedInput sx = stage_if_strided(self, &wsb);
  TensorRef ro = ref(out);
  const int64_t n = pl.count;
  // The argmax the pooling loop records is host scratch, not workspace: CANN's MaxPool asks for
  // none for a contiguous input, and clients size their buffers on that (ggml's max pool pads
  // into a buffer smaller than the padded input; a workspace after it would overlap its tail).
  return make_executor(op, wsb, [=](KernelContext& c) {
    cpu::Strided o = as_planes(c.view(ro), n);
    std::vector<int64_t> argmax = cpu::scratch_vector<int64_t>(o.numel(), op);
    cpu::Strided idx(argmax.data(), DType::Int64, o.sizes, contiguous_strides(o.sizes));
    cpu::max_pool2d(o, idx, as_planes(sx.view(c), n), g);
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnMaxPool)

}  // namespace npu
}  // namespace ember
