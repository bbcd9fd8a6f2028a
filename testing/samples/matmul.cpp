// Samples and float64 references for the ops of ops/matmul.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
const std::vector<DType> kMmTypes{kFloat32, kFloat64, kFloat16, kBFloat16, kInt64};
}
EMBER_OP_INFO("ember::mm", info) {
  info.dtypes = kMmTypes;
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({3, 4}, dt), make_tensor({4, 5}, dt)}, "tiny (Eigen)"},
        {{make_tensor({64, 96}, dt), make_tensor({96, 80}, dt)}, "medium (oneDNN for f32/bf16)"},
        {{make_tensor({96, 64}, dt).t(), make_tensor({80, 96}, dt).t()}, "both transposed"},
        {{testing::make_noncontig({20, 30}, dt), make_tensor({30, 10}, dt)}, "non-unit strides (copied)"},
        {{make_tensor({5, 0}, dt), make_tensor({0, 3}, dt)}, "empty inner dim -> zeros"},
        {{make_tensor({1, 50}, dt), make_tensor({50, 1}, dt)}, "row x column"}};
  };
  info.reference = [](const Stack& a) -> Stack { return {testing::ref_matmul(a[0].to_tensor(), a[1].to_tensor())}; };
  info.tol_scale = 8;  // K-term fp32 accumulations
}
// Rounded products: dtype is the sample's dtype, with one f32 operand in 16-bit samples (rounded
// by the op); the reference multiplies the operands rounded to dtype, in float64.
namespace {
Tensor ref_rounded(const Tensor& x, DType dt) {
  return testing::ref_contiguous(testing::ref_contiguous(x, dt), kFloat64);
}
}  // namespace
EMBER_OP_INFO("ember::_mm_rounded", info) {
  info.dtypes = {kFloat32, kFloat64, kBFloat16, kFloat16};
  info.samples = [](DType dt) {
    using testing::make_tensor;
    const DType r = dt;
    return std::vector<testing::Sample>{
        {{make_tensor({3, 4}, dt), make_tensor({4, 5}, dt), r, r}, "tiny"},
        {{make_tensor({64, 96}, dt), make_tensor({80, 96}, dt).t(), r, r}, "medium, transposed rhs"},
        {{make_tensor({96, 20}, dt).t(), make_tensor({96, 30}, kFloat32), r, r}, "transposed lhs, f32 rhs"},
        {{testing::make_noncontig({20, 30}, dt), make_tensor({30, 10}, dt), r, r}, "non-unit strides"},
        {{make_tensor({5, 0}, dt), make_tensor({0, 3}, dt), r, r}, "empty inner dim -> zeros"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const DType r = a[2].to_dtype();
    return {testing::ref_matmul(ref_rounded(a[0].to_tensor(), r), ref_rounded(a[1].to_tensor(), r))};
  };
  info.tol_scale = 8;
}
EMBER_OP_INFO("ember::_linear_rounded", info) {
  info.dtypes = {kFloat32, kFloat64, kBFloat16, kFloat16};
  info.samples = [](DType dt) {
    using testing::make_tensor;
    const DType r = dt;
    return std::vector<testing::Sample>{
        {{make_tensor({4, 7}, dt), make_tensor({5, 7}, dt), r}, "2-d input"},
        {{make_tensor({2, 3, 40}, dt), make_tensor({24, 40}, kFloat32), r}, "3-d input, f32 weight"}};
  };
  info.reference = [](const Stack& a) -> Stack {
    const DType r = a[2].to_dtype();
    Tensor x = ref_rounded(a[0].to_tensor(), r), w = ref_rounded(a[1].to_tensor(), r);
    Shape shape = x.sizes();
    shape.back() = w.size(0);
    return {testing::ref_matmul(x.reshape({-1, w.size(1)}), w.t()).reshape(shape)};
  };
  info.tol_scale = 8;
}
EMBER_OP_INFO("ember::bmm", info) {
  info.dtypes = kMmTypes;
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({2, 3, 4}, dt), make_tensor({2, 4, 5}, dt)}, "tiny"},
        {{make_tensor({3, 40, 50}, dt), make_tensor({3, 60, 50}, dt).transpose(1, 2)}, "transposed rhs"},
        {{make_tensor({1, 70, 60}, dt), make_tensor({1, 60, 50}, dt)}, "batch 1"}};
  };
  info.reference = [](const Stack& a) -> Stack { return {testing::ref_matmul(a[0].to_tensor(), a[1].to_tensor())}; };
  info.tol_scale = 8;
}
EMBER_OP_INFO("ember::matmul", info) {
  info.dtypes = kMmTypes;
  info.samples = [](DType dt) {
    using testing::make_tensor;
    return std::vector<testing::Sample>{
        {{make_tensor({5}, dt), make_tensor({5}, dt)}, "1-D . 1-D"},
        {{make_tensor({3, 5}, dt), make_tensor({5}, dt)}, "2-D @ 1-D"},
        {{make_tensor({5}, dt), make_tensor({5, 4}, dt)}, "1-D @ 2-D"},
        {{make_tensor({2, 3, 5}, dt), make_tensor({5, 4}, dt)}, "3-D @ 2-D (folded)"},
        {{make_tensor({2, 1, 3, 5}, dt), make_tensor({4, 5, 2}, dt)}, "batch broadcast [2,1] x [4]"},
        {{make_tensor({3, 5}, dt), make_tensor({2, 5, 4}, dt)}, "2-D @ 3-D"}};
  };
  // Reference: flatten broadcast batches by hand.
  info.reference = [](const Stack& a) -> Stack {
    Tensor x = a[0].to_tensor(), y = a[1].to_tensor();
    bool vx = x.dim() == 1, vy = y.dim() == 1;
    if (vx) x = x.unsqueeze(0);
    if (vy) y = y.unsqueeze(1);
    Shape bx(x.sizes().begin(), x.sizes().end() - 2), by(y.sizes().begin(), y.sizes().end() - 2);
    Shape batch = broadcast_shapes(bx, by);
    int64_t M = x.size(-2), K = x.size(-1), N = y.size(-1);
    Shape out_shape = batch;
    out_shape.push_back(M);
    out_shape.push_back(N);
    Tensor out = empty(out_shape, kFloat64);
    double* o = out.data_ptr<double>();
    for (const Shape& bi : testing::all_indices(batch)) {
      auto pick = [&](const Shape& bs, int64_t i, int64_t j) {
        Shape idx;
        size_t lead = bi.size() - bs.size();
        for (size_t d = 0; d < bs.size(); ++d) idx.push_back(bs[d] == 1 ? 0 : bi[lead + d]);
        idx.push_back(i);
        idx.push_back(j);
        return idx;
      };
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < K; ++k) acc += testing::at(x, pick(bx, i, k)) * testing::at(y, pick(by, k, j));
          *o++ = acc;
        }
    }
    Shape final_shape = batch;
    if (!vx) final_shape.push_back(M);
    if (!vy) final_shape.push_back(N);
    return {out.reshape(final_shape)};
  };
  info.tol_scale = 8;
}

}  // namespace ember
