// aclnn Convolution / ConvolutionBackward (CANN's argument lists): 1-D and 2-D convolutions (3-D
// and 4-D input) with groups, stride, padding and dilation, plain or transposed, by im2col and GEMMs
// (a 1-D convolution runs as a 2-D one over rows of height 1)
// (device/cpu/conv.cpp). A transposed convolution is the adjoint of the plain one with the same
// weight: its output is the plain convolution's input gradient, and its gradients are the plain
// convolution's forward (for the input) and weight gradient with the roles of the two
// activations swapped.
#include "ember/device/cpu/elementwise.h"
#include "ember/device/cpu/nn.h"
#include "ember/device/cpu/reduce.h"
#include "ember/device/npu/aclnn_common.h"
#include "ember/device/npu/descriptors.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {
// A Convolution's geometry. The plain convolution it is made of maps `big` [N, Cb, hb, wb] to
// `small` [N, Cs, oh, ow] with weight [Cs, Cb / groups, kh, kw] over `win`: for a plain
// convolution big is the input; for a transposed one big is the output, whose size comes from
// outputPadding.
struct ConvPlan {
  int64_t N, C, O;  // input and output channels
  bool transposed;
  cpu::Window2d win;  // over the big side
  std::vector<int64_t> out_shape;
  // A transposed convolution with outputPadding: the windows work unpadded on a full
  // [N, O, win.h, win.w] buffer (every row and column they reach), of which the output is rows
  // [ph, ph + oh) and columns [pw, pw + ow), zeros past the buffer's end.
  bool padded = false;
  int64_t ph = 0, pw = 0;
};
// The part of the full buffer `full` and of the output `out` that coincide: rows [ph, ...) of
// full are rows [0, ...) of out (views with their own strides).
std::pair<cpu::Strided, cpu::Strided> overlap(const cpu::Strided& full, const cpu::Strided& out, const ConvPlan& p) {
  const int64_t rows = std::max<int64_t>(0, std::min(out.sizes[2], full.sizes[2] - p.ph));
  const int64_t cols = std::max<int64_t>(0, std::min(out.sizes[3], full.sizes[3] - p.pw));
  DimVector sz{out.sizes[0], out.sizes[1], rows, cols};
  char* f = static_cast<char*>(full.data);
  if (rows > 0 && cols > 0)  // (an empty overlap points nowhere past the buffer)
    f += (p.ph * full.strides[2] + p.pw * full.strides[3]) * static_cast<int64_t>(element_size(full.dtype));
  return {cpu::Strided(f, full.dtype, sz, full.strides), cpu::Strided(out.data, out.dtype, sz, out.strides)};
}
std::vector<int64_t> two(const aclIntArray* a) {
  std::vector<int64_t> v = int_array(a);
  if (v.size() == 1) v.push_back(v[0]);
  return v;
}
// A transposed convolution's plan: output channels and size, the windows of the plain
// convolution it is the gradient of (over the full extent when outputPadding adds positions).
aclnnStatus plan_transposed(const char* op, IntArrayRef x, IntArrayRef w, const std::vector<int64_t>& k,
                            const std::vector<int64_t>& s, const std::vector<int64_t>& p,
                            const std::vector<int64_t>& d, const std::vector<int64_t>& op_, int64_t groups,
                            ConvPlan* plan) {
  // (so the products below stay far from overflow)
  if (__builtin_mul_overflow(w[1], groups, &plan->O)) return invalid(op, "the output channels overflow");
  if (s.size() != 2 || p.size() != 2 || d.size() != 2 || op_.size() != 2)
    return invalid(op, "stride, padding, dilation and outputPadding need 1 or 2 values each");
  const int64_t lim = int64_t(1) << 31;
  int64_t hw[2];
  for (int i = 0; i < 2; ++i) {
    if (s[i] <= 0 || d[i] <= 0 || p[i] < 0 || op_[i] < 0 || s[i] > lim || d[i] > lim || p[i] > lim || x[2 + i] > lim ||
        k[i] > lim)
      return invalid(op, "stride and dilation must be positive, padding and outputPadding non-negative, each below 2^31");
    if (op_[i] >= s[i] && op_[i] >= d[i])
      return invalid(op, "outputPadding must be smaller than stride or dilation, got " + shape_str(op_));
    hw[i] = (x[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op_[i] + 1;
    if (hw[i] <= 0) return invalid(op, "the transposed convolution's output would be empty");
  }
  plan->padded = op_[0] > 0 || op_[1] > 0;
  std::vector<int64_t> full{(x[2] - 1) * s[0] + d[0] * (k[0] - 1) + 1, (x[3] - 1) * s[1] + d[1] * (k[1] - 1) + 1};
  std::string err = plan->padded ? cpu::window2d(full[0], full[1], k, d, {0, 0}, s, &plan->win)
                                 : cpu::window2d(hw[0], hw[1], k, d, p, s, &plan->win);
  if (!err.empty()) return invalid(op, err);
  if (plan->win.oh != x[2] || plan->win.ow != x[3]) return invalid(op, "the output size does not map back to the input");
  plan->ph = p[0];
  plan->pw = p[1];
  plan->out_shape = {x[0], plan->O, hw[0], hw[1]};
  return ACLNN_SUCCESS;
}
// The arguments as a 2-D convolution's: a 1-D one (3-D input and weight, one value per array)
// becomes a 2-D one over rows of height 1 (dim 2 inserted, stride and dilation 1, padding 0).
struct ConvDims {
  bool one_d = false;
  std::vector<int64_t> x, w, s, p, d, op;  // shapes 4-D, arrays 2 values
};
aclnnStatus as_2d(const char* op, const aclTensor* input, const aclTensor* weight, const aclIntArray* stride,
                  const aclIntArray* padding, const aclIntArray* dilation, const aclIntArray* outputPadding,
                  ConvDims* c) {
  if (!stride || !padding || !dilation) return invalid(op, "stride, padding and dilation must not be null");
  IntArrayRef x = shape_of(input), w = shape_of(weight);
  c->x.assign(x.begin(), x.end());
  c->w.assign(w.begin(), w.end());
  if (x.size() == 3) {
    c->one_d = true;
    if (w.size() != 3) return invalid(op, "a 1-D convolution (3-D input) needs a 3-D weight, got shape " + shape_str(w));
    c->x.insert(c->x.begin() + 2, 1);
    c->w.insert(c->w.begin() + 2, 1);
    auto one = [&](const aclIntArray* a, int64_t h, const char* name, std::vector<int64_t>* out) {
      std::vector<int64_t> v = int_array(a);
      if (v.size() != 1) return invalid(op, std::string(name) + " of a 1-D convolution needs 1 value, got " + shape_str(v));
      *out = {h, v[0]};
      return ACLNN_SUCCESS;
    };
    if (aclnnStatus e = one(stride, 1, "stride", &c->s)) return e;
    if (aclnnStatus e = one(padding, 0, "padding", &c->p)) return e;
    if (aclnnStatus e = one(dilation, 1, "dilation", &c->d)) return e;
    c->op = {0, 0};
    if (outputPadding)
      if (aclnnStatus e = one(outputPadding, 0, "outputPadding", &c->op)) return e;
    return ACLNN_SUCCESS;
  }
  if (x.size() != 4)
    return invalid(op, "the emulator runs 1-D and 2-D convolutions: input must be 3-D or 4-D, got shape " + shape_str(x));
  c->s = two(stride);
  c->p = two(padding);
  c->d = two(dilation);
  c->op = outputPadding ? two(outputPadding) : std::vector<int64_t>{0, 0};
  return ACLNN_SUCCESS;
}
// A view of a 1-D convolution's operand as the 2-D one's (dim 2 of size 1 inserted).
cpu::Strided lifted(cpu::Strided v, bool one_d) {
  if (!one_d || v.sizes.size() != 3) return v;
  v.sizes.insert(2, 1);
  v.strides.insert(2, 0);
  return v;
}
// A 2-D shape as the 1-D convolution's (dim 2 dropped).
std::vector<int64_t> lowered(std::vector<int64_t> s, bool one_d) {
  if (one_d && s.size() == 4) s.erase(s.begin() + 2);
  return s;
}
aclnnStatus plan_conv(const char* op, const ConvDims& c, bool transposed, int64_t groups, int8_t cubeMathType,
                      ConvPlan* plan) {
  if (cubeMathType < 0 || cubeMathType > 3)
    return invalid(op, "cubeMathType must be 0..3 (KEEP_DTYPE .. USE_HF32), got " + std::to_string(cubeMathType));
  IntArrayRef x(c.x), w(c.w);
  if (w.size() != 4)
    return invalid(op, std::string("weight must be 4-D ") +
                           (transposed ? "[Cin, Cout / groups, kh, kw]" : "[Cout, Cin / groups, kh, kw]") +
                           ", got shape " + shape_str(w));
  if (groups < 1) return invalid(op, "groups must be positive, got " + std::to_string(groups));
  const bool agree = transposed ? x[1] == w[0] && w[0] % groups == 0
                                : x[1] % groups == 0 && w[0] % groups == 0 && w[1] == x[1] / groups;
  if (!agree)
    return invalid(op, "input of shape " + shape_str(x) + " and weight of shape " + shape_str(w) +
                           " do not agree for groups = " + std::to_string(groups) + (transposed ? " (transposed)" : ""));
  std::vector<int64_t> k{w[2], w[3]};
  plan->N = x[0];
  plan->C = x[1];
  plan->transposed = transposed;
  if (!transposed) {
    plan->O = w[0];
    std::string err = cpu::window2d(x[2], x[3], k, c.d, c.p, c.s, &plan->win);
    if (!err.empty()) return invalid(op, err);
    plan->out_shape = {x[0], w[0], plan->win.oh, plan->win.ow};
    return ACLNN_SUCCESS;
  }
  return plan_transposed(op, x, w, k, c.s, c.p, c.d, c.op, groups, plan);
}
// input floating, weight and `other` (the output or its gradient) of its dtype; *dt: that dtype.
aclnnStatus check_conv_dtypes(const char* op, const aclTensor* input, const aclTensor* weight, const aclTensor* other,
                              const char* other_name, DType* dt) {
  if (aclnnStatus s = check_dtype(op, "input", input, kFloats)) return s;
  *dt = dtype_of(input);
  if (dtype_of(weight) != *dt || dtype_of(other) != *dt)
    return invalid(op, std::string("weight and ") + other_name + " must have input's dtype");
  return ACLNN_SUCCESS;
}
// Adds `elems` elements of dt to the workspace plan; false when the size overflows.
bool add_workspace(int64_t elems, DType dt, uint64_t* ws_bytes, uint64_t* offset) {
  uint64_t bytes;
  if (elems < 0 || __builtin_mul_overflow(static_cast<uint64_t>(elems), element_size(dt), &bytes) ||
      bytes > (uint64_t(1) << 62))
    return false;
  *offset = *ws_bytes;
  *ws_bytes += (bytes + 63) / 64 * 64;
  return true;
}
int64_t checked_elems(std::initializer_list<int64_t> fs) {
  int64_t r = 1;
  for (int64_t f : fs)
    if (__builtin_mul_overflow(r, f, &r)) return -1;
  return r;
}
// The big side's channels and the small side's of the plain convolution.
int64_t big_channels(const ConvPlan& p) { return p.transposed ? p.O : p.C; }
int64_t small_channels(const ConvPlan& p) { return p.transposed ? p.C : p.O; }
// The scratch of conv2d_im2col_backward for the plain convolution (the larger of its two uses).
// The kernel's scratch (elems elements of dt) and, when outputPadding adds positions, the full
// extent's buffer `reach`; false when a size overflows.
bool add_scratch(const ConvPlan& p, int64_t elems, DType dt, uint64_t* wsb, uint64_t* scratch, uint64_t* reach) {
  return add_workspace(elems, dt, wsb, scratch) &&
         (!p.padded || add_workspace(checked_elems({p.N, p.O, p.win.h, p.win.w}), dt, wsb, reach));
}
int64_t backward_elems(const ConvPlan& p) {
  int64_t cols = checked_elems({p.N, big_channels(p), p.win.kh, p.win.kw, p.win.oh, p.win.ow, 2});
  int64_t gy = checked_elems({p.N, small_channels(p), p.win.oh, p.win.ow});
  int64_t r;
  if (cols < 0 || gy < 0 || __builtin_add_overflow(cols, gy, &r)) return -1;
  return r;
}
// gb [O] = the sum of g [N, O, h, w] over N, h and w.
void bias_grad(const cpu::Strided& gb, const cpu::Strided& g) {
  const int64_t O = g.sizes[1];
  DimVector os{1, O, 1, 1};
  cpu::sum(cpu::Strided(gb.data, gb.dtype, os, DimVector{0, 1, 0, 0}), g);
}
// A transposed convolution: the plain convolution's input gradient for "output gradient" x,
// over the reached positions (the full extent in `reach` when outputPadding adds some), plus the
// bias.
void transposed_conv(const ConvPlan& p, const cpu::Strided& ov, const cpu::Strided& xv, const cpu::Strided& wv,
                     const cpu::Strided& bv, int64_t groups, void* scratch, void* reach) {
  cpu::Strided rv = ov;
  if (p.padded) {
    DimVector fs{p.N, p.O, p.win.h, p.win.w};
    rv = cpu::Strided(reach, ov.dtype, fs, contiguous_strides(fs));
  }
  cpu::conv2d_im2col_backward(rv, cpu::Strided(), cpu::Strided(), xv, rv, wv, groups, p.win, scratch);
  if (p.padded) {
    cpu::fill(ov, 0.0);
    auto [from, to] = overlap(rv, ov, p);
    cpu::copy(to, from);
  }
  if (bv.data) {
    DimVector os{p.N, p.O, ov.sizes[2] * ov.sizes[3]};
    cpu::Strided o3(ov.data, ov.dtype, os, contiguous_strides(os));
    cpu::add(o3, o3, cpu::Strided(bv.data, bv.dtype, os, DimVector{0, 1, 0}), 1.0, cpu::compute_dtype(ov.dtype));
  }
}
}  // namespace

extern "C" aclnnStatus aclnnConvolutionGetWorkspaceSize(const aclTensor* input, const aclTensor* weight,
                                                       const aclTensor* bias, const aclIntArray* stride,
                                                       const aclIntArray* padding, const aclIntArray* dilation,
                                                       bool transposed, const aclIntArray* outputPadding,
                                                       int64_t groups, aclTensor* output, int8_t cubeMathType,
                                                       uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnConvolution";
  if (aclnnStatus s = check_not_null(op, {{"input", input}, {"weight", weight}, {"output", output}})) return s;
  if (aclnnStatus s = check_all(op, {{"input", input}, {"weight", weight}, {"output", output}})) return s;
  if (bias)
    if (aclnnStatus s = check_tensor(op, "bias", bias)) return s;
  DType dt;
  if (aclnnStatus s = check_conv_dtypes(op, input, weight, output, "output", &dt)) return s;
  if (bias)
    if (aclnnStatus s = check_dtype(op, "bias", bias, kFloats)) return s;
  ConvDims cd;
  if (aclnnStatus s = as_2d(op, input, weight, stride, padding, dilation, outputPadding, &cd)) return s;
  ConvPlan p;
  if (aclnnStatus s = plan_conv(op, cd, transposed, groups, cubeMathType, &p)) return s;
  if (bias)
    if (aclnnStatus s = check_shape(op, "bias", bias, IntArrayRef(std::vector<int64_t>{p.O}))) return s;
  if (aclnnStatus s = check_shape(op, "output", output, IntArrayRef(lowered(p.out_shape, cd.one_d)))) return s;
  const bool one_d = cd.one_d;
  uint64_t wsb = 0, scratch = 0;
  StagedInput sx = stage_if_strided(input, &wsb), sw = stage_if_strided(weight, &wsb);
  StagedInput sb = bias ? stage_if_strided(bias, &wsb) : StagedInput();
  int64_t elems = transposed ? backward_elems(p) : checked_elems({p.N, p.C, p.win.kh, p.win.kw, p.win.oh, p.win.ow});
  uint64_t reach = 0;
  if (!add_scratch(p, elems, dt, &wsb, &scratch, &reach))
    return invalid(op, "the windows of input " + shape_str(shape_of(input)) + " overflow the workspace");
  // A strided output (a view, as ggml's SSM_CONV passes) is computed contiguous in the workspace
  // and copied out.
  const bool stage_out = !is_contiguous(output);
  uint64_t out_at = 0;
  if (stage_out)
    if (aclnnStatus s = reserve(op, numel_of(shape_of(output)), static_cast<int64_t>(element_size(dt)), &wsb, &out_at))
      return s;
  if (aclnnStatus s = check_overlap(op, "output", output, {{"input", input}, {"weight", weight}}, false)) return s;
  TensorRef ro = ref(output);
  const bool has_bias = bias != nullptr;
  return make_executor(op, wsb, [=](KernelContext& k) {
    char* base = static_cast<char*>(k.workspace());
    const cpu::Strided real = k.view(ro);
    const cpu::Strided o = stage_out ? real.contiguous_at(base + out_at, real.dtype) : real;
    cpu::Strided xv = lifted(sx.view(k), one_d), wv = lifted(sw.view(k), one_d), ov = lifted(o, one_d);
    cpu::Strided bv = has_bias ? sb.view(k) : cpu::Strided();
    if (!transposed) {
      cpu::conv2d_im2col(ov, xv, wv, bv, groups, p.win, base + scratch);
    } else {
      transposed_conv(p, ov, xv, wv, bv, groups, base + scratch, base + reach);
    }
    if (stage_out) cpu::copy(real, o);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnConvolution)

namespace {
// ConvolutionBackward's wanted gradients: contiguous, gradInput and gradWeight of input's dtype
// and shape, gradBias [O] (biasSizes, when given, says so) and floating.
aclnnStatus check_conv_grads(const char* op, const ConvPlan& p, DType dt, const aclTensor* input,
                             const aclTensor* weight, const aclIntArray* biasSizes, std::array<bool, 3> want,
                             const aclTensor* gradInput, const aclTensor* gradWeight, const aclTensor* gradBias) {
  auto check_out = [&](const char* name, const aclTensor* t, IntArrayRef shape, bool same_dtype) -> aclnnStatus {
    if (aclnnStatus s = check_tensor(op, name, t)) return s;
    if (same_dtype ? dtype_of(t) != dt : !is_floating_point(dtype_of(t)))
      return invalid(op, std::string(name) + (same_dtype ? " must have input's dtype" : " must be floating"));
    if (aclnnStatus s = check_shape(op, name, t, shape)) return s;
    return check_contiguous(op, name, t);
  };
  if (want[0])
    if (aclnnStatus s = check_out("gradInput", gradInput, shape_of(input), true)) return s;
  if (want[1])
    if (aclnnStatus s = check_out("gradWeight", gradWeight, shape_of(weight), true)) return s;
  if (!want[2]) return ACLNN_SUCCESS;
  std::vector<int64_t> b{p.O};
  if (biasSizes && int_array(biasSizes) != b)
    return invalid(op, "biasSizes " + shape_str(int_array(biasSizes)) + " is not [" + std::to_string(p.O) + "]");
  return check_out("gradBias", gradBias, IntArrayRef(b), false);
}

// A transposed convolution's gradients (gx, gw, gb may be undefined): input's is the plain
// convolution of gradOutput; weight's the plain convolution's weight gradient with x as its
// output gradient and gradOutput as its input (placed in the full buffer `reach` with
// outputPadding); the bias's sums every position.
void transposed_conv_backward(const ConvPlan& p, const cpu::Strided& gv, const cpu::Strided& xv,
                              const cpu::Strided& wv, const cpu::Strided& gx, const cpu::Strided& gw,
                              const cpu::Strided& gb, int groups, void* scratch, void* reach) {
  cpu::Strided rv = gv;
  if (p.padded) {
    DimVector fs{p.N, p.O, p.win.h, p.win.w};
    rv = cpu::Strided(reach, gv.dtype, fs, contiguous_strides(fs));
    cpu::fill(rv, 0.0);
    auto [into, from] = overlap(rv, gv, p);
    cpu::copy(into, from);
  }
  if (gx.data) cpu::conv2d_im2col(gx, rv, wv, cpu::Strided(), groups, p.win, scratch);
  if (gw.data) cpu::conv2d_im2col_backward(cpu::Strided(), gw, cpu::Strided(), xv, rv, wv, groups, p.win, scratch);
  if (gb.data) bias_grad(gb, gv);
}
}  // namespace

extern "C" aclnnStatus aclnnConvolutionBackwardGetWorkspaceSize(
    const aclTensor* gradOutput, const aclTensor* input, const aclTensor* weight, const aclIntArray* biasSizes,
    const aclIntArray* stride, const aclIntArray* padding, const aclIntArray* dilation, bool transposed,
    const aclIntArray* outputPadding, int groups, const aclBoolArray* outputMask, int8_t cubeMathType,
    aclTensor* gradInput, aclTensor* gradWeight, aclTensor* gradBias, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnConvolutionBackward";
  if (aclnnStatus s = check_not_null(op, {{"gradOutput", gradOutput}, {"input", input}, {"weight", weight},
                                          {"outputMask", outputMask}}))
    return s;
  std::array<bool, 3> want{};
  if (aclnnStatus s = output_mask3(op, outputMask, {{"gradInput", gradInput}, {"gradWeight", gradWeight},
                                                    {"gradBias", gradBias}}, &want))
    return s;
  if (aclnnStatus s = check_all(op, {{"gradOutput", gradOutput}, {"input", input}, {"weight", weight}})) return s;
  DType dt;
  if (aclnnStatus s = check_conv_dtypes(op, input, weight, gradOutput, "gradOutput", &dt)) return s;
  ConvDims cd;
  if (aclnnStatus s = as_2d(op, input, weight, stride, padding, dilation, outputPadding, &cd)) return s;
  ConvPlan p;
  if (aclnnStatus s = plan_conv(op, cd, transposed, groups, cubeMathType, &p)) return s;
  if (aclnnStatus s = check_shape(op, "gradOutput", gradOutput, IntArrayRef(lowered(p.out_shape, cd.one_d)))) return s;
  const bool one_d = cd.one_d;
  if (aclnnStatus s = check_conv_grads(op, p, dt, input, weight, biasSizes, want, gradInput, gradWeight, gradBias))
    return s;
  uint64_t wsb = 0, scratch = 0, reach = 0;
  StagedInput sg = stage_if_strided(gradOutput, &wsb), sx = stage_if_strided(input, &wsb),
              sw = stage_if_strided(weight, &wsb);
  int64_t elems = backward_elems(p);
  if (elems < 0 || elems != cpu::conv2d_im2col_backward_elems(p.N, big_channels(p), small_channels(p), p.win) ||
      !add_scratch(p, elems, dt, &wsb, &scratch, &reach))
    return invalid(op, "the windows of input " + shape_str(shape_of(input)) + " overflow the workspace");
  TensorRef r[3] = {want[0] ? ref(gradInput) : TensorRef(), want[1] ? ref(gradWeight) : TensorRef(),
                    want[2] ? ref(gradBias) : TensorRef()};
  return make_executor(op, wsb, [=](KernelContext& k) {
    auto out = [&](int i) { return want[i] ? lifted(k.view(r[i]), one_d && i < 2) : cpu::Strided(); };
    char* base = static_cast<char*>(k.workspace());
    if (!transposed) {
      cpu::conv2d_im2col_backward(out(0), out(1), out(2), lifted(sg.view(k), one_d), lifted(sx.view(k), one_d),
                                  lifted(sw.view(k), one_d), groups, p.win, base + scratch);
      return;
    }
    transposed_conv_backward(p, lifted(sg.view(k), one_d), lifted(sx.view(k), one_d), lifted(sw.view(k), one_d),
                             out(0), out(1), out(2), groups, base + scratch, base + reach);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnConvolutionBackward)

}  // namespace npu
}  // namespace ember
