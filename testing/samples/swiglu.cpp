// Samples and float64 references for the ops of ops/swiglu.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <cmath>
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
double ref_silu(double x) { return x / (1.0 + std::exp(-x)); }
}
namespace {
double ref_dsilu(double a) {
  double s = 1.0 / (1.0 + std::exp(-a));
  return s * (1 + a * (1 - s));
}
}  // namespace
EMBER_OP_INFO("ember::silu_mul_backward", info) {
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({4, 6}, dt, -2, 2, 1), make_tensor({4, 6}, dt, -4, 4, 2), make_tensor({4, 6}, dt, -2, 2, 3)},
         "same shapes"},
        {{make_tensor({3, 5}, dt, -2, 2, 4), testing::make_noncontig({3, 5}, dt, -4, 4, 5), make_tensor({5}, dt, -2, 2, 6)},
         "non-contiguous, broadcast b"},
        {{make_tensor({128, 300}, dt, -2, 2, 7), make_tensor({128, 300}, dt, -4, 4, 8), make_tensor({128, 300}, dt, -2, 2, 9)},
         "large"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor &g = a[0].to_tensor(), &x = a[1].to_tensor(), &y = a[2].to_tensor();
    return {testing::ref_map3(g, x, y, [](double gg, double aa, double bb) { return gg * bb * ref_dsilu(aa); }),
            testing::ref_map3(g, x, y, [](double gg, double aa, double) { return gg * ref_silu(aa); })};
  };
}
EMBER_OP_INFO("ember::swiglu_backward", info) {
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({4, 5}, dt, -2, 2, 1), make_tensor({4, 10}, dt, -4, 4, 2), IValue(int64_t(-1))}, "last dim"},
        {{make_tensor({3, 3, 2}, dt, -2, 2, 3), make_tensor({6, 3, 2}, dt, -4, 4, 4), IValue(int64_t(0))}, "first dim"},
        {{make_tensor({5, 4}, dt, -2, 2, 5), testing::make_noncontig({5, 8}, dt, -4, 4, 6), IValue(int64_t(1))},
         "non-contiguous x"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor &g = a[0].to_tensor(), &x = a[1].to_tensor();
    int64_t d = a[2].to_int() < 0 ? a[2].to_int() + x.dim() : a[2].to_int();
    int64_t h = x.size(d) / 2;
    Tensor out = empty(x.sizes(), kFloat64);
    double* o = out.data_ptr<double>();
    for (const Shape& idx : testing::all_indices(x.sizes())) {
      Shape ia = idx, ib = idx, ig = idx;
      bool first = idx[static_cast<size_t>(d)] < h;
      if (first) {
        ib[static_cast<size_t>(d)] += h;
      } else {
        ia[static_cast<size_t>(d)] -= h;
        ig[static_cast<size_t>(d)] -= h;
      }
      double av = testing::at(x, ia), bv = testing::at(x, ib), gv = testing::at(g, ig);
      *o++ = first ? gv * bv * ref_dsilu(av) : gv * ref_silu(av);
    }
    return {out};
  };
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
