// Samples and float64 references for the ops of ops/shape_ops.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember). Each reference maps every output index to
// the input index it comes from (or a constant), with plain index loops.
#include <functional>

#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
namespace {
const std::vector<DType> kMovedTypes{kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kBool};

// out[idx] = x[source(idx)], or fill where source gives false.
Tensor ref_gather(const Tensor& x, const Shape& shape, const std::function<bool(const Shape&, Shape*)>& source,
                  double fill = 0) {
  Tensor out = empty(shape, kFloat64);
  double* o = out.data_ptr<double>();
  for (const Shape& idx : testing::all_indices(shape)) {
    Shape from;
    *o++ = source(idx, &from) ? testing::at(x, from) : fill;
  }
  return out;
}

Stack ref_triangle(const Stack& a, bool upper) {
  Tensor x = a[0].to_tensor();
  const int64_t diag = a.size() > 1 ? a[1].to_int() : 0;
  const size_t r = static_cast<size_t>(x.dim() - 2);
  return {ref_gather(x, x.sizes(), [&](const Shape& idx, Shape* from) {
    *from = idx;
    const int64_t off = idx[r + 1] - idx[r];
    return upper ? off >= diag : off <= diag;
  })};
}

std::vector<testing::Sample> triangle_samples(DType dt) {
  using testing::make_tensor;
  return {{{make_tensor({4, 5}, dt, -3, 3, 1)}, "default diagonal"},
          {{make_tensor({2, 3, 4}, dt, -3, 3, 2), IValue(int64_t(1))}, "batched, diagonal 1"},
          {{make_tensor({5, 3}, dt, -3, 3, 3), IValue(int64_t(-2))}, "tall, diagonal -2"},
          {{testing::make_noncontig({4, 6}, dt, -3, 3, 4), IValue(int64_t(2))}, "non-contiguous"},
          {{make_tensor({3, 3}, dt, -3, 3, 5), IValue(int64_t(7))}, "diagonal beyond the matrix"},
          {{make_tensor({0, 3}, dt, -3, 3, 6)}, "empty"}};
}
}  // namespace

EMBER_OP_INFO("ember::tril", info) {
  info.dtypes = kMovedTypes;
  info.exact = true;
  info.samples = triangle_samples;
  info.reference = [](const Stack& a) { return ref_triangle(a, false); };
}
EMBER_OP_INFO("ember::triu", info) {
  info.dtypes = kMovedTypes;
  info.exact = true;
  info.samples = triangle_samples;
  info.reference = [](const Stack& a) { return ref_triangle(a, true); };
}

EMBER_OP_INFO("ember::roll", info) {
  info.dtypes = kMovedTypes;
  info.exact = true;
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({7}, dt, -3, 3, 1), IValue(std::vector<int64_t>{3}), IValue(std::vector<int64_t>{0})}, "1-d"},
        {{make_tensor({3, 5}, dt, -3, 3, 2), IValue(std::vector<int64_t>{-1, 7}), IValue(std::vector<int64_t>{0, -1})},
         "two dims, negative and wrapping shifts"},
        {{testing::make_noncontig({4, 6}, dt, -3, 3, 3), IValue(std::vector<int64_t>{2}), IValue(std::vector<int64_t>{1})},
         "non-contiguous"},
        {{make_tensor({2, 3}, dt, -3, 3, 4), IValue(std::vector<int64_t>{4}), IValue(std::vector<int64_t>{})},
         "no dims: the flattened tensor"},
        {{make_tensor({2, 0}, dt, -3, 3, 5), IValue(std::vector<int64_t>{1}), IValue(std::vector<int64_t>{0})}, "empty"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor x = a[0].to_tensor();
    std::vector<int64_t> shifts = a[1].to_int_list(), dims = a.size() > 2 ? a[2].to_int_list() : std::vector<int64_t>{};
    if (dims.empty()) {  // the flattened tensor: index arithmetic on the row-major position
      const int64_t n = x.numel();
      Tensor flat = testing::ref_contiguous(x, kFloat64).reshape({n});
      Tensor out = ref_gather(flat, {n}, [&](const Shape& idx, Shape* from) {
        *from = {((idx[0] - shifts[0]) % n + n) % n};
        return true;
      });
      return {out.reshape(x.sizes())};
    }
    return {ref_gather(x, x.sizes(), [&](const Shape& idx, Shape* from) {
      *from = idx;
      for (size_t k = 0; k < dims.size(); ++k) {
        const size_t d = static_cast<size_t>(dims[k] < 0 ? dims[k] + x.dim() : dims[k]);
        const int64_t n = x.size(static_cast<int64_t>(d));
        (*from)[d] = (((*from)[d] - shifts[k]) % n + n) % n;
      }
      return true;
    })};
  };
}

EMBER_OP_INFO("ember::repeat", info) {
  info.dtypes = kMovedTypes;
  info.exact = true;
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({2, 3}, dt, -3, 3, 1), IValue(std::vector<int64_t>{2, 2})}, "2-d"},
        {{make_tensor({3}, dt, -3, 3, 2), IValue(std::vector<int64_t>{2, 1, 3})}, "leading dims added"},
        {{testing::make_noncontig({2, 4}, dt, -3, 3, 3), IValue(std::vector<int64_t>{1, 3})}, "non-contiguous"},
        {{make_tensor({2, 2}, dt, -3, 3, 4), IValue(std::vector<int64_t>{0, 2})}, "zero repeats"},
        {{make_tensor({}, dt, -3, 3, 5), IValue(std::vector<int64_t>{4})}, "0-d"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor x = a[0].to_tensor();
    std::vector<int64_t> r = a[1].to_int_list();
    const size_t lead = r.size() - static_cast<size_t>(x.dim());
    Shape shape(r.size());
    for (size_t k = 0; k < r.size(); ++k) shape[k] = r[k] * (k < lead ? 1 : x.size(static_cast<int64_t>(k - lead)));
    return {ref_gather(x, shape, [&](const Shape& idx, Shape* from) {
      from->clear();
      for (size_t k = lead; k < r.size(); ++k) from->push_back(idx[k] % x.size(static_cast<int64_t>(k - lead)));
      return true;
    })};
  };
}

EMBER_OP_INFO("ember::constant_pad_nd", info) {
  info.dtypes = kMovedTypes;
  info.exact = true;
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({2, 3}, dt, -3, 3, 1), IValue(std::vector<int64_t>{1, 2})}, "last dim, zeros"},
        {{make_tensor({2, 3, 4}, dt, -3, 3, 2), IValue(std::vector<int64_t>{0, 1, 2, 0}), IValue(Scalar(1.0))},
         "two dims, value 1"},
        {{testing::make_noncontig({3, 4}, dt, -3, 3, 3), IValue(std::vector<int64_t>{-1, 2, 1, -1})},
         "non-contiguous, crops"},
        {{make_tensor({2, 2}, dt, -3, 3, 4), IValue(std::vector<int64_t>{-2, 1})}, "cropped away and padded"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    Tensor x = a[0].to_tensor();
    std::vector<int64_t> pad = a[1].to_int_list();
    const double value = a.size() > 2 ? a[2].to_double() : 0.0;
    Shape shape = x.sizes(), before(static_cast<size_t>(x.dim()), 0);
    for (size_t q = 0; q < pad.size() / 2; ++q) {
      const size_t d = static_cast<size_t>(x.dim()) - 1 - q;
      shape[d] += pad[2 * q] + pad[2 * q + 1];
      before[d] = pad[2 * q];
    }
    return {ref_gather(x, shape, [&](const Shape& idx, Shape* from) {
      *from = idx;
      for (size_t d = 0; d < idx.size(); ++d) {
        (*from)[d] -= before[d];
        if ((*from)[d] < 0 || (*from)[d] >= x.size(static_cast<int64_t>(d))) return false;
      }
      return true;
    }, value)};
  };
}

}  // namespace ember
