#include "ember/testing/reference.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "ember/ops/ops.h"

namespace ember {
namespace testing {

namespace {
Tensor new_f64(IntArrayRef shape) { return empty(shape, kFloat64); }

void write_double(const Tensor& t, int64_t flat, double v) {
  char* p = static_cast<char*>(t.raw_data_ptr()) + flat * static_cast<int64_t>(t.element_size());
  switch (t.dtype()) {
    case DType::Float32: *reinterpret_cast<float*>(p) = static_cast<float>(v); break;
    case DType::Float64: *reinterpret_cast<double*>(p) = v; break;
    case DType::Float16: *reinterpret_cast<Half*>(p) = Half(static_cast<float>(v)); break;
    case DType::BFloat16: *reinterpret_cast<BFloat16*>(p) = BFloat16(static_cast<float>(v)); break;
    case DType::Int64: *reinterpret_cast<int64_t*>(p) = static_cast<int64_t>(v); break;
    case DType::Int32: *reinterpret_cast<int32_t*>(p) = static_cast<int32_t>(v); break;
    case DType::Bool: *reinterpret_cast<bool*>(p) = v != 0.0; break;
    // Integers wrap as the kernels' int64 -> uint8/int8 stores do.
    case DType::UInt8: *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(saturating_int64(v)); break;
    case DType::Int8: *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(saturating_int64(v)); break;
    case DType::Int16: *reinterpret_cast<int16_t*>(p) = static_cast<int16_t>(saturating_int64(v)); break;
  }
}

int64_t flat_offset(const Tensor& t, IntArrayRef index) {
  int64_t off = 0;
  IntArrayRef st = t.strides_ref();
  for (size_t d = 0; d < index.size(); ++d) off += index[d] * st[d];
  return off;
}
}  // namespace

std::vector<Shape> all_indices(IntArrayRef shape) {
  std::vector<Shape> out;
  int64_t n = numel_of(shape);
  Shape idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    out.push_back(idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

double at(const Tensor& t, IntArrayRef index) {
  const char* p = static_cast<const char*>(t.raw_data_ptr()) + flat_offset(t, index) * static_cast<int64_t>(t.element_size());
  switch (t.dtype()) {
    case DType::Float32: return *reinterpret_cast<const float*>(p);
    case DType::Float64: return *reinterpret_cast<const double*>(p);
    case DType::Float16: return static_cast<float>(*reinterpret_cast<const Half*>(p));
    case DType::BFloat16: return static_cast<float>(*reinterpret_cast<const BFloat16*>(p));
    case DType::Int64: return static_cast<double>(*reinterpret_cast<const int64_t*>(p));
    case DType::Int32: return *reinterpret_cast<const int32_t*>(p);
    case DType::Bool: return *reinterpret_cast<const bool*>(p) ? 1.0 : 0.0;
    case DType::UInt8: return *reinterpret_cast<const uint8_t*>(p);
    case DType::Int8: return *reinterpret_cast<const int8_t*>(p);
    case DType::Int16: return *reinterpret_cast<const int16_t*>(p);
  }
  return 0;
}

int64_t at_int(const Tensor& t, IntArrayRef index) {
  const char* p = static_cast<const char*>(t.raw_data_ptr()) + flat_offset(t, index) * static_cast<int64_t>(t.element_size());
  if (t.dtype() == DType::Int64) return *reinterpret_cast<const int64_t*>(p);
  return static_cast<int64_t>(at(t, index));
}

Tensor make_tensor(IntArrayRef shape, DType dtype, double lo, double hi, uint64_t seed) {
  Tensor t = empty(shape, dtype);
  std::mt19937_64 gen(seed * 7919 + static_cast<uint64_t>(numel_of(shape)));
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = dist(gen);
    if (is_integral(dtype, true)) v = std::floor(v);
    write_double(t, i, v);
  }
  return t;
}

Tensor make_noncontig(IntArrayRef shape, DType dtype, double lo, double hi, uint64_t seed) {
  if (shape.size() < 2) {
    // 1-d (or 0-d): every other element of a buffer twice as long.
    Shape big(shape.begin(), shape.end());
    if (big.empty()) return make_tensor(shape, dtype, lo, hi, seed);
    big[0] *= 2;
    return make_tensor(big, dtype, lo, hi, seed).slice(0, 0, big[0], 2);
  }
  // Buffer of shape [..., last*2, second_last] transposed back, then every other column.
  Shape big(shape.begin(), shape.end());
  size_t r = big.size();
  std::swap(big[r - 1], big[r - 2]);
  big[r - 2] *= 2;
  Tensor b = make_tensor(big, dtype, lo, hi, seed).transpose(-1, -2);
  return b.slice(-1, 0, big[r - 2], 2);
}

Tensor make_distinct(IntArrayRef shape, DType dtype, double lo, double hi, uint64_t seed) {
  Tensor t = empty(shape, dtype);
  int64_t n = t.numel();
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = lo + (hi - lo) * (static_cast<double>(i) + 0.5) / static_cast<double>(n);
  std::shuffle(v.begin(), v.end(), std::mt19937_64(seed * 31 + static_cast<uint64_t>(n)));
  for (int64_t i = 0; i < n; ++i) write_double(t, i, v[static_cast<size_t>(i)]);
  return t;
}

Tensor make_int_valued(IntArrayRef shape, DType dtype, int64_t lo, int64_t hi, uint64_t seed) {
  Tensor t = empty(shape, dtype);
  std::mt19937_64 gen(seed * 104729 + static_cast<uint64_t>(numel_of(shape)));
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) write_double(t, i, static_cast<double>(dist(gen)));
  return t;
}

std::vector<Sample> unary_samples(DType dt, double lo, double hi) {
  std::vector<Sample> s;
  s.push_back({{make_tensor({5, 7}, dt, lo, hi, 11)}, "contiguous [5, 7]"});
  s.push_back({{make_tensor({}, dt, lo, hi, 12)}, "0-d"});
  s.push_back({{make_tensor({0, 3}, dt, lo, hi, 13)}, "empty [0, 3]"});
  s.push_back({{make_noncontig({4, 6}, dt, lo, hi, 14)}, "non-contiguous [4, 6] (transposed, step 2)"});
  s.push_back({{make_tensor({3, 4, 5}, dt, lo, hi, 15).permute({2, 0, 1})}, "permuted [5, 3, 4]"});
  s.push_back({{make_tensor({300, 67}, dt, lo, hi, 16)}, "large [300, 67] (parallel)"});
  return s;
}

std::vector<Sample> binary_samples(DType dt, double lo, double hi) {
  std::vector<Sample> s;
  s.push_back({{make_tensor({4, 5}, dt, lo, hi, 21), make_tensor({4, 5}, dt, lo, hi, 22)}, "same shape [4, 5]"});
  s.push_back({{make_tensor({3, 1}, dt, lo, hi, 23), make_tensor({4}, dt, lo, hi, 24)}, "broadcast [3, 1] x [4]"});
  s.push_back({{make_tensor({2, 3, 4}, dt, lo, hi, 25), make_tensor({}, dt, lo, hi, 26)}, "tensor x 0-d"});
  s.push_back({{make_noncontig({5, 6}, dt, lo, hi, 27), make_tensor({6}, dt, lo, hi, 28)},
               "non-contiguous [5, 6] x broadcast row [6]"});
  s.push_back({{make_tensor({5, 1, 3}, dt, lo, hi, 29), make_noncontig({4, 3}, dt, lo, hi, 30)},
               "broadcast [5, 1, 3] x non-contiguous [4, 3]"});
  s.push_back({{make_tensor({257, 130}, dt, lo, hi, 31), make_tensor({257, 130}, dt, lo, hi, 32)},
               "large [257, 130] (parallel)"});
  s.push_back({{make_tensor({0, 4}, dt, lo, hi, 33), make_tensor({4}, dt, lo, hi, 34)}, "empty [0, 4] x [4]"});
  DType other = dt == kFloat64 ? kFloat32 : kFloat64;
  s.push_back({{make_tensor({3, 4}, dt, lo, hi, 35), make_tensor({3, 4}, other, lo, hi, 36)},
               std::string("mixed dtypes ") + dtype_name(dt) + " x " + dtype_name(other)});
  return s;
}

Stack to_float64(const Stack& args) {
  Stack out;
  for (const IValue& v : args) {
    if (v.is_tensor() && v.to_tensor().defined() && v.to_tensor().is_floating_point()) {
      out.emplace_back(ref_contiguous(v.to_tensor(), kFloat64));
    } else if (v.is_tensor_list()) {
      std::vector<Tensor> l;
      for (const Tensor& t : v.to_tensor_list())
        l.push_back(t.is_floating_point() ? ref_contiguous(t, kFloat64) : t);
      out.emplace_back(l);
    } else {
      out.push_back(v);
    }
  }
  return out;
}

Tensor ref_contiguous(const Tensor& x, DType dtype) {
  Tensor out = empty(x.sizes_ref(), dtype);
  int64_t i = 0;
  for (const Shape& idx : all_indices(x.sizes_ref())) {
    if (dtype == kInt64) {
      *(static_cast<int64_t*>(out.raw_data_ptr()) + i) = at_int(x, idx);
    } else {
      write_double(out, i, at(x, idx));
    }
    ++i;
  }
  return out;
}

Tensor ref_map(const Tensor& x, const std::function<double(double)>& f) {
  Tensor out = new_f64(x.sizes_ref());
  double* o = out.data_ptr<double>();
  for (const Shape& idx : all_indices(x.sizes_ref())) *o++ = f(at(x, idx));
  return out;
}

namespace {
// Index into a broadcast operand for an output index.
Shape bcast_index(const Shape& out_idx, IntArrayRef in_shape) {
  Shape idx(in_shape.size());
  size_t lead = out_idx.size() - in_shape.size();
  for (size_t d = 0; d < in_shape.size(); ++d) idx[d] = in_shape[d] == 1 ? 0 : out_idx[lead + d];
  return idx;
}
}  // namespace

Tensor ref_map2(const Tensor& a, const Tensor& b, const std::function<double(double, double)>& f) {
  Shape shape = broadcast_shapes(a.sizes_ref(), b.sizes_ref());
  Tensor out = new_f64(shape);
  double* o = out.data_ptr<double>();
  for (const Shape& idx : all_indices(shape))
    *o++ = f(at(a, bcast_index(idx, a.sizes_ref())), at(b, bcast_index(idx, b.sizes_ref())));
  return out;
}

Tensor ref_map3(const Tensor& a, const Tensor& b, const Tensor& c,
                const std::function<double(double, double, double)>& f) {
  Shape shape = broadcast_shapes(broadcast_shapes(a.sizes_ref(), b.sizes_ref()), c.sizes_ref());
  Tensor out = new_f64(shape);
  double* o = out.data_ptr<double>();
  for (const Shape& idx : all_indices(shape))
    *o++ = f(at(a, bcast_index(idx, a.sizes_ref())), at(b, bcast_index(idx, b.sizes_ref())),
             at(c, bcast_index(idx, c.sizes_ref())));
  return out;
}

Tensor ref_reduce(const Tensor& x, IntArrayRef dims, bool keepdim,
                  const std::function<double(const std::vector<double>&)>& f) {
  int64_t nd = x.dim();
  std::vector<bool> red(static_cast<size_t>(nd), dims.empty());
  for (int64_t d : dims) red[static_cast<size_t>(d < 0 ? d + nd : d)] = true;
  Shape kshape, oshape;
  for (int64_t d = 0; d < nd; ++d) {
    kshape.push_back(red[static_cast<size_t>(d)] ? 1 : x.size(d));
    if (!red[static_cast<size_t>(d)] || keepdim) oshape.push_back(kshape.back());
  }
  std::vector<std::vector<double>> groups(static_cast<size_t>(numel_of(kshape)));
  for (const Shape& idx : all_indices(x.sizes_ref())) {
    int64_t flat = 0;
    for (int64_t d = 0; d < nd; ++d) flat = flat * kshape[d] + (red[static_cast<size_t>(d)] ? 0 : idx[d]);
    groups[static_cast<size_t>(flat)].push_back(at(x, idx));
  }
  Tensor out = new_f64(oshape);
  double* o = out.data_ptr<double>();
  for (const auto& g : groups) *o++ = f(g);
  return out;
}

Tensor ref_along(const Tensor& x, int64_t dim, const std::function<std::vector<double>(const std::vector<double>&)>& f) {
  int64_t nd = x.dim();
  Tensor out = new_f64(x.sizes_ref());
  if (nd == 0) {
    out.data_ptr<double>()[0] = f({at(x, {})})[0];
    return out;
  }
  int64_t d = dim < 0 ? dim + nd : dim;
  Shape outer = x.sizes();
  int64_t n = outer[static_cast<size_t>(d)];
  outer[static_cast<size_t>(d)] = 1;
  Shape ostrides = contiguous_strides(x.sizes_ref()).vec();
  for (const Shape& base : all_indices(outer)) {
    std::vector<double> v;
    Shape idx = base;
    for (int64_t i = 0; i < n; ++i) {
      idx[static_cast<size_t>(d)] = i;
      v.push_back(at(x, idx));
    }
    std::vector<double> r = f(v);
    for (int64_t i = 0; i < n; ++i) {
      idx[static_cast<size_t>(d)] = i;
      int64_t flat = 0;
      for (int64_t k = 0; k < nd; ++k) flat += idx[static_cast<size_t>(k)] * ostrides[static_cast<size_t>(k)];
      out.data_ptr<double>()[flat] = r[static_cast<size_t>(i)];
    }
  }
  return out;
}

Tensor ref_matmul(const Tensor& a, const Tensor& b) {
  bool batched = a.dim() == 3;
  int64_t B = batched ? a.size(0) : 1, M = a.size(-2), K = a.size(-1), N = b.size(-1);
  Tensor out = batched ? new_f64({B, M, N}) : new_f64({M, N});
  double* o = out.data_ptr<double>();
  for (int64_t bi = 0; bi < B; ++bi)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += batched ? at(a, {bi, i, k}) * at(b, {bi, k, j}) : at(a, {i, k}) * at(b, {k, j});
        *o++ = acc;
      }
  return out;
}

}  // namespace testing
}  // namespace ember

namespace ember {
namespace testing {

void set_binary_info(OpInfo& info, std::function<double(double, double)> f, double lo, double hi, bool with_alpha) {
  info.samples = [lo, hi, with_alpha](DType dt) {
    std::vector<Sample> s = binary_samples(dt, lo, hi);
    if (with_alpha) {
      Sample a = s[1];
      bool integral = is_integral(dt, true);
      a.args.push_back(integral ? IValue(int64_t(2)) : IValue(0.5));
      a.desc += integral ? ", alpha=2" : ", alpha=0.5";
      s.push_back(a);
    }
    return s;
  };
  info.reference = [f, with_alpha](const Stack& a) -> Stack {
    double alpha = with_alpha && a.size() > 2 ? a[2].to_double() : 1.0;
    return {ref_map2(a[0].to_tensor(), a[1].to_tensor(), [&](double x, double y) { return f(x, alpha * y); })};
  };
}

void set_scalar_info(OpInfo& info, std::function<double(double, double)> f, double lo, double hi, bool with_alpha) {
  info.samples = [lo, hi, with_alpha](DType dt) {
    std::vector<Sample> s;
    bool integral = is_integral(dt, true);
    for (auto& u : unary_samples(dt, lo, hi)) {
      u.args.push_back(integral ? IValue(int64_t(3)) : IValue(0.75));
      s.push_back(u);
    }
    Sample i = s[0];
    i.args[1] = IValue(int64_t(-2));
    i.desc += ", integer scalar";
    s.push_back(i);
    if (with_alpha) {
      Sample a = s[0];
      a.args.push_back(IValue(int64_t(2)));
      a.desc += ", alpha=2";
      s.push_back(a);
    }
    return s;
  };
  info.reference = [f, with_alpha](const Stack& a) -> Stack {
    double alpha = with_alpha && a.size() > 2 ? a[2].to_double() : 1.0;
    double s = a[1].to_double();
    return {ref_map(a[0].to_tensor(), [&](double x) { return f(x, alpha * s); })};
  };
}

void set_unary_info(OpInfo& info, std::function<double(double)> f, double lo, double hi) {
  info.samples = [lo, hi](DType dt) { return unary_samples(dt, lo, hi); };
  info.reference = [f](const Stack& a) -> Stack { return {ref_map(a[0].to_tensor(), f)}; };
}

}  // namespace testing
}  // namespace ember
