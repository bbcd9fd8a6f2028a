// aclnn ops computed in float64 from staged inputs, results rounded once: Argsort, Addcdiv (and
// in place), Sum (of a tensor list, CANN's AccumulateNV2), Ger, TriangularSolve and
// SoftmaxCrossEntropyWithLogits. Each loads its inputs contiguous in float64 (F64Input), loops,
// and stores (store_f64).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ember/device/npu/aclnn_common.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {

const std::initializer_list<DType> kHalfFloats = {DType::Float32, DType::Float16, DType::BFloat16};

aclnnStatus addcdiv_op(const char* op, const aclTensor* self, const aclTensor* t1, const aclTensor* t2,
                       const aclScalar* value, const aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"tensor1", t1}, {"tensor2", t2}, {"value", value}, {"out", out}}))
    return s;
  if (aclnnStatus s = check_all(op, {{"self", self}, {"tensor1", t1}, {"tensor2", t2}, {"out", out}})) return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"self", self}, {"tensor1", t1}, {"tensor2", t2}})
    if (aclnnStatus s = check_dtype(op, name, t, kFloats)) return s;
  std::vector<int64_t> b1, b;
  if (!broadcast(shape_of(self), shape_of(t1), &b1) || !broadcast(IntArrayRef(b1), shape_of(t2), &b))
    return invalid(op, "self " + shape_str(shape_of(self)) + ", tensor1 " + shape_str(shape_of(t1)) + " and tensor2 " +
                           shape_str(shape_of(t2)) + " cannot be broadcast together");
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef(b))) return s;
  const DType promoted = promote_types(promote_types(dtype_of(self), dtype_of(t1)), dtype_of(t2));
  if (aclnnStatus s = check_castable(op, promoted, out)) return s;
  if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}, {"tensor1", t1}, {"tensor2", t2}})) return s;
  uint64_t wsb = 0;
  const int64_t n = numel_of(IntArrayRef(b));
  F64Input a, x, y;
  for (auto [t, in] : {std::pair<const aclTensor*, F64Input*>{self, &a}, {t1, &x}, {t2, &y}})
    if (aclnnStatus s = stage_f64(op, t, &wsb, in, n)) return s;
  const double v = scalar_value(value);
  TensorRef o = ref(out);
  const std::vector<int64_t> shape = b;
  return make_executor(op, wsb, [=](KernelContext& k) {
    double* r = const_cast<double*>(a.load(k, IntArrayRef(shape)));
    const double *p = x.load(k, IntArrayRef(shape)), *q = y.load(k, IntArrayRef(shape));
    for (int64_t i = 0; i < n; ++i) r[i] += v * p[i] / q[i];
    store_f64(k, o, r);
  }, ws, ex);
}

}  // namespace

// CANN header aclnnop/aclnn_argsort.h: out (int64) = the positions that sort self along dim, ascending or descending; stable, NaN above every number (as torch.argsort(stable=True))
extern "C" aclnnStatus aclnnArgsortGetWorkspaceSize(const aclTensor* self, int64_t dim, bool descending, aclTensor* out,
                                                    uint64_t* workspaceSize, aclOpExecutor** executor) {
  const char* op = "aclnnArgsort";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"self", self}, {"out", out}})) return s;
  if (aclnnStatus s = check_dtype(op, "out", out, {DType::Int64})) return s;
  if (dtype_of(self) == DType::Bool) return invalid(op, "self must be a number dtype, got bool");
  if (aclnnStatus s = check_shape(op, "out", out, shape_of(self))) return s;
  IntArrayRef in = shape_of(self);
  const int64_t rank = static_cast<int64_t>(std::max<size_t>(in.size(), 1));
  if (dim < -rank || dim >= rank)
    return invalid(op, "dim " + std::to_string(dim) + " is out of range for " + std::to_string(in.size()) + " dims");
  const size_t d = static_cast<size_t>(dim < 0 ? dim + rank : dim);
  const int64_t len = in.empty() ? 1 : in[d], n = numel_of(in);
  int64_t inner = 1;
  for (size_t q = d + 1; q < in.size(); ++q) inner *= in[q];
  uint64_t wsb = 0, idx_at = 0;
  F64Input x;
  if (aclnnStatus s = stage_f64(op, self, &wsb, &x)) return s;
  if (aclnnStatus s = reserve(op, n, 8, &wsb, &idx_at)) return s;
  TensorRef o = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    const double* v = x.load(k);
    int64_t* idx = reinterpret_cast<int64_t*>(static_cast<char*>(k.workspace()) + idx_at);
    std::vector<int64_t> order(static_cast<size_t>(len));
    const int64_t lines = len ? n / len : 0;
    for (int64_t line = 0; line < lines; ++line) {
      const int64_t base = (line / inner) * len * inner + line % inner;
      std::iota(order.begin(), order.end(), int64_t(0));
      auto key = [&](int64_t i) { return v[base + i * inner]; };
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
        const double a = key(i), b = key(j);
        if (std::isnan(a) || std::isnan(b)) return descending ? std::isnan(a) && !std::isnan(b) : !std::isnan(a) && std::isnan(b);
        return descending ? a > b : a < b;
      });
      for (int64_t i = 0; i < len; ++i) idx[base + i * inner] = order[static_cast<size_t>(i)];
    }
    cpu::Strided dst = k.view(o);
    cpu::copy(dst, cpu::Strided(idx, DType::Int64, dst.sizes, contiguous_strides(dst.sizes)));
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnArgsort)

// CANN header aclnnop/aclnn_addcdiv.h: out = self + value * tensor1 / tensor2 (broadcast)
extern "C" aclnnStatus aclnnAddcdivGetWorkspaceSize(const aclTensor* self, const aclTensor* tensor1,
                                                    const aclTensor* tensor2, const aclScalar* value,
                                                    const aclTensor* out, uint64_t* workspaceSize,
                                                    aclOpExecutor** executor) {
  return addcdiv_op("aclnnAddcdiv", self, tensor1, tensor2, value, out, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnAddcdiv)

// CANN header aclnnop/aclnn_addcdiv.h: selfRef += value * tensor1 / tensor2
extern "C" aclnnStatus aclnnInplaceAddcdivGetWorkspaceSize(const aclTensor* selfRef, const aclTensor* tensor1,
                                                           const aclTensor* tensor2, const aclScalar* value,
                                                           uint64_t* workspaceSize, aclOpExecutor** executor) {
  return addcdiv_op("aclnnInplaceAddcdiv", selfRef, tensor1, tensor2, value, selfRef, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceAddcdiv)

// CANN header aclnnop/aclnn_sum.h: out = the sum of the tensors of the list (one shape and dtype, AccumulateNV2)
extern "C" aclnnStatus aclnnSumGetWorkspaceSize(const aclTensorList* tensors, aclTensor* out, uint64_t* workspaceSize,
                                                aclOpExecutor** executor) {
  const char* op = "aclnnSum";
  if (!tensors) return null_arg(op, "tensors");
  if (aclnnStatus s = check_not_null(op, "out", out)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  std::vector<const aclTensor*> ts = tensor_list(tensors);
  if (ts.empty()) return invalid(op, "tensors must hold at least one tensor");
  uint64_t wsb = 0, acc_at = 0;
  const int64_t n = numel_of(shape_of(out));
  std::vector<F64Input> in(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    const std::string name = "tensors[" + std::to_string(i) + "]";
    if (aclnnStatus s = check_tensor(op, name.c_str(), ts[i])) return s;
    if (dtype_of(ts[i]) != dtype_of(out) || shape_of(ts[i]) != shape_of(out))
      return invalid(op, name + " must have out's shape " + shape_str(shape_of(out)) + " and dtype");
    if (aclnnStatus s = check_overlap(op, "out", out, {{name.c_str(), ts[i]}})) return s;
    if (aclnnStatus s = stage_f64(op, ts[i], &wsb, &in[i])) return s;
  }
  if (dtype_of(out) == DType::Bool || dtype_of(out) == DType::Int64)
    return invalid(op, "out must be a float or 8/32-bit integer dtype");
  if (aclnnStatus s = reserve_f64(op, n, &wsb, &acc_at)) return s;
  TensorRef o = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    double* acc = f64_at(k, acc_at);
    std::fill(acc, acc + n, 0.0);
    for (const F64Input& t : in) {
      const double* v = t.load(k);
      for (int64_t i = 0; i < n; ++i) acc[i] += v[i];
    }
    store_f64(k, o, acc);
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnSum)

// CANN header aclnnop/aclnn_ger.h: out = the outer product of the vectors self (n) and vec2 (m), n x m
extern "C" aclnnStatus aclnnGerGetWorkspaceSize(const aclTensor* self, const aclTensor* vec2, aclTensor* out,
                                                uint64_t* workspaceSize, aclOpExecutor** executor) {
  const char* op = "aclnnGer";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"vec2", vec2}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"self", self}, {"vec2", vec2}, {"out", out}})) return s;
  if (shape_of(self).size() != 1 || shape_of(vec2).size() != 1)
    return invalid(op, "self " + shape_str(shape_of(self)) + " and vec2 " + shape_str(shape_of(vec2)) + " must be 1-D");
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"self", self}, {"vec2", vec2}, {"out", out}})
    if (aclnnStatus s = check_dtype(op, name, t, kFloats)) return s;
  const int64_t n = shape_of(self)[0], m = shape_of(vec2)[0];
  if (aclnnStatus s = check_shape(op, "out", out, {n, m})) return s;
  if (aclnnStatus s = check_castable(op, promote_types(dtype_of(self), dtype_of(vec2)), out)) return s;
  if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}, {"vec2", vec2}}, false)) return s;
  uint64_t wsb = 0, r_at = 0;
  F64Input a, b;
  if (aclnnStatus s = stage_f64(op, self, &wsb, &a)) return s;
  if (aclnnStatus s = stage_f64(op, vec2, &wsb, &b)) return s;
  int64_t nm = 0;
  if (__builtin_mul_overflow(n, m, &nm)) return invalid(op, "the output's size overflows");
  if (aclnnStatus s = reserve_f64(op, nm, &wsb, &r_at)) return s;
  TensorRef o = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    const double *x = a.load(k), *y = b.load(k);
    double* r = f64_at(k, r_at);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) r[i * m + j] = x[i] * y[j];
    store_f64(k, o, r);
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnGer)

// CANN header aclnnop/aclnn_triangular_solve.h: xOut = the solution X of A X = self (A^T X = self when transpose) for triangular A ([*, M, M], its upper or lower triangle, unit diagonal when unitriangular), self [*, M, K], batch dims broadcast; mOut = A broadcast (torch.triangular_solve)
extern "C" aclnnStatus aclnnTriangularSolveGetWorkspaceSize(const aclTensor* self, const aclTensor* A, bool upper,
                                                            bool transpose, bool unitriangular, aclTensor* xOut,
                                                            aclTensor* mOut, uint64_t* workspaceSize,
                                                            aclOpExecutor** executor) {
  const char* op = "aclnnTriangularSolve";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"A", A}, {"xOut", xOut}, {"mOut", mOut}})) return s;
  if (aclnnStatus s = check_all(op, {{"self", self}, {"A", A}, {"xOut", xOut}, {"mOut", mOut}})) return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"self", self}, {"A", A}, {"xOut", xOut}, {"mOut", mOut}})
    if (aclnnStatus s = check_dtype(op, name, t, {DType::Float32, DType::Float64})) return s;
  IntArrayRef bs = shape_of(self), as = shape_of(A);
  if (bs.size() < 2 || as.size() < 2 || as[as.size() - 1] != as[as.size() - 2] || bs[bs.size() - 2] != as.back())
    return invalid(op, "A " + shape_str(as) + " must be [*, M, M] and self " + shape_str(bs) + " [*, M, K]");
  std::vector<int64_t> batch;
  if (!broadcast(IntArrayRef(bs.begin(), bs.size() - 2), IntArrayRef(as.begin(), as.size() - 2), &batch))
    return invalid(op, "the batch dims of self " + shape_str(bs) + " and A " + shape_str(as) + " cannot be broadcast");
  const int64_t M = as.back(), K = bs.back();
  std::vector<int64_t> xs = batch, ms = batch;
  xs.insert(xs.end(), {M, K});
  ms.insert(ms.end(), {M, M});
  if (aclnnStatus s = check_shape(op, "xOut", xOut, IntArrayRef(xs))) return s;
  if (aclnnStatus s = check_shape(op, "mOut", mOut, IntArrayRef(ms))) return s;
  if (aclnnStatus s = check_overlap(op, "xOut", xOut, {{"self", self}, {"A", A}, {"mOut", mOut}}, false)) return s;
  if (aclnnStatus s = check_overlap(op, "mOut", mOut, {{"self", self}, {"A", A}}, false)) return s;
  uint64_t wsb = 0;
  F64Input b, a;
  if (aclnnStatus s = stage_f64(op, self, &wsb, &b, numel_of(IntArrayRef(xs)))) return s;
  if (aclnnStatus s = stage_f64(op, A, &wsb, &a, numel_of(IntArrayRef(ms)))) return s;
  TensorRef rx = ref(xOut), rm = ref(mOut);
  const int64_t batches = numel_of(IntArrayRef(batch));
  return make_executor(op, wsb, [=](KernelContext& k) {
    double* x = const_cast<double*>(b.load(k, IntArrayRef(xs)));
    const double* m = a.load(k, IntArrayRef(ms));
    // The effective matrix T: A, or A^T; T is lower triangular when upper == transpose.
    const bool lower = upper == transpose;
    for (int64_t t = 0; t < batches; ++t) {
      const double* A0 = m + t * M * M;
      double* X = x + t * M * K;
      auto T = [&](int64_t i, int64_t j) { return transpose ? A0[j * M + i] : A0[i * M + j]; };
      for (int64_t c = 0; c < K; ++c) {
        if (lower) {
          for (int64_t i = 0; i < M; ++i) {  // forward substitution
            double v = X[i * K + c];
            for (int64_t j = 0; j < i; ++j) v -= T(i, j) * X[j * K + c];
            X[i * K + c] = unitriangular ? v : v / T(i, i);
          }
        } else {
          for (int64_t i = M; i-- > 0;) {  // back substitution
            double v = X[i * K + c];
            for (int64_t j = M; --j > i;) v -= T(i, j) * X[j * K + c];
            X[i * K + c] = unitriangular ? v : v / T(i, i);
          }
        }
      }
    }
    store_f64(k, rx, x);
    store_f64(k, rm, m);
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnTriangularSolve)

// CANN header aclnnop/aclnn_softmax_cross_entropy_with_logits.h: for features and labels [N, C]: loss[n] = -sum_c labels log_softmax(features)[n, c], backprop = softmax(features) - labels
extern "C" aclnnStatus aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(const aclTensor* features, aclTensor* labels,
                                                                          aclTensor* loss, aclTensor* backprop,
                                                                          uint64_t* workspaceSize,
                                                                          aclOpExecutor** executor) {
  const char* op = "aclnnSoftmaxCrossEntropyWithLogits";
  if (aclnnStatus s = check_not_null(op, {{"features", features}, {"labels", labels}, {"loss", loss}, {"backprop", backprop}}))
    return s;
  if (aclnnStatus s = check_all(op, {{"features", features}, {"labels", labels}, {"loss", loss}, {"backprop", backprop}}))
    return s;
  if (aclnnStatus s = check_dtype(op, "features", features, kHalfFloats)) return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"labels", labels}, {"loss", loss}, {"backprop", backprop}})
    if (dtype_of(t) != dtype_of(features)) return invalid(op, std::string(name) + " must have features' dtype");
  IntArrayRef fs = shape_of(features);
  if (fs.size() != 2) return invalid(op, "features must be 2-D [N, C], got " + shape_str(fs));
  if (aclnnStatus s = check_shape(op, "labels", labels, fs)) return s;
  if (aclnnStatus s = check_shape(op, "backprop", backprop, fs)) return s;
  if (aclnnStatus s = check_shape(op, "loss", loss, {fs[0]})) return s;
  if (aclnnStatus s = check_overlap(op, "loss", loss, {{"features", features}, {"labels", labels}}, false)) return s;
  if (aclnnStatus s = check_overlap(op, "backprop", backprop, {{"features", features}, {"labels", labels}, {"loss", loss}}, false))
    return s;
  uint64_t wsb = 0, l_at = 0;
  F64Input f, y;
  if (aclnnStatus s = stage_f64(op, features, &wsb, &f)) return s;
  if (aclnnStatus s = stage_f64(op, labels, &wsb, &y)) return s;
  if (aclnnStatus s = reserve_f64(op, fs[0], &wsb, &l_at)) return s;
  TensorRef rl = ref(loss), rb = ref(backprop);
  const int64_t N = fs[0], C = fs[1];
  return make_executor(op, wsb, [=](KernelContext& k) {
    double* x = const_cast<double*>(f.load(k));
    const double* t = y.load(k);
    double* l = f64_at(k, l_at);
    for (int64_t n = 0; n < N; ++n) {
      double* row = x + n * C;
      const double* lab = t + n * C;
      double mx = -INFINITY, sum = 0, total = 0;
      for (int64_t c = 0; c < C; ++c) mx = std::max(mx, row[c]);
      for (int64_t c = 0; c < C; ++c) sum += std::exp(row[c] - mx);
      const double lse = mx + std::log(sum);
      for (int64_t c = 0; c < C; ++c) {
        total -= lab[c] * (row[c] - lse);
        row[c] = std::exp(row[c] - lse) - lab[c];  // backprop, in place
      }
      l[n] = total;
    }
    store_f64(k, rl, l);
    store_f64(k, rb, x);
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnSoftmaxCrossEntropyWithLogits)

}  // namespace npu
}  // namespace ember
