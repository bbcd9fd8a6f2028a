// Samples and float64 references for the ops of ops/cat.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
const std::vector<DType> kCatTypes{kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kBool};

Tensor ref_cat(const std::vector<Tensor>& ts, int64_t dim) {
  std::vector<Tensor> parts;
  for (const Tensor& t : ts)
    if (!(t.dim() == 1 && t.numel() == 0)) parts.push_back(t);
  int64_t d = dim < 0 ? dim + parts[0].dim() : dim;
  Shape shape = parts[0].sizes();
  shape[static_cast<size_t>(d)] = 0;
  for (const Tensor& t : parts) shape[static_cast<size_t>(d)] += t.size(d);
  Tensor out = empty(shape, kFloat64);
  double* o = out.data_ptr<double>();
  for (const Shape& idx : testing::all_indices(shape)) {
    Shape j = idx;
    size_t k = 0;
    while (j[static_cast<size_t>(d)] >= parts[k].size(d)) j[static_cast<size_t>(d)] -= parts[k++].size(d);
    *o++ = testing::at(parts[k], j);
  }
  return out;
}
}  // namespace

EMBER_OP_INFO("ember::cat", info) {
  info.dtypes = kCatTypes;
  info.exact = true;
  info.samples = [](DType dt) {
    using testing::make_tensor;
    std::vector<testing::Sample> s;
    s.push_back({{IValue(std::vector<Tensor>{make_tensor({2, 3}, dt, -2, 2, 1), make_tensor({4, 3}, dt, -2, 2, 2)}),
                  IValue(int64_t(0))},
                 "dim 0"});
    s.push_back({{IValue(std::vector<Tensor>{make_tensor({2, 3}, dt, -2, 2, 3), testing::make_noncontig({2, 5}, dt, -2, 2, 4),
                                             make_tensor({2, 1}, dt, -2, 2, 5)}),
                  IValue(int64_t(-1))},
                 "last dim, non-contiguous part"});
    s.push_back({{IValue(std::vector<Tensor>{make_tensor({3}, dt, -2, 2, 6), make_tensor({0}, dt), make_tensor({2}, dt, -2, 2, 7)}),
                  IValue(int64_t(0))},
                 "with a legacy empty tensor"});
    s.push_back({{IValue(std::vector<Tensor>{make_tensor({2, 2}, dt, -2, 2, 8), make_tensor({2, 2}, kFloat64, -2, 2, 9)}),
                  IValue(int64_t(1))},
                 "mixed dtypes promote"});
    return s;
  };
  info.reference = [](const Stack& a) -> Stack { return {ref_cat(a[0].to_tensor_list(), a.size() > 1 ? a[1].to_int() : 0)}; };
}
EMBER_OP_INFO("ember::stack", info) {
  info.dtypes = kCatTypes;
  info.exact = true;
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{IValue(std::vector<Tensor>{make_tensor({2, 3}, dt, -2, 2, 1), make_tensor({2, 3}, dt, -2, 2, 2)}), IValue(int64_t(0))},
         "new dim 0"},
        {{IValue(std::vector<Tensor>{make_tensor({2, 3}, dt, -2, 2, 3), testing::make_noncontig({2, 3}, dt, -2, 2, 4)}),
          IValue(int64_t(2))},
         "new last dim"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    std::vector<Tensor> ts;
    int64_t d = a[1].to_int();
    for (const Tensor& t : a[0].to_tensor_list()) ts.push_back(testing::ref_contiguous(t, kFloat64).unsqueeze(d));
    return {ref_cat(ts, d)};
  };
}

}  // namespace ember
