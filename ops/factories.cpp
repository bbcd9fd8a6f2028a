// Factories: empty/zeros/ones/full/rand/randn/randint/arange/eye/linspace/*_like/tensor/
// from_blob/manual_seed. They allocate on the requested device and fill through dispatcher ops
// (fill_, arange_fill_, uniform_, normal_, random_), so every device fills its own memory.
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>

#include "ember/ops/op_util.h"

#include "ember/ops/internal/fill_decls.h"

namespace ember {

// Defined by the autograd layer: marks a fresh tensor as requiring grad.
void set_requires_grad_for_factory(Tensor& t, bool requires_grad);

namespace {
using namespace ops;

struct Generator {
  std::mutex mu;
  uint64_t seed = 0x2545F4914F6CDD1Dull;
  uint64_t offset = 0;
};
Generator& generator() {
  static Generator g;
  return g;
}
// Reserves n counters of the global Philox stream; returns (seed, first counter).
std::pair<int64_t, int64_t> next_random(int64_t n) {
  Generator& g = generator();
  std::lock_guard<std::mutex> lock(g.mu);
  auto r = std::make_pair(static_cast<int64_t>(g.seed), static_cast<int64_t>(g.offset));
  g.offset += static_cast<uint64_t>(n);
  return r;
}

Tensor finish(Tensor t, const TensorOptions& o) {
  if (o.requires_grad()) set_requires_grad_for_factory(t, true);
  return t;
}

TensorOptions merge_like(const Tensor& t, const TensorOptions& o) {
  return TensorOptions().dtype(o.dtype_or(t.dtype())).device(o.has_device() ? o.device() : t.device())
      .requires_grad(o.requires_grad());
}

using FillRandom = Tensor(const Tensor&, double, double, int64_t, int64_t);

Tensor random_tensor(IntArrayRef shape, const TensorOptions& o, const char* op, double a, double b) {
  EMBER_CHECK_DTYPE(is_floating_point(o.dtype()), op, ": expects a floating dtype, got ", o.dtype());
  Tensor t = empty_on(shape, o.dtype(), o.device());
  auto [seed, offset] = next_random(t.numel());
  if (std::strcmp(op, "rand") == 0) {
    op::uniform_::call(t, a, b, seed, offset);
  } else {
    op::normal_::call(t, a, b, seed, offset);
  }
  return finish(t, o);
}

}  // namespace

std::pair<int64_t, int64_t> random_counters(int64_t n) { return next_random(n); }

void manual_seed(uint64_t seed) {
  Generator& g = generator();
  std::lock_guard<std::mutex> lock(g.mu);
  g.seed = seed;
  g.offset = 0;
}

Tensor empty(IntArrayRef shape, const TensorOptions& o) { return finish(empty_on(shape, o.dtype(), o.device()), o); }

Tensor full(IntArrayRef shape, const Scalar& value, const TensorOptions& o) {
  Tensor t = empty_on(shape, o.dtype_or(value.dtype()), o.device());
  fill_(t, value);
  return finish(t, o);
}
Tensor zeros(IntArrayRef shape, const TensorOptions& o) { return full(shape, 0, o.dtype(o.dtype())); }
Tensor ones(IntArrayRef shape, const TensorOptions& o) { return full(shape, 1, o.dtype(o.dtype())); }
Tensor scalar_tensor(const Scalar& value, const TensorOptions& o) { return full({}, value, o); }

Tensor rand(IntArrayRef shape, const TensorOptions& o) { return random_tensor(shape, o, "rand", 0.0, 1.0); }
Tensor randn(IntArrayRef shape, const TensorOptions& o) { return random_tensor(shape, o, "randn", 0.0, 1.0); }
// In place, from the global generator (a tensor that requires grad: under NoGradGuard only, as
// the ops say).
Tensor& Tensor::uniform_(double from, double to) {
  EMBER_CHECK_DTYPE(is_floating_point(), op::uniform_::op_name(), ": expects a floating tensor, got ", dtype());
  auto [seed, offset] = next_random(numel());
  op::uniform_::call(*this, from, to, seed, offset);
  return *this;
}
Tensor& Tensor::normal_(double mean, double std) {
  EMBER_CHECK_DTYPE(is_floating_point(), op::normal_::op_name(), ": expects a floating tensor, got ", dtype());
  auto [seed, offset] = next_random(numel());
  op::normal_::call(*this, mean, std, seed, offset);
  return *this;
}

Tensor randperm(int64_t n, const TensorOptions& o) {
  EMBER_CHECK_VALUE(n >= 0, "randperm: n must be non-negative, got ", n);
  DType dt = o.dtype_or(kInt64);
  // Drawn on the tensor's device from a stream of the global generator (so manual_seed decides
  // it): the same permutation on the CPU and the NPU (CANN's aclnnRandperm).
  Tensor t = empty_on({n}, dt, o.device());
  auto [seed, offset] = next_random(n);
  op::randperm_fill_::call(t, seed, offset);
  return finish(t, o);
}

Tensor randint(int64_t low, int64_t high, IntArrayRef shape, const TensorOptions& o) {
  EMBER_CHECK_VALUE(low < high, "randint: expects low < high, got low=", low, " high=", high);
  Tensor t = empty_on(shape, o.dtype_or(kInt64), o.device());
  auto [seed, offset] = next_random(t.numel());
  op::random_::call(t, low, high, seed, offset);
  return finish(t, o);
}

Tensor arange(const Scalar& end, const TensorOptions& o) { return arange(0, end, 1, o); }
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, const TensorOptions& o) {
  bool integral = !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  EMBER_CHECK_VALUE(st != 0, "arange: step must be nonzero");
  EMBER_CHECK_VALUE((st > 0 && e >= s) || (st < 0 && e <= s), "arange: upper bound and larger bound inconsistent with "
                    "step sign (start=", start, ", end=", end, ", step=", step, ")");
  const double len = std::ceil((e - s) / st);  // NaN for non-finite bounds
  EMBER_CHECK_VALUE(len >= 0 && len < 9.2e18, "arange: start=", start, ", end=", end, ", step=", step,
                    " give no finite element count");
  int64_t n = static_cast<int64_t>(len);
  Tensor t = empty_on({n}, o.dtype_or(integral ? kInt64 : default_float_dtype()), o.device());
  op::arange_fill_::call(t, start, step);
  return finish(t, o);
}

Tensor linspace(double start, double end, int64_t steps, const TensorOptions& o) {
  EMBER_CHECK_VALUE(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
  Tensor t = empty_on({steps}, o.dtype(), o.device());
  double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  op::arange_fill_::call(t, start, step);
  return finish(t, o);
}

Tensor eye(int64_t n, const TensorOptions& o) {
  EMBER_CHECK_VALUE(n >= 0, "eye: n must be non-negative, got ", n);
  Tensor t = zeros({n, n}, o.requires_grad(false));
  if (n > 0) {
    Tensor diag = t.as_strided({n}, {n + 1}, 0);
    diag.fill_(1);
  }
  return finish(t, o);
}

Tensor empty(IntArrayRef shape, const TensorOptions& o, std::optional<MemoryFormat> f) {
  check_memory_format("empty", f);
  return empty(shape, o);
}
Tensor empty_like(const Tensor& t, const TensorOptions& o, std::optional<MemoryFormat> f) {
  check_memory_format("empty_like", f);
  return empty(t.sizes_ref(), merge_like(t, o));
}
Tensor zeros_like(const Tensor& t, const TensorOptions& o, std::optional<MemoryFormat> f) {
  check_memory_format("zeros_like", f);
  return zeros(t.sizes_ref(), merge_like(t, o));
}
Tensor ones_like(const Tensor& t, const TensorOptions& o, std::optional<MemoryFormat> f) {
  check_memory_format("ones_like", f);
  return ones(t.sizes_ref(), merge_like(t, o));
}
Tensor full_like(const Tensor& t, const Scalar& v, const TensorOptions& o, std::optional<MemoryFormat> f) {
  check_memory_format("full_like", f);
  return full(t.sizes_ref(), v, merge_like(t, o));
}
Tensor rand_like(const Tensor& t, const TensorOptions& o, std::optional<MemoryFormat> f) {
  check_memory_format("rand_like", f);
  return rand(t.sizes_ref(), merge_like(t, o));
}
Tensor randn_like(const Tensor& t, const TensorOptions& o, std::optional<MemoryFormat> f) {
  check_memory_format("randn_like", f);
  return randn(t.sizes_ref(), merge_like(t, o));
}

namespace {
template <class T>
Tensor tensor_from(const T* data, size_t n, IntArrayRef shape, const TensorOptions& o) {
  Shape s = shape.empty() ? Shape{static_cast<int64_t>(n)} : shape.vec();
  EMBER_CHECK_SHAPE(numel_of(s) == static_cast<int64_t>(n), "tensor: ", n, " values cannot be viewed as shape ",
                    IntArrayRef(s), " (", numel_of(s), " elements)");
  Tensor t = empty_on(s, dtype_of<T>, Device(DeviceType::CPU));
  if (n) std::memcpy(t.impl()->data(), data, n * sizeof(T));
  Tensor r = t.to(o.has_device() ? o.device() : Device(DeviceType::CPU), o.dtype_or(dtype_of<T>));
  return finish(r.is_same(t) ? t : r, o);
}
}  // namespace

Tensor tensor(const std::vector<float>& v, IntArrayRef s, const TensorOptions& o) { return tensor_from(v.data(), v.size(), s, o); }
Tensor tensor(const std::vector<double>& v, IntArrayRef s, const TensorOptions& o) { return tensor_from(v.data(), v.size(), s, o); }
Tensor tensor(const std::vector<int64_t>& v, IntArrayRef s, const TensorOptions& o) { return tensor_from(v.data(), v.size(), s, o); }
Tensor tensor(const std::vector<int32_t>& v, IntArrayRef s, const TensorOptions& o) { return tensor_from(v.data(), v.size(), s, o); }
Tensor tensor(const std::vector<bool>& v, IntArrayRef s, const TensorOptions& o) {
  std::unique_ptr<bool[]> b(new bool[v.size()]);
  for (size_t i = 0; i < v.size(); ++i) b[i] = v[i];
  return tensor_from(b.get(), v.size(), s, o);
}
Tensor tensor(std::initializer_list<double> v, IntArrayRef s, const TensorOptions& o) {
  std::vector<double> d(v);
  return tensor_from(d.data(), d.size(), s, o.dtype(o.dtype()));
}

Tensor from_blob(void* data, IntArrayRef shape, DType dtype) {
  return from_blob(data, shape, contiguous_strides(shape), std::function<void(void*)>(), TensorOptions(dtype));
}
Tensor from_blob(void* data, IntArrayRef shape, IntArrayRef strides, DType dtype) {
  return from_blob(data, shape, strides, std::function<void(void*)>(), TensorOptions(dtype));
}
Tensor from_blob(void* data, IntArrayRef shape, const TensorOptions& o) {
  return from_blob(data, shape, contiguous_strides(shape), std::function<void(void*)>(), o);
}
Tensor from_blob(void* data, IntArrayRef shape, IntArrayRef strides, const TensorOptions& o) {
  return from_blob(data, shape, strides, std::function<void(void*)>(), o);
}
Tensor from_blob(void* data, IntArrayRef shape, const std::function<void(void*)>& deleter, const TensorOptions& o) {
  return from_blob(data, shape, contiguous_strides(shape), deleter, o);
}
Tensor from_blob(void* data, IntArrayRef shape, IntArrayRef strides, const std::function<void(void*)>& deleter,
                 const TensorOptions& o) {
  EMBER_CHECK_T(DeviceError, !o.has_device() || o.device().is_cpu(), "from_blob: wraps host memory only, got device ",
                o.device());
  EMBER_CHECK_SHAPE(shape.size() == strides.size(), "from_blob: shape ", shape, " and strides ", strides,
                    " differ in rank");
  const DType dtype = o.dtype();
  int64_t extent = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    EMBER_CHECK_SHAPE(shape[i] >= 0 && strides[i] >= 0, "from_blob: negative size or stride");
    if (shape[i] == 0) extent = 0;
  }
  if (extent) {
    for (size_t i = 0; i < shape.size(); ++i)
      extent = checked_add(extent, checked_mul(shape[i] - 1, strides[i], "from_blob"), "from_blob");
  }
  auto storage = Storage::make(data, checked_bytes(extent, element_size(dtype), "from_blob"), Device(DeviceType::CPU),
                               deleter);
  Tensor t(IntrusivePtr<TensorImpl>::make(std::move(storage), dtype, shape, strides, 0));
  if (o.requires_grad()) t.requires_grad_(true);
  return t;
}

}  // namespace ember
