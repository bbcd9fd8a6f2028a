// Samples and float64 references for the ops of ops/pool.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember). The references are direct loops over
// output positions and window taps.
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
}  // namespace

namespace {
// Pooling: f over the taps of each window that fall inside the input (max), or all taps with
// padding as 0 (sum), at each output position.
// PyTorch's ceil_mode size: the last window may hang over the padded end, but starts inside the
// input or its left padding.
int64_t ceil_out_size(int64_t in, int64_t k, int64_t d, int64_t p, int64_t s) {
  int64_t o = (in + 2 * p - d * (k - 1) - 1 + s - 1) / s + 1;
  return (o - 1) * s >= in + p ? o - 1 : o;
}

Tensor ref_pool(const Tensor& x0, Shape k, Shape s, Shape p, Shape d, bool is_max, bool include_pad,
                bool ceil = false) {
  Tensor x = as4(x0);
  int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  int64_t oh = ceil ? ceil_out_size(H, k[0], d[0], p[0], s[0]) : out_size(H, k[0], d[0], p[0], s[0]);
  int64_t ow = ceil ? ceil_out_size(W, k[1], d[1], p[1], s[1]) : out_size(W, k[1], d[1], p[1], s[1]);
  Tensor out = zeros({N, C, oh, ow}, kFloat64);
  double* o = out.data_ptr<double>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double m = -std::numeric_limits<double>::infinity(), sum = 0;
          int64_t inside = 0;
          for (int64_t i = 0; i < k[0]; ++i)
            for (int64_t j = 0; j < k[1]; ++j) {
              int64_t sy = src(y, i, s[0], p[0], d[0], H), sx = src(xx, j, s[1], p[1], d[1], W);
              if (sy < 0 || sx < 0) continue;
              double v = at4(x, n, c, sy, sx);
              m = std::max(m, v);
              sum += v;
              ++inside;
            }
          // With padding counted, the window clipped to the padded input (PyTorch's divisor).
          int64_t hs = y * s[0] - p[0], ws = xx * s[1] - p[1];
          int64_t padded = (std::min(hs + k[0], H + p[0]) - hs) * (std::min(ws + k[1], W + p[1]) - ws);
          o[((n * C + c) * oh + y) * ow + xx] = is_max ? m : sum / static_cast<double>(include_pad ? padded : inside);
        }
  return x0.dim() == 4 ? out : out.squeeze(0);
}
}  // namespace

EMBER_OP_INFO("ember::max_pool2d", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.exact = true;
  info.samples = [](DType dt) {
    // distinct values: no ties, so the gradient goes to one element per window
    return std::vector<Sample>{
        {{testing::make_distinct({2, 3, 6, 6}, dt), IValue(Shape{2})}, "2x2, stride = kernel"},
        {{testing::make_distinct({1, 2, 7, 5}, dt), IValue(Shape{3, 2}), IValue(Shape{2, 1}), IValue(Shape{1}),
          IValue(Shape{1, 2})},
         "3x2, stride, padding 1, dilation"},
        {{testing::make_distinct({3, 5, 5}, dt), IValue(Shape{3}), IValue(Shape{2})}, "3-D, overlapping windows"},
        {{testing::make_distinct({1, 2, 7, 6}, dt), IValue(Shape{2}), IValue(Shape{2}), IValue(Shape{0}),
          IValue(Shape{1}), IValue(true)},
         "ceil_mode: a last window over the edge"},
        {{testing::make_distinct({1, 1, 6, 5}, dt), IValue(Shape{3}), IValue(Shape{2}), IValue(Shape{1}),
          IValue(Shape{1}), IValue(true)},
         "ceil_mode with padding"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    Shape k = ints(a, 1, {1, 1});
    bool ceil = a.size() > 5 && a[5].to_bool();
    return {ref_pool(a[0].to_tensor(), k, ints(a, 2, k), ints(a, 3, {0, 0}), ints(a, 4, {1, 1}), true, true, ceil)};
  };
}

EMBER_OP_INFO("ember::avg_pool2d", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.tol_scale = 4;
  info.samples = [](DType dt) {
    return std::vector<Sample>{
        {{make_tensor({2, 3, 6, 6}, dt), IValue(Shape{2})}, "2x2"},
        {{make_tensor({1, 2, 7, 5}, dt), IValue(Shape{3}), IValue(Shape{2}), IValue(Shape{1})},
         "3x3, stride 2, padding counted"},
        {{make_tensor({1, 2, 7, 5}, dt), IValue(Shape{3}), IValue(Shape{2}), IValue(Shape{1}), IValue(false),
          IValue(false)},
         "padding not counted"},
        {{make_tensor({1, 2, 7, 6}, dt), IValue(Shape{2}), IValue(Shape{2}), IValue(Shape{0}), IValue(true)},
         "ceil_mode: a last window over the edge"},
        {{make_tensor({1, 2, 6, 5}, dt), IValue(Shape{3}), IValue(Shape{2}), IValue(Shape{1}), IValue(true)},
         "ceil_mode, padding counted"},
        {{make_tensor({1, 2, 6, 5}, dt), IValue(Shape{3}), IValue(Shape{2}), IValue(Shape{1}), IValue(true),
          IValue(false)},
         "ceil_mode, padding not counted"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    Shape k = ints(a, 1, {1, 1});
    bool ceil = a.size() > 4 && a[4].to_bool();
    bool include = a.size() > 5 ? a[5].to_bool() : true;
    return {ref_pool(a[0].to_tensor(), k, ints(a, 2, k), ints(a, 3, {0, 0}), {1, 1}, false, include, ceil)};
  };
}

EMBER_OP_INFO("ember::adaptive_avg_pool2d", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.tol_scale = 4;
  info.samples = [](DType dt) {
    return std::vector<Sample>{{{make_tensor({2, 3, 6, 4}, dt), IValue(Shape{3, 2})}, "6x4 to 3x2"},
                               {{make_tensor({2, 5, 5}, dt), IValue(Shape{1})}, "3-D, global average"},
                               {{make_tensor({1, 2, 7, 5}, dt), IValue(Shape{3, 4})}, "7x5 to 3x4: overlapping windows"},
                               {{make_tensor({1, 1, 2, 3}, dt), IValue(Shape{5, 4})}, "2x3 to 5x4: upsampling"}};
  };
  // PyTorch's windows: output i averages rows [floor(i H / oh), ceil((i + 1) H / oh)), and so for columns.
  info.reference = [](const Stack& a) -> Stack {
    Tensor x0 = a[0].to_tensor();
    Shape o = ints(a, 1, {1, 1});
    Tensor x = as4(x0);
    int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    Tensor out = zeros({N, C, o[0], o[1]}, kFloat64);
    double* po = out.data_ptr<double>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < o[0]; ++i)
          for (int64_t j = 0; j < o[1]; ++j) {
            int64_t y0 = i * H / o[0], y1 = ((i + 1) * H + o[0] - 1) / o[0];
            int64_t x0_ = j * W / o[1], x1 = ((j + 1) * W + o[1] - 1) / o[1];
            double acc = 0;
            for (int64_t y = y0; y < y1; ++y)
              for (int64_t xx = x0_; xx < x1; ++xx) acc += at4(x, n, c, y, xx);
            po[((n * C + c) * o[0] + i) * o[1] + j] = acc / static_cast<double>((y1 - y0) * (x1 - x0_));
          }
    return {x0.dim() == 4 ? out : out.squeeze(0)};
  };
}

// ---------------------------------------------------------------- pooling's indices and backward
namespace {
// The pooling arguments of a sample made explicit: kernel, stride, padding, dilation, ceil_mode
// (avg: no dilation argument; its index shifts the later ones).
struct PoolArgs {
  Shape k, s, p, d;
  bool ceil = false, include_pad = true;
};
PoolArgs max_args(const Stack& a) {
  PoolArgs r;
  r.k = ints(a, 1, {1, 1});
  r.s = ints(a, 2, r.k);
  r.p = ints(a, 3, {0, 0});
  r.d = ints(a, 4, {1, 1});
  r.ceil = a.size() > 5 && a[5].to_bool();
  return r;
}
PoolArgs avg_args(const Stack& a) {
  PoolArgs r;
  r.k = ints(a, 1, {1, 1});
  r.s = ints(a, 2, r.k);
  r.p = ints(a, 3, {0, 0});
  r.d = {1, 1};
  r.ceil = a.size() > 4 && a[4].to_bool();
  r.include_pad = a.size() > 5 ? a[5].to_bool() : true;
  return r;
}
// Calls f(n, c, y, x, sy, sx) for each tap inside the input of every output position.
template <class F>
void each_tap(const Tensor& x4, const PoolArgs& q, F f) {
  int64_t N = x4.size(0), C = x4.size(1), H = x4.size(2), W = x4.size(3);
  int64_t oh = q.ceil ? ceil_out_size(H, q.k[0], q.d[0], q.p[0], q.s[0]) : out_size(H, q.k[0], q.d[0], q.p[0], q.s[0]);
  int64_t ow = q.ceil ? ceil_out_size(W, q.k[1], q.d[1], q.p[1], q.s[1]) : out_size(W, q.k[1], q.d[1], q.p[1], q.s[1]);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx)
          for (int64_t i = 0; i < q.k[0]; ++i)
            for (int64_t j = 0; j < q.k[1]; ++j) {
              int64_t sy = src(y, i, q.s[0], q.p[0], q.d[0], H), sx = src(xx, j, q.s[1], q.p[1], q.d[1], W);
              if (sy >= 0 && sx >= 0) f(n, c, y, xx, sy, sx, oh, ow);
            }
}
// The flat position (y W + x) of each window's first maximum.
Tensor ref_max_indices(const Tensor& x0, const PoolArgs& q) {
  Tensor x = as4(x0);
  Tensor best = ref_pool(x0, q.k, q.s, q.p, q.d, true, true, q.ceil);
  Tensor b4 = as4(best);
  Tensor idx = full(b4.sizes(), int64_t(-1), kInt64);
  int64_t* pi = idx.data_ptr<int64_t>();
  const int64_t W = x.size(3);
  each_tap(x, q, [&](int64_t n, int64_t c, int64_t y, int64_t xx, int64_t sy, int64_t sx, int64_t oh, int64_t ow) {
    int64_t o = ((n * x.size(1) + c) * oh + y) * ow + xx;
    if (pi[o] < 0 && at4(x, n, c, sy, sx) == at4(b4, n, c, y, xx)) pi[o] = sy * W + sx;
  });
  return x0.dim() == 4 ? idx : idx.squeeze(0);
}
// (grad of the output's shape, the forward's arguments made explicit...) for a backward op.
Stack with_grad(DType dt, const Tensor& out, Stack rest, uint64_t seed) {
  rest.insert(rest.begin(), make_tensor(out.sizes(), dt, -1, 1, seed));
  return rest;
}
}  // namespace

EMBER_OP_INFO("ember::max_pool2d_with_indices", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.exact = true;
  info.samples = [](DType dt) { return testing::find_op_info("ember::max_pool2d")->samples(dt); };
  info.reference = [](const Stack& a) -> Stack {
    PoolArgs q = max_args(a);
    Tensor x = a[0].to_tensor();
    return {ref_pool(x, q.k, q.s, q.p, q.d, true, true, q.ceil), ref_max_indices(x, q)};
  };
}
// (grad, self, kernel_size, stride, padding, dilation, ceil_mode, indices): grad added at the indices.
EMBER_OP_INFO("ember::max_pool2d_with_indices_backward", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.samples = [](DType dt) {
    std::vector<Sample> out;
    uint64_t seed = 60;
    for (const Sample& s : testing::find_op_info("ember::max_pool2d")->samples(dt)) {
      PoolArgs q = max_args(s.args);
      Tensor x = s.args[0].to_tensor(), idx = ref_max_indices(x, q);
      out.push_back({with_grad(dt, idx, {x, IValue(q.k), IValue(q.s), IValue(q.p), IValue(q.d), IValue(q.ceil), idx},
                               seed++),
                     s.desc});
    }
    return out;
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor g = as4(a[0].to_tensor()), x = a[1].to_tensor(), idx = as4(a[7].to_tensor());
    Tensor gx = zeros(as4(x).sizes(), kFloat64);
    const int64_t HW = x.size(-2) * x.size(-1), L = g.size(2) * g.size(3), planes = g.size(0) * g.size(1);
    for (int64_t c = 0; c < planes; ++c)
      for (int64_t l = 0; l < L; ++l)
        gx.data_ptr<double>()[c * HW + idx.data_ptr<int64_t>()[c * L + l]] +=
            testing::at(g, {c / g.size(1), c % g.size(1), l / g.size(3), l % g.size(3)});
    return {x.dim() == 4 ? gx : gx.squeeze(0)};
  };
}
EMBER_OP_INFO("ember::mkldnn_max_pool2d", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.exact = true;
  info.samples = [](DType dt) { return testing::find_op_info("ember::max_pool2d")->samples(dt); };
  info.reference = [](const Stack& a) { return testing::find_op_info("ember::max_pool2d")->reference(a); };
}
// (grad, self, kernel_size, stride, padding, dilation, ceil_mode): max_pool2d_with_indices_backward
// at the indices of the reference's max.
EMBER_OP_INFO("ember::mkldnn_max_pool2d_backward", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  // max_pool2d_with_indices_backward's samples without their indices
  info.samples = [](DType dt) {
    std::vector<Sample> out = testing::find_op_info("ember::max_pool2d_with_indices_backward")->samples(dt);
    for (Sample& s : out) s.args.pop_back();
    return out;
  };
  info.reference = [](const Stack& a) -> Stack {
    Stack with_indices = a;
    with_indices.push_back(ref_max_indices(a[1].to_tensor(), max_args(Stack(a.begin() + 1, a.end()))));
    return testing::find_op_info("ember::max_pool2d_with_indices_backward")->reference(with_indices);
  };
}
// (grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad): each output's grad
// spread over its window's taps inside the input, by the forward's divisor.
EMBER_OP_INFO("ember::avg_pool2d_backward", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.tol_scale = 4;
  info.samples = [](DType dt) {
    std::vector<Sample> out;
    uint64_t seed = 70;
    for (const Sample& s : testing::find_op_info("ember::avg_pool2d")->samples(dt)) {
      PoolArgs q = avg_args(s.args);
      Tensor x = s.args[0].to_tensor();
      Tensor y = ref_pool(x, q.k, q.s, q.p, q.d, false, q.include_pad, q.ceil);
      out.push_back({with_grad(dt, y, {x, IValue(q.k), IValue(q.s), IValue(q.p), IValue(q.ceil),
                                       IValue(q.include_pad)}, seed++),
                     s.desc});
    }
    return out;
  };
  info.reference = [](const Stack& a) -> Stack {
    PoolArgs q;
    q.k = ints(a, 2, {1, 1});
    q.s = ints(a, 3, q.k);
    q.p = ints(a, 4, {0, 0});
    q.d = {1, 1};
    q.ceil = a[5].to_bool();
    q.include_pad = a[6].to_bool();
    Tensor g = as4(a[0].to_tensor()), x = as4(a[1].to_tensor());
    const int64_t H = x.size(2), W = x.size(3);
    // the divisor of each output position: its taps inside, or its window clipped to the padded input
    Tensor inside = zeros(g.sizes(), kFloat64);
    each_tap(x, q, [&](int64_t n, int64_t c, int64_t y, int64_t xx, int64_t, int64_t, int64_t oh, int64_t ow) {
      inside.data_ptr<double>()[((n * x.size(1) + c) * oh + y) * ow + xx] += 1;
    });
    Tensor gx = zeros(x.sizes(), kFloat64);
    each_tap(x, q, [&](int64_t n, int64_t c, int64_t y, int64_t xx, int64_t sy, int64_t sx, int64_t oh, int64_t ow) {
      int64_t hs = y * q.s[0] - q.p[0], ws = xx * q.s[1] - q.p[1];
      double padded = static_cast<double>((std::min(hs + q.k[0], H + q.p[0]) - hs) *
                                          (std::min(ws + q.k[1], W + q.p[1]) - ws));
      double div = q.include_pad ? padded : at4(inside, n, c, y, xx);
      gx.data_ptr<double>()[((n * x.size(1) + c) * H + sy) * W + sx] += at4(g, n, c, y, xx) / div;
      (void)oh;
      (void)ow;
    });
    return {a[1].to_tensor().dim() == 4 ? gx : gx.squeeze(0)};
  };
}
// (grad, self): each output's grad spread evenly over its adaptive window.
EMBER_OP_INFO("ember::adaptive_avg_pool2d_backward", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.tol_scale = 4;
  info.samples = [](DType dt) {
    std::vector<Sample> out;
    uint64_t seed = 80;
    const testing::OpInfo* f = testing::find_op_info("ember::adaptive_avg_pool2d");
    for (const Sample& s : f->samples(dt))
      out.push_back({with_grad(dt, f->reference(s.args)[0].to_tensor(), {s.args[0]}, seed++), s.desc});
    return out;
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor g = as4(a[0].to_tensor()), x = as4(a[1].to_tensor());
    int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), OH = g.size(2), OW = g.size(3);
    Tensor gx = zeros(x.sizes(), kFloat64);
    double* p = gx.data_ptr<double>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < OH; ++i)
          for (int64_t j = 0; j < OW; ++j) {
            int64_t y0 = i * H / OH, y1 = ((i + 1) * H + OH - 1) / OH, x0 = j * W / OW, x1 = ((j + 1) * W + OW - 1) / OW;
            double v = at4(g, n, c, i, j) / static_cast<double>((y1 - y0) * (x1 - x0));
            for (int64_t y = y0; y < y1; ++y)
              for (int64_t xx = x0; xx < x1; ++xx) p[((n * C + c) * H + y) * W + xx] += v;
          }
    return {a[1].to_tensor().dim() == 4 ? gx : gx.squeeze(0)};
  };
}

}  // namespace ember
