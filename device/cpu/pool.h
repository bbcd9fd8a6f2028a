// ember: CPU 2-D pooling kernels (max with indices, average, adaptive average) and their
// backward, with PyTorch's window rules: the CPU's kernels and the emulated NPU's aclnnMaxPool2d-
// WithIndices / aclnnAvgPool2d / aclnnAdaptiveAvgPool2d (and Backward).
#pragma once

#include <string>

#include "ember/device/cpu/strided.h"

namespace ember {
namespace cpu {

// The windows of a pooling over planes of h x w: kernel k, stride s, padding p, dilation d,
// giving oh x ow outputs.
struct Pool2d {
  int64_t h, w, oh, ow;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
};
// The geometry, or what is wrong with it (an empty string when fine): 2 values each (or 1 for
// both dims; an empty stride is the kernel), positive kernel, stride and dilation, padding at
// most half the kernel, at least one output. ceil_mode: PyTorch's rounded-up output size (the
// last window starts inside the input or its left padding).
std::string pool2d(int64_t h, int64_t w, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil_mode,
                   Pool2d* out);

// Every operand is [planes, h, w] (input side) or [planes, oh, ow] (output side), any strides
// and floating dtype; indices are int64 or int32 flat positions y * w + x within the plane.
// out = the max of each window's taps inside the input (NaN wins), indices = where (the first).
void max_pool2d(const Strided& out, const Strided& indices, const Strided& in, const Pool2d& g);
// gx = 0, then gy added at each output's index.
void max_pool2d_backward(const Strided& gx, const Strided& gy, const Strided& indices, const Pool2d& g);
// The average of each window; the divisor is divisor_override when positive, else PyTorch's:
// the window clipped to the padded input (count_include_pad) or to the input.
void avg_pool2d(const Strided& out, const Strided& in, const Pool2d& g, bool count_include_pad,
                int64_t divisor_override);
void avg_pool2d_backward(const Strided& gx, const Strided& gy, const Pool2d& g, bool count_include_pad,
                         int64_t divisor_override);
// Output (i, j) averages rows [floor(i h / oh), ceil((i + 1) h / oh)) and likewise columns.
void adaptive_avg_pool2d(const Strided& out, const Strided& in);
void adaptive_avg_pool2d_backward(const Strided& gx, const Strided& gy);

// Max pooling through oneDNN (device/cpu/onednn_pool.cpp): x [N, C, h, w] and y [N, C, oh, ow]
// contiguous, float32 or bfloat16. Its argmax is oneDNN's workspace, in a layout of oneDNN's own
// (libtorch's int64 indices cannot be read from it).
struct MaxPool2dProblem {
  int64_t N, C;
  Pool2d g;
  DType dtype;
};
// The workspace's size in bytes, or -1 when oneDNN is not in the build, does not pool this dtype
// under ember's ISA cap (bfloat16 needs AVX-512), or has only reference loops for the problem.
int64_t onednn_max_pool2d_workspace(const MaxPool2dProblem& p);
// y = the max of each window's taps inside x (a NaN in x is skipped: callers check has_nan), ws
// = where (null: not kept, oneDNN's inference kernel); the first of equal taps wins, as in
// max_pool2d. Only for a problem with a workspace size.
void onednn_max_pool2d(const MaxPool2dProblem& p, void* y, void* ws, const void* x);
// gx = 0, then gy added where ws points.
void onednn_max_pool2d_backward(const MaxPool2dProblem& p, void* gx, const void* gy, const void* ws);
// Whether n contiguous float32 or bfloat16 values hold a NaN (planes in parallel).
bool has_nan(const void* data, int64_t n, DType dtype);

}  // namespace cpu
}  // namespace ember
