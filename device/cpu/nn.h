// ember: CPU kernels behind the nn ops: embedding lookup and its gradient, cross entropy with a
// fused log-softmax, and the fused AdamW update. Operands are contiguous; math in fp32 (fp64
// for fp64 data); results do not depend on the thread count.
#pragma once

#include <functional>
#include <string>

#include "ember/device/cpu/strided.h"

namespace ember {
namespace cpu {

// out[i, :] = weight[indices[i], :]: weight [num, D], indices int64/int32 [n], out [n, D].
// Throws IndexError naming `op` for an index outside [0, num).
void embedding(const Strided& out, const Strided& weight, const Strided& indices, const char* op);

// NLLLoss on float64 data (class indices are exact in double): per row l[i] = -w[t[i]] * x[i, t[i]],
// 0 where t[i] is ignore_index; returns the total weight, the sum of w[t[i]] over the rows not
// ignored. Throws IndexError naming op for a target outside [0, C) that is not ignore_index.
double nll_loss_f64(double* l, const double* x, const double* t, const double* w, int64_t N, int64_t C,
                    int64_t ignore_index, const char* op);
// Its backward: dx [N, C] is 0 but at (i, t[i]): -w[t[i]] * g[per_row ? i : 0] / denom.
void nll_loss_backward_f64(double* dx, const double* g, bool per_row, double denom, const double* t, const double* w,
                           int64_t N, int64_t C, int64_t ignore_index, const char* op);

// out = the slices of self at index along dim d (index 1-D or 0-D, int32 or int64; a negative
// index counts from the end); a 0-d self is its own single slice. Throws IndexError naming op for
// an index outside [-size, size).
void index_select(const Strided& out, const Strided& self, const Strided& index, int64_t d, const char* op);

// grad_weight [num, D] = sum over i with indices[i] == r of grad[i, :] (rows equal to
// padding_idx get none; with scale_by_freq each contribution is divided by its index's count).
void embedding_backward(const Strided& grad_weight, const Strided& grad, const Strided& indices, int64_t padding_idx,
                        bool scale_by_freq, const char* op);

// Mean over rows whose target is not ignore_index of lse(logits[i]) - logits[i, target[i]]:
// logits [N, C], target int64 [N], loss 0-d. NaN when every row is ignored (as PyTorch).
void cross_entropy(const Strided& loss, const Strided& logits, const Strided& target, int64_t ignore_index,
                   const char* op);
// dlogits[i, :] = grad / count * (softmax(logits[i]) - onehot(target[i])), zero for ignored rows.
void cross_entropy_backward(const Strided& dlogits, const Strided& grad, const Strided& logits, const Strided& target,
                            int64_t ignore_index, const char* op);

// CANN's CrossEntropyLoss (PyTorch's cross_entropy with weight and label_smoothing): per row n
// of logits [N, C], with logp = log_softmax(logits[n]) and y = target[n] (int32 or int64),
//   loss_n = (1 - ls) * -w[y] * logp[y] + ls / C * sum_c -w[c] * logp[c]   (0 when y is ignored)
// loss is [N] for reduction 0 ("none"), else one value: the sum (1) or the sum divided by the sum
// of w[y] over the rows not ignored (2; NaN for an empty batch, as 0 / 0). logprob [N, C] receives
// logp; weight [C] may be undefined (all 1). Computed in float64 in scratch (N * C doubles).
// Throws IndexError naming op for a target outside [0, C) that is not the ignored index.
struct CrossEntropyLossOptions {
  int64_t ignore_index = -100;
  double label_smoothing = 0;
  int reduction = 2;
};
void cross_entropy_loss(const Strided& loss, const Strided& logprob, const Strided& logits, const Strided& target,
                        const Strided& weight, const CrossEntropyLossOptions& o, double* scratch, const char* op);

// The sliding windows of a 2-D convolution or pooling: kernel kh x kw, dilation, zero padding
// and stride, over planes of h x w giving oh x ow window positions (L = oh ow).
struct Window2d {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
  int64_t h, w, oh, ow;
};
// The windows over h x w for kernel k, dilation d, padding p and stride s (2 values each): an
// empty string, or what is wrong (non-positive kernel, dilation or stride, negative padding, no
// window position, a size above 2^31).
std::string window2d(int64_t h, int64_t w, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s, Window2d* out);
// out [B, C kh kw, L] = the windows of in [B, C, h, w] (CANN's Im2col, PyTorch's unfold): row
// (c, i, j) holds in[c, y*sh - ph + i*dh, x*sw - pw + j*dw] at column y*ow + x, 0 outside.
void im2col(const Strided& out, const Strided& in, const Window2d& w);
// out [B, C, h, w] = the sum of every window element back at its source (col2im, fold): the
// adjoint of im2col.
void col2im(const Strided& out, const Strided& in, const Window2d& w);

// A 2-D convolution for oneDNN: x [N, C, h, w], weight [O, C / groups, kh, kw], y [N, O, oh, ow],
// all contiguous, geometry from window2d.
struct Conv2dProblem {
  int64_t N, C, O, groups;
  Window2d win;
  DType dtype;       // of x, weight, y and their gradients: float32 or bfloat16
  DType bias_dtype;  // of bias and its gradient: float32 or dtype
  bool bias;
};
// Scratch memory for oneDNN's blocked layouts, alive until the call returns (the caller's
// allocator, so large reorder buffers are reused instead of page-faulted every step).
using ScratchAlloc = std::function<void*(size_t bytes)>;
// Whether oneDNN is in the build and convolves `dtype` (float32, bfloat16) on this CPU (asked
// once per dtype: bfloat16 needs avx512_core_bf16 or AMX, or ember's ISA cap allowing them).
bool onednn_conv2d_supported(DType dtype);
// y = conv(x, weight) + bias (bias.data may be null when !p.bias). False when oneDNN has no
// primitive for this problem: nothing was written.
bool onednn_conv2d(const Conv2dProblem& p, void* y, const void* x, const void* weight, const void* bias,
                   const ScratchAlloc& scratch);
// The gradients of y with respect to x, weight and bias from dy; a null destination is not
// computed. False when oneDNN has no primitive (nothing was written).
bool onednn_conv2d_backward(const Conv2dProblem& p, void* dx, void* dweight, void* dbias, const void* dy, const void* x,
                            const void* weight, const ScratchAlloc& scratch);

// Convolution by im2col and GEMMs, one GEMM per group over the whole batch (the emulated NPU's
// aclnnConvolution): out [N, O, oh, ow] = conv(x [N, C, h, w], weight [O, C / groups, kh, kw])
// + bias [O] (bias.data null: none). All contiguous and of one floating dtype (bias: any
// floating dtype). cols: conv2d_im2col_elems(...) elements of that dtype.
int64_t conv2d_im2col_elems(int64_t N, int64_t C, const Window2d& w);
void conv2d_im2col(const Strided& out, const Strided& x, const Strided& weight, const Strided& bias, int64_t groups,
                   const Window2d& w, void* cols);
// Its gradients from gy [N, O, oh, ow]: gx like x, gw like weight, gb [O] (a null data pointer:
// not computed). scratch: conv2d_im2col_backward_elems(...) elements of x's dtype.
int64_t conv2d_im2col_backward_elems(int64_t N, int64_t C, int64_t O, const Window2d& w);
void conv2d_im2col_backward(const Strided& gx, const Strided& gw, const Strided& gb, const Strided& gy,
                            const Strided& x, const Strided& weight, int64_t groups, const Window2d& w,
                            void* scratch);

struct AdamWConfig {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, weight_decay = 1e-2, eps = 1e-8;
  bool amsgrad = false, maximize = false;
};
// One AdamW step (PyTorch's update rule) at step number `step` (>= 1), in place on param, m, v
// (and max_v with amsgrad; else max_v.data may be null):
//   p *= 1 - lr wd;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
void adamw_step(const Strided& param, const Strided& m, const Strided& v, const Strided& max_v, const Strided& grad,
                int64_t step, const AdamWConfig& cfg);
// CANN's ApplyAdamW (V1) on float64 arrays of n elements, in place on var, m, v, with the bias
// corrections of b1t = beta1^t and b2t = beta2^t (CANN's beta powers times beta):
//   g = maximize ? -grad : grad;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   v = amsgrad ? max(max_v, v) : v   (max_v may be null without amsgrad)
//   var = var - lr * (m / (1 - b1t)) / (sqrt(v / (1 - b2t)) + eps) - lr * weight_decay * var
void apply_adamw_v1_f64(double* var, double* m, double* v, const double* grad, const double* max_v, int64_t n,
                        double b1t, double b2t, const AdamWConfig& cfg);

}  // namespace cpu
}  // namespace ember
