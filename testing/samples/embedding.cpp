// Samples and float64 references for the ops of ops/embedding.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
EMBER_OP_INFO("ember::embedding", info) {
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({7, 4}, dt, -2, 2, 1), testing::make_int_valued({5}, DType::Int64, 0, 6, 2)}, "1-d indices"},
        {{make_tensor({10, 3}, dt, -2, 2, 3), testing::make_int_valued({2, 6}, DType::Int64, 0, 9, 4)},
         "2-d indices, repeats"},
        {{testing::make_noncontig({6, 5}, dt, -2, 2, 5), testing::make_int_valued({4}, DType::Int32, 0, 5, 6)},
         "non-contiguous weight, int32 indices"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor &w = a[0].to_tensor(), &ix = a[1].to_tensor();
    Shape shape = ix.sizes();
    shape.push_back(w.size(1));
    Tensor out = empty(shape, kFloat64);
    double* o = out.data_ptr<double>();
    for (const Shape& idx : testing::all_indices(ix.sizes())) {
      int64_t r = testing::at_int(ix, idx);
      for (int64_t j = 0; j < w.size(1); ++j) *o++ = testing::at(w, {r, j});
    }
    return {out};
  };
  info.exact = true;
}
EMBER_OP_INFO("ember::embedding_backward", info) {
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({5, 4}, dt, -2, 2, 1), testing::make_int_valued({5}, DType::Int64, 0, 6, 2), IValue(int64_t(7))},
         "1-d indices"},
        {{make_tensor({2, 6, 3}, dt, -2, 2, 3), testing::make_int_valued({2, 6}, DType::Int64, 0, 3, 4), IValue(int64_t(4)),
          IValue(int64_t(1))},
         "repeats, padding_idx 1"},
        {{make_tensor({6, 2}, dt, -2, 2, 5), testing::make_int_valued({6}, DType::Int32, 0, 2, 6), IValue(int64_t(3)),
          IValue(int64_t(-1)), IValue(true)},
         "scale by frequency"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor &g = a[0].to_tensor(), &ix = a[1].to_tensor();
    int64_t num = a[2].to_int(), pad = a.size() > 3 ? a[3].to_int() : -1;
    bool freq = a.size() > 4 && a[4].to_bool();
    int64_t D = g.size(-1);
    std::vector<double> count(static_cast<size_t>(num), 0.0);
    for (const Shape& idx : testing::all_indices(ix.sizes())) count[static_cast<size_t>(testing::at_int(ix, idx))] += 1;
    Tensor out = zeros({num, D}, kFloat64);
    double* o = out.data_ptr<double>();
    for (const Shape& idx : testing::all_indices(ix.sizes())) {
      int64_t r = testing::at_int(ix, idx);
      if (r == pad) continue;
      Shape gi = idx;
      gi.push_back(0);
      for (int64_t j = 0; j < D; ++j) {
        gi.back() = j;
        o[r * D + j] += testing::at(g, gi) / (freq ? count[static_cast<size_t>(r)] : 1.0);
      }
    }
    return {out};
  };
}

EMBER_OP_INFO("ember::index_select", info) {
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({5, 4}, dt, -2, 2, 1), IValue(int64_t(0)), testing::make_int_valued({6}, DType::Int64, 0, 4, 2)},
         "dim 0, repeats"},
        {{make_tensor({3, 5, 2}, dt, -2, 2, 3), IValue(int64_t(1)), testing::make_int_valued({4}, DType::Int32, 0, 4, 4)},
         "dim 1, int32"},
        {{testing::make_noncontig({4, 6}, dt, -2, 2, 5), IValue(int64_t(-1)),
          testing::make_int_valued({}, DType::Int64, 0, 5, 6)},
         "non-contiguous, last dim, 0-d index"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const Tensor& x = a[0].to_tensor();
    const Tensor& ix = a[2].to_tensor();
    int64_t d = a[1].to_int() < 0 ? a[1].to_int() + x.dim() : a[1].to_int();
    Shape shape = x.sizes();
    shape[static_cast<size_t>(d)] = ix.numel();
    Tensor out = empty(shape, kFloat64);
    double* o = out.data_ptr<double>();
    std::vector<int64_t> picks = ix.to_vector<int64_t>();
    for (const Shape& idx : testing::all_indices(shape)) {
      Shape from = idx;
      from[static_cast<size_t>(d)] = picks[static_cast<size_t>(idx[static_cast<size_t>(d)])];
      *o++ = testing::at(x, from);
    }
    return {out};
  };
  info.exact = true;
}

}  // namespace ember
