// Samples and float64 references for the ops of ops/conv.cpp and ops/conv_transpose.cpp
// (ember_testing: linked by tests, benchmarks and fuzzers only, never part of libember; pooling's
// are in pool.cpp). The references are direct loops over output (or input) positions and kernel
// taps, written without windows or GEMMs.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/ops/ops.h"
#include "ember/testing/reference.h"
#include "ember/testing/samples/windows.h"

namespace ember {
namespace {
using testing::Sample;
using testing::make_tensor;
using namespace testing::windows;

struct Params {
  int64_t kh, kw, dh = 1, dw = 1, ph = 0, pw = 0, sh = 1, sw = 1;
};

Tensor ref_im2col(const Tensor& x0, const Params& q) {
  Tensor x = as4(x0);
  int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  int64_t oh = out_size(H, q.kh, q.dh, q.ph, q.sh), ow = out_size(W, q.kw, q.dw, q.pw, q.sw);
  Tensor out = zeros({N, C * q.kh * q.kw, oh * ow}, kFloat64);
  double* o = out.data_ptr<double>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < q.kh; ++i)
        for (int64_t j = 0; j < q.kw; ++j)
          for (int64_t y = 0; y < oh; ++y)
            for (int64_t xx = 0; xx < ow; ++xx) {
              int64_t sy = src(y, i, q.sh, q.ph, q.dh, H), sx = src(xx, j, q.sw, q.pw, q.dw, W);
              int64_t row = (c * q.kh + i) * q.kw + j;
              o[(n * C * q.kh * q.kw + row) * oh * ow + y * ow + xx] = sy >= 0 && sx >= 0 ? at4(x, n, c, sy, sx) : 0.0;
            }
  return x0.dim() == 4 ? out : out.squeeze(0);
}

Tensor ref_col2im(const Tensor& cols0, int64_t H, int64_t W, const Params& q) {
  Tensor cols = cols0.dim() == 3 ? cols0 : cols0.unsqueeze(0);
  int64_t N = cols.size(0), C = cols.size(1) / (q.kh * q.kw);
  int64_t oh = out_size(H, q.kh, q.dh, q.ph, q.sh), ow = out_size(W, q.kw, q.dw, q.pw, q.sw);
  Tensor out = zeros({N, C, H, W}, kFloat64);
  double* o = out.data_ptr<double>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < q.kh; ++i)
        for (int64_t j = 0; j < q.kw; ++j)
          for (int64_t y = 0; y < oh; ++y)
            for (int64_t xx = 0; xx < ow; ++xx) {
              int64_t sy = src(y, i, q.sh, q.ph, q.dh, H), sx = src(xx, j, q.sw, q.pw, q.dw, W);
              if (sy < 0 || sx < 0) continue;
              int64_t row = (c * q.kh + i) * q.kw + j;
              o[((n * C + c) * H + sy) * W + sx] += testing::at(cols, {n, row, y * ow + xx});
            }
  return cols0.dim() == 3 ? out : out.squeeze(0);
}

}  // namespace

EMBER_OP_INFO("ember::im2col", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.exact = true;
  info.samples = [](DType dt) {
    return std::vector<Sample>{
        {{make_tensor({2, 3, 5, 4}, dt), IValue(Shape{3, 2})}, "3x2 kernel"},
        {{make_tensor({1, 2, 6, 7}, dt), IValue(Shape{3}), IValue(Shape{2}), IValue(Shape{1, 2}), IValue(Shape{2, 1})},
         "dilation 2, padding, stride"},
        {{testing::make_noncontig({4, 5, 6}, dt), IValue(Shape{2}), IValue(Shape{1}), IValue(Shape{1}), IValue(Shape{2})},
         "3-D, non-contiguous, padding 1, stride 2"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    Shape k = ints(a, 1, {1, 1}), d = ints(a, 2, {1, 1}), p = ints(a, 3, {0, 0}), s = ints(a, 4, {1, 1});
    return {ref_im2col(a[0].to_tensor(), {k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1]})};
  };
}

EMBER_OP_INFO("ember::col2im", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.tol_scale = 4;
  info.samples = [](DType dt) {
    // [N, C kh kw, L]: output 5x4, kernel 3x2: L = 3 * 3 = 9; output 6x7, ...: L = 2 * 7 = 14
    return std::vector<Sample>{
        {{make_tensor({2, 12, 9}, dt), IValue(Shape{5, 4}), IValue(Shape{3, 2})}, "3x2 kernel (overlapping)"},
        {{make_tensor({18, 14}, dt), IValue(Shape{6, 7}), IValue(Shape{3}), IValue(Shape{2}), IValue(Shape{1, 2}),
          IValue(Shape{2, 1})},
         "2-D, dilation 2, padding, stride"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    Shape hw = ints(a, 1, {0, 0}), k = ints(a, 2, {1, 1}), d = ints(a, 3, {1, 1}), p = ints(a, 4, {0, 0}),
          s = ints(a, 5, {1, 1});
    return {ref_col2im(a[0].to_tensor(), hw[0], hw[1], {k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1]})};
  };
}

// conv2d and _convolution (the path conv2d takes on the CPU): the same samples, and a direct loop.
namespace {
std::vector<Sample> conv2d_samples(DType dt) {
  return std::vector<Sample>{
      {{make_tensor({2, 3, 5, 5}, dt), make_tensor({4, 3, 3, 3}, dt, -0.5, 0.5, 3), make_tensor({4}, dt, -1, 1, 4)},
       "3x3, bias"},
      {{make_tensor({1, 4, 6, 7}, dt), make_tensor({6, 2, 2, 3}, dt, -0.5, 0.5, 5), IValue(), IValue(Shape{2, 1}),
        IValue(Shape{1}), IValue(Shape{2, 1}), IValue(int64_t(2))},
       "groups 2, stride, padding, dilation, no bias"},
      {{make_tensor({2, 5, 5}, dt), make_tensor({3, 2, 1, 1}, dt, -1, 1, 6), make_tensor({3}, dt, -1, 1, 7)},
       "3-D input, 1x1"}};
}
Stack conv2d_reference(const Stack& a) {
  Tensor x0 = a[0].to_tensor(), w = a[1].to_tensor(), b = a.size() > 2 && !a[2].is_none() ? a[2].to_tensor() : Tensor();
  Shape s = ints(a, 3, {1, 1}), p = ints(a, 4, {0, 0}), d = ints(a, 5, {1, 1});
  int64_t groups = a.size() > 6 ? a[6].to_int() : 1;
  Tensor x = as4(x0);
  int64_t N = x.size(0), H = x.size(2), W = x.size(3), O = w.size(0), Cg = w.size(1), kh = w.size(2), kw = w.size(3);
  int64_t oh = out_size(H, kh, d[0], p[0], s[0]), ow = out_size(W, kw, d[1], p[1], s[1]), og = O / groups;
  Tensor out = zeros({N, O, oh, ow}, kFloat64);
  double* o = out.data_ptr<double>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < O; ++oc)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double acc = b.defined() ? testing::at(b, {oc}) : 0.0;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t sy = src(y, i, s[0], p[0], d[0], H), sx = src(xx, j, s[1], p[1], d[1], W);
                if (sy >= 0 && sx >= 0) acc += at4(w, oc, c, i, j) * at4(x, n, (oc / og) * Cg + c, sy, sx);
              }
          o[((n * O + oc) * oh + y) * ow + xx] = acc;
        }
  return {x0.dim() == 4 ? out : out.squeeze(0)};
}
}  // namespace

EMBER_OP_INFO("ember::conv2d", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.tol_scale = 8;
  info.samples = conv2d_samples;
  info.reference = conv2d_reference;
}
EMBER_OP_INFO("ember::_convolution", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.tol_scale = 8;
  info.samples = conv2d_samples;
  info.reference = conv2d_reference;
}

// conv2d_backward: the forward's loops run backwards, each product adding into the gradient of
// both of its factors.
EMBER_OP_INFO("ember::conv2d_backward", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.tol_scale = 8;
  info.samples = [](DType dt) {
    auto args = [dt](Shape x, Shape w, Shape g, Shape s, Shape p, Shape d, int64_t groups, uint64_t seed) {
      return Stack{make_tensor(g, dt, -1, 1, seed),    make_tensor(x, dt, -1, 1, seed + 1),
                   make_tensor(w, dt, -0.5, 0.5, seed + 2), IValue(s), IValue(p), IValue(d), IValue(groups)};
    };
    return std::vector<Sample>{
        {args({2, 3, 5, 5}, {4, 3, 3, 3}, {2, 4, 3, 3}, {1}, {0}, {1}, 1, 20), "3x3"},
        {args({1, 4, 6, 7}, {6, 2, 2, 3}, {1, 6, 3, 7}, {2, 1}, {1}, {2, 1}, 2, 23),
         "groups 2, stride, padding, dilation"},
        {args({2, 5, 5}, {3, 2, 1, 1}, {3, 5, 5}, {1}, {0}, {1}, 1, 26), "3-D input, 1x1"},
        {args({1, 2, 7, 6}, {3, 2, 3, 3}, {1, 3, 3, 2}, {2, 3}, {0}, {1}, 1, 29),
         "stride leaving rows and columns unreached"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor g0 = a[0].to_tensor(), x0 = a[1].to_tensor(), w = a[2].to_tensor();
    Shape s = ints(a, 3, {1, 1}), p = ints(a, 4, {0, 0}), d = ints(a, 5, {1, 1});
    int64_t groups = a[6].to_int();
    Tensor x = as4(x0), g = as4(g0);
    int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), O = w.size(0), Cg = w.size(1), kh = w.size(2),
            kw = w.size(3), oh = g.size(2), ow = g.size(3), og = O / groups;
    Tensor gx = zeros({N, C, H, W}, kFloat64), gw = zeros(w.sizes(), kFloat64), gb = zeros({O}, kFloat64);
    double *px = gx.data_ptr<double>(), *pw = gw.data_ptr<double>(), *pb = gb.data_ptr<double>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t oc = 0; oc < O; ++oc)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t xx = 0; xx < ow; ++xx) {
            double gv = at4(g, n, oc, y, xx);
            pb[oc] += gv;
            for (int64_t c = 0; c < Cg; ++c)
              for (int64_t i = 0; i < kh; ++i)
                for (int64_t j = 0; j < kw; ++j) {
                  int64_t sy = src(y, i, s[0], p[0], d[0], H), sx = src(xx, j, s[1], p[1], d[1], W);
                  if (sy < 0 || sx < 0) continue;
                  int64_t ci = (oc / og) * Cg + c;
                  px[((n * C + ci) * H + sy) * W + sx] += at4(w, oc, c, i, j) * gv;
                  pw[((oc * Cg + c) * kh + i) * kw + j] += at4(x, n, ci, sy, sx) * gv;
                }
          }
    return {x0.dim() == 4 ? gx : gx.squeeze(0), gw, gb};
  };
}

EMBER_OP_INFO("ember::conv1d", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.tol_scale = 8;
  info.samples = [](DType dt) {
    return std::vector<Sample>{
        {{make_tensor({2, 3, 9}, dt), make_tensor({4, 3, 3}, dt, -0.5, 0.5, 8), make_tensor({4}, dt, -1, 1, 9)},
         "k 3, bias"},
        {{make_tensor({1, 4, 11}, dt), make_tensor({6, 2, 2}, dt, -0.5, 0.5, 10), IValue(), IValue(Shape{2}),
          IValue(Shape{1}), IValue(Shape{3}), IValue(int64_t(2))},
         "groups 2, stride 2, padding 1, dilation 3, no bias"},
        {{make_tensor({3, 6}, dt), make_tensor({2, 3, 1}, dt, -1, 1, 11), make_tensor({2}, dt, -1, 1, 12)},
         "2-D input, k 1"}};
  };
  // A direct loop over output positions and taps.
  info.reference = [](const Stack& a) -> Stack {
    Tensor x0 = a[0].to_tensor(), w = a[1].to_tensor(), b = a.size() > 2 && !a[2].is_none() ? a[2].to_tensor() : Tensor();
    int64_t s = ints(a, 3, {1, 1})[0], p = ints(a, 4, {0, 0})[0], d = ints(a, 5, {1, 1})[0];
    int64_t groups = a.size() > 6 ? a[6].to_int() : 1;
    Tensor x = x0.dim() == 3 ? x0 : x0.unsqueeze(0);
    int64_t N = x.size(0), L = x.size(2), O = w.size(0), Cg = w.size(1), k = w.size(2), og = O / groups;
    int64_t ol = out_size(L, k, d, p, s);
    Tensor out = zeros({N, O, ol}, kFloat64);
    double* o = out.data_ptr<double>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t oc = 0; oc < O; ++oc)
        for (int64_t y = 0; y < ol; ++y) {
          double acc = b.defined() ? testing::at(b, {oc}) : 0.0;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < k; ++i) {
              int64_t sy = src(y, i, s, p, d, L);
              if (sy >= 0) acc += testing::at(w, {oc, c, i}) * testing::at(x, {n, (oc / og) * Cg + c, sy});
            }
          o[(n * O + oc) * ol + y] = acc;
        }
    return {x0.dim() == 3 ? out : out.squeeze(0)};
  };
}

EMBER_OP_INFO("ember::conv_transpose2d", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.tol_scale = 8;
  info.samples = [](DType dt) {
    return std::vector<Sample>{
        {{make_tensor({2, 3, 4, 4}, dt), make_tensor({3, 2, 3, 3}, dt, -0.5, 0.5, 3), make_tensor({2}, dt, -1, 1, 4),
          IValue(Shape{2}), IValue(Shape{1}), IValue(Shape{1})},
         "stride 2, padding 1, output_padding 1, bias"},
        {{make_tensor({1, 4, 3, 5}, dt), make_tensor({4, 1, 2, 3}, dt, -0.5, 0.5, 5), IValue(), IValue(Shape{1, 2}),
          IValue(Shape{0}), IValue(Shape{0}), IValue(int64_t(2)), IValue(Shape{2, 1})},
         "groups 2, dilation, no bias"},
        {{make_tensor({2, 2, 3, 4}, dt), make_tensor({2, 3, 3, 2}, dt, -0.5, 0.5, 6), make_tensor({3}, dt, -1, 1, 7),
          IValue(Shape{1}), IValue(Shape{1, 0}), IValue(Shape{1, 2}), IValue(int64_t(1)), IValue(Shape{2, 3})},
         "output_padding not below the stride (below the dilation), padding"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor x = a[0].to_tensor(), w = a[1].to_tensor(), b = a.size() > 2 && !a[2].is_none() ? a[2].to_tensor() : Tensor();
    Shape s = ints(a, 3, {1, 1}), p = ints(a, 4, {0, 0}), op = ints(a, 5, {0, 0}), d = ints(a, 7, {1, 1});
    int64_t groups = a.size() > 6 ? a[6].to_int() : 1;
    int64_t N = x.size(0), Cin = x.size(1), H = x.size(2), W = x.size(3), og = w.size(1), kh = w.size(2),
            kw = w.size(3), cg = Cin / groups, Cout = og * groups;
    int64_t OH = (H - 1) * s[0] - 2 * p[0] + d[0] * (kh - 1) + op[0] + 1;
    int64_t OW = (W - 1) * s[1] - 2 * p[1] + d[1] * (kw - 1) + op[1] + 1;
    Tensor out = zeros({N, Cout, OH, OW}, kFloat64);
    double* o = out.data_ptr<double>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ci = 0; ci < Cin; ++ci)
        for (int64_t y = 0; y < H; ++y)
          for (int64_t xx = 0; xx < W; ++xx)
            for (int64_t c = 0; c < og; ++c)
              for (int64_t i = 0; i < kh; ++i)
                for (int64_t j = 0; j < kw; ++j) {
                  int64_t ty = y * s[0] - p[0] + i * d[0], tx = xx * s[1] - p[1] + j * d[1];
                  if (ty < 0 || ty >= OH || tx < 0 || tx >= OW) continue;
                  int64_t co = (ci / cg) * og + c;
                  o[((n * Cout + co) * OH + ty) * OW + tx] += at4(x, n, ci, y, xx) * at4(w, ci, c, i, j);
                }
    if (b.defined())
      for (int64_t n = 0; n < N; ++n)
        for (int64_t co = 0; co < Cout; ++co)
          for (int64_t e = 0; e < OH * OW; ++e) o[(n * Cout + co) * OH * OW + e] += testing::at(b, {co});
    return {out};
  };
}

EMBER_OP_INFO("ember::_conv_transpose2d", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.tol_scale = 8;
  info.samples = [](DType dt) { return testing::find_op_info("ember::conv_transpose2d")->samples(dt); };
  info.reference = [](const Stack& a) { return testing::find_op_info("ember::conv_transpose2d")->reference(a); };
}
// conv_transpose2d_backward(grad, input, weight, stride, padding, output_padding, groups,
// dilation): the forward's loops run backwards, each product adding into both factors' gradients.
EMBER_OP_INFO("ember::conv_transpose2d_backward", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.tol_scale = 8;
  info.samples = [](DType dt) {
    std::vector<Sample> out;
    uint64_t seed = 90;
    const testing::OpInfo* f = testing::find_op_info("ember::conv_transpose2d");
    for (const Sample& s : f->samples(dt)) {
      const Stack& a = s.args;
      Tensor y = f->reference(a)[0].to_tensor();
      int64_t groups = a.size() > 6 ? a[6].to_int() : 1;
      out.push_back({{make_tensor(y.sizes(), dt, -1, 1, seed++), a[0], a[1], IValue(ints(a, 3, {1, 1})),
                      IValue(ints(a, 4, {0, 0})), IValue(ints(a, 5, {0, 0})), IValue(groups), IValue(ints(a, 7, {1, 1}))},
                     s.desc});
    }
    return out;
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor g = a[0].to_tensor(), x = a[1].to_tensor(), w = a[2].to_tensor();
    Shape s = ints(a, 3, {1, 1}), p = ints(a, 4, {0, 0}), d = ints(a, 7, {1, 1});
    int64_t groups = a[6].to_int();
    int64_t N = x.size(0), Cin = x.size(1), H = x.size(2), W = x.size(3), og = w.size(1), kh = w.size(2),
            kw = w.size(3), cg = Cin / groups, Cout = og * groups, OH = g.size(2), OW = g.size(3);
    Tensor gx = zeros(x.sizes(), kFloat64), gw = zeros(w.sizes(), kFloat64), gb = zeros({Cout}, kFloat64);
    double *px = gx.data_ptr<double>(), *pw = gw.data_ptr<double>(), *pb = gb.data_ptr<double>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ci = 0; ci < Cin; ++ci)
        for (int64_t y = 0; y < H; ++y)
          for (int64_t xx = 0; xx < W; ++xx)
            for (int64_t c = 0; c < og; ++c)
              for (int64_t i = 0; i < kh; ++i)
                for (int64_t j = 0; j < kw; ++j) {
                  int64_t ty = y * s[0] - p[0] + i * d[0], tx = xx * s[1] - p[1] + j * d[1];
                  if (ty < 0 || ty >= OH || tx < 0 || tx >= OW) continue;
                  int64_t co = (ci / cg) * og + c;
                  double gv = at4(g, n, co, ty, tx);
                  px[((n * Cin + ci) * H + y) * W + xx] += gv * at4(w, ci, c, i, j);
                  pw[((ci * og + c) * kh + i) * kw + j] += gv * at4(x, n, ci, y, xx);
                }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t co = 0; co < Cout; ++co)
        for (int64_t e = 0; e < OH * OW; ++e) pb[co] += at4(g, n, co, e / OW, e % OW);
    return {gx, gw, gb};
  };
}

}  // namespace ember
