// 2-D pooling over [N, C, H, W] (or [C, H, W]), with libtorch's ops and node names:
//   max_pool2d_with_indices (max_pool2d is its first output), avg_pool2d, adaptive_avg_pool2d,
// each with its backward op (max_pool2d_with_indices_backward, ...). On the CPU, direct loops
// (device/cpu/pool.h); on the NPU, CANN's aclnnMaxPool2dWithIndices, aclnnAvgPool2d,
// aclnnAdaptiveAvgPool2d and their Backward ops. The backward ops are linear in the gradient and
// differentiable in turn (avg's adjoint is avg_pool2d again; max's is a gather at the indices),
// so second derivatives work. A kernel_size, stride, padding or dilation of one value means that
// value for both dims; an empty stride is the kernel.
#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/pool.h"
#include "ember/dispatch/library.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"

namespace ember::op {
EMBER_DECLARE_OP(max_pool2d_with_indices, Keep,
                 "ember::max_pool2d_with_indices(Tensor self, int[2] kernel_size, "
                 "int[2] stride=[], int[2] padding=[0], int[2] dilation=[1], bool ceil_mode=False) -> (Tensor, "
                 "Tensor)",
                 std::tuple<Tensor, Tensor>(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool));
EMBER_DECLARE_OP(max_pool2d_with_indices_backward, Keep,
                 "ember::max_pool2d_with_indices_backward(Tensor grad, "
                 "Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, "
                 "Tensor indices) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool,
                        const Tensor&));
EMBER_DECLARE_OP(avg_pool2d_backward, Keep,
                 "ember::avg_pool2d_backward(Tensor grad, Tensor self, int[2] kernel_size, "
                 "int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, bool, bool));
EMBER_DECLARE_OP(adaptive_avg_pool2d, Keep, "ember::adaptive_avg_pool2d(Tensor self, int[2] output_size) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef));
EMBER_DECLARE_OP(adaptive_avg_pool2d_backward, Keep,
                 "ember::adaptive_avg_pool2d_backward(Tensor grad, Tensor self) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(mkldnn_max_pool2d_backward, Keep,
                 "ember::mkldnn_max_pool2d_backward(Tensor grad, Tensor self, "
                 "int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool));
EMBER_DECLARE_OP(max_pool2d, Keep,
                 "ember::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
                 "int[2] padding=[0], int[2] dilation=[1], bool ceil_mode=False) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool));
EMBER_DECLARE_OP(mkldnn_max_pool2d, Keep,
                 "ember::mkldnn_max_pool2d(Tensor self, int[2] kernel_size, "
                 "int[2] stride=[], int[2] padding=[0], int[2] dilation=[1], bool ceil_mode=False) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool));
EMBER_DECLARE_OP(avg_pool2d, Keep,
                 "ember::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
                 "int[2] padding=[0], bool ceil_mode=False, bool count_include_pad=True) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, bool, bool));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

void check_input(const char* op, const Tensor& self) {
  EMBER_CHECK_DTYPE(self.is_floating_point(), op, ": expects a floating tensor, got ", self.dtype());
  EMBER_CHECK_SHAPE(self.dim() == 3 || self.dim() == 4, op, ": expects [N, C, H, W] or [C, H, W], got ", self.sizes());
}
cpu::Pool2d geometry(const char* op, const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d,
                     bool ceil_mode) {
  check_input(op, self);
  cpu::Pool2d g;
  std::string err = cpu::pool2d(self.size(-2), self.size(-1), k, s, p, d, ceil_mode, &g);
  EMBER_CHECK_VALUE(err.empty(), op, ": ", err, " (input ", self.size(-2), "x", self.size(-1), ")");
  return g;
}
// self's shape with the last two dims replaced.
Shape pooled(const Tensor& self, int64_t oh, int64_t ow) {
  Shape s(self.sizes().begin(), self.sizes().end() - 2);
  s.push_back(oh);
  s.push_back(ow);
  return s;
}
int64_t planes_of(const Tensor& t) { return t.dim() == 4 ? t.size(0) * t.size(1) : t.size(0); }
// A contiguous tensor as [planes, h, w].
cpu::Strided planes(const Tensor& t, int64_t n) {
  cpu::Strided v = strided(t);
  DimVector s{n, t.size(-2), t.size(-1)};
  return cpu::Strided(v.data, v.dtype, s, contiguous_strides(s));
}
// A backward op's grad: floating, on self's device, of the pooled shape.
void check_grad(const char* op, const Tensor& grad, const Tensor& self, IntArrayRef shape) {
  common_device(op, {&grad, &self});
  EMBER_CHECK_DTYPE(grad.is_floating_point(), op, ": grad must be floating, got ", grad.dtype());
  EMBER_CHECK_SHAPE(grad.sizes() == shape, op, ": grad of shape ", grad.sizes(), " does not match the pooled shape ",
                    shape);
}

// ---------------------------------------------------------------- max
std::tuple<Tensor, Tensor> max_pool_kernel(const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p,
                                           IntArrayRef d, bool ceil_mode) {
  cpu::Pool2d g = geometry(op::max_pool2d::op_name(), self, k, s, p, d, ceil_mode);
  Shape shape = pooled(self, g.oh, g.ow);
  Tensor out = empty_on(shape, self.dtype(), self.device()), idx = empty_on(shape, kInt64, self.device());
  if (self.is_npu()) {
    Shape dd = d.empty() ? Shape{1} : Shape(d.begin(), d.end());
    EXEC_NPU_CMD(npu::aclnnMaxPool2dWithIndices, self, k, s, p, IntArrayRef(dd), ceil_mode, out, idx);
  } else {
    const int64_t n = planes_of(self);
    cpu::max_pool2d(planes(out, n), planes(idx, n), planes(self.contiguous(), n), g);
  }
  return {out, idx};
}
void check_indices(const char* op, const Tensor& indices, const Tensor& self, IntArrayRef shape) {
  common_device(op, {&indices, &self});
  EMBER_CHECK_DTYPE(indices.dtype() == kInt64, op, ": indices must be int64, got ", indices.dtype());
  EMBER_CHECK_SHAPE(indices.sizes() == shape, op, ": indices of shape ", indices.sizes(),
                    " do not match the pooled shape ", shape);
}
Tensor max_pool_backward_kernel(const Tensor& grad, const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p,
                                IntArrayRef d, bool ceil_mode, const Tensor& indices) {
  const char* op = ::ember::op::max_pool2d_with_indices_backward::op_name();
  cpu::Pool2d g = geometry(op, self, k, s, p, d, ceil_mode);
  Shape shape = pooled(self, g.oh, g.ow);
  check_grad(op, grad, self, shape);
  check_indices(op, indices, self, shape);
  Tensor gx = empty_on(self.sizes(), self.dtype(), self.device());
  if (self.is_npu()) {
    Shape dd = d.empty() ? Shape{1} : Shape(d.begin(), d.end());
    EXEC_NPU_CMD(npu::aclnnMaxPool2dWithIndicesBackward, grad, self, indices, k, s, p, IntArrayRef(dd), ceil_mode, gx);
  } else {
    const int64_t n = planes_of(self);
    cpu::max_pool2d_backward(planes(gx, n), planes(grad.contiguous(), n), planes(indices.contiguous(), n), g);
  }
  return gx;
}

// ---------------------------------------------------------------- average
Tensor avg_pool_kernel(const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool ceil_mode,
                       bool count_include_pad) {
  cpu::Pool2d g = geometry(op::avg_pool2d::op_name(), self, k, s, p, {1}, ceil_mode);
  Tensor out = empty_on(pooled(self, g.oh, g.ow), self.dtype(), self.device());
  if (self.is_npu()) {
    EXEC_NPU_CMD(npu::aclnnAvgPool2d, self, k, s, p, ceil_mode, count_include_pad, int64_t(0), int8_t(0), out);
  } else {
    const int64_t n = planes_of(self);
    cpu::avg_pool2d(planes(out, n), planes(self.contiguous(), n), g, count_include_pad, 0);
  }
  return out;
}
Tensor avg_pool_backward_kernel(const Tensor& grad, const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p,
                                bool ceil_mode, bool count_include_pad) {
  const char* op = ::ember::op::avg_pool2d_backward::op_name();
  cpu::Pool2d g = geometry(op, self, k, s, p, {1}, ceil_mode);
  check_grad(op, grad, self, pooled(self, g.oh, g.ow));
  Tensor gx = empty_on(self.sizes(), self.dtype(), self.device());
  if (self.is_npu()) {
    EXEC_NPU_CMD(npu::aclnnAvgPool2dBackward, grad, self, k, s, p, ceil_mode, count_include_pad, int64_t(0), int8_t(0),
                 gx);
  } else {
    const int64_t n = planes_of(self);
    cpu::avg_pool2d_backward(planes(gx, n), planes(grad.contiguous(), n), g, count_include_pad, 0);
  }
  return gx;
}

// ---------------------------------------------------------------- adaptive average
void check_adaptive(const char* op, const Tensor& self, int64_t oh, int64_t ow) {
  check_input(op, self);
  const int64_t lim = int64_t(1) << 31, H = self.size(-2), W = self.size(-1);
  EMBER_CHECK_VALUE(oh > 0 && ow > 0 && oh <= lim && ow <= lim, op, ": output_size must be positive (up to 2^31), got ",
                    oh, "x", ow);
  EMBER_CHECK_VALUE(H > 0 && W > 0 && H <= lim && W <= lim, op, ": cannot pool a ", H, "x", W, " plane to ", oh, "x",
                    ow, " (empty, or a side above 2^31)");
}
Tensor adaptive_kernel(const Tensor& self, IntArrayRef output_size) {
  const char* op = ::ember::op::adaptive_avg_pool2d::op_name();
  EMBER_CHECK_VALUE(output_size.size() == 1 || output_size.size() == 2, op, ": output_size needs 1 or 2 values, got ",
                    output_size);
  const int64_t oh = output_size[0], ow = output_size.size() == 1 ? output_size[0] : output_size[1];
  check_adaptive(op, self, oh, ow);
  Tensor out = empty_on(pooled(self, oh, ow), self.dtype(), self.device());
  if (self.is_npu()) {
    Shape o{oh, ow};
    EXEC_NPU_CMD(npu::aclnnAdaptiveAvgPool2d, self, IntArrayRef(o), out);
  } else {
    const int64_t n = planes_of(self);
    cpu::adaptive_avg_pool2d(planes(out, n), planes(self.contiguous(), n));
  }
  return out;
}
Tensor adaptive_backward_kernel(const Tensor& grad, const Tensor& self) {
  const char* op = ::ember::op::adaptive_avg_pool2d_backward::op_name();
  check_input(op, self);
  EMBER_CHECK_SHAPE(grad.dim() == self.dim(), op, ": grad of shape ", grad.sizes(), " does not pool self of shape ",
                    self.sizes());
  check_adaptive(op, self, grad.size(-2), grad.size(-1));
  check_grad(op, grad, self, pooled(self, grad.size(-2), grad.size(-1)));
  Tensor gx = empty_on(self.sizes(), self.dtype(), self.device());
  if (self.is_npu()) {
    EXEC_NPU_CMD(npu::aclnnAdaptiveAvgPool2dBackward, grad, self, gx);
  } else {
    const int64_t n = planes_of(self);
    cpu::adaptive_avg_pool2d_backward(planes(gx, n), planes(grad.contiguous(), n));
  }
  return gx;
}

// ---------------------------------------------------------------- max on oneDNN
// mkldnn_max_pool2d and its backward: oneDNN's max pooling where it applies, else (and on the
// NPU) the kernel of max_pool2d_with_indices, whose indices the backward recomputes. oneDNN's
// argmax is a workspace the backward rebuilds with a forward pass, as PyTorch's mkldnn path does.
//
// oneDNN applies to a contiguous CPU float32 / bfloat16 input it has jitted kernels for, without
// NaNs: oneDNN's max skips them, max_pool2d returns them. Both pick the first of equal taps.
bool onednn_pools(const Tensor& x, const cpu::Pool2d& g, cpu::MaxPool2dProblem* prob) {
  if (!x.device().is_cpu() || (x.dtype() != kFloat32 && x.dtype() != kBFloat16)) return false;
  *prob = cpu::MaxPool2dProblem{x.dim() == 4 ? x.size(0) : 1, x.size(-3), g, x.dtype()};
  return cpu::onednn_max_pool2d_workspace(*prob) >= 0;
}
bool onednn_applies(const Tensor& x, const cpu::Pool2d& g, cpu::MaxPool2dProblem* prob) {
  return onednn_pools(x, g, prob) && !cpu::has_nan(x.raw_data_ptr(), x.numel(), x.dtype());
}
Tensor mkldnn_max_pool2d_kernel(const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d,
                                bool ceil_mode) {
  cpu::Pool2d g = geometry(op::mkldnn_max_pool2d::op_name(), self, k, s, p, d, ceil_mode);
  Tensor x = self.is_npu() ? self : self.contiguous();
  cpu::MaxPool2dProblem prob;
  if (!onednn_applies(x, g, &prob)) return std::get<0>(max_pool_kernel(self, k, s, p, d, ceil_mode));
  Tensor out = empty(pooled(self, g.oh, g.ow), self.dtype());
  cpu::onednn_max_pool2d(prob, out.raw_data_ptr(), nullptr, x.raw_data_ptr());
  return out;
}
Tensor mkldnn_max_pool2d_backward_kernel(const Tensor& grad, const Tensor& self, IntArrayRef k, IntArrayRef s,
                                         IntArrayRef p, IntArrayRef d, bool ceil_mode) {
  const char* op = ::ember::op::mkldnn_max_pool2d_backward::op_name();
  cpu::Pool2d g = geometry(op, self, k, s, p, d, ceil_mode);
  Shape shape = pooled(self, g.oh, g.ow);
  check_grad(op, grad, self, shape);
  Tensor x = self.is_npu() ? self : self.contiguous();
  cpu::MaxPool2dProblem prob;
  if (!onednn_applies(x, g, &prob)) {
    Tensor idx = std::get<1>(max_pool_kernel(self, k, s, p, d, ceil_mode));
    return max_pool_backward_kernel(grad, self, k, s, p, d, ceil_mode, idx);
  }
  Tensor ws = empty({cpu::onednn_max_pool2d_workspace(prob)}, kUInt8), y = empty(shape, self.dtype());
  cpu::onednn_max_pool2d(prob, y.raw_data_ptr(), ws.raw_data_ptr(), x.raw_data_ptr());
  Tensor gy = grad.to(self.dtype()).contiguous(), gx = empty(self.sizes(), self.dtype());
  cpu::onednn_max_pool2d_backward(prob, gx.raw_data_ptr(), gy.raw_data_ptr(), ws.raw_data_ptr());
  return gx;
}
// max_pool2d: mkldnn_max_pool2d where oneDNN has a kernel for the problem (its forward checks
// for NaNs), else max_pool2d_with_indices, whose node keeps the indices.
Tensor max_pool2d_entry(const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil_mode) {
  cpu::MaxPool2dProblem pr;
  if (self.device().is_cpu() && onednn_pools(self, geometry(op::max_pool2d::op_name(), self, k, s, p, d, ceil_mode), &pr))
    return mkldnn_max_pool2d(self, k, s, p, d, ceil_mode);
  return std::get<0>(max_pool2d_with_indices(self, k, s, p, d, ceil_mode));
}
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::max_pool2d(), &max_pool2d_entry);
  m.def(op::mkldnn_max_pool2d());
  m.def(op::mkldnn_max_pool2d_backward());
  m.def(op::max_pool2d_with_indices());
  m.def(op::max_pool2d_with_indices_backward());
  m.def(op::avg_pool2d());
  m.def(op::avg_pool2d_backward());
  m.def(op::adaptive_avg_pool2d());
  m.def(op::adaptive_avg_pool2d_backward());
}
// One kernel per op serves both devices (the NPU branch calls CANN's op).
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::mkldnn_max_pool2d(), &mkldnn_max_pool2d_kernel);
  m.impl(op::mkldnn_max_pool2d_backward(), &mkldnn_max_pool2d_backward_kernel);
  m.impl(op::max_pool2d_with_indices(), &max_pool_kernel);
  m.impl(op::max_pool2d_with_indices_backward(), &max_pool_backward_kernel);
  m.impl(op::avg_pool2d(), &avg_pool_kernel);
  m.impl(op::avg_pool2d_backward(), &avg_pool_backward_kernel);
  m.impl(op::adaptive_avg_pool2d(), &adaptive_kernel);
  m.impl(op::adaptive_avg_pool2d_backward(), &adaptive_backward_kernel);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::mkldnn_max_pool2d(), &mkldnn_max_pool2d_kernel);
  m.impl(op::mkldnn_max_pool2d_backward(), &mkldnn_max_pool2d_backward_kernel);
  m.impl(op::max_pool2d_with_indices(), &max_pool_kernel);
  m.impl(op::max_pool2d_with_indices_backward(), &max_pool_backward_kernel);
  m.impl(op::avg_pool2d(), &avg_pool_kernel);
  m.impl(op::avg_pool2d_backward(), &avg_pool_backward_kernel);
  m.impl(op::adaptive_avg_pool2d(), &adaptive_kernel);
  m.impl(op::adaptive_avg_pool2d_backward(), &adaptive_backward_kernel);
}

Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return op::max_pool2d::call(self, kernel_size, stride, padding, dilation, ceil_mode);
}
Tensor mkldnn_max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                         IntArrayRef dilation, bool ceil_mode) {
  return op::mkldnn_max_pool2d::call(self, kernel_size, stride, padding, dilation, ceil_mode);
}
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return op::max_pool2d_with_indices::call(self, kernel_size, stride, padding, dilation, ceil_mode);
}
Tensor max_pool2d_with_indices_backward(const Tensor& grad, const Tensor& self, IntArrayRef kernel_size,
                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                        const Tensor& indices) {
  return op::max_pool2d_with_indices_backward::call(grad, self, kernel_size, stride, padding, dilation, ceil_mode, indices);
}
Tensor mkldnn_max_pool2d_backward(const Tensor& grad, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return op::mkldnn_max_pool2d_backward::call(grad, self, kernel_size, stride, padding, dilation, ceil_mode);
}
Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad) {
  return op::avg_pool2d::call(self, kernel_size, stride, padding, ceil_mode, count_include_pad);
}
Tensor avg_pool2d_backward(const Tensor& grad, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                           IntArrayRef padding, bool ceil_mode, bool count_include_pad) {
  return op::avg_pool2d_backward::call(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad);
}
Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  return op::adaptive_avg_pool2d::call(self, output_size);
}
Tensor adaptive_avg_pool2d_backward(const Tensor& grad, const Tensor& self) {
  return op::adaptive_avg_pool2d_backward::call(grad, self);
}

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
using MaxSig = op::max_pool2d_with_indices::Signature;
using MaxBackSig = op::max_pool2d_with_indices_backward::Signature;
using PoolSig = op::max_pool2d::Signature;
using PoolBackSig = op::mkldnn_max_pool2d_backward::Signature;
using AvgSig = op::avg_pool2d::Signature;
using AvgBackSig = op::avg_pool2d_backward::Signature;
using AdaptiveSig = op::adaptive_avg_pool2d::Signature;
using AdaptiveBackSig = op::adaptive_avg_pool2d_backward::Signature;

std::vector<Tensor> max_bw(const BackwardCtx<MaxSig>& c) {
  return {max_pool2d_with_indices_backward(c.grad(0), c.arg<0>(), c.arg<1>(), c.arg<2>(), c.arg<3>(), c.arg<4>(),
                                           c.arg<5>(), c.output())};
}
// The gradient gg [.., H, W] gathered at the indices [.., oh, ow] of each plane.
Tensor gather_planes(const Tensor& gg, const Tensor& idx) {
  const int64_t n = planes_of(gg), HW = gg.size(-2) * gg.size(-1);
  Tensor base = arange(n, TensorOptions(kInt64).device(idx.device())).mul(HW).view({n, 1});
  Tensor flat = idx.reshape({n, -1}).add(base).reshape({-1});
  return index_select(gg.reshape({-1}), 0, flat).view(idx.sizes());
}
// d/d grad of the backward: the gather at the forward's indices.
std::vector<Tensor> max_back_bw(const BackwardCtx<MaxBackSig>& c) {
  return {gather_planes(c.grad(), c.arg<7>()), Tensor(), Tensor()};
}
std::vector<Tensor> pool_bw(const BackwardCtx<PoolSig>& c) {
  return {mkldnn_max_pool2d_backward(c.grad(), c.arg<0>(), c.arg<1>(), c.arg<2>(), c.arg<3>(), c.arg<4>(), c.arg<5>())};
}
// d/d grad: the gather at the forward's indices, recomputed.
std::vector<Tensor> pool_back_bw(const BackwardCtx<PoolBackSig>& c) {
  Tensor idx = std::get<1>(
      max_pool2d_with_indices(c.arg<1>().detach(), c.arg<2>(), c.arg<3>(), c.arg<4>(), c.arg<5>(), c.arg<6>()));
  return {gather_planes(c.grad(), idx), Tensor()};
}
std::vector<Tensor> avg_bw(const BackwardCtx<AvgSig>& c) {
  return {avg_pool2d_backward(c.grad(), c.arg<0>(), c.arg<1>(), c.arg<2>(), c.arg<3>(), c.arg<4>(), c.arg<5>())};
}
// avg_pool2d_backward is the adjoint of avg_pool2d: its derivative in grad is avg_pool2d.
std::vector<Tensor> avg_back_bw(const BackwardCtx<AvgBackSig>& c) {
  return {avg_pool2d(c.grad(), c.arg<2>(), c.arg<3>(), c.arg<4>(), c.arg<5>(), c.arg<6>()), Tensor()};
}
std::vector<Tensor> adaptive_bw(const BackwardCtx<AdaptiveSig>& c) {
  return {adaptive_avg_pool2d_backward(c.grad(), c.arg<0>())};
}
std::vector<Tensor> adaptive_back_bw(const BackwardCtx<AdaptiveBackSig>& c) {
  const TensorMeta& g = c.meta<0>();
  Shape o{g.sizes[g.sizes.size() - 2], g.sizes.back()};
  return {adaptive_avg_pool2d(c.grad(), o), Tensor()};
}
const auto kMax = spec_of<op::max_pool2d_with_indices>("MaxPool2DWithIndicesBackward0", &max_bw)
                      .saving(saves(0))
                      .saving_output(1);
const auto kMaxBack = spec_of<op::max_pool2d_with_indices_backward>("MaxPool2DWithIndicesBackwardBackward0", &max_back_bw)
                          .saving(saves(7));
const auto kPool = spec_of<op::mkldnn_max_pool2d>("MkldnnMaxPool2DBackward0", &pool_bw).saving(saves(0));
const auto kPoolBack =
    spec_of<op::mkldnn_max_pool2d_backward>("MkldnnMaxPool2DBackwardBackward0", &pool_back_bw).saving(saves(1));
const auto kAvg = spec_of<op::avg_pool2d>("AvgPool2DBackward0", &avg_bw).saving(saves(0));
const auto kAvgBack = spec_of<op::avg_pool2d_backward>("AvgPool2DBackwardBackward0", &avg_back_bw);
const auto kAdaptive = spec_of<op::adaptive_avg_pool2d>("AdaptiveAvgPool2DBackward0", &adaptive_bw).saving(saves(0));
const auto kAdaptiveBack = spec_of<op::adaptive_avg_pool2d_backward>("AdaptiveAvgPool2DBackwardBackward0", &adaptive_back_bw);
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::max_pool2d_with_indices(), autograd_kernel<&kMax>());
  m.impl(op::max_pool2d_with_indices_backward(), autograd_kernel<&kMaxBack>());
  m.impl(op::mkldnn_max_pool2d(), autograd_kernel<&kPool>());
  m.impl(op::mkldnn_max_pool2d_backward(), autograd_kernel<&kPoolBack>());
  m.impl(op::avg_pool2d(), autograd_kernel<&kAvg>());
  m.impl(op::avg_pool2d_backward(), autograd_kernel<&kAvgBack>());
  m.impl(op::adaptive_avg_pool2d(), autograd_kernel<&kAdaptive>());
  m.impl(op::adaptive_avg_pool2d_backward(), autograd_kernel<&kAdaptiveBack>());
}

}  // namespace ember
