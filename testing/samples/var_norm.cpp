// Samples and float64 references for the ops of ops/var_norm.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <algorithm>
#include <cmath>
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
EMBER_OP_INFO("ember::var", info) {
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({5, 6}, dt)}, "all, unbiased"},
        {{make_tensor({5, 6}, dt), IValue(Shape{1}), IValue(false)}, "dim 1, biased"},
        {{make_tensor({4, 5, 6}, dt), IValue(Shape{0, 2}), IValue(true), IValue(true)}, "dims 0, 2, keepdim"},
        {{testing::make_noncontig({8, 4}, dt), IValue(Shape{0})}, "non-contiguous"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    Shape dims = a.size() > 1 ? a[1].to_int_list() : Shape{};
    bool unbiased = a.size() > 2 ? a[2].to_bool() : true, keep = a.size() > 3 && a[3].to_bool();
    return {testing::ref_reduce(a[0].to_tensor(), dims, keep, [unbiased](const std::vector<double>& v) {
      double m = 0, s = 0;
      for (double x : v) m += x;
      m /= static_cast<double>(v.size());
      for (double x : v) s += (x - m) * (x - m);
      return s / (static_cast<double>(v.size()) - (unbiased ? 1.0 : 0.0));
    })};
  };
  info.tol_scale = 4;
}
EMBER_OP_INFO("ember::norm", info) {
  testing::set_unary_info(info, [](double x) { return x; });
  info.reference = [](const Stack& a) -> Stack {
    return {testing::ref_reduce(a[0].to_tensor(), {}, false, [](const std::vector<double>& v) {
      double s = 0;
      for (double x : v) s += x * x;
      return std::sqrt(s);
    })};
  };
  info.tol_scale = 4;
}

EMBER_OP_INFO("ember::norm.p", info) {
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({4, 5}, dt), IValue(Scalar(2.0)), IValue(Shape{1})}, "p = 2 over rows"},
        {{make_tensor({4, 5}, dt), IValue(Scalar(1.0)), IValue(Shape{0}), IValue(true)}, "p = 1, dim 0, keepdim"},
        {{make_tensor({3, 4, 5}, dt), IValue(Scalar(3.0)), IValue(Shape{0, 2})}, "p = 3, dims 0, 2"},
        {{make_tensor({4, 6}, dt), IValue(Scalar(INFINITY)), IValue(Shape{1})}, "p = inf"},
        {{make_tensor({4, 6}, dt), IValue(Scalar(-INFINITY)), IValue(Shape{1})}, "p = -inf"},
        {{make_tensor({6, 4}, dt, 0.2, 2.0, 7), IValue(Scalar(0.5))}, "p = 0.5, all dims, positive"},
        {{make_tensor({5, 4}, dt), IValue(Scalar(0.0)), IValue(Shape{1})}, "p = 0: nonzeros per row"},
        {{testing::make_noncontig({8, 4}, dt), IValue(Scalar(2.0)), IValue(Shape{0})}, "non-contiguous"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    double p = a[1].to_scalar().to_double();
    Shape dims = a.size() > 2 ? a[2].to_int_list() : Shape{};
    bool keep = a.size() > 3 && a[3].to_bool();
    return {testing::ref_reduce(a[0].to_tensor(), dims, keep, [p](const std::vector<double>& v) {
      if (std::isinf(p)) {
        double m = p > 0 ? 0 : INFINITY;
        for (double x : v) m = p > 0 ? std::max(m, std::fabs(x)) : std::min(m, std::fabs(x));
        return m;
      }
      double s = 0;
      for (double x : v) s += p == 0 ? double(x != 0) : std::pow(std::fabs(x), p);
      return p == 0 ? s : std::pow(s, 1.0 / p);
    })};
  };
  info.tol_scale = 4;
}

}  // namespace ember
