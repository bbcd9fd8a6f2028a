// Softmax and log-softmax along one dim, and their backward kernels. Rows along `dim` are
// processed in the compute type (float for f32/f16/bf16, double for f64).
#include "ember/device/cpu/eigen_util.h"  // first: see the note there

#include <cmath>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <vector>

#include "ember/device/cpu/reduce.h"
#include "ember/device/parallel.h"
#include "ember/core/error.h"

namespace ember {
namespace cpu {
namespace {

// Calls fn(row_buffers...) for every row along dim: loads each operand's row (stride `inner`)
// into a compute buffer, runs fn on the buffers (n = size of dim), stores buffer 0 back to out.
template <class C, class Fn>
void for_each_row(const Strided& out, const Strided* const* ins, int nin, int64_t dim, Fn fn) {
  EMBER_ASSERT(out.contiguous(), __func__, ": expected contiguous operands");
  int64_t n = out.dim() ? out.sizes[dim] : 1;
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < out.dim(); ++d) inner *= out.sizes[d];
  int64_t rows = n ? out.numel() / n : 0;
  const DType cdt = dtype_of<C>;
  // Row buffers are 64-byte aligned so Eigen splits every row into the same scalar/packet parts
  // (results then do not depend on which thread or allocation handled the row).
  const int64_t stride = (n + 15) / 16 * 16;
  parallel_for(rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(n, 1)), [&](int64_t r0, int64_t r1) {
    std::unique_ptr<C[], void (*)(void*)> mem(
        static_cast<C*>(std::aligned_alloc(64, static_cast<size_t>(stride * (nin + 1)) * sizeof(C) + 64)), &std::free);
    C* bufs = mem.get();
    for (int64_t r = r0; r < r1; ++r) {
      int64_t o = r / inner, i = r % inner;
      int64_t base = o * n * inner + i;  // element offset of the row start
      for (int k = 0; k < nin; ++k) {
        const Strided& in = *ins[k];
        convert(in.bytes() + base * static_cast<int64_t>(element_size(in.dtype)), in.dtype, inner,
                bufs + (k + 1) * stride, cdt, 1, n);
      }
      fn(bufs, bufs + stride, bufs + 2 * stride, n);
      convert(bufs, cdt, 1, out.bytes() + base * static_cast<int64_t>(element_size(out.dtype)), out.dtype,
              inner, n);
    }
  });
}

template <class C>
void softmax_t(const Strided& out, const Strided& in, int64_t dim, bool log) {
  const Strided* ins[1] = {&in};
  for_each_row<C>(out, ins, 1, dim, [&](C* y, const C* x, const C*, int64_t n) {
    auto xa = in_arr<C>(x, n);
    auto ya = out_arr<C>(y, n);
    C m = xa.maxCoeff();
    if (!std::isfinite(m)) m = std::isnan(m) ? m : C(0);  // all -inf rows: exp(-inf - 0) = 0
    // fp32 rows are computed in double: summed in fp32, 1e4-1e6 terms lost up to 1e-3 relative,
    // and exp(x - m) with x - m rounded to fp32 loses |x - m| * 2^-24 (2e-6 at x - m = -30).
    if constexpr (std::is_same<C, float>::value) {
      thread_local std::vector<double> tmp;
      tmp.resize(static_cast<size_t>(n));
      Eigen::Map<Eigen::ArrayXd> d(tmp.data(), n);
      d = xa.template cast<double>() - static_cast<double>(m);
      if (log) {
        ya = (d - std::log(d.exp().sum())).template cast<float>();
      } else {
        d = d.exp();
        ya = (d / d.sum()).template cast<float>();
      }
    } else if (log) {
      C lse = std::log((xa - m).exp().sum());
      ya = xa - m - lse;
    } else {
      ya = (xa - m).exp();
      ya /= ya.sum();
    }
  });
}

template <class C>
void softmax_bwd_t(const Strided& gi, const Strided& g, const Strided& y, int64_t dim, bool log) {
  const Strided* ins[2] = {&g, &y};
  for_each_row<C>(gi, ins, 2, dim, [&](C* out, const C* ga, const C* ya, int64_t n) {
    auto G = in_arr<C>(ga, n);
    auto Y = in_arr<C>(ya, n);
    auto O = out_arr<C>(out, n);
    if (log) {
      O = G - Y.exp() * static_cast<C>(G.template cast<double>().sum());  // d log_softmax: g - softmax * sum(g)
    } else {
      O = Y * (G - static_cast<C>((G * Y).template cast<double>().sum()));  // d softmax: y * (g - <g, y>)
    }
  });
}

}  // namespace

#define EMBER_DISPATCH_FLOAT(dt, name, ...)                                         \
  switch (compute_dtype(dt)) {                                                     \
    case DType::Float32: { using C = float; __VA_ARGS__; break; }                  \
    case DType::Float64: { using C = double; __VA_ARGS__; break; }                 \
    default: EMBER_THROW(DTypeError, name, ": expected a floating dtype, got ", dt); \
  }

void softmax(const Strided& out, const Strided& in, int64_t dim) {
  EMBER_DISPATCH_FLOAT(out.dtype, __func__, softmax_t<C>(out, in, dim, false))
}
void log_softmax(const Strided& out, const Strided& in, int64_t dim) {
  EMBER_DISPATCH_FLOAT(out.dtype, __func__, softmax_t<C>(out, in, dim, true))
}
void softmax_backward(const Strided& gi, const Strided& g, const Strided& y, int64_t dim) {
  EMBER_DISPATCH_FLOAT(gi.dtype, __func__, softmax_bwd_t<C>(gi, g, y, dim, false))
}
void log_softmax_backward(const Strided& gi, const Strided& g, const Strided& y, int64_t dim) {
  EMBER_DISPATCH_FLOAT(gi.dtype, __func__, softmax_bwd_t<C>(gi, g, y, dim, true))
}

}  // namespace cpu
}  // namespace ember
