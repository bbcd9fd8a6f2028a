// mm: [M,K] @ [K,N] -> [M,N]; bmm: [B,M,K] @ [B,K,N] -> [B,M,N]; matmul: torch.matmul for
// 1-D..N-D with batch broadcasting (a composite over mm/bmm). fp16/bf16 accumulate in fp32.
#include "ember/device/cpu/gemm.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/ops/testing/reference.h"

namespace ember {
namespace {
using namespace ops;

// The gemm view of a 2-D or 3-D tensor (last two dims are the matrix).
cpu::Matrix matrix_of(const Tensor& t) {
  cpu::Matrix m;
  m.data = t.impl()->data();
  m.dtype = t.dtype();
  int64_t nd = t.dim();
  m.rows = t.sizes_ref()[static_cast<size_t>(nd - 2)];
  m.cols = t.sizes_ref()[static_cast<size_t>(nd - 1)];
  m.row_stride = t.strides_ref()[static_cast<size_t>(nd - 2)];
  m.col_stride = t.strides_ref()[static_cast<size_t>(nd - 1)];
  m.batch_stride = nd == 3 ? t.strides_ref()[0] : 0;
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

Tensor mm_cpu(const Tensor& a, const Tensor& b) {
  common_device("mm", {&a, &b});
  EMBER_CHECK_SHAPE(a.dim() == 2 && b.dim() == 2, "mm: expected 2-D tensors, got shapes ", a.sizes_ref(), " and ",
                    b.sizes_ref());
  EMBER_CHECK_SHAPE(a.size(1) == b.size(0), "mm: mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x",
                    a.size(1), " and ", b.size(0), "x", b.size(1), ")");
  check_mm_dtypes("mm", a, b);
  Tensor out = empty_on({a.size(0), b.size(1)}, a.dtype(), a.device());
  cpu::gemm(1, matrix_of(gemm_operand(a)), matrix_of(gemm_operand(b)), matrix_of(out));
  return out;
}

Tensor bmm_cpu(const Tensor& a, const Tensor& b) {
  common_device("bmm", {&a, &b});
  EMBER_CHECK_SHAPE(a.dim() == 3 && b.dim() == 3, "bmm: expected 3-D tensors, got shapes ", a.sizes_ref(), " and ",
                    b.sizes_ref());
  EMBER_CHECK_SHAPE(a.size(0) == b.size(0) && a.size(2) == b.size(1), "bmm: shapes ", a.sizes_ref(), " and ",
                    b.sizes_ref(), " cannot be multiplied (expected [B, M, K] @ [B, K, N])");
  check_mm_dtypes("bmm", a, b);
  Tensor out = empty_on({a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device());
  Tensor ga = gemm_operand(a), gb = gemm_operand(b);
  cpu::Matrix ma = matrix_of(ga), mb = matrix_of(gb);
  if (a.size(0) == 1) ma.batch_stride = mb.batch_stride = 0;
  cpu::gemm(a.size(0), ma, mb, matrix_of(out));
  return out;
}

// NPU: aclnnMatmul with cubeMathType KEEP_DTYPE (fp32 stays fp32; fp16/bf16 accumulate in fp32).
constexpr int8_t kKeepDtype = 0;
Tensor mm_npu(const Tensor& a, const Tensor& b) {
  common_device("mm", {&a, &b});
  EMBER_CHECK_SHAPE(a.dim() == 2 && b.dim() == 2, "mm: expected 2-D tensors, got shapes ", a.sizes(), " and ", b.sizes());
  EMBER_CHECK_SHAPE(a.size(1) == b.size(0), "mm: mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x",
                    a.size(1), " and ", b.size(0), "x", b.size(1), ")");
  check_mm_dtypes("mm", a, b);
  Tensor out = empty_on({a.size(0), b.size(1)}, a.dtype(), a.device());
  EXEC_NPU_CMD(npu::aclnnMatmul, a, b, out, kKeepDtype);
  return out;
}
Tensor bmm_npu(const Tensor& a, const Tensor& b) {
  common_device("bmm", {&a, &b});
  EMBER_CHECK_SHAPE(a.dim() == 3 && b.dim() == 3, "bmm: expected 3-D tensors, got shapes ", a.sizes(), " and ", b.sizes());
  EMBER_CHECK_SHAPE(a.size(0) == b.size(0) && a.size(2) == b.size(1), "bmm: shapes ", a.sizes(), " and ", b.sizes(),
                    " cannot be multiplied (expected [B, M, K] @ [B, K, N])");
  check_mm_dtypes("bmm", a, b);
  Tensor out = empty_on({a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device());
  EXEC_NPU_CMD(npu::aclnnMatmul, a, b, out, kKeepDtype);
  return out;
}

// torch.matmul semantics.
Tensor matmul_any(const Tensor& a, const Tensor& b) {
  int64_t da = a.dim(), db = b.dim();
  EMBER_CHECK_SHAPE(da > 0 && db > 0, "matmul: both arguments need at least 1 dimension, got ", da, "-D and ", db, "-D");
  if (da == 1 && db == 1) {
    EMBER_CHECK_SHAPE(a.size(0) == b.size(0), "matmul: 1-D tensors of sizes ", a.size(0), " and ", b.size(0),
                      " cannot be multiplied");
    return ember::mm(a.unsqueeze(0), b.unsqueeze(1)).reshape({});
  }
  if (da == 2 && db == 1) return ember::mm(a, b.unsqueeze(1)).squeeze(-1);
  if (da == 1 && db == 2) return ember::mm(a.unsqueeze(0), b).squeeze(0);
  if (da == 2 && db == 2) return ember::mm(a, b);
  // [..., M, K] @ [K, N]: fold the batch into M (one large GEMM).
  if (da >= 3 && db <= 2) {
    Tensor bb = db == 1 ? b.unsqueeze(1) : b;
    EMBER_CHECK_SHAPE(a.size(-1) == bb.size(0), "matmul: shapes ", a.sizes_ref(), " and ", b.sizes_ref(),
                      " cannot be multiplied (", a.size(-1), " vs ", bb.size(0), ")");
    Shape out_shape = a.sizes();
    out_shape.back() = bb.size(1);
    Tensor r = ember::mm(a.reshape({-1, a.size(-1)}), bb).reshape(out_shape);
    return db == 1 ? r.squeeze(-1) : r;
  }
  // General: broadcast batch dims, bmm.
  Tensor aa = da == 1 ? a.unsqueeze(0) : a;
  Tensor bb = db == 1 ? b.unsqueeze(1) : b;
  int64_t M = aa.size(-2), K = aa.size(-1), K2 = bb.size(-2), N = bb.size(-1);
  EMBER_CHECK_SHAPE(K == K2, "matmul: shapes ", a.sizes_ref(), " and ", b.sizes_ref(), " cannot be multiplied (", K,
                    " vs ", K2, ")");
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
  m.def("mm(Tensor self, Tensor mat2) -> Tensor");
  m.def("bmm(Tensor self, Tensor mat2) -> Tensor");
  m.def("matmul(Tensor self, Tensor other) -> Tensor", &matmul_any);
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl("mm", &mm_cpu);
  m.impl("bmm", &bmm_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl("mm", &mm_npu);
  m.impl("bmm", &bmm_npu);
}

using T2 = Tensor(const Tensor&, const Tensor&);
Tensor mm(const Tensor& a, const Tensor& b) { return EMBER_OP("ember::mm", T2).call(a, b); }
Tensor bmm(const Tensor& a, const Tensor& b) { return EMBER_OP("ember::bmm", T2).call(a, b); }
Tensor matmul(const Tensor& a, const Tensor& b) { return EMBER_OP("ember::matmul", T2).call(a, b); }
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
const auto kMm = OpSpec<MSig>{"MmBackward", "ember::mm", &mm_bw}.saving(saves(0, 1));
const auto kBmm = OpSpec<MSig>{"BmmBackward", "ember::bmm", &bmm_bw}.saving(saves(0, 1));
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl("mm", autograd_kernel<&kMm>());
  m.impl("bmm", autograd_kernel<&kBmm>());
}

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
