// ember (internal to ops/): shape/dtype rules shared by the elementwise op files.
#pragma once

#include "ember/ops/op_util.h"

namespace ember {
namespace ops {

enum class ResultKind {
  Promote,       // result dtype = promoted inputs (add, mul, maximum, ...)
  PromoteFloat,  // promoted, integers go to the default float (div, pow, exp, ...)
  Bool,          // comparisons: computed in the promoted type, result bool
};

struct ElementwiseMeta {
  DimVector shape;
  DType dtype;    // result dtype
  DType compute;  // dtype the kernel computes in (float for f32/f16/bf16, double, int64)
  Device device;
};

inline DType apply_kind(DType promoted, ResultKind kind) {
  if (kind == ResultKind::PromoteFloat && !is_floating_point(promoted)) return default_float_dtype();
  if (kind == ResultKind::Bool) return DType::Bool;
  return promoted;
}

inline ElementwiseMeta binary_meta(const char* op, const Tensor& a, const Tensor& b, ResultKind kind) {
  ElementwiseMeta m;
  m.device = common_device(op, {&a, &b});
  m.shape = broadcast_shapes(a.sizes_ref(), b.sizes_ref(), op);
  DType promoted = result_type({a, b});
  if (kind == ResultKind::PromoteFloat && !is_floating_point(promoted)) promoted = default_float_dtype();
  m.dtype = apply_kind(promoted, kind);
  m.compute = cpu::compute_dtype(promoted);
  return m;
}

inline ElementwiseMeta scalar_meta(const char* op, const Tensor& a, const Scalar& b, ResultKind kind) {
  (void)op;
  ElementwiseMeta m;
  m.device = a.device();
  m.shape = a.sizes_ref();
  DType promoted = result_type({a, b});
  if (kind == ResultKind::PromoteFloat && !is_floating_point(promoted)) promoted = default_float_dtype();
  m.dtype = apply_kind(promoted, kind);
  m.compute = cpu::compute_dtype(promoted);
  return m;
}

inline ElementwiseMeta unary_meta(const Tensor& x, ResultKind kind) {
  ElementwiseMeta m;
  m.device = x.device();
  m.shape = x.sizes_ref();
  m.dtype = apply_kind(x.dtype(), kind);
  m.compute = cpu::compute_dtype(m.dtype);
  return m;
}

// For in-place ops: the result must keep self's shape and be castable to self's dtype.
inline void check_inplace(const char* op, const Tensor& self, const ElementwiseMeta& m) {
  EMBER_CHECK_SHAPE(IntArrayRef(m.shape) == self.sizes_ref(), op, ": output with shape ", self.sizes_ref(),
                    " doesn't match the broadcast shape ", IntArrayRef(m.shape));
  check_can_cast(op, m.dtype, self.dtype());
}

// A broadcast 0-d strided view of a scalar held in `holder` (double or int64 storage).
struct ScalarHolder {
  double d = 0;
  int64_t i = 0;
  cpu::Strided view(const Scalar& s, size_t rank) {
    cpu::Strided v;
    if (s.is_floating_point()) {
      d = s.to_double();
      v.data = &d;
      v.dtype = DType::Float64;
    } else {
      i = s.to_int();
      v.data = &i;
      v.dtype = DType::Int64;
    }
    v.sizes = DimVector(rank, 1);
    v.strides = DimVector(rank, 0);
    return v;
  }
};

}  // namespace ops
}  // namespace ember

namespace ember {
namespace ops {

using UnaryKernel = void (*)(const cpu::Strided&, const cpu::Strided&);

// out = run(out) with out allocated as m says (the op's meta, computed once for every backend).
template <class Run>
Tensor unary_out(const ElementwiseMeta& m, Run run) {
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  run(out);
  return out;
}
// ... with out in x's shape and the result dtype of kKind.
template <ResultKind kKind, class Run>
Tensor unary_out(const Tensor& x, Run run) {
  return unary_out(unary_meta(x, kKind), run);
}

// The CPU kernel of a unary op: out = K(x).
template <UnaryKernel K, ResultKind kKind>
Tensor unary_cpu(const Tensor& x) {
  return unary_out<kKind>(x, [&](const Tensor& out) { K(strided(out), strided(x)); });
}

}  // namespace ops
}  // namespace ember
