#include "ember/nn/pooling_nd.h"

#include <cmath>
#include <limits>

#include "ember/nn/internal/host_index.h"
#include "ember/ops/composite.h"

namespace ember {
namespace nn {
namespace functional {
namespace {
// The input positions each output reads along one spatial dim: out windows of k positions, -1
// where a window reads padding (or is shorter than k).
struct DimWindows {
  int64_t in = 0, out = 0, k = 0;
  std::vector<int64_t> pos;  // out * k
  std::vector<double> size;  // avg pooling's divisor factor per output
};

// x with its spatial dims checked: ([N, C, *D] or [C, *D]) -> [N, C, S] and the spatial sizes.
struct Planes {
  Tensor x;                    // [N, C, S]
  std::vector<int64_t> batch;  // the leading dims to restore
  std::vector<int64_t> in;
};
Planes planes_of(const char* op, const Tensor& x, size_t d) {
  const int64_t nd = x.dim();
  EMBER_CHECK_SHAPE(nd == static_cast<int64_t>(d) + 1 || nd == static_cast<int64_t>(d) + 2, op, ": expected a ", d + 1,
                    "-D or ", d + 2, "-D input ([C, *] or [N, C, *] with ", d, " spatial dims), got shape ", x.sizes());
  EMBER_CHECK_DTYPE(is_floating_point(x.dtype()), op, ": expected a floating-point input, got ", x.dtype());
  Planes p;
  for (int64_t i = 0; i < nd - static_cast<int64_t>(d); ++i) p.batch.push_back(x.size(i));
  int64_t S = 1;
  for (int64_t i = nd - static_cast<int64_t>(d); i < nd; ++i) {
    EMBER_CHECK_SHAPE(x.size(i) > 0, op, ": spatial dims must be non-empty, got shape ", x.sizes());
    p.in.push_back(x.size(i));
    S = checked_mul(S, x.size(i), op);
  }
  const int64_t N = p.batch.size() == 2 ? p.batch[0] : 1, C = p.batch.back();
  p.x = x.reshape({N, C, S});
  return p;
}
std::vector<int64_t> out_shape(const Planes& p, const std::vector<DimWindows>& w) {
  std::vector<int64_t> s = p.batch;
  for (const auto& d : w) s.push_back(d.out);
  return s;
}

// The flat table [P * K] of input positions (S where padding) of the product of the dims' windows.
std::vector<int64_t> window_table(const char* op, const std::vector<DimWindows>& w, int64_t S) {
  int64_t P = 1, K = 1;
  for (const auto& d : w) {
    P = checked_mul(P, d.out, op);
    K = checked_mul(K, d.k, op);
  }
  std::vector<int64_t> table(static_cast<size_t>(checked_mul(P, K, op)));
  const size_t D = w.size();
  std::vector<int64_t> o(D, 0), j(D, 0);
  size_t t = 0;
  for (int64_t p = 0; p < P; ++p) {
    std::fill(j.begin(), j.end(), 0);
    for (int64_t k = 0; k < K; ++k) {
      int64_t flat = 0;
      bool pad = false;
      for (size_t d = 0; d < D; ++d) {
        const int64_t q = w[d].pos[static_cast<size_t>(o[d] * w[d].k + j[d])];
        pad = pad || q < 0;
        flat = flat * w[d].in + q;
      }
      table[t++] = pad ? S : flat;
      for (size_t d = D; d-- > 0;) {  // next window element
        if (++j[d] < w[d].k) break;
        j[d] = 0;
      }
    }
    for (size_t d = D; d-- > 0;) {  // next output
      if (++o[d] < w[d].out) break;
      o[d] = 0;
    }
  }
  return table;
}

// [N, C, P, K]: the windows of x's planes, padding reading fill. table: [P K] shared by every plane,
// or [N, C, P K] (one per plane).
Tensor gather_windows(const Planes& p, const Tensor& table, double fill, int64_t P, int64_t K) {
  const int64_t N = p.x.size(0), C = p.x.size(1);
  Tensor padded = cat({p.x, full({N, C, 1}, fill, p.x.options())}, 2);
  Tensor g = table.dim() == 1 ? padded.index_select(2, table) : padded.gather(2, table);
  return g.view({N, C, P, K});
}

// values [*batch, *out] and the flat input positions of the maxima.
std::tuple<Tensor, Tensor> max_over_windows(const char* op, const Planes& p, const std::vector<DimWindows>& w,
                                            const Tensor& table) {
  int64_t P = 1, K = 1;
  for (const auto& d : w) P *= d.out, K *= d.k;
  (void)op;
  Tensor g = gather_windows(p, table, -std::numeric_limits<double>::infinity(), P, K);
  auto [values, arg] = max(g, 3);
  const int64_t N = p.x.size(0), C = p.x.size(1);
  Tensor tab = table.dim() == 1 ? table.view({1, 1, P, K}).expand({N, C, P, K}) : table.view({N, C, P, K});
  Tensor idx = tab.gather(3, arg.unsqueeze(3)).squeeze(3);
  const auto shape = out_shape(p, w);
  return {values.reshape(shape), idx.reshape(shape)};
}

// PyTorch's pooling_output_shape.
int64_t pooled_size(const char* op, int64_t in, int64_t k, int64_t s, int64_t pad, int64_t dil, bool ceil) {
  EMBER_CHECK_VALUE(k > 0 && s > 0 && dil > 0 && pad >= 0, op,
                    ": kernel_size, stride and dilation must be positive and padding non-negative, got kernel_size ", k,
                    ", stride ", s, ", padding ", pad, ", dilation ", dil);
  const int64_t eff = checked_add(checked_mul(dil, k - 1, op), 1, op);
  EMBER_CHECK_VALUE(pad <= k / 2, op, ": padding ", pad, " must be at most half the kernel size ", k);
  const int64_t span = in + 2 * pad - eff;
  int64_t out = (span + (ceil ? s - 1 : 0)) / s + 1;
  if (span < 0 && !ceil) out = 0;
  if (ceil && (out - 1) * s >= in + pad) --out;
  EMBER_CHECK_SHAPE(out > 0, op, ": input size ", in, " too small for kernel ", k, " (padding ", pad, ", dilation ",
                    dil, ")");
  return out;
}

DimWindows max_windows(const char* op, int64_t in, int64_t k, int64_t s, int64_t pad, int64_t dil, bool ceil) {
  DimWindows w{in, pooled_size(op, in, k, s, pad, dil, ceil), k, {}, {}};
  for (int64_t o = 0; o < w.out; ++o)
    for (int64_t j = 0; j < k; ++j) {
      const int64_t q = o * s - pad + j * dil;
      w.pos.push_back(q >= 0 && q < in ? q : -1);
    }
  return w;
}
// PyTorch's avg_pool windows: [start, end) clipped to the padded input; the divisor counts the
// padding (count_include_pad) or only the input.
DimWindows avg_windows(const char* op, int64_t in, int64_t k, int64_t s, int64_t pad, bool ceil, bool include_pad) {
  DimWindows w{in, pooled_size(op, in, k, s, pad, 1, ceil), k, {}, {}};
  for (int64_t o = 0; o < w.out; ++o) {
    const int64_t start = o * s - pad, end = std::min(start + k, in + pad);
    const int64_t lo = std::max<int64_t>(start, 0), hi = std::min(end, in);
    for (int64_t j = 0; j < k; ++j) w.pos.push_back(lo + j < hi ? lo + j : -1);
    w.size.push_back(static_cast<double>(include_pad ? end - start : hi - lo));
  }
  return w;
}
DimWindows adaptive_windows(const char* op, int64_t in, int64_t out) {
  EMBER_CHECK_VALUE(out > 0, op, ": output_size must be positive, got ", out);
  DimWindows w{in, out, 0, {}, {}};
  for (int64_t o = 0; o < out; ++o) w.k = std::max(w.k, (o + 1) * in / out + ((o + 1) * in % out != 0) - o * in / out);
  for (int64_t o = 0; o < out; ++o) {
    const int64_t lo = o * in / out, hi = (o + 1) * in / out + ((o + 1) * in % out != 0);
    for (int64_t j = 0; j < w.k; ++j) w.pos.push_back(lo + j < hi ? lo + j : -1);
    w.size.push_back(static_cast<double>(hi - lo));
  }
  return w;
}

// The divisors of the outputs [P] (products of the dims' factors, or divisor_override).
Tensor divisors(const std::vector<DimWindows>& w, std::optional<int64_t> override_, const Tensor& like) {
  std::vector<double> d{1.0};
  for (const auto& dim : w) {
    std::vector<double> next;
    for (double a : d)
      for (double b : dim.size) next.push_back(override_ ? static_cast<double>(*override_) : a * b);
    d = std::move(next);
  }
  return tensor(d).to(like.dtype()).to(like.device());
}

Tensor avg_over_windows(const char* op, const Planes& p, const std::vector<DimWindows>& w,
                        std::optional<int64_t> override_) {
  int64_t P = 1, K = 1;
  for (const auto& d : w) P *= d.out, K *= d.k;
  const int64_t S = p.x.size(2);
  Tensor table = detail::host_index(window_table(op, w, S), p.x, {P * K});
  Tensor sums = gather_windows(p, table, 0.0, P, K).sum(3);
  return (sums / divisors(w, override_, p.x)).reshape(out_shape(p, w));
}

template <size_t D>
std::tuple<Tensor, Tensor> max_pool_nd(const char* op, const Tensor& x, const MaxPoolOptions<D>& o) {
  Planes p = planes_of(op, x, D);
  std::vector<DimWindows> w;
  for (size_t d = 0; d < D; ++d)
    w.push_back(
        max_windows(op, p.in[d], o.kernel_size()[d], o.stride()[d], o.padding()[d], o.dilation()[d], o.ceil_mode()));
  int64_t P = 1, K = 1;
  for (const auto& d : w) P *= d.out, K *= d.k;
  return max_over_windows(op, p, w, detail::host_index(window_table(op, w, p.x.size(2)), p.x, {P * K}));
}

template <size_t D, typename Options>
std::tuple<Tensor, Tensor> adaptive_max_nd(const char* op, const Tensor& x, const Options& o) {
  Planes p = planes_of(op, x, D);
  std::vector<DimWindows> w;
  for (size_t d = 0; d < D; ++d) w.push_back(adaptive_windows(op, p.in[d], o.output_size()[d]));
  int64_t P = 1, K = 1;
  for (const auto& d : w) P *= d.out, K *= d.k;
  return max_over_windows(op, p, w, detail::host_index(window_table(op, w, p.x.size(2)), p.x, {P * K}));
}

// PyTorch's fractional windows along one dim for a sample u in [0, 1).
std::vector<int64_t> fractional_starts(double u, int64_t in, int64_t out, int64_t k) {
  std::vector<int64_t> s(static_cast<size_t>(out));
  const double alpha = out > 1 ? static_cast<double>(in - k) / static_cast<double>(out - 1) : 0.0;
  for (int64_t i = 0; i + 1 < out; ++i)
    s[static_cast<size_t>(i)] =
        static_cast<int64_t>((static_cast<double>(i) + u) * alpha) - static_cast<int64_t>(u * alpha);
  s[static_cast<size_t>(out - 1)] = in - k;
  return s;
}

// sample_dim(d): which of the samples' D values drives spatial dim d (PyTorch's order: 2-D takes
// width from sample 0; 3-D takes time, height, width from 0, 1, 2).
template <size_t D>
std::tuple<Tensor, Tensor> fractional_nd(const char* op, const Tensor& x, const FractionalMaxPoolOptions<D>& o) {
  Planes p = planes_of(op, x, D);
  const int64_t N = p.x.size(0), C = p.x.size(1);
  std::vector<DimWindows> w(D);
  for (size_t d = 0; d < D; ++d) {
    const int64_t k = o.kernel_size()[d];
    int64_t out = 0;
    if (o.output_size()) {
      out = (*o.output_size())[d];
    } else {
      EMBER_CHECK_VALUE(o.output_ratio().has_value(), op, ": output_size or output_ratio must be given");
      const double r = (*o.output_ratio())[d];
      EMBER_CHECK_VALUE(r > 0 && r < 1, op, ": output_ratio must be in (0, 1), got ", r);
      out = static_cast<int64_t>(static_cast<double>(p.in[d]) * r);
    }
    EMBER_CHECK_VALUE(k > 0 && out > 0 && out + k - 1 <= p.in[d], op, ": output size ", out, " and kernel_size ", k,
                      " do not fit input size ", p.in[d], " (output + kernel - 1 must be at most the input)");
    w[d] = DimWindows{p.in[d], out, k, {}, {}};
  }
  Tensor samples = o._random_samples();
  if (!samples.defined()) samples = rand({N, C, static_cast<int64_t>(D)}, TensorOptions().dtype(kFloat64));
  EMBER_CHECK_SHAPE(
      samples.dim() == 3 && samples.size(0) == N && samples.size(1) == C && samples.size(2) == static_cast<int64_t>(D),
      op, ": _random_samples must be [", N, ", ", C, ", ", D, "], got shape ", samples.sizes());
  const std::vector<double> u = samples.to_vector<double>();
  int64_t P = 1, K = 1;
  for (const auto& d : w) P *= d.out, K *= d.k;
  std::vector<int64_t> table;
  table.reserve(static_cast<size_t>(checked_mul(checked_mul(N * C, P, op), K, op)));
  for (int64_t plane = 0; plane < N * C; ++plane) {
    for (size_t d = 0; d < D; ++d) {
      const size_t sample = D == 2 ? 1 - d : d;
      const auto starts = fractional_starts(u[static_cast<size_t>(plane) * D + sample], w[d].in, w[d].out, w[d].k);
      w[d].pos.clear();
      for (int64_t s : starts)
        for (int64_t j = 0; j < w[d].k; ++j) w[d].pos.push_back(s + j);
    }
    const auto t = window_table(op, w, p.x.size(2));
    table.insert(table.end(), t.begin(), t.end());
  }
  return max_over_windows(op, p, w, detail::host_index(table, p.x, {N, C, P * K}));
}

template <size_t D>
Tensor max_unpool_nd(const char* op, const Tensor& input, const Tensor& indices, const MaxUnpoolFuncOptions<D>& o) {
  Planes p = planes_of(op, input, D);
  EMBER_CHECK_SHAPE(indices.sizes() == input.sizes(), op, ": indices must have the input's shape ", input.sizes(),
                    ", got ", indices.sizes());
  EMBER_CHECK_DTYPE(indices.dtype() == kInt64, op, ": indices must be int64, got ", indices.dtype());
  const auto out = _unpool_output_size(input, o.kernel_size(), o.stride(), o.padding(), o.output_size());
  int64_t S = 1;
  for (int64_t s : out) S = checked_mul(S, s, op);
  const int64_t N = p.x.size(0), C = p.x.size(1);
  Tensor idx = indices.reshape({N, C, p.x.size(2)});
  if (idx.numel() > 0) {
    const auto [lo, hi] = aminmax(idx);
    const int64_t mn = lo.item<int64_t>(), mx = hi.item<int64_t>();
    EMBER_CHECK_INDEX(mn >= 0 && mx < S, op, ": indices must be in [0, ", S, ") (the output plane of size ",
                      IntArrayRef(out), "), got values in [", mn, ", ", mx, "]");
  }
  Tensor y = zeros({N, C, S}, p.x.options()).scatter(2, idx, p.x);
  std::vector<int64_t> shape = p.batch;
  shape.insert(shape.end(), out.begin(), out.end());
  return y.reshape(shape);
}
}  // namespace

Tensor avg_pool3d(const Tensor& x, const AvgPool3dFuncOptions& o) {
  const char* op = "avg_pool3d";
  Planes p = planes_of(op, x, 3);
  std::vector<DimWindows> w;
  for (size_t d = 0; d < 3; ++d)
    w.push_back(avg_windows(op, p.in[d], o.kernel_size()[d], o.stride()[d], o.padding()[d], o.ceil_mode(),
                            o.count_include_pad()));
  if (o.divisor_override()) EMBER_CHECK_VALUE(*o.divisor_override() != 0, op, ": divisor_override must not be 0");
  return avg_over_windows(op, p, w, o.divisor_override());
}
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& x, const MaxPool3dFuncOptions& o) {
  return max_pool_nd<3>("max_pool3d", x, o);
}
Tensor max_pool3d(const Tensor& x, const MaxPool3dFuncOptions& o) { return std::get<0>(max_pool3d_with_indices(x, o)); }
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x, const MaxPool1dFuncOptions& o) {
  MaxPoolOptions<1> m(o.kernel_size());
  m.stride(o.stride()).padding(o.padding()).dilation(o.dilation()).ceil_mode(o.ceil_mode());
  return max_pool_nd<1>("max_pool1d", x, m);
}
Tensor adaptive_avg_pool3d(const Tensor& x, const AdaptiveAvgPool3dFuncOptions& o) {
  const char* op = "adaptive_avg_pool3d";
  Planes p = planes_of(op, x, 3);
  std::vector<DimWindows> w;
  for (size_t d = 0; d < 3; ++d) w.push_back(adaptive_windows(op, p.in[d], o.output_size()[d]));
  return avg_over_windows(op, p, w, std::nullopt);
}
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& x, const AdaptiveMaxPool1dFuncOptions& o) {
  return adaptive_max_nd<1>("adaptive_max_pool1d", x, o);
}
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& x, const AdaptiveMaxPool2dFuncOptions& o) {
  return adaptive_max_nd<2>("adaptive_max_pool2d", x, o);
}
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& x, const AdaptiveMaxPool3dFuncOptions& o) {
  return adaptive_max_nd<3>("adaptive_max_pool3d", x, o);
}
Tensor adaptive_max_pool1d(const Tensor& x, const AdaptiveMaxPool1dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool1d_with_indices(x, o));
}
Tensor adaptive_max_pool2d(const Tensor& x, const AdaptiveMaxPool2dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool2d_with_indices(x, o));
}
Tensor adaptive_max_pool3d(const Tensor& x, const AdaptiveMaxPool3dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool3d_with_indices(x, o));
}

std::vector<int64_t> _unpool_output_size(const Tensor& input, const IntArrayRef& kernel_size, const IntArrayRef& stride,
                                         const IntArrayRef& padding,
                                         const std::optional<std::vector<int64_t>>& output_size) {
  const char* op = "max_unpool";
  const size_t D = kernel_size.size();
  EMBER_CHECK_SHAPE(input.dim() >= static_cast<int64_t>(D), op, ": input of shape ", input.sizes(), " has fewer than ",
                    D, " dims");
  std::vector<int64_t> def;
  for (size_t d = 0; d < D; ++d) {
    const int64_t in = input.size(input.dim() - static_cast<int64_t>(D) + static_cast<int64_t>(d));
    def.push_back(checked_add(checked_mul(in - 1, stride[d], op), kernel_size[d] - 2 * padding[d], op));
  }
  if (!output_size) return def;
  std::vector<int64_t> out = *output_size;
  EMBER_CHECK_SHAPE(out.size() == D || out.size() == D + 2 || out.size() == D + 1, op, ": output_size must have ", D,
                    " values (or the input's batch dims too), got ", out.size());
  out.erase(out.begin(), out.end() - static_cast<std::ptrdiff_t>(D));
  for (size_t d = 0; d < D; ++d) {
    const int64_t lo = def[d] - stride[d], hi = def[d] + stride[d];
    EMBER_CHECK_SHAPE(out[d] > lo && out[d] < hi, op, ": output_size ", IntArrayRef(out),
                      " is not one the pooling could have come from (dim ", d, " must be in (", lo, ", ", hi, "))");
  }
  return out;
}
Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& o) {
  return max_unpool_nd<1>("max_unpool1d", input, indices, o);
}
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& o) {
  return max_unpool_nd<2>("max_unpool2d", input, indices, o);
}
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& o) {
  return max_unpool_nd<3>("max_unpool3d", input, indices, o);
}
std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(const Tensor& x,
                                                              const FractionalMaxPool2dFuncOptions& o) {
  return fractional_nd<2>("fractional_max_pool2d", x, o);
}
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(const Tensor& x,
                                                              const FractionalMaxPool3dFuncOptions& o) {
  return fractional_nd<3>("fractional_max_pool3d", x, o);
}
Tensor fractional_max_pool2d(const Tensor& x, const FractionalMaxPool2dFuncOptions& o) {
  return std::get<0>(fractional_max_pool2d_with_indices(x, o));
}
Tensor fractional_max_pool3d(const Tensor& x, const FractionalMaxPool3dFuncOptions& o) {
  return std::get<0>(fractional_max_pool3d_with_indices(x, o));
}
}  // namespace functional

}  // namespace nn
}  // namespace ember
