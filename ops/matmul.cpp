// mm: [M,K] @ [K,N] -> [M,N]; bmm: [B,M,K] @ [B,K,N] -> [B,M,N]; matmul: torch.matmul for
// 1-D..N-D with batch broadcasting (a composite over mm/bmm). fp16/bf16 accumulate in fp32.
#include "ember/device/cpu/gemm.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"
#include "ember/ops/internal/gemm_decls.h"

namespace ember::op {
EMBER_DECLARE_OP(bmm, Lower, "ember::bmm(Tensor self, Tensor mat2) -> Tensor", Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(_mm_rounded, Keep,
                 "ember::_mm_rounded(Tensor self, Tensor mat2, ScalarType dtype, "
                 "ScalarType out_dtype) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, DType, DType));
EMBER_DECLARE_OP(_linear_rounded, Keep,
                 "ember::_linear_rounded(Tensor input, Tensor weight, "
                 "ScalarType dtype) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, DType));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

// The gemm view of a 2-D or 3-D tensor (last two dims are the matrix).
cpu::Matrix matrix_of(const Tensor& t) {
  const size_t nd = static_cast<size_t>(t.dim());
  cpu::Matrix m{t.impl()->data(), t.dtype(), t.sizes_ref()[nd - 2], t.sizes_ref()[nd - 1], t.strides_ref()[nd - 2],
                t.strides_ref()[nd - 1], nd == 3 ? t.strides_ref()[0] : 0};
  // A size-1 dim may carry any stride; give it the one gemm engines like.
  if (m.rows == 1) m.row_stride = m.cols * m.col_stride;
  if (m.cols == 1) m.col_stride = 1;
  return m;
}

// gemm engines need a unit stride in one of the two matrix dims.
Tensor gemm_operand(const Tensor& t) {
  cpu::Matrix m = matrix_of(t);
  return (m.col_stride == 1 || m.row_stride == 1) ? t : t.contiguous();
}

void check_mm_dtypes(const char* op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK_DTYPE(a.dtype() == b.dtype(), op, ": expected both operands to have the same dtype, but got ",
                    a.dtype(), " and ", b.dtype());
  EMBER_CHECK_DTYPE(a.dtype() != kBool, op, ": not implemented for bool");
}

// meta (shared by both backends): same device and dtype, not bool, shapes that multiply; the
// result's shape. mm: [M, K] @ [K, N]; bmm: [B, M, K] @ [B, K, N].
Shape mm_meta(const Tensor& a, const Tensor& b) {
  common_device(op::mm::op_name(), {&a, &b});
  EMBER_CHECK_SHAPE(a.dim() == 2 && b.dim() == 2, op::mm::op_name(), ": expected 2-D tensors, got shapes ",
                    a.sizes_ref(), " and ", b.sizes_ref());
  EMBER_CHECK_SHAPE(a.size(1) == b.size(0), op::mm::op_name(), ": mat1 and mat2 shapes cannot be multiplied (",
                    a.size(0), "x", a.size(1), " and ", b.size(0), "x", b.size(1), ")");
  check_mm_dtypes(op::mm::op_name(), a, b);
  return {a.size(0), b.size(1)};
}
Shape bmm_meta(const Tensor& a, const Tensor& b) {
  common_device(op::bmm::op_name(), {&a, &b});
  EMBER_CHECK_SHAPE(a.dim() == 3 && b.dim() == 3, op::bmm::op_name(), ": expected 3-D tensors, got shapes ",
                    a.sizes_ref(), " and ", b.sizes_ref());
  EMBER_CHECK_SHAPE(a.size(0) == b.size(0) && a.size(2) == b.size(1), op::bmm::op_name(), ": shapes ", a.sizes_ref(),
                    " and ", b.sizes_ref(), " cannot be multiplied (expected [B, M, K] @ [B, K, N])");
  check_mm_dtypes(op::bmm::op_name(), a, b);
  return {a.size(0), a.size(1), b.size(2)};
}

Tensor mm_cpu(const Tensor& a, const Tensor& b) {
  Tensor out = empty_on(mm_meta(a, b), a.dtype(), a.device());
  cpu::gemm(1, matrix_of(gemm_operand(a)), matrix_of(gemm_operand(b)), matrix_of(out));
  return out;
}
Tensor bmm_cpu(const Tensor& a, const Tensor& b) {
  Tensor out = empty_on(bmm_meta(a, b), a.dtype(), a.device());
  Tensor ga = gemm_operand(a), gb = gemm_operand(b);
  cpu::Matrix ma = matrix_of(ga), mb = matrix_of(gb);
  if (a.size(0) == 1) ma.batch_stride = mb.batch_stride = 0;
  cpu::gemm(a.size(0), ma, mb, matrix_of(out));
  return out;
}

// NPU: aclnnMatmul with cubeMathType KEEP_DTYPE (fp32 stays fp32; fp16/bf16 accumulate in fp32).
constexpr int8_t kKeepDtype = 0;
Tensor mm_npu(const Tensor& a, const Tensor& b) {
  Tensor out = empty_on(mm_meta(a, b), a.dtype(), a.device());
  EXEC_NPU_CMD(npu::aclnnMatmul, a, b, out, kKeepDtype);
  return out;
}
Tensor bmm_npu(const Tensor& a, const Tensor& b) {
  Tensor out = empty_on(bmm_meta(a, b), a.dtype(), a.device());
  EXEC_NPU_CMD(npu::aclnnMatmul, a, b, out, kKeepDtype);
  return out;
}

// ---------------------------------------------------------------- rounded products
// _mm_rounded(a, b, dtype, out_dtype) is mm(a.to(dtype), b.to(dtype)).to(out_dtype), and
// _linear_rounded(x, w, dtype) is linear(x.to(dtype), w.to(dtype)), for floating tensors and
// dtypes. For bf16 and f16 on the CPU the casts fold into the GEMM (cpu::gemm_rounded): f32 (or
// 16-bit) operands are rounded as they are packed, and the product is rounded once into
// out_dtype; on the NPU the same kernel runs as aclnnEmberMatmulRoundedV2. Autocast runs linear
// and mm this way where the CPU's 16-bit GEMM computes in fp32 (nn/amp/autocast.cpp): the
// numbers of casting, without a 16-bit copy of each weight written and read back every step.

void check_rounded(const char* op, std::initializer_list<const Tensor*> ts, DType dt, DType out_dt) {
  EMBER_CHECK_DTYPE(is_floating_point(dt) && is_floating_point(out_dt), op,
                    ": dtype and out_dtype must be floating, got ", dt, " and ", out_dt);
  for (const Tensor* t : ts)
    EMBER_CHECK_DTYPE(t->is_floating_point(), op, ": expected floating operands, got ", t->dtype());
}

void check_mm_shapes(const char* op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK_SHAPE(a.dim() == 2 && b.dim() == 2, op, ": expected 2-D tensors, got shapes ", a.sizes_ref(), " and ",
                    b.sizes_ref());
  EMBER_CHECK_SHAPE(a.size(1) == b.size(0), op, ": mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x",
                    a.size(1), " and ", b.size(0), "x", b.size(1), ")");
}

// The checks both devices make: one device, 2-D shapes that multiply, floating dtypes.
void check_mm_rounded(const Tensor& a, const Tensor& b, DType dt, DType out_dt) {
  common_device(op::_mm_rounded::op_name(), {&a, &b});
  check_mm_shapes(op::_mm_rounded::op_name(), a, b);
  check_rounded(op::_mm_rounded::op_name(), {&a, &b}, dt, out_dt);
}

Tensor mm_rounded_cast(const Tensor& a, const Tensor& b, DType dt, DType out_dt) {
  check_mm_rounded(a, b, dt, out_dt);
  return ember::mm(a.to(dt), b.to(dt)).to(out_dt);
}

// The rounded product on the device's GEMM (cpu::gemm_rounded, directly or in the NPU kernel
// aclnnEmberMatmulRoundedV2): operands in f32 or dt (others go through f32, as a cast to dt does),
// the result in dt or f32, then out_dtype. An f32 operand marked rounded (_round_to's result) is
// read in place where the GEMM stages; the f32 result is marked rounded.
template <class Run>
Tensor mm_rounded_on(const Tensor& a, const Tensor& b, DType dt, DType out_dt, Run&& run) {
  if (!is_reduced_float(dt) || !cpu::gemm_rounded_available()) return mm_rounded_cast(a, b, dt, out_dt);
  check_mm_rounded(a, b, dt, out_dt);
  auto operand = [&](const Tensor& t) { return t.dtype() == dt || t.dtype() == kFloat32 ? t : t.to(kFloat32); };
  const DType store = out_dt == dt ? dt : kFloat32;
  Tensor out = empty_on({a.size(0), b.size(1)}, store, a.device());
  run(operand(a), operand(b), out);
  if (store == out_dt) {
    out.impl()->storage()->mark_rounded(dt);  // every element written, rounded to dt
    return out;
  }
  return out.to(out_dt);
}

// An f32 operand whose elements are dt values already (_round_to's result): read in place.
bool pre_rounded(const Tensor& t, DType dt) { return t.dtype() == kFloat32 && is_rounded_to(t, dt); }

Tensor mm_rounded_cpu(const Tensor& a, const Tensor& b, DType dt, DType out_dt) {
  return mm_rounded_on(a, b, dt, out_dt, [dt](const Tensor& x, const Tensor& y, const Tensor& out) {
    cpu::Matrix mx = matrix_of(x), my = matrix_of(y);
    mx.rounded = pre_rounded(x, dt);
    my.rounded = pre_rounded(y, dt);
    cpu::gemm_rounded(1, mx, my, matrix_of(out), dt);
  });
}

Tensor mm_rounded_npu(const Tensor& a, const Tensor& b, DType dt, DType out_dt) {
  return mm_rounded_on(a, b, dt, out_dt, [dt](const Tensor& x, const Tensor& y, const Tensor& out) {
    EXEC_NPU_CMD(npu::aclnnEmberMatmulRoundedV2, x, y, dt, pre_rounded(x, dt), pre_rounded(y, dt), out);
  });
}

// y[..., o] = sum_i x[..., i] w[o, i], in dtype.
Tensor linear_rounded_any(const Tensor& x, const Tensor& w, DType dt) {
  common_device(op::_linear_rounded::op_name(), {&x, &w});
  EMBER_CHECK_SHAPE(x.dim() >= 1 && w.dim() == 2 && x.size(-1) == w.size(1), op::_linear_rounded::op_name(),
                    ": input of shape ", x.sizes_ref(), " and weight of shape ", w.sizes_ref(),
                    " (expected [..., in] and [out, in])");
  Shape shape = x.sizes();
  shape.back() = w.size(0);
  return ember::_mm_rounded(x.reshape({-1, w.size(1)}), w.t(), dt, dt).reshape(shape);
}

// torch.matmul semantics.
Tensor matmul_any(const Tensor& a, const Tensor& b) {
  int64_t da = a.dim(), db = b.dim();
  EMBER_CHECK_SHAPE(da > 0 && db > 0, op::matmul::op_name(), ": both arguments need at least 1 dimension, got ", da,
                    "-D and ", db, "-D");
  if (da == 1 && db == 1) {
    EMBER_CHECK_SHAPE(a.size(0) == b.size(0), op::matmul::op_name(), ": 1-D tensors of sizes ", a.size(0), " and ",
                      b.size(0), " cannot be multiplied");
    return ember::mm(a.unsqueeze(0), b.unsqueeze(1)).reshape({});
  }
  if (da == 2 && db == 1) return ember::mm(a, b.unsqueeze(1)).squeeze(-1);
  if (da == 1 && db == 2) return ember::mm(a.unsqueeze(0), b).squeeze(0);
  if (da == 2 && db == 2) return ember::mm(a, b);
  // [..., M, K] @ [K, N]: fold the batch into M (one large GEMM).
  if (da >= 3 && db <= 2) {
    Tensor bb = db == 1 ? b.unsqueeze(1) : b;
    EMBER_CHECK_SHAPE(a.size(-1) == bb.size(0), op::matmul::op_name(), ": shapes ", a.sizes_ref(), " and ",
                      b.sizes_ref(), " cannot be multiplied (", a.size(-1), " vs ", bb.size(0), ")");
    Shape out_shape = a.sizes();
    out_shape.back() = bb.size(1);
    Tensor r = ember::mm(a.reshape({-1, a.size(-1)}), bb).reshape(out_shape);
    return db == 1 ? r.squeeze(-1) : r;
  }
  // General: broadcast batch dims, bmm.
  Tensor aa = da == 1 ? a.unsqueeze(0) : a;
  Tensor bb = db == 1 ? b.unsqueeze(1) : b;
  int64_t M = aa.size(-2), K = aa.size(-1), K2 = bb.size(-2), N = bb.size(-1);
  EMBER_CHECK_SHAPE(K == K2, op::matmul::op_name(), ": shapes ", a.sizes_ref(), " and ", b.sizes_ref(),
                    " cannot be multiplied (", K, " vs ", K2, ")");
  Shape ba(aa.sizes().begin(), aa.sizes().end() - 2), bbs(bb.sizes().begin(), bb.sizes().end() - 2);
  Shape batch = broadcast_shapes(ba, bbs);
  int64_t B = numel_of(batch);
  Shape ea = batch, eb = batch;
  ea.push_back(M);
  ea.push_back(K);
  eb.push_back(K);
  eb.push_back(N);
  Tensor a3 = aa.expand(ea).reshape({B, M, K});
  Tensor b3 = bb.expand(eb).reshape({B, K, N});
  Shape out_shape = batch;
  if (da > 1) out_shape.push_back(M);
  if (db > 1) out_shape.push_back(N);
  return ember::bmm(a3, b3).reshape(out_shape);
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::mm());
  m.def(op::bmm());
  m.def(op::matmul(), &matmul_any);
  m.def(op::_mm_rounded());
  m.def(op::_linear_rounded(), &linear_rounded_any);
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::mm(), &mm_cpu);
  m.impl(op::bmm(), &bmm_cpu);
  m.impl(op::_mm_rounded(), &mm_rounded_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::mm(), &mm_npu);
  m.impl(op::bmm(), &bmm_npu);
  m.impl(op::_mm_rounded(), &mm_rounded_npu);
}

using T2 = Tensor(const Tensor&, const Tensor&);
Tensor mm(const Tensor& a, const Tensor& b) { return op::mm::call(a, b); }
Tensor bmm(const Tensor& a, const Tensor& b) { return op::bmm::call(a, b); }
Tensor matmul(const Tensor& a, const Tensor& b) { return op::matmul::call(a, b); }
Tensor _mm_rounded(const Tensor& a, const Tensor& b, DType dtype, DType out_dtype) {
  return op::_mm_rounded::call(a, b, dtype, out_dtype);
}
Tensor _linear_rounded(const Tensor& x, const Tensor& w, DType dtype) {
  return op::_linear_rounded::call(x, w, dtype);
}
Tensor Tensor::mm(const Tensor& o) const { return ember::mm(*this, o); }
Tensor Tensor::bmm(const Tensor& o) const { return ember::bmm(*this, o); }
Tensor Tensor::matmul(const Tensor& o) const { return ember::matmul(*this, o); }

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
using MSig = Tensor(const Tensor&, const Tensor&);
// [M,K] @ [K,N] -> [M,N]:  dA = g @ B^T  [M,N]@[N,K];  dB = A^T @ g  [K,M]@[M,N]
std::vector<Tensor> mm_bw(const BackwardCtx<MSig>& c) {
  Tensor g = c.grad();
  return {c.needs(0) ? g.mm(c.arg<1>().t()) : Tensor(), c.needs(1) ? c.arg<0>().t().mm(g) : Tensor()};
}
// [B,M,K] @ [B,K,N]: the same per batch
std::vector<Tensor> bmm_bw(const BackwardCtx<MSig>& c) {
  Tensor g = c.grad();
  return {c.needs(0) ? g.bmm(c.arg<1>().transpose(1, 2)) : Tensor(),
          c.needs(1) ? c.arg<0>().transpose(1, 2).bmm(g) : Tensor()};
}
// Rounded: the gradients of the casts folded in are those of casts (the incoming gradient, in the
// operand's dtype), so dA = g @ B^T and dB = A^T @ g, rounded the same way.
using RSig = Tensor(const Tensor&, const Tensor&, DType, DType);
// Each gradient is laid out as its operand (a transposed operand, e.g. linear's w.t(), gets a
// transposed gradient), so it reaches a weight's .grad contiguous, without a copy.
std::vector<Tensor> mm_rounded_bw(const BackwardCtx<RSig>& c) {
  Tensor g = c.grad();
  const Tensor &a = c.arg<0>(), &b = c.arg<1>();
  const DType dt = c.arg<2>();
  auto transposed = [](const Tensor& t) { return t.stride(0) == 1 && t.stride(1) != 1 && t.size(1) > 1; };
  Tensor ga, gb;
  if (c.needs(0)) ga = transposed(a) ? _mm_rounded(b, g.t(), dt, a.dtype()).t() : _mm_rounded(g, b.t(), dt, a.dtype());
  if (c.needs(1)) gb = transposed(b) ? _mm_rounded(g.t(), a, dt, b.dtype()).t() : _mm_rounded(a.t(), g, dt, b.dtype());
  return {ga, gb};
}
const auto kMm = spec_of<op::mm>("MmBackward", &mm_bw).saving(saves(0, 1));
const auto kMmRounded = spec_of<op::_mm_rounded>("MmRoundedBackward", &mm_rounded_bw).saving(saves(0, 1));
const auto kBmm = spec_of<op::bmm>("BmmBackward", &bmm_bw).saving(saves(0, 1));
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::mm(), autograd_kernel<&kMm>());
  m.impl(op::bmm(), autograd_kernel<&kBmm>());
  m.impl(op::_mm_rounded(), autograd_kernel<&kMmRounded>());
}

}  // namespace ember
