// Samples and float64 references for the ops of ops/view_index.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <limits>
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
using testing::Sample;
const std::vector<DType> kViewTypes{kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kBool};

// Reference: gather x at index map for each output index.
Stack gather_ref(const Tensor& x, const Shape& shape, const std::function<Shape(const Shape&)>& src) {
  Tensor out = empty(shape, kFloat64);
  double* o = out.data_ptr<double>();
  for (const Shape& idx : testing::all_indices(shape)) *o++ = testing::at(x, src(idx));
  return {out};
}
}  // namespace

EMBER_OP_INFO("ember::slice", info) {
  info.dtypes = kViewTypes;
  info.exact = true;
  info.view = true;
  info.samples = [](DType dt) {
    auto x = testing::make_tensor({5, 8}, dt);
    return std::vector<Sample>{
        {{x, IValue(int64_t(1)), IValue(int64_t(1)), IValue(int64_t(7)), IValue(int64_t(2))}, "dim 1, [1:7:2]"},
        {{x, IValue(int64_t(0)), IValue(int64_t(-3)), IValue(int64_t(100))}, "negative start, end past the size"},
        {{testing::make_noncontig({4, 6}, dt), IValue(int64_t(-1)), IValue(int64_t(2)), IValue(int64_t(3))},
         "non-contiguous"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();
    int64_t d = a[1].to_int() < 0 ? a[1].to_int() + x.dim() : a[1].to_int();
    int64_t n = x.size(d), s = a[2].to_int(), e = a.size() > 3 ? a[3].to_int() : n, st = a.size() > 4 ? a[4].to_int() : 1;
    if (s < 0) s += n;
    if (e < 0) e += n;
    s = std::min(std::max<int64_t>(s, 0), n);
    e = std::min(std::max(e, s), n);
    Shape shape = x.sizes();
    shape[static_cast<size_t>(d)] = (e - s + st - 1) / st;
    return gather_ref(x, shape, [&](const Shape& idx) {
      Shape src = idx;
      src[static_cast<size_t>(d)] = s + idx[static_cast<size_t>(d)] * st;
      return src;
    });
  };
}
EMBER_OP_INFO("ember::select", info) {
  info.dtypes = kViewTypes;
  info.exact = true;
  info.view = true;
  info.samples = [](DType dt) {
    return std::vector<Sample>{{{testing::make_tensor({3, 4, 5}, dt), IValue(int64_t(1)), IValue(int64_t(2))}, "dim 1"},
                               {{testing::make_tensor({3, 4}, dt), IValue(int64_t(0)), IValue(int64_t(-1))}, "index -1"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();
    int64_t d = a[1].to_int(), i = a[2].to_int() < 0 ? a[2].to_int() + x.size(a[1].to_int()) : a[2].to_int();
    Shape shape = x.sizes();
    shape.erase(shape.begin() + d);
    return gather_ref(x, shape, [&](const Shape& idx) {
      Shape src = idx;
      src.insert(src.begin() + d, i);
      return src;
    });
  };
}
EMBER_OP_INFO("ember::narrow", info) {
  info.dtypes = kViewTypes;
  info.exact = true;
  info.view = true;
  info.samples = [](DType dt) {
    return std::vector<Sample>{
        {{testing::make_tensor({4, 6}, dt), IValue(int64_t(1)), IValue(int64_t(2)), IValue(int64_t(3))}, "dim 1"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();
    int64_t d = a[1].to_int(), s = a[2].to_int(), len = a[3].to_int();
    Shape shape = x.sizes();
    shape[static_cast<size_t>(d)] = len;
    return gather_ref(x, shape, [&](const Shape& idx) {
      Shape src = idx;
      src[static_cast<size_t>(d)] += s;
      return src;
    });
  };
}
EMBER_OP_INFO("ember::as_strided", info) {
  info.dtypes = kViewTypes;
  info.exact = true;
  info.view = true;
  info.samples = [](DType dt) {
    return std::vector<Sample>{
        {{testing::make_tensor({4, 4}, dt), IValue(Shape{4}), IValue(Shape{5}), IValue(int64_t(0))}, "diagonal"},
        {{testing::make_tensor({12}, dt), IValue(Shape{3, 3}), IValue(Shape{3, 1}), IValue(int64_t(2))},
         "overlapping windows"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();  // contiguous samples: flat index = offset + sum(i * stride)
    Shape sizes = a[1].to_int_list(), strides = a[2].to_int_list();
    int64_t off = a[3].to_int();
    Tensor flat = testing::ref_contiguous(x, kFloat64);
    Tensor out = empty(sizes, kFloat64);
    double* o = out.data_ptr<double>();
    for (const Shape& idx : testing::all_indices(sizes)) {
      int64_t f = off;
      for (size_t d = 0; d < idx.size(); ++d) f += idx[d] * strides[d];
      *o++ = flat.data_ptr<double>()[f];
    }
    return {out};
  };
}
namespace {
Stack split_ref(const Tensor& x, int64_t size, int64_t d) {
  Stack pieces;
  std::vector<Tensor> out;
  for (int64_t s = 0; s < x.size(d); s += size) {
    int64_t len = std::min(size, x.size(d) - s);
    Shape shape = x.sizes();
    shape[static_cast<size_t>(d)] = len;
    out.push_back(gather_ref(x, shape, [&](const Shape& idx) {
      Shape src = idx;
      src[static_cast<size_t>(d)] += s;
      return src;
    })[0].to_tensor());
  }
  return {IValue(out)};
}
}  // namespace
EMBER_OP_INFO("ember::split", info) {
  info.dtypes = kViewTypes;
  info.exact = true;
  info.samples = [](DType dt) {
    return std::vector<Sample>{{{testing::make_tensor({7, 3}, dt), IValue(int64_t(3)), IValue(int64_t(0))}, "7 by 3"},
                               {{testing::make_tensor({2, 5}, dt), IValue(int64_t(2)), IValue(int64_t(-1))}, "last dim"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();
    return split_ref(x, a[1].to_int(), a[2].to_int() < 0 ? a[2].to_int() + x.dim() : a[2].to_int());
  };
}
EMBER_OP_INFO("ember::chunk", info) {
  info.dtypes = kViewTypes;
  info.exact = true;
  info.samples = [](DType dt) {
    return std::vector<Sample>{{{testing::make_tensor({7, 3}, dt), IValue(int64_t(3)), IValue(int64_t(0))}, "7 in 3"},
                               {{testing::make_tensor({4, 6}, dt), IValue(int64_t(2)), IValue(int64_t(1))}, "even"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();
    int64_t d = a[2].to_int(), n = a[1].to_int();
    return split_ref(x, (x.size(d) + n - 1) / n, d);
  };
}

// slice_backward / select_backward: g placed into zeros of input_sizes.
namespace {
// out[idx] = g[src(idx)] where src gives a position, else 0.
Stack scatter_ref(const Tensor& g, const Shape& shape, const std::function<bool(const Shape&, Shape*)>& src) {
  Tensor out = empty(shape, kFloat64);
  double* o = out.data_ptr<double>();
  Shape from;
  for (const Shape& idx : testing::all_indices(shape)) *o++ = src(idx, &from) ? testing::at(g, from) : 0.0;
  return {out};
}
}  // namespace
EMBER_OP_INFO("ember::slice_backward", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.exact = true;
  info.samples = [](DType dt) {
    return std::vector<Sample>{
        {{testing::make_tensor({5, 3}, dt), IValue(Shape{5, 8}), IValue(int64_t(1)), IValue(int64_t(1)),
          IValue(int64_t(7)), IValue(int64_t(2))},
         "dim 1, [1:7:2]"},
        {{testing::make_noncontig({2, 6}, dt), IValue(Shape{4, 6}), IValue(int64_t(0)), IValue(int64_t(2)),
          IValue(int64_t(4)), IValue(int64_t(1))},
         "non-contiguous grad, dim 0, [2:4]"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    Shape sizes = a[1].to_int_list();
    size_t d = static_cast<size_t>(a[2].to_int());
    int64_t start = a[3].to_int(), step = a[5].to_int(), n = a[0].to_tensor().size(static_cast<int64_t>(d));
    return scatter_ref(a[0].to_tensor(), sizes, [&](const Shape& idx, Shape* from) {
      int64_t k = idx[d] - start;
      if (k < 0 || k % step != 0 || k / step >= n) return false;
      *from = idx;
      (*from)[d] = k / step;
      return true;
    });
  };
}
EMBER_OP_INFO("ember::select_backward", info) {
  info.dtypes = {kFloat32, kFloat64, kFloat16, kBFloat16};
  info.exact = true;
  info.samples = [](DType dt) {
    return std::vector<Sample>{
        {{testing::make_tensor({3, 5}, dt), IValue(Shape{3, 4, 5}), IValue(int64_t(1)), IValue(int64_t(2))}, "dim 1"},
        {{testing::make_tensor({4}, dt), IValue(Shape{3, 4}), IValue(int64_t(0)), IValue(int64_t(1))}, "dim 0"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    Shape sizes = a[1].to_int_list();
    size_t d = static_cast<size_t>(a[2].to_int());
    int64_t index = a[3].to_int();
    return scatter_ref(a[0].to_tensor(), sizes, [&](const Shape& idx, Shape* from) {
      if (idx[d] != index) return false;
      *from = idx;
      from->erase(from->begin() + static_cast<int64_t>(d));
      return true;
    });
  };
}

}  // namespace ember
