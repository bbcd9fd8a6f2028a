// im2col(x, kernel_size, dilation, padding, stride) [N, C kh kw, L] holds the windows of x
// [N, C, H, W] (PyTorch's unfold, CANN's Im2col); col2im (fold, CANN's Im2colBackward) is its
// adjoint, and each is the other's derivative, so everything built on them (conv2d's composite
// path, ops/conv.cpp) has first and second derivatives. A kernel_size, stride, padding or
// dilation of one value means that value for both dims.
#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/nn.h"
#include "ember/dispatch/library.h"
#include "ember/ops/internal/conv.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"

namespace ember::op {
EMBER_DECLARE_OP(im2col, Keep,
                 "ember::im2col(Tensor self, int[2] kernel_size, int[2] dilation=[1], "
                 "int[2] padding=[0], int[2] stride=[1]) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef));
EMBER_DECLARE_OP(col2im, Keep,
                 "ember::col2im(Tensor self, int[2] output_size, int[2] kernel_size, "
                 "int[2] dilation=[1], int[2] padding=[0], int[2] stride=[1]) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;
using namespace ops::conv;

Tensor im2col_out_shape(const char* op, const Tensor& x, const Geometry& g, bool batched) {
  int64_t C = x.size(batched ? 1 : 0);
  Shape shape{checked_mul(C, g.win.kh * g.win.kw, op), g.win.oh * g.win.ow};
  if (batched) shape.insert(shape.begin(), x.size(0));
  return empty_on(shape, x.dtype(), x.device());
}
Geometry im2col_check(const Tensor& x, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), op::im2col::op_name(), ": expects a floating tensor, got ", x.dtype());
  EMBER_CHECK_SHAPE(x.dim() == 3 || x.dim() == 4, op::im2col::op_name(), ": expects [N, C, H, W] or [C, H, W], got ",
                    x.sizes());
  return geometry(op::im2col::op_name(), x.size(-2), x.size(-1), k, d, p, s);
}
Tensor im2col_cpu(const Tensor& x, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s) {
  Geometry g = im2col_check(x, k, d, p, s);
  Tensor out = im2col_out_shape(op::im2col::op_name(), x, g, x.dim() == 4);
  if (out.numel() == 0) return out;
  Tensor x4 = x.dim() == 4 ? x.contiguous() : x.contiguous().unsqueeze(0);
  cpu::im2col(strided(out), strided(x4), g.win);
  return out;
}
Tensor im2col_npu(const Tensor& x, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s) {
  Geometry g = im2col_check(x, k, d, p, s);
  Tensor out = im2col_out_shape(op::im2col::op_name(), x, g, x.dim() == 4);
  if (out.numel() == 0) return out;
  IntArrayRef gk(g.k), gd(g.d), gp(g.p), gs(g.s);
  EXEC_NPU_CMD(npu::aclnnIm2col, x, gk, gd, gp, gs, out);
  return out;
}

Geometry col2im_check(const Tensor& cols, IntArrayRef size, IntArrayRef k, IntArrayRef d, IntArrayRef p,
                      IntArrayRef s, int64_t* channels) {
  EMBER_CHECK_DTYPE(cols.is_floating_point(), op::col2im::op_name(), ": expects a floating tensor, got ", cols.dtype());
  EMBER_CHECK_SHAPE(cols.dim() == 2 || cols.dim() == 3, op::col2im::op_name(),
                    ": expects [N, C kh kw, L] or [C kh kw, L], got ", cols.sizes());
  Shape hw = pair_of(op::col2im::op_name(), "output_size", size);
  Geometry g = geometry(op::col2im::op_name(), hw[0], hw[1], k, d, p, s);
  int64_t kk = g.win.kh * g.win.kw, rows = cols.size(-2);
  EMBER_CHECK_SHAPE(rows % kk == 0 && cols.size(-1) == g.win.oh * g.win.ow, op::col2im::op_name(), ": input of shape ",
                    cols.sizes(), " does not hold ", g.win.oh * g.win.ow, " windows (of output_size ", IntArrayRef(hw),
                    ") of a multiple of ", kk, " values");
  *channels = rows / kk;
  return g;
}
Tensor col2im_out(const Tensor& cols, const Geometry& g, int64_t C) {
  Shape shape{C, g.win.h, g.win.w};
  if (cols.dim() == 3) shape.insert(shape.begin(), cols.size(0));
  return empty_on(shape, cols.dtype(), cols.device());
}
Tensor col2im_cpu(const Tensor& cols, IntArrayRef size, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s) {
  int64_t C = 0;
  Geometry g = col2im_check(cols, size, k, d, p, s, &C);
  Tensor out = col2im_out(cols, g, C);
  if (out.numel() == 0) return out;
  Tensor c3 = cols.dim() == 3 ? cols.contiguous() : cols.contiguous().unsqueeze(0);
  cpu::col2im(strided(out.dim() == 4 ? out : out.unsqueeze(0)), strided(c3), g.win);
  return out;
}
Tensor col2im_npu(const Tensor& cols, IntArrayRef size, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s) {
  int64_t C = 0;
  Geometry g = col2im_check(cols, size, k, d, p, s, &C);
  Tensor out = col2im_out(cols, g, C);
  if (out.numel() == 0) return out;
  Shape hw{g.win.h, g.win.w};
  IntArrayRef ghw(hw), gk(g.k), gd(g.d), gp(g.p), gs(g.s);
  EXEC_NPU_CMD(npu::aclnnIm2colBackward, cols, ghw, gk, gd, gp, gs, out);
  return out;
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::im2col());
  m.def(op::col2im());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::im2col(), &im2col_cpu);
  m.impl(op::col2im(), &col2im_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::im2col(), &im2col_npu);
  m.impl(op::col2im(), &col2im_npu);
}

Tensor im2col(const Tensor& x, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s) {
  return op::im2col::call(x, k, d, p, s);
}
Tensor col2im(const Tensor& cols, IntArrayRef output_size, IntArrayRef k, IntArrayRef d, IntArrayRef p,
              IntArrayRef s) {
  return op::col2im::call(cols, output_size, k, d, p, s);
}

// ---------------------------------------------------------------- backward
// Each is the other's adjoint: d im2col = col2im of the gradient at the input's size, d col2im
// = im2col of the gradient.
namespace {
using namespace autograd;
using Im2colSig = op::im2col::Signature;
using Col2imSig = op::col2im::Signature;
std::vector<Tensor> im2col_bw(const BackwardCtx<Im2colSig>& c) {
  const TensorMeta& m = c.meta<0>();
  Shape hw{m.sizes[m.sizes.size() - 2], m.sizes.back()};
  return {col2im(c.grad(), hw, c.arg<1>(), c.arg<2>(), c.arg<3>(), c.arg<4>())};
}
std::vector<Tensor> col2im_bw(const BackwardCtx<Col2imSig>& c) {
  return {im2col(c.grad(), c.arg<2>(), c.arg<3>(), c.arg<4>(), c.arg<5>())};
}
const auto kIm2col = spec_of<op::im2col>("Im2ColBackward", &im2col_bw);
const auto kCol2im = spec_of<op::col2im>("Col2ImBackward", &col2im_bw);
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::im2col(), autograd_kernel<&kIm2col>());
  m.impl(op::col2im(), autograd_kernel<&kCol2im>());
}

}  // namespace ember
