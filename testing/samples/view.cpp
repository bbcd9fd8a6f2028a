// Samples and float64 references for the ops of ops/view.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
using testing::Sample;
const std::vector<DType> kViewTypes{kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kBool};

// Reference for a view: the element at each output index, read through a naive index map.
void view_info(testing::OpInfo& info, std::function<std::vector<Sample>(DType)> samples,
               std::function<Shape(const Stack&, const Shape& out_idx)> src_index,
               std::function<Shape(const Stack&)> out_shape) {
  info.dtypes = kViewTypes;
  info.exact = true;
  info.view = true;
  info.samples = std::move(samples);
  info.reference = [src_index, out_shape](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();
    Shape shape = out_shape(a);
    Tensor out = empty(shape, kFloat64);
    double* o = out.data_ptr<double>();
    for (const Shape& idx : testing::all_indices(shape)) *o++ = testing::at(x, src_index(a, idx));
    return {out};
  };
}

// Row-major unflatten of a flat index into shape.
Shape unflatten(int64_t flat, IntArrayRef shape) {
  Shape idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}
int64_t flatten_index(const Shape& idx, IntArrayRef shape) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
  return f;
}
Shape reshaped(const Stack& a) {
  const Tensor& x = a[0].to_tensor();
  Shape s = a[1].to_int_list();
  int64_t known = 1;
  for (int64_t v : s)
    if (v != -1) known *= v;
  for (int64_t& v : s)
    if (v == -1) v = x.numel() / known;
  return s;
}
}  // namespace

EMBER_OP_INFO("ember::view", info) {
  view_info(
      info,
      [](DType dt) {
        return std::vector<Sample>{{{testing::make_tensor({4, 6}, dt), IValue(Shape{2, -1, 3})}, "[4, 6] -> [2, -1, 3]"},
                                   {{testing::make_tensor({3, 4}, dt).t(), IValue(Shape{4, 3, 1})}, "transposed, add a dim"},
                                   {{testing::make_tensor({}, dt), IValue(Shape{1, 1})}, "0-d -> [1, 1]"}};
      },
      [](const Stack& a, const Shape& idx) {
        return unflatten(flatten_index(idx, reshaped(a)), a[0].to_tensor().sizes_ref());
      },
      reshaped);
}
EMBER_OP_INFO("ember::reshape", info) {
  view_info(
      info,
      [](DType dt) {
        return std::vector<Sample>{{{testing::make_tensor({4, 6}, dt), IValue(Shape{8, 3})}, "contiguous (a view)"},
                                   {{testing::make_noncontig({4, 6}, dt), IValue(Shape{-1})}, "non-contiguous (a copy)"}};
      },
      [](const Stack& a, const Shape& idx) {
        return unflatten(flatten_index(idx, reshaped(a)), a[0].to_tensor().sizes_ref());
      },
      reshaped);
  info.view = false;  // reshape copies when it must
}
EMBER_OP_INFO("ember::flatten", info) {
  view_info(
      info,
      [](DType dt) {
        return std::vector<Sample>{
            {{testing::make_tensor({2, 3, 4}, dt), IValue(int64_t(0)), IValue(int64_t(-1))}, "all dims"},
            {{testing::make_tensor({2, 3, 4, 5}, dt), IValue(int64_t(1)), IValue(int64_t(2))}, "middle dims"}};
      },
      [](const Stack& a, const Shape& idx) {
        const Tensor& x = a[0].to_tensor();
        int64_t s = a[1].to_int() < 0 ? a[1].to_int() + x.dim() : a[1].to_int();
        int64_t e = a[2].to_int() < 0 ? a[2].to_int() + x.dim() : a[2].to_int();
        Shape out(idx.begin(), idx.begin() + s);
        Shape mid(x.sizes().begin() + s, x.sizes().begin() + e + 1);
        Shape u = unflatten(idx[static_cast<size_t>(s)], mid);
        out.insert(out.end(), u.begin(), u.end());
        out.insert(out.end(), idx.begin() + s + 1, idx.end());
        return out;
      },
      [](const Stack& a) {
        const Tensor& x = a[0].to_tensor();
        int64_t s = a[1].to_int() < 0 ? a[1].to_int() + x.dim() : a[1].to_int();
        int64_t e = a[2].to_int() < 0 ? a[2].to_int() + x.dim() : a[2].to_int();
        Shape out(x.sizes().begin(), x.sizes().begin() + s);
        int64_t m = 1;
        for (int64_t d = s; d <= e; ++d) m *= x.size(d);
        out.push_back(m);
        out.insert(out.end(), x.sizes().begin() + e + 1, x.sizes().end());
        return out;
      });
  info.view = false;
}
EMBER_OP_INFO("ember::permute", info) {
  view_info(
      info,
      [](DType dt) {
        return std::vector<Sample>{{{testing::make_tensor({2, 3, 4}, dt), IValue(Shape{2, 0, -2})}, "[2, 0, 1]"},
                                   {{testing::make_noncontig({3, 5}, dt), IValue(Shape{1, 0})}, "non-contiguous"}};
      },
      [](const Stack& a, const Shape& idx) {
        Shape dims = a[1].to_int_list();
        Shape src(idx.size());
        for (size_t i = 0; i < dims.size(); ++i) {
          int64_t d = dims[i] < 0 ? dims[i] + static_cast<int64_t>(dims.size()) : dims[i];
          src[static_cast<size_t>(d)] = idx[i];
        }
        return src;
      },
      [](const Stack& a) {
        Shape dims = a[1].to_int_list(), s;
        for (int64_t d : dims) s.push_back(a[0].to_tensor().size(d));
        return s;
      });
}
EMBER_OP_INFO("ember::transpose", info) {
  view_info(
      info,
      [](DType dt) {
        return std::vector<Sample>{
            {{testing::make_tensor({2, 3, 4}, dt), IValue(int64_t(0)), IValue(int64_t(-1))}, "dims 0, -1"},
            {{testing::make_tensor({}, dt), IValue(int64_t(0)), IValue(int64_t(0))}, "0-d"}};
      },
      [](const Stack& a, const Shape& idx) {
        Shape src = idx;
        if (!src.empty()) {
          int64_t n = static_cast<int64_t>(src.size());
          int64_t d0 = (a[1].to_int() + n) % n, d1 = (a[2].to_int() + n) % n;
          std::swap(src[static_cast<size_t>(d0)], src[static_cast<size_t>(d1)]);
        }
        return src;
      },
      [](const Stack& a) {
        Shape s = a[0].to_tensor().sizes();
        if (!s.empty()) {
          int64_t n = static_cast<int64_t>(s.size());
          std::swap(s[static_cast<size_t>((a[1].to_int() + n) % n)], s[static_cast<size_t>((a[2].to_int() + n) % n)]);
        }
        return s;
      });
}
EMBER_OP_INFO("ember::t", info) {
  view_info(
      info,
      [](DType dt) {
        return std::vector<Sample>{{{testing::make_tensor({3, 5}, dt)}, "2-d"}, {{testing::make_tensor({4}, dt)}, "1-d"}};
      },
      [](const Stack&, const Shape& idx) { return idx.size() == 2 ? Shape{idx[1], idx[0]} : idx; },
      [](const Stack& a) {
        Shape s = a[0].to_tensor().sizes();
        return s.size() == 2 ? Shape{s[1], s[0]} : s;
      });
}
EMBER_OP_INFO("ember::unsqueeze", info) {
  view_info(
      info,
      [](DType dt) {
        return std::vector<Sample>{{{testing::make_tensor({3, 4}, dt), IValue(int64_t(1))}, "middle"},
                                   {{testing::make_noncontig({3, 4}, dt), IValue(int64_t(-1))}, "last, non-contiguous"}};
      },
      [](const Stack& a, const Shape& idx) {
        int64_t n = static_cast<int64_t>(idx.size());
        int64_t d = a[1].to_int() < 0 ? a[1].to_int() + n : a[1].to_int();
        Shape src = idx;
        src.erase(src.begin() + d);
        return src;
      },
      [](const Stack& a) {
        Shape s = a[0].to_tensor().sizes();
        int64_t n = static_cast<int64_t>(s.size()) + 1;
        int64_t d = a[1].to_int() < 0 ? a[1].to_int() + n : a[1].to_int();
        s.insert(s.begin() + d, 1);
        return s;
      });
}
EMBER_OP_INFO("ember::squeeze", info) {
  view_info(
      info,
      [](DType dt) { return std::vector<Sample>{{{testing::make_tensor({1, 3, 1, 4}, dt)}, "[1, 3, 1, 4]"}}; },
      [](const Stack&, const Shape& idx) { return Shape{0, idx[0], 0, idx[1]}; },
      [](const Stack&) { return Shape{3, 4}; });
}
EMBER_OP_INFO("ember::squeeze.dim", info) {
  view_info(
      info,
      [](DType dt) {
        return std::vector<Sample>{{{testing::make_tensor({3, 1, 4}, dt), IValue(int64_t(1))}, "size-1 dim"},
                                   {{testing::make_tensor({3, 1, 4}, dt), IValue(int64_t(0))}, "non-1 dim: no-op"}};
      },
      [](const Stack& a, const Shape& idx) { return a[1].to_int() == 1 ? Shape{idx[0], 0, idx[1]} : idx; },
      [](const Stack& a) { return a[1].to_int() == 1 ? Shape{3, 4} : Shape{3, 1, 4}; });
}
EMBER_OP_INFO("ember::expand", info) {
  view_info(
      info,
      [](DType dt) {
        return std::vector<Sample>{{{testing::make_tensor({3, 1}, dt), IValue(Shape{2, 3, 4})}, "[3, 1] -> [2, 3, 4]"},
                                   {{testing::make_tensor({3, 1}, dt), IValue(Shape{-1, 5})}, "-1 keeps a dim"}};
      },
      [](const Stack& a, const Shape& idx) {
        const Tensor& x = a[0].to_tensor();
        Shape src;
        size_t lead = idx.size() - static_cast<size_t>(x.dim());
        for (int64_t d = 0; d < x.dim(); ++d) src.push_back(x.size(d) == 1 ? 0 : idx[lead + static_cast<size_t>(d)]);
        return src;
      },
      [](const Stack& a) {
        Shape s = a[1].to_int_list();
        const Tensor& x = a[0].to_tensor();
        size_t lead = s.size() - static_cast<size_t>(x.dim());
        for (size_t d = lead; d < s.size(); ++d)
          if (s[d] == -1) s[d] = x.size(static_cast<int64_t>(d - lead));
        return s;
      });
}

}  // namespace ember
