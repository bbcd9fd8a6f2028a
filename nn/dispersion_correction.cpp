// DispersionCorrection as a custom op, built only with ember's public extension API, the way a
// user adds an op (examples/custom_op.cpp walks through it):
//
//   1. the declaration and schema     EMBER_DECLARE_OP(dispersion_correction, Float32, "nn::...", Sig),
//                                     EMBER_LIBRARY(nn, m) { m.def(op::dispersion_correction()); }
//   2. a CPU kernel                   plain loops over data_ptr<T>(), rows split with parallel_for
//   3. a two-phase NPU kernel         aclnnDispersionCorrectionGetWorkspaceSize / aclnnDispersionCorrection,
//                                     written with npu::make_executor and KernelContext::launch; its
//                                     workspace holds the per-row statistics (mean, 1/std)
//   4. an analytic backward           a fused dispersion_correction_backward op (CPU + NPU kernels)
//                                     and a one-line autograd::OpSpec
//   5. samples + a float64 reference  EMBER_OP_INFO, so the conformance suites check it on every
//                                     dtype and device, and gradcheck its backward
//
// Math, per row x of the last dim (size D), weight w:
//   mu = mean(x), c = x - alpha mu
//   mode 0: y = w c                      mode 1: r = 1 / sqrt(mean(c^2) + eps), y = w c r
// Backward with h = dy w:
//   mode 0: dc = h                       mode 1: dc = r h - r^3 c mean(h c)
//   dx = dc - alpha mean(dc);            dw = sum over rows of dy c (mode 0) or dy c r (mode 1)
#include <cmath>
#include <vector>

#include "ember/autograd/op_spec.h"
#include "ember/device/npu/kernel.h"
#include "ember/device/parallel.h"
#include "ember/nn/dispersion_correction.h"
#include "ember/nn/functional.h"
#include "ember/dispatch/library.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/ops/ops.h"

// The ops' declarations: name, schema, C++ signature and autocast policy (float32, as PyTorch's
// normalisations), checked against each other by the compiler.
namespace ember::nn::op {
EMBER_DECLARE_OP(
    dispersion_correction, Float32,
    "nn::dispersion_correction(Tensor x, Tensor weight, float alpha=0.8, int mode=1, float eps=1e-6) -> Tensor",
    Tensor(const Tensor&, const Tensor&, double, int64_t, double));
EMBER_DECLARE_OP(dispersion_correction_backward, Keep,
                 "nn::dispersion_correction_backward(Tensor grad, Tensor x, Tensor weight, float alpha, int mode, "
                 "float eps) -> (Tensor, Tensor)",
                 std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, double, int64_t, double));
}  // namespace ember::nn::op

namespace ember {
namespace nn {
namespace {

// ---------------------------------------------------------------- the row math (shared)
// Compute type: double for float64 data, float otherwise.
template <class T>
using Acc = std::conditional_t<std::is_same<T, double>::value, double, float>;

template <class T, class C = Acc<T>>
C ld(T v) {
  return static_cast<C>(static_cast<std::conditional_t<std::is_same<T, double>::value, double, float>>(v));
}

struct Params {
  double alpha = 0.8;
  int64_t mode = 1;
  double eps = 1e-6;
};

// Rows [r0, r1): statistics into stats[2r], stats[2r + 1] (mean, r), then y.
template <class T>
void forward_rows(const T* x, const T* w, T* y, Acc<T>* stats, int64_t r0, int64_t r1, int64_t D, const Params& p) {
  using C = Acc<T>;
  const C alpha = C(p.alpha), eps = C(p.eps), inv_d = C(1) / C(D);
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * D;
    C sum = 0;
    for (int64_t j = 0; j < D; ++j) sum += ld(xr[j]);
    C mu = sum * inv_d, ss = 0;
    for (int64_t j = 0; j < D; ++j) {
      C c = ld(xr[j]) - alpha * mu;
      ss += c * c;
    }
    C rs = p.mode == 1 ? C(1) / std::sqrt(ss * inv_d + eps) : C(1);
    stats[2 * r] = mu;
    stats[2 * r + 1] = rs;
    for (int64_t j = 0; j < D; ++j) y[r * D + j] = static_cast<T>(ld(w[j]) * (ld(xr[j]) - alpha * mu) * rs);
  }
}

// Rows [r0, r1): dx, and this block's dw partial (D values, accumulated).
template <class T>
void backward_rows(const T* dy, const T* x, const T* w, T* dx, Acc<T>* dw_part, int64_t r0, int64_t r1, int64_t D,
                   const Params& p) {
  using C = Acc<T>;
  const C alpha = C(p.alpha), eps = C(p.eps), inv_d = C(1) / C(D);
  std::vector<C> c(static_cast<size_t>(D)), dc(static_cast<size_t>(D));
  for (int64_t r = r0; r < r1; ++r) {
    const T *xr = x + r * D, *gr = dy + r * D;
    C sum = 0;
    for (int64_t j = 0; j < D; ++j) sum += ld(xr[j]);
    C mu = sum * inv_d, ss = 0;
    for (int64_t j = 0; j < D; ++j) {
      c[j] = ld(xr[j]) - alpha * mu;
      ss += c[j] * c[j];
    }
    C rs = p.mode == 1 ? C(1) / std::sqrt(ss * inv_d + eps) : C(1);
    C hc = 0;
    for (int64_t j = 0; j < D; ++j) {
      C g = ld(gr[j]);
      dw_part[j] += g * c[j] * rs;
      dc[j] = g * ld(w[j]);
      hc += dc[j] * c[j];
    }
    C k = p.mode == 1 ? rs * rs * rs * hc * inv_d : C(0);
    C dsum = 0;
    for (int64_t j = 0; j < D; ++j) {
      dc[j] = rs * dc[j] - k * c[j];
      dsum += dc[j];
    }
    C shift = alpha * dsum * inv_d;
    for (int64_t j = 0; j < D; ++j) dx[r * D + j] = static_cast<T>(dc[j] - shift);
  }
}

// Calls fn.template operator()<T>() for x's dtype.
template <class Fn>
void by_dtype(DType dt, const char* op, Fn&& fn) {
  switch (dt) {
    case DType::Float32: return fn(float());
    case DType::Float64: return fn(double());
    case DType::Float16: return fn(Half());
    case DType::BFloat16: return fn(BFloat16());
    default: EMBER_THROW(DTypeError, op, ": expects a floating tensor, got ", dt);
  }
}

// The row blocks both devices use: fixed by the row count, so results do not depend on threads.
int64_t num_blocks(int64_t rows) { return std::max<int64_t>(1, std::min<int64_t>(rows, 32)); }

void check_args(const char* op, const Tensor& x, const Tensor& w, double alpha, int64_t mode, double eps) {
  EMBER_CHECK_VALUE(alpha >= 0.0 && alpha <= 1.0, op, ": alpha must be in [0, 1], got ", alpha);
  EMBER_CHECK_VALUE(mode == 0 || mode == 1, op, ": mode must be 0 (center) or 1 (normalize), got ", mode);
  EMBER_CHECK_VALUE(eps >= 0, op, ": eps must be non-negative, got ", eps);
  ops::common_device(op, {&x, &w});
  EMBER_CHECK_DTYPE(x.is_floating_point() && w.dtype() == x.dtype(), op, ": expects floating x and weight of one dtype, got ",
                    x.dtype(), " and ", w.dtype());
  EMBER_CHECK_SHAPE(x.dim() >= 1 && w.dim() == 1 && w.size(0) == x.size(-1), op, ": weight of shape ", w.sizes(),
                    " must match the last dim of x of shape ", x.sizes());
}

// ---------------------------------------------------------------- CPU kernels
Tensor dc_cpu(const Tensor& x_in, const Tensor& w_in, double alpha, int64_t mode, double eps) {
  check_args("dispersion_correction", x_in, w_in, alpha, mode, eps);
  Tensor x = x_in.contiguous(), w = w_in.contiguous(), y = empty_like(x);
  int64_t D = x.size(-1), rows = D ? x.numel() / D : 0;
  Params p{alpha, mode, eps};
  by_dtype(x.dtype(), "dispersion_correction", [&](auto t) {
    using T = decltype(t);
    std::vector<Acc<T>> stats(static_cast<size_t>(2 * rows));
    parallel_for(rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(D, 1)), [&](int64_t r0, int64_t r1) {
      forward_rows<T>(x.data_ptr<T>(), w.data_ptr<T>(), y.data_ptr<T>(), stats.data(), r0, r1, D, p);
    });
  });
  return y;
}

std::tuple<Tensor, Tensor> dc_backward_cpu(const Tensor& dy_in, const Tensor& x_in, const Tensor& w_in, double alpha,
                                           int64_t mode, double eps) {
  ops::common_device("dispersion_correction_backward", {&dy_in, &x_in, &w_in});
  check_args("dispersion_correction_backward", x_in, w_in, alpha, mode, eps);
  EMBER_CHECK_SHAPE(dy_in.sizes() == x_in.sizes() && dy_in.dtype() == x_in.dtype(),
                    "dispersion_correction_backward: grad ", dy_in.sizes(), " ", dy_in.dtype(), " for x ", x_in.sizes(),
                    " ", x_in.dtype());
  Tensor dy = dy_in.contiguous(), x = x_in.contiguous(), w = w_in.contiguous();
  Tensor dx = empty_like(x), dw = empty_like(w);
  int64_t D = x.size(-1), rows = D ? x.numel() / D : 0, nb = num_blocks(rows);
  Params p{alpha, mode, eps};
  by_dtype(x.dtype(), "dispersion_correction_backward", [&](auto t) {
    using T = decltype(t);
    std::vector<Acc<T>> part(static_cast<size_t>(nb * D), Acc<T>(0));
    parallel_for(nb, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        backward_rows<T>(dy.data_ptr<T>(), x.data_ptr<T>(), w.data_ptr<T>(), dx.data_ptr<T>(), part.data() + b * D,
                         rows * b / nb, rows * (b + 1) / nb, D, p);
    });
    T* dwp = dw.data_ptr<T>();
    for (int64_t j = 0; j < D; ++j) {
      Acc<T> s = 0;
      for (int64_t b = 0; b < nb; ++b) s += part[static_cast<size_t>(b * D + j)];  // block order: deterministic
      dwp[j] = static_cast<T>(s);
    }
  });
  return {dx, dw};
}

}  // namespace

// ---------------------------------------------------------------- the aclnn two-phase NPU kernels
// CANN-style signatures. Phase 1 checks everything and plans; the workspace holds the per-row
// statistics (and, for the gradient, one dweight partial per core block).
npu::aclnnStatus aclnnDispersionCorrectionGetWorkspaceSize(const npu::aclTensor* x, const npu::aclTensor* gamma,
                                                           double alpha, int64_t mode, double eps, npu::aclTensor* y,
                                                           uint64_t* workspaceSize, npu::aclOpExecutor** executor) {
  using namespace npu;
  const char* op = "aclnnDispersionCorrection";
  if (aclnnStatus s = check_not_null(op, {{"x", x}, {"gamma", gamma}, {"y", y}})) return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"x", x}, {"gamma", gamma}, {"y", y}})
    if (aclnnStatus s = check_tensor(op, name, t)) return s;
  if (!is_contiguous(x) || !is_contiguous(gamma) || !is_contiguous(y)) return invalid(op, "x, gamma and y must be contiguous");
  IntArrayRef xs = shape_of(x);
  if (xs.empty() || shape_of(gamma) != xs.slice(xs.size() - 1, 1) || shape_of(y) != xs)
    return invalid(op, "expects gamma [D] and y shaped like x, with D the last dim of x");
  if (npu::dtype_of(gamma) != npu::dtype_of(x) || npu::dtype_of(y) != npu::dtype_of(x)) return invalid(op, "x, gamma and y must share a dtype");
  if (!is_floating_point(npu::dtype_of(x))) return invalid(op, "x must be floating");
  if (!(alpha >= 0 && alpha <= 1) || (mode != 0 && mode != 1) || !(eps >= 0))
    return invalid(op, "needs alpha in [0, 1], mode 0 or 1, eps >= 0");
  int64_t D = xs.back(), rows = D ? numel_of(xs) / D : 0;
  size_t acc = npu::dtype_of(x) == DType::Float64 ? sizeof(double) : sizeof(float);
  TensorRef rx = ref(x), rg = ref(gamma), ry = ref(y);
  Params p{alpha, mode, eps};
  return make_executor(op, static_cast<uint64_t>(2 * rows) * acc, [=](KernelContext& k) {
    cpu::Strided xv = k.view(rx), gv = k.view(rg), yv = k.view(ry);
    const int64_t nb = num_blocks(rows);
    // One block of rows per AI core: each computes its rows' statistics into the workspace and
    // normalises them.
    by_dtype(xv.dtype, "aclnnDispersionCorrection", [&](auto t) {
      using T = decltype(t);
      auto* stats = static_cast<Acc<T>*>(k.workspace());
      k.launch(static_cast<uint32_t>(nb), [&](uint32_t b, uint32_t n) {
        forward_rows<T>(static_cast<const T*>(xv.data), static_cast<const T*>(gv.data), static_cast<T*>(yv.data), stats,
                        rows * b / n, rows * (b + 1) / n, D, p);
      });
    });
  }, workspaceSize, executor);
}
npu::aclnnStatus aclnnDispersionCorrection(void* workspace, uint64_t workspaceSize, npu::aclOpExecutor* executor,
                                           npu::aclrtStream stream) {
  return npu::run_executor("aclnnDispersionCorrection", workspace, workspaceSize, executor, stream);
}

npu::aclnnStatus aclnnDispersionCorrectionGradGetWorkspaceSize(const npu::aclTensor* dy, const npu::aclTensor* x,
                                                               const npu::aclTensor* gamma, double alpha, int64_t mode,
                                                               double eps, npu::aclTensor* dx, npu::aclTensor* dgamma,
                                                               uint64_t* workspaceSize, npu::aclOpExecutor** executor) {
  using namespace npu;
  const char* op = "aclnnDispersionCorrectionGrad";
  if (aclnnStatus s = check_not_null(op, {{"dy", dy}, {"x", x}, {"gamma", gamma}, {"dx", dx}, {"dgamma", dgamma}})) return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"dy", dy}, {"x", x}, {"gamma", gamma}, {"dx", dx},
                         {"dgamma", dgamma}})
    if (aclnnStatus s = check_tensor(op, name, t)) return s;
  for (const aclTensor* t : {dy, x, gamma, static_cast<const aclTensor*>(dx), static_cast<const aclTensor*>(dgamma)})
    if (!is_contiguous(t) || npu::dtype_of(t) != npu::dtype_of(x)) return invalid(op, "all tensors must be contiguous with x's dtype");
  IntArrayRef xs = shape_of(x);
  if (xs.empty() || shape_of(gamma) != xs.slice(xs.size() - 1, 1) || shape_of(dy) != xs || shape_of(dx) != xs ||
      shape_of(dgamma) != shape_of(gamma))
    return invalid(op, "expects gamma and dgamma [D], dy and dx shaped like x");
  if (!is_floating_point(npu::dtype_of(x))) return invalid(op, "x must be floating");
  if (!(alpha >= 0 && alpha <= 1) || (mode != 0 && mode != 1) || !(eps >= 0))
    return invalid(op, "needs alpha in [0, 1], mode 0 or 1, eps >= 0");
  int64_t D = xs.back(), rows = D ? numel_of(xs) / D : 0, nb = num_blocks(rows);
  size_t acc = npu::dtype_of(x) == DType::Float64 ? sizeof(double) : sizeof(float);
  TensorRef rdy = ref(dy), rx = ref(x), rg = ref(gamma), rdx = ref(dx), rdg = ref(dgamma);
  Params p{alpha, mode, eps};
  return make_executor(op, static_cast<uint64_t>(nb * D) * acc, [=](KernelContext& k) {
    cpu::Strided dyv = k.view(rdy), xv = k.view(rx), gv = k.view(rg), dxv = k.view(rdx), dgv = k.view(rdg);
    by_dtype(xv.dtype, "aclnnDispersionCorrectionGrad", [&](auto t) {
      using T = decltype(t);
      auto* part = static_cast<Acc<T>*>(k.workspace());  // one dgamma partial per block
      std::fill(part, part + nb * D, Acc<T>(0));
      k.launch(static_cast<uint32_t>(nb), [&](uint32_t b, uint32_t n) {
        backward_rows<T>(static_cast<const T*>(dyv.data), static_cast<const T*>(xv.data), static_cast<const T*>(gv.data),
                         static_cast<T*>(dxv.data), part + b * D, rows * b / n, rows * (b + 1) / n, D, p);
      });
      T* dg = static_cast<T*>(dgv.data);
      for (int64_t j = 0; j < D; ++j) {
        Acc<T> s = 0;
        for (int64_t b = 0; b < nb; ++b) s += part[b * D + j];
        dg[j] = static_cast<T>(s);
      }
    });
  }, workspaceSize, executor);
}
npu::aclnnStatus aclnnDispersionCorrectionGrad(void* workspace, uint64_t workspaceSize, npu::aclOpExecutor* executor,
                                               npu::aclrtStream stream) {
  return npu::run_executor("aclnnDispersionCorrectionGrad", workspace, workspaceSize, executor, stream);
}

namespace {
// ---------------------------------------------------------------- the NPU kernels of the op
Tensor dc_npu(const Tensor& x_in, const Tensor& w_in, double alpha, int64_t mode, double eps) {
  check_args("dispersion_correction", x_in, w_in, alpha, mode, eps);
  Tensor x = x_in.contiguous(), w = w_in.contiguous(), y = empty_like(x);
  EXEC_NPU_CMD(aclnnDispersionCorrection, x, w, alpha, mode, eps, y);
  return y;
}

std::tuple<Tensor, Tensor> dc_backward_npu(const Tensor& dy, const Tensor& x_in, const Tensor& w_in, double alpha,
                                           int64_t mode, double eps) {
  ops::common_device("dispersion_correction_backward", {&dy, &x_in, &w_in});
  check_args("dispersion_correction_backward", x_in, w_in, alpha, mode, eps);
  EMBER_CHECK_SHAPE(dy.sizes() == x_in.sizes() && dy.dtype() == x_in.dtype(), "dispersion_correction_backward: grad ",
                    dy.sizes(), " ", dy.dtype(), " for x ", x_in.sizes(), " ", x_in.dtype());
  Tensor x = x_in.contiguous(), w = w_in.contiguous(), dx = empty_like(x), dw = empty_like(w);
  EXEC_NPU_CMD(aclnnDispersionCorrectionGrad, dy.contiguous(), x, w, alpha, mode, eps, dx, dw);
  return {dx, dw};
}

// ---------------------------------------------------------------- autograd: one spec
using DCSig = Tensor(const Tensor&, const Tensor&, double, int64_t, double);
std::vector<Tensor> dc_bw(const autograd::BackwardCtx<DCSig>& c) {
  const Tensor& x = c.arg<0>();
  auto [dx, dw] = op::dispersion_correction_backward::call(c.grad().to(x.dtype()), x, c.arg<1>(), c.arg<2>(), c.arg<3>(), c.arg<4>());
  return {dx, dw};
}
const auto kDispersionCorrection =
    autograd::spec_of<op::dispersion_correction>("DispersionCorrectionBackward", &dc_bw).saving(autograd::saves(0, 1));

}  // namespace

EMBER_LIBRARY(nn, m) {
  m.def(op::dispersion_correction());
  m.def(op::dispersion_correction_backward());
}
EMBER_LIBRARY_IMPL(nn, CPU, m) {
  m.impl(op::dispersion_correction(), &dc_cpu);
  m.impl(op::dispersion_correction_backward(), &dc_backward_cpu);
}
EMBER_LIBRARY_IMPL(nn, NPU, m) {
  m.impl(op::dispersion_correction(), &dc_npu);
  m.impl(op::dispersion_correction_backward(), &dc_backward_npu);
}
EMBER_LIBRARY_IMPL(nn, Autograd, m) {
  m.impl(op::dispersion_correction(), autograd::autograd_kernel<&kDispersionCorrection>());
  autograd::impl_no_double_backward(m, op::dispersion_correction_backward());
}

namespace functional {
Tensor dispersion_correction(const Tensor& x, const Tensor& weight, double alpha, int64_t mode, double eps) {
  return op::dispersion_correction::call(x, weight, alpha, mode, eps);
}
}  // namespace functional

}  // namespace nn
}  // namespace ember
