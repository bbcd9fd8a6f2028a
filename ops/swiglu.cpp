// SwiGLU gates. silu_mul(a, b) = silu(a) * b, fused in one pass (broadcasting, promotion).
// swiglu(x, dim) is CANN's SwiGlu: x split in halves a, b along dim (size must be even),
// out = silu(a) * b with x's dtype and dim halved. swiglu(a, b) is the two-input form.
#include <cmath>

#include "ember/device/cpu/elementwise.h"
#include "ember/ops/elementwise_util.h"
#include "ember/ops/testing/reference.h"

namespace ember {
namespace {
using namespace ops;

Tensor silu_mul_cpu(const Tensor& a, const Tensor& b) {
  ElementwiseMeta m = binary_meta("silu_mul", a, b, ResultKind::PromoteFloat);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  cpu::silu_mul(strided(out), strided_as(a, m.shape), strided_as(b, m.shape), m.compute);
  return out;
}

// The halves of x along dim (views); checks the CANN constraints.
std::pair<Tensor, Tensor> swiglu_halves(const Tensor& x, int64_t dim) {
  EMBER_CHECK_DTYPE(x.is_floating_point(), "swiglu: expects a floating tensor, got ", x.dtype());
  EMBER_CHECK_SHAPE(x.dim() > 0, "swiglu: expects at least 1 dimension, got a 0-d tensor");
  int64_t d = wrap_dim(dim, x.dim(), "swiglu");
  int64_t n = x.size(d);
  EMBER_CHECK_SHAPE(n % 2 == 0, "swiglu: the size of dim ", d, " must be even to split in halves, got shape ",
                    x.sizes_ref());
  return {x.narrow(d, 0, n / 2), x.narrow(d, n / 2, n / 2)};
}

Tensor swiglu_cpu(const Tensor& x, int64_t dim) {
  auto [a, b] = swiglu_halves(x, dim);
  Tensor out = empty_on(a.sizes_ref(), x.dtype(), x.device());
  cpu::silu_mul(strided(out), strided(a), strided(b), cpu::compute_dtype(x.dtype()));
  return out;
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def("silu_mul(Tensor self, Tensor other) -> Tensor");
  m.def("swiglu(Tensor self, int dim=-1) -> Tensor");
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl("silu_mul", &silu_mul_cpu);
  m.impl("swiglu", &swiglu_cpu);
}

Tensor silu_mul(const Tensor& a, const Tensor& b) {
  return EMBER_OP("ember::silu_mul", Tensor(const Tensor&, const Tensor&)).call(a, b);
}
Tensor swiglu(const Tensor& a, const Tensor& b) { return silu_mul(a, b); }
Tensor swiglu(const Tensor& x, int64_t dim) { return EMBER_OP("ember::swiglu", Tensor(const Tensor&, int64_t)).call(x, dim); }

// ---------------------------------------------------------------- samples
namespace {
double ref_silu(double x) { return x / (1.0 + std::exp(-x)); }
}
EMBER_OP_INFO("ember::silu_mul", info) {
  testing::set_binary_info(info, [](double a, double b) { return ref_silu(a) * b; }, -4, 4);
}
EMBER_OP_INFO("ember::swiglu", info) {
  info.samples = [](DType dt) {
    return std::vector<testing::Sample>{
        {{testing::make_tensor({4, 10}, dt, -4, 4), IValue(int64_t(-1))}, "last dim"},
        {{testing::make_tensor({6, 3, 2}, dt, -4, 4), IValue(int64_t(0))}, "first dim"},
        {{testing::make_noncontig({5, 8}, dt, -4, 4), IValue(int64_t(1))}, "non-contiguous"},
        {{testing::make_tensor({64, 512}, dt, -4, 4), IValue(int64_t(-1))}, "large (parallel)"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();
    int64_t d = a.size() > 1 ? a[1].to_int() : -1;
    if (d < 0) d += x.dim();
    int64_t h = x.size(d) / 2;
    Shape shape = x.sizes();
    shape[static_cast<size_t>(d)] = h;
    Tensor out = empty(shape, kFloat64);
    double* o = out.data_ptr<double>();
    for (const Shape& idx : testing::all_indices(shape)) {
      Shape j = idx;
      j[static_cast<size_t>(d)] += h;
      *o++ = ref_silu(testing::at(x, idx)) * testing::at(x, j);
    }
    return {out};
  };
}

}  // namespace ember
