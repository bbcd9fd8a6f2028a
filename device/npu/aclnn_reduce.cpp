// aclnn reductions (the reduce table: ReduceSum, Amax, Amin, ...; Norm, All, Any; ArgMax, ArgMin) and the
// softmax family. A non-contiguous softmax input is staged (made contiguous) in the workspace.
#include <cmath>

#include "ember/device/cpu/elementwise.h"
#include "ember/device/cpu/reduce.h"
#include "ember/device/npu/aclnn_common.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {

// Wrapped, deduplicated reduction dims (empty = all) as a bitmask, and the output shape.
aclnnStatus reduce_dims(const char* op, const aclTensor* self, const std::vector<int64_t>& dims, bool keep,
                        uint64_t* mask, std::vector<int64_t>* out_shape) {
  int64_t n = static_cast<int64_t>(shape_of(self).size());
  *mask = 0;
  if (dims.empty()) {
    *mask = n >= 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
  }
  for (int64_t d : dims) {
    int64_t m = n > 0 ? n : 1;
    if (d < -m || d >= m)
      return invalid(op, "dim " + std::to_string(d) + " out of range for a " + std::to_string(n) + "-d tensor");
    if (n == 0) continue;
    int64_t w = d < 0 ? d + n : d;
    if (*mask & (uint64_t(1) << w)) return invalid(op, "dim " + std::to_string(w) + " appears twice");
    *mask |= uint64_t(1) << w;
  }
  out_shape->clear();
  for (int64_t d = 0; d < n; ++d) {
    bool r = (*mask >> d) & 1;
    if (!r || keep) out_shape->push_back(r ? 1 : shape_of(self)[static_cast<size_t>(d)]);
  }
  return ACLNN_SUCCESS;
}

// The output view in keepdim layout.
cpu::Strided keepdim(const cpu::Strided& out, IntArrayRef in_shape, uint64_t mask) {
  if (out.sizes.size() == in_shape.size()) return out;
  cpu::Strided v = out;
  v.sizes.clear();
  v.strides.clear();
  size_t j = 0;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    if ((mask >> d) & 1) {
      v.sizes.push_back(1);
      v.strides.push_back(0);
    } else {
      v.sizes.push_back(out.sizes[j]);
      v.strides.push_back(out.strides[j]);
      ++j;
    }
  }
  return v;
}

using ReduceFn = void (*)(const cpu::Strided&, const cpu::Strided&);

// What every reduction checks, and its geometry: the reduced dims as a mask, self's shape and
// how many elements each output element reduces.
struct ReducePlan {
  uint64_t mask = 0;
  std::vector<int64_t> in_shape;
  int64_t count = 1;
};
aclnnStatus plan_reduce(const char* op, const aclTensor* self, const aclIntArray* dim, bool keep, const aclTensor* out,
                        const DType* required_out, bool nonempty, ReducePlan* p) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"dim", dim}, {"out", out}})) return s;
  if (aclnnStatus s = check_tensor(op, "self", self)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  std::vector<int64_t> oshape;
  if (aclnnStatus s = reduce_dims(op, self, int_array(dim), keep, &p->mask, &oshape)) return s;
  // A reduction to one value may be written to a [1] out as well as a 0-d one: ggml's CANN
  // backend, which runs on hardware, passes [1] (README's fidelity table).
  const bool one_value = oshape.empty() && shape_of(out) == IntArrayRef({int64_t(1)});
  if (!one_value)
    if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef(oshape))) return s;
  if (required_out && dtype_of(out) != *required_out) {
    std::ostringstream os;
    os << "out has dtype " << dtype_of(out) << " but dtype is " << *required_out;
    return invalid(op, os.str());
  }
  IntArrayRef xs = shape_of(self);
  p->in_shape.assign(xs.begin(), xs.end());
  for (size_t d = 0; d < xs.size(); ++d)
    if ((p->mask >> d) & 1) {
      if (nonempty && xs[d] == 0) return invalid(op, "cannot reduce over a zero-size dimension");
      p->count *= xs[d];
    }
  return ACLNN_SUCCESS;
}

aclnnStatus reduce_op(const char* op, const aclTensor* self, const aclIntArray* dim, bool keep, aclTensor* out,
                      const DType* required_out, ReduceFn fn, bool nonempty, uint64_t* ws, aclOpExecutor** ex) {
  ReducePlan p;
  if (aclnnStatus s = plan_reduce(op, self, dim, keep, out, required_out, nonempty, &p)) return s;
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, 0, [=](KernelContext& k) { fn(keepdim(k.view(o), IntArrayRef(p.in_shape), p.mask), k.view(a)); },
                       ws, ex);
}

// out = the mean of self over dim: the sum divided by the count (NaN for an empty reduction, as
// 0/0). A float32/float64 out is summed and divided in place; any other (fp16, bf16, and the
// integer dtypes CANN allows, which truncate) in a float64 workspace, then converted once.
aclnnStatus mean_op(const char* op, const aclTensor* self, const aclIntArray* dim, bool keep, aclTensor* out,
                    const DType* required_out, uint64_t* ws, aclOpExecutor** ex) {
  ReducePlan p;
  if (aclnnStatus s = plan_reduce(op, self, dim, keep, out, required_out, false, &p)) return s;
  if (dtype_of(out) == DType::Bool) return invalid(op, "out must not be bool");
  const DType odt = dtype_of(out);
  const bool staged = odt != DType::Float32 && odt != DType::Float64;
  uint64_t wsb = 0;
  if (staged)
    if (aclnnStatus s = workspace_bytes(op, numel_of(shape_of(out)), 8, &wsb)) return s;
  const double scale = 1.0 / static_cast<double>(p.count);
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided ov = keepdim(k.view(o), IntArrayRef(p.in_shape), p.mask);
    if (ov.numel() == 0) return;
    cpu::Strided acc = staged ? ov.contiguous_at(k.workspace(), DType::Float64) : ov;
    cpu::sum(acc, k.view(a));
    cpu::affine(acc, acc, scale, 0.0);
    if (staged) cpu::copy(ov, acc);
  }, ws, ex);
}

}  // namespace

// The reduce table (core/tables/reduce_ops.def). S: out has the given dtype, an empty reduction gives
// the init; M: out has self's dtype, zero-size reduced dims are refused.
#define EMBER_ACLNN_REDUCE_S(Acl, name)                                                                            \
  extern "C" aclnnStatus aclnn##Acl##GetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim, \
                                                      aclDataType dtype, aclTensor* out, uint64_t* ws,             \
                                                      aclOpExecutor** ex) {                                        \
    DType dt;                                                                                                      \
    if (!dtype_from_acl(dtype, &dt)) return invalid("aclnn" #Acl, "unsupported dtype " + std::to_string(dtype));   \
    return reduce_op("aclnn" #Acl, self, dim, keepDim, out, &dt, cpu::name, false, ws, ex);                        \
  }
#define EMBER_ACLNN_REDUCE_M(Acl, name)                                                                             \
  extern "C" aclnnStatus aclnn##Acl##GetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim,  \
                                                      aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {           \
    if (self && out && dtype_of(self) != dtype_of(out)) return invalid("aclnn" #Acl, "out must have self's dtype"); \
    return reduce_op("aclnn" #Acl, self, dim, keepDim, out, nullptr, cpu::name, true, ws, ex);                      \
  }
#define EMBER_TABLE_REDUCE(name, Acl, form, Acc, ...) \
  EMBER_ACLNN_REDUCE_##form(Acl, name) EMBER_ACLNN_PHASE2_IMPL(aclnn##Acl)
EMBER_REDUCE_OPS(EMBER_TABLE_REDUCE)
#undef EMBER_TABLE_REDUCE
#undef EMBER_ACLNN_REDUCE_S
#undef EMBER_ACLNN_REDUCE_M

extern "C" aclnnStatus aclnnMeanGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim,
                                                 aclDataType dtype, aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  DType dt;
  if (!dtype_from_acl(dtype, &dt)) return invalid("aclnnMean", "unsupported dtype " + std::to_string(dtype));
  return mean_op("aclnnMean", self, dim, keepDim, out, &dt, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnMean)

// MeanV2: out has self's dtype; an empty dim reduces over every dim unless noopWithEmptyAxes,
// which makes it a copy.
extern "C" aclnnStatus aclnnMeanV2GetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim,
                                                   bool noopWithEmptyAxes, aclTensor* out, uint64_t* ws,
                                                   aclOpExecutor** ex) {
  const char* op = "aclnnMeanV2";
  if (self && out && dtype_of(self) != dtype_of(out)) return invalid(op, "out must have self's dtype");
  if (noopWithEmptyAxes && dim && int_array(dim).empty()) {
    if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
    if (aclnnStatus s = check_tensor(op, "self", self)) return s;
    if (aclnnStatus s = check_tensor(op, "out", out)) return s;
    if (aclnnStatus s = check_shape(op, "out", out, shape_of(self))) return s;
    TensorRef a = ref(self), o = ref(out);
    return make_executor(op, 0, [a, o](KernelContext& k) { cpu::copy(k.view(o), k.view(a)); }, ws, ex);
  }
  return mean_op(op, self, dim, keepDim, out, nullptr, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnMeanV2)

namespace {
// out (bool, or uint8 1 / 0) = whether every (all) or some (any) element self reduces over dim
// is nonzero (NaN counts as nonzero; an empty reduction: all true, any false). self is staged as
// bool in the workspace, its true values counted per output element (int64), the counts compared.
aclnnStatus logical_reduce(const char* op, bool all, const aclTensor* self, const aclIntArray* dim, bool keep,
                           aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  ReducePlan p;
  if (aclnnStatus s = plan_reduce(op, self, dim, keep, out, nullptr, false, &p)) return s;
  if (dtype_of(out) != DType::Bool && dtype_of(out) != DType::UInt8) return invalid(op, "out must be bool or uint8");
  const int64_t m = numel_of(shape_of(out));
  uint64_t wsb = 0, flags = 0, counts = 0, results = 0;
  if (aclnnStatus s = reserve(op, numel_of(shape_of(self)), 1, &wsb, &flags)) return s;
  if (aclnnStatus s = reserve(op, m, 8, &wsb, &counts)) return s;
  if (aclnnStatus s = reserve(op, m, 1, &wsb, &results)) return s;
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    char* w = static_cast<char*>(k.workspace());
    const cpu::Strided x = k.view(a);
    const cpu::Strided nz = x.contiguous_at(w + flags, DType::Bool);
    cpu::copy(nz, x);  // nonzero
    DimVector kept;
    for (size_t d = 0; d < p.in_shape.size(); ++d) kept.push_back((p.mask >> d) & 1 ? 1 : p.in_shape[d]);
    auto* c = reinterpret_cast<int64_t*>(w + counts);
    cpu::sum(cpu::Strided(c, DType::Int64, kept, contiguous_strides(kept)), nz);
    auto* r = reinterpret_cast<bool*>(w + results);
    for (int64_t i = 0; i < m; ++i) r[i] = all ? c[i] == p.count : c[i] > 0;
    cpu::copy(keepdim(k.view(o), IntArrayRef(p.in_shape), p.mask),
              cpu::Strided(r, DType::Bool, kept, contiguous_strides(kept)));
  }, ws, ex);
}

// out = the p-norm of self over dim (an empty dim: all), in double: |x|^p summed, then ^(1/p);
// p = 0 counts the nonzeros, p = +-inf takes the largest / smallest |x| (an empty reduction is
// then refused). out has self's floating dtype.
aclnnStatus norm_op(const char* op, const aclTensor* self, const aclScalar* pScalar, const aclIntArray* dim,
                    bool keep, aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, "pScalar", pScalar)) return s;
  const double p = scalar_value(pScalar);
  if (std::isnan(p)) return invalid(op, "p must be a number, got nan");
  ReducePlan plan;
  if (aclnnStatus s = plan_reduce(op, self, dim, keep, out, nullptr, std::isinf(p), &plan)) return s;
  if (aclnnStatus s = check_dtype(op, "self", self, kFloats)) return s;
  if (dtype_of(out) != dtype_of(self)) return invalid(op, "out must have self's dtype");
  const int64_t n = numel_of(shape_of(self)), m = numel_of(shape_of(out));
  uint64_t wsb = 0, xs = 0, rs = 0;
  if (aclnnStatus s = reserve_f64(op, n, &wsb, &xs)) return s;
  if (aclnnStatus s = reserve_f64(op, m, &wsb, &rs)) return s;
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    const IntArrayRef in_shape(plan.in_shape);
    double* x = f64_at(k, xs);
    double* r = f64_at(k, rs);
    const cpu::Strided xv(x, DType::Float64, DimVector(in_shape), contiguous_strides(in_shape));
    cpu::copy(xv, k.view(a));
    for (int64_t i = 0; i < n; ++i) {
      const double v = std::fabs(x[i]);
      x[i] = p == 0 ? double(x[i] != 0) : std::isinf(p) || p == 1 ? v : p == 2 ? v * v : std::pow(v, p);
    }
    DimVector kept;
    for (size_t d = 0; d < in_shape.size(); ++d) kept.push_back((plan.mask >> d) & 1 ? 1 : in_shape[d]);
    const cpu::Strided rv(r, DType::Float64, kept, contiguous_strides(kept));
    if (std::isinf(p)) {
      if (p > 0) cpu::amax(rv, xv);
      else cpu::amin(rv, xv);
    } else {
      cpu::sum(rv, xv);
      if (p != 0 && p != 1)
        for (int64_t i = 0; i < m; ++i) r[i] = p == 2 ? std::sqrt(r[i]) : std::pow(r[i], 1.0 / p);
    }
    cpu::copy(keepdim(k.view(o), in_shape, plan.mask), rv);
  }, ws, ex);
}
}  // namespace

extern "C" aclnnStatus aclnnNormGetWorkspaceSize(const aclTensor* self, const aclScalar* pScalar,
                                                 const aclIntArray* dim, bool keepdim, aclTensor* out, uint64_t* ws,
                                                 aclOpExecutor** ex) {
  return norm_op("aclnnNorm", self, pScalar, dim, keepdim, out, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnNorm)

extern "C" aclnnStatus aclnnAllGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepdim,
                                                aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return logical_reduce("aclnnAll", true, self, dim, keepdim, out, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnAll)
extern "C" aclnnStatus aclnnAnyGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepdim,
                                                aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return logical_reduce("aclnnAny", false, self, dim, keepdim, out, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnAny)

namespace {
using ArgFn = void (*)(const cpu::Strided&, const cpu::Strided&, int64_t);
aclnnStatus arg_op(const char* op, const aclTensor* self, int64_t dim, bool keep, aclTensor* out, ArgFn fn, uint64_t* ws,
                   aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (aclnnStatus s = check_tensor(op, "self", self)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (dtype_of(out) != DType::Int64 && dtype_of(out) != DType::Int32)
    return invalid(op, "out must be int64 or int32");
  int64_t n = static_cast<int64_t>(shape_of(self).size());
  if (n == 0) return invalid(op, "self must have at least one dimension");
  if (dim < -n || dim >= n) return invalid(op, "dim " + std::to_string(dim) + " out of range");
  int64_t d = dim < 0 ? dim + n : dim;
  if (shape_of(self)[static_cast<size_t>(d)] == 0) return invalid(op, "cannot reduce over a zero-size dimension");
  uint64_t mask;
  std::vector<int64_t> oshape;
  if (aclnnStatus s = reduce_dims(op, self, {d}, keep, &mask, &oshape)) return s;
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef(oshape))) return s;
  std::vector<int64_t> in_shape(shape_of(self).begin(), shape_of(self).end());
  // INT32 indices (CANN allows them) are found as int64 in the workspace, then narrowed.
  const bool narrow = dtype_of(out) == DType::Int32;
  uint64_t wsb = 0;
  if (narrow)
    if (aclnnStatus s = workspace_bytes(op, numel_of(shape_of(out)), 8, &wsb)) return s;
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided ov = keepdim(k.view(o), IntArrayRef(in_shape), mask);
    if (!narrow) return fn(ov, k.view(a), d);
    cpu::Strided idx = ov.contiguous_at(k.workspace(), DType::Int64);
    fn(idx, k.view(a), d);
    cpu::copy(ov, idx);
  }, ws, ex);
}
}  // namespace

extern "C" aclnnStatus aclnnArgMaxGetWorkspaceSize(const aclTensor* self, int64_t dim, bool keepdim, aclTensor* out,
                                                   uint64_t* ws, aclOpExecutor** ex) {
  return arg_op("aclnnArgMax", self, dim, keepdim, out, cpu::argmax, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnArgMax)
extern "C" aclnnStatus aclnnArgMinGetWorkspaceSize(const aclTensor* self, int64_t dim, bool keepdim, aclTensor* out,
                                                   uint64_t* ws, aclOpExecutor** ex) {
  return arg_op("aclnnArgMin", self, dim, keepdim, out, cpu::argmin, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnArgMin)

// ---- softmax family ----
namespace {

aclnnStatus softmax_dim(const char* op, const aclTensor* t, int64_t dim, int64_t* d) {
  int64_t n = static_cast<int64_t>(shape_of(t).size());
  int64_t m = n > 0 ? n : 1;
  if (dim < -m || dim >= m) return invalid(op, "dim " + std::to_string(dim) + " out of range");
  *d = n == 0 ? 0 : (dim < 0 ? dim + n : dim);
  return ACLNN_SUCCESS;
}

using SoftmaxFn = void (*)(const cpu::Strided&, const cpu::Strided&, int64_t);
aclnnStatus softmax_op(const char* op, const aclTensor* self, int64_t dim, aclTensor* out, SoftmaxFn fn, uint64_t* ws,
                       aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (aclnnStatus s = check_tensor(op, "self", self)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (aclnnStatus s = check_shape(op, "out", out, shape_of(self))) return s;
  if (!is_floating_point(dtype_of(self)) || !is_floating_point(dtype_of(out)))
    return invalid(op, "self and out must be floating");
  if (!is_contiguous(out)) return invalid(op, "out must be contiguous");
  int64_t d;
  if (aclnnStatus s = softmax_dim(op, self, dim, &d)) return s;
  uint64_t wsb = 0;
  StagedInput x = stage_if_strided(self, &wsb);
  TensorRef o = ref(out);
  bool empty = numel_of(shape_of(self)) == 0;
  return make_executor(op, wsb, [=](KernelContext& k) {
    if (!empty) fn(k.view(o), x.view(k), d);
  }, ws, ex);
}

using SoftmaxBwFn = void (*)(const cpu::Strided&, const cpu::Strided&, const cpu::Strided&, int64_t);
aclnnStatus softmax_bw_op(const char* op, const aclTensor* g, const aclTensor* y, int64_t dim, aclTensor* out,
                          SoftmaxBwFn fn, uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"gradOutput", g}, {"output", y}, {"gradInput", out}})) return s;
  if (aclnnStatus s = check_tensor(op, "gradOutput", g)) return s;
  if (aclnnStatus s = check_tensor(op, "output", y)) return s;
  if (aclnnStatus s = check_tensor(op, "gradInput", out)) return s;
  if (aclnnStatus s = check_shape(op, "gradOutput", g, shape_of(y))) return s;
  if (aclnnStatus s = check_shape(op, "gradInput", out, shape_of(y))) return s;
  if (!is_contiguous(out)) return invalid(op, "gradInput must be contiguous");
  int64_t d;
  if (aclnnStatus s = softmax_dim(op, y, dim, &d)) return s;
  uint64_t wsb = 0;
  StagedInput sg = stage_if_strided(g, &wsb), sy = stage_if_strided(y, &wsb);
  TensorRef o = ref(out);
  bool empty = numel_of(shape_of(y)) == 0;
  return make_executor(op, wsb, [=](KernelContext& k) {
    if (!empty) fn(k.view(o), sg.view(k), sy.view(k), d);
  }, ws, ex);
}
}  // namespace

extern "C" aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor* self, int64_t dim, aclTensor* out, uint64_t* ws,
                                                    aclOpExecutor** ex) {
  return softmax_op("aclnnSoftmax", self, dim, out, cpu::softmax, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnSoftmax)
extern "C" aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor* self, int64_t dim, aclTensor* out, uint64_t* ws,
                                                       aclOpExecutor** ex) {
  return softmax_op("aclnnLogSoftmax", self, dim, out, cpu::log_softmax, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnLogSoftmax)
extern "C" aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* output,
                                                            int64_t dim, aclTensor* gradInput, uint64_t* ws,
                                                            aclOpExecutor** ex) {
  return softmax_bw_op("aclnnSoftmaxBackward", gradOutput, output, dim, gradInput, cpu::softmax_backward, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnSoftmaxBackward)
extern "C" aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* output,
                                                               int64_t dim, aclTensor* out, uint64_t* ws,
                                                               aclOpExecutor** ex) {
  return softmax_bw_op("aclnnLogSoftmaxBackward", gradOutput, output, dim, out, cpu::log_softmax_backward, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnLogSoftmaxBackward)

}  // namespace npu
}  // namespace ember
