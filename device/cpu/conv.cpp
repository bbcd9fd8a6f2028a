// Convolution as im2col + GEMM on raw buffers: the emulated NPU's aclnnConvolution and
// aclnnConvolutionBackward (ops/conv.cpp builds the same from dispatcher ops on the CPU).
#include "ember/device/cpu/elementwise.h"
#include "ember/device/cpu/gemm.h"
#include "ember/device/cpu/nn.h"
#include "ember/device/cpu/reduce.h"

namespace ember {
namespace cpu {
namespace {
char* at(void* base, int64_t elems, DType dt) { return static_cast<char*>(base) + elems * int64_t(element_size(dt)); }
Matrix matrix(void* data, DType dt, int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride,
              int64_t batch_stride) {
  return Matrix{data, dt, rows, cols, row_stride, col_stride, batch_stride};
}
}  // namespace

int64_t conv2d_im2col_elems(int64_t N, int64_t C, const Window2d& w) { return N * C * w.kh * w.kw * w.oh * w.ow; }

void conv2d_im2col(const Strided& out, const Strided& x, const Strided& weight, const Strided& bias, int64_t groups,
                   const Window2d& w, void* cols) {
  const DType dt = x.dtype;
  const int64_t N = x.sizes[0], C = x.sizes[1], O = weight.sizes[0], L = w.oh * w.ow;
  const int64_t CK = C * w.kh * w.kw, Kg = CK / groups, og = O / groups;
  DimVector cs{N, CK, L};
  im2col(Strided(cols, dt, cs, contiguous_strides(cs)), x, w);
  for (int64_t g = 0; g < groups; ++g) {
    // out[n, g] [og, L] = weight[g] [og, Kg] @ cols[n, g] [Kg, L], for every n
    gemm(N, matrix(at(weight.data, g * og * Kg, dt), dt, og, Kg, Kg, 1, 0),
         matrix(at(cols, g * Kg * L, dt), dt, Kg, L, L, 1, CK * L),
         matrix(at(out.data, g * og * L, dt), dt, og, L, L, 1, O * L));
  }
  if (bias.data) {
    DimVector os{N, O, L};
    Strided o3(out.data, dt, os, contiguous_strides(os));
    add(o3, o3, Strided(bias.data, bias.dtype, os, DimVector{0, 1, 0}), 1.0, compute_dtype(dt));
  }
}

int64_t conv2d_im2col_backward_elems(int64_t N, int64_t C, int64_t O, const Window2d& w) {
  const int64_t CKL = C * w.kh * w.kw * w.oh * w.ow, L = w.oh * w.ow;
  // the windows [N, CK, L] (or their gradient), the same as [CK, N, L], and gy as [O, N, L]
  return N * CKL * 2 + O * N * L;
}

void conv2d_im2col_backward(const Strided& gx, const Strided& gw, const Strided& gb, const Strided& gy,
                            const Strided& x, const Strided& weight, int64_t groups, const Window2d& w,
                            void* scratch) {
  const DType dt = x.dtype;
  const int64_t N = x.sizes[0], C = x.sizes[1], O = weight.sizes[0], L = w.oh * w.ow;
  const int64_t CK = C * w.kh * w.kw, Kg = CK / groups, og = O / groups;
  void* cols = scratch;                                 // [N, CK, L]
  void* cols_t = at(scratch, N * CK * L, dt);           // [CK, N, L]
  void* gy_t = at(scratch, 2 * N * CK * L, dt);         // [O, N, L]
  DimVector cs{N, CK, L};
  Strided colsv(cols, dt, cs, contiguous_strides(cs));
  if (gx.data) {
    // cols[n, g] [Kg, L] = weight[g]^T [Kg, og] @ gy[n, g] [og, L]; gx = col2im(cols)
    for (int64_t g = 0; g < groups; ++g)
      gemm(N, matrix(at(weight.data, g * og * Kg, dt), dt, Kg, og, 1, Kg, 0),
           matrix(at(gy.data, g * og * L, dt), dt, og, L, L, 1, O * L),
           matrix(at(cols, g * Kg * L, dt), dt, Kg, L, L, 1, CK * L));
    col2im(gx, colsv, w);
  }
  if (gw.data) {
    // gw[g] [og, Kg] = gy[:, g] as [og, N L] @ (cols[:, g] as [Kg, N L])^T: one GEMM over the batch
    im2col(colsv, x, w);
    DimVector ts{CK, N, L}, gs{O, N, L};
    copy(Strided(cols_t, dt, ts, contiguous_strides(ts)), Strided(cols, dt, ts, DimVector{L, CK * L, 1}));
    copy(Strided(gy_t, dt, gs, contiguous_strides(gs)), Strided(gy.data, gy.dtype, gs, DimVector{L, O * L, 1}));
    for (int64_t g = 0; g < groups; ++g)
      gemm(1, matrix(at(gy_t, g * og * N * L, dt), dt, og, N * L, N * L, 1, 0),
           matrix(at(cols_t, g * Kg * N * L, dt), dt, N * L, Kg, 1, N * L, 0),
           matrix(at(gw.data, g * og * Kg, dt), dt, og, Kg, Kg, 1, 0));
  }
  if (gb.data) {
    DimVector is{N, O, L}, os{1, O, 1};
    sum(Strided(gb.data, gb.dtype, os, DimVector{O, 1, 1}), Strided(gy.data, gy.dtype, is, contiguous_strides(is)));
  }
}

}  // namespace cpu
}  // namespace ember
