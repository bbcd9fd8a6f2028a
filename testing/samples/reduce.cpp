// Samples and float64 references for the ops of ops/reduce.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/core/tables/reduce_ops.def"
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
using testing::Sample;
// Covers: all dims, inner (contiguous) dims, outer (column) dims, mixed dims (general path),
// non-contiguous input, keepdim, 0-d, long rows that split across threads.
std::vector<Sample> reduce_samples(DType dt) {
  using testing::make_noncontig;
  auto make_tensor = [](IntArrayRef shape, DType t) { return testing::make_distinct(shape, t); };
  std::vector<Sample> s;
  s.push_back({{make_tensor({4, 5}, dt)}, "all dims"});
  s.push_back({{make_tensor({4, 5, 6}, dt), IValue(Shape{-1})}, "last dim"});
  s.push_back({{make_tensor({4, 5, 6}, dt), IValue(Shape{0}), IValue(true)}, "first dim (columns), keepdim"});
  s.push_back({{make_tensor({3, 4, 5, 2}, dt), IValue(Shape{1, 3})}, "dims 1 and 3 (general)"});
  s.push_back({{make_noncontig({6, 8}, dt), IValue(Shape{1})}, "non-contiguous"});
  s.push_back({{make_tensor({}, dt), IValue(Shape{})}, "0-d"});
  s.push_back({{make_tensor({2, 20000}, dt), IValue(Shape{1})}, "long rows (split across threads)"});
  s.push_back({{make_tensor({70000}, dt)}, "one long row"});
  s.push_back({{make_tensor({300, 130}, dt), IValue(Shape{0})}, "tall columns"});
  return s;
}
Stack ref_reduce_stack(const Stack& a, const std::function<double(const std::vector<double>&)>& f) {
  Shape dims = a.size() > 1 ? a[1].to_int_list() : Shape{};
  bool keep = a.size() > 2 && a[2].to_bool();
  return {testing::ref_reduce(a[0].to_tensor(), dims, keep, f)};
}
double f_sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
double f_max(const std::vector<double>& v) {
  double m = -INFINITY;
  for (double x : v) m = std::max(m, x);
  return m;
}
double f_min(const std::vector<double>& v) {
  double m = INFINITY;
  for (double x : v) m = std::min(m, x);
  return m;
}
}  // namespace

// The reduce table (core/tables/reduce_ops.def). S rows also take integers and bool, and an output
// dtype; M rows are compared bit for bit.
#define EMBER_RED_INFO_S(info)                                                                                         \
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kInt8, kBool};                      \
  info.samples = [](DType dt) {                                                                                        \
    auto s = reduce_samples(dt);                                                                                       \
    s.push_back({{testing::make_tensor({4, 5}, dt), IValue(Shape{1}), IValue(false), IValue(kFloat64)}, "dtype=float64"}); \
    return s;                                                                                                          \
  };                                                                                                                   \
  info.tol_scale = 10; /* long fp32 accumulations */
#define EMBER_RED_INFO_M(info)                                                           \
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kInt8}; \
  info.samples = reduce_samples;                                                         \
  info.exact = true;
#define EMBER_INFO(name, Acl, form, Acc, save, grad, ref, amp, Node)                                           \
  EMBER_OP_INFO("ember::" #name, info) {                                                                  \
    EMBER_RED_INFO_##form(info) info.reference = [](const Stack& a) { return ref_reduce_stack(a, ref); }; \
  }
EMBER_REDUCE_OPS(EMBER_INFO)
#undef EMBER_INFO

EMBER_OP_INFO("ember::mean", info) {
  info.samples = reduce_samples;
  info.reference = [](const Stack& a) {
    return ref_reduce_stack(a, [](const std::vector<double>& v) { return f_sum(v) / static_cast<double>(v.size()); });
  };
  info.tol_scale = 10;
}
EMBER_OP_INFO("ember::max", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64};
  testing::set_unary_info(info, [](double x) { return x; });
  info.reference = [](const Stack& a) { return Stack{testing::ref_reduce(a[0].to_tensor(), {}, false, f_max)}; };
  auto base = info.samples;
  info.samples = [base](DType dt) {
    auto s = base(dt);
    s.erase(s.begin() + 2);  // no empty input: max of nothing is an error
    return s;
  };
  info.exact = true;
}
EMBER_OP_INFO("ember::min", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64};
  testing::set_unary_info(info, [](double x) { return x; });
  info.reference = [](const Stack& a) { return Stack{testing::ref_reduce(a[0].to_tensor(), {}, false, f_min)}; };
  auto base = info.samples;
  info.samples = [base](DType dt) {
    auto s = base(dt);
    s.erase(s.begin() + 2);
    return s;
  };
  info.exact = true;
}


// all / any: integer-valued inputs in [-1, 1] make zeros common, so both answers occur.
namespace {
std::vector<Sample> all_any_samples(DType dt) {
  using testing::make_int_valued;
  Tensor ones_only = make_int_valued({3, 4}, dt, 1, 1, 5);
  std::vector<Sample> s = {
      {{make_int_valued({4, 5}, dt, -1, 1, 1)}, "all dims"},
      {{make_int_valued({6, 3}, dt, -1, 1, 2), IValue(Shape{1})}, "last dim"},
      {{make_int_valued({3, 4, 5}, dt, 0, 3, 3), IValue(Shape{0, 2}), IValue(true)}, "dims 0, 2, keepdim"},
      {{testing::make_noncontig({5, 4}, dt, -1, 1, 4), IValue(Shape{0})}, "non-contiguous"},
      {{ones_only, IValue(Shape{1})}, "no zeros"},
      {{make_int_valued({0, 3}, dt, 0, 1, 6), IValue(Shape{0})}, "empty rows"}};
  if (is_floating_point(dt)) {  // NaN is nonzero
    Tensor nan = make_int_valued({2, 3}, dt, 0, 0, 7);
    nan.select(1, 1).fill_(NAN);
    s.push_back({{nan, IValue(Shape{0})}, "NaN among zeros"});
  }
  return s;
}
}  // namespace
EMBER_OP_INFO("ember::all", info) {
  info.dtypes = {kBool, kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32};
  info.samples = all_any_samples;
  info.exact = true;
  info.reference = [](const Stack& a) {
    return ref_reduce_stack(a, [](const std::vector<double>& v) {
      for (double x : v)
        if (x == 0) return 0.0;
      return 1.0;
    });
  };
}
EMBER_OP_INFO("ember::any", info) {
  info.dtypes = {kBool, kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32};
  info.samples = all_any_samples;
  info.exact = true;
  info.reference = [](const Stack& a) {
    return ref_reduce_stack(a, [](const std::vector<double>& v) {
      for (double x : v)
        if (x != 0) return 1.0;
      return 0.0;
    });
  };
}

}  // namespace ember
