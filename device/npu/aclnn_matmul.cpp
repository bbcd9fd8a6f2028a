// aclnnMatmul: torch.matmul semantics (1-D to 6-D, batch broadcast; transposes are strided
// views), fp32 accumulation for fp16/bf16 ("cube" units), cubeMathType 0..4. Mixed dtypes as
// CANN documents them (aclnnMatmul.md): self and mat2 promote (fp16 with fp32 computes in fp32;
// bf16 with either is refused on Atlas A2/A3, the SoC ember reports) and the result is cast to
// out, any of fp16, bf16 and fp32. Staging buffers (operands without a unit stride, fp16
// operands, operands converted to the compute dtype, rounded copies for HF32/FP16 modes, a result
// to cast) live in the workspace, so its size depends only on shapes, strides, dtypes and
// cubeMathType.
#include <cstring>

#include "ember/device/cpu/elementwise.h"
#include "ember/device/cpu/gemm.h"
#include "ember/device/npu/aclnn_common.h"
#include "ember/device/npu/descriptors.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {

constexpr int8_t KEEP_DTYPE = 0, ALLOW_FP32_DOWN_PRECISION = 1, USE_FP16 = 2, USE_HF32 = 3, USE_FP32_ADD = 4;

struct Plan {
  // Both operands broadcast to [*batch, M, K] / [*batch, K, N]; out [*batch, M, N].
  std::vector<int64_t> batch;
  int64_t M = 0, K = 0, N = 0;
  bool a_vec = false, b_vec = false;
  std::vector<int64_t> out_shape;
  // Element strides of the broadcast batch dims, then matrix (row, col), for a, b and out.
  std::vector<int64_t> a_bs, b_bs, o_bs;
  int64_t a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0, o_rs = 0, o_cs = 0;
  // The operands', the result's, the operands' promoted and the GEMM's dtypes: the GEMM runs in
  // the promoted dtype, or in fp32 when out has another (fp32 accumulation, one rounding to out).
  DType a_dt = DType::Float32, b_dt = DType::Float32, o_dt = DType::Float32, promoted = DType::Float32,
        dt = DType::Float32;
  bool round_inputs = false;  // fp32 inputs rounded (HF32 / FP16 modes) into staged copies
  bool to_fp16 = false;
  // Staged copies (bytes; 0: none): an operand converted to dt and/or rounded, the result in dt.
  uint64_t gemm_scratch = 0, stage_a = 0, stage_b = 0, stage_o = 0;
};

int64_t batch_count(const Plan& p) { return numel_of(IntArrayRef(p.batch)); }

cpu::Matrix mat(void* data, DType dt, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  return cpu::Matrix{data, dt, rows, cols, rs, cs, 0};
}

// Offset (in elements) of batch index `linear` for batch strides bs.
int64_t batch_offset(int64_t linear, const std::vector<int64_t>& batch, const std::vector<int64_t>& bs) {
  int64_t off = 0;
  for (size_t d = batch.size(); d-- > 0;) {
    off += (linear % batch[d]) * bs[d];
    linear /= batch[d];
  }
  return off;
}

// HF32: fp32 with a 10-bit mantissa (as TF32), round to nearest even.
inline float round_hf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;
  u = (u + 0xfffu + ((u >> 13) & 1u)) & ~0x1fffu;
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}



bool cube_dtype(DType t) { return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16; }

// Arguments, dtypes and cubeMathType; *dt: the dtype the GEMM computes in (the operands'
// promoted dtype).
aclnnStatus check_args(const char* op, const aclTensor* self, const aclTensor* mat2, const aclTensor* out,
                       int8_t cubeMathType, DType* dt) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"mat2", mat2}, {"out", out}})) return s;
  if (aclnnStatus s = check_tensor(op, "self", self)) return s;
  if (aclnnStatus s = check_weight_tensor(op, "mat2", mat2)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (cubeMathType < KEEP_DTYPE || cubeMathType > USE_FP32_ADD)
    return invalid(op, "cubeMathType must be in [0, 4], got " + std::to_string(cubeMathType));
  const DType a = dtype_of(self), b = dtype_of(mat2), o = dtype_of(out);
  *dt = a;
  if (b != a) {
    std::ostringstream os;
    os << "self (" << a << ") and mat2 (" << b << ") ";
    if (a == DType::BFloat16 || b == DType::BFloat16) {
      if (cube_dtype(a) && cube_dtype(b))
        return invalid(op, os.str() + "cannot be promoted: Atlas A2/A3 (ember reports Ascend910B4) do not promote "
                                      "bfloat16 with float16 or float32");
    } else if (cube_dtype(a) && cube_dtype(b)) {
      *dt = DType::Float32;  // float16 with float32
    }
    if (*dt != DType::Float32) return invalid(op, os.str() + "must have one dtype, or be float16 and float32");
  }
  if (*dt == DType::Bool) return invalid(op, "bool is not supported");
  if (cube_dtype(*dt) ? !cube_dtype(o) : o != *dt) {
    std::ostringstream os;
    os << "out (" << o << ") must be " << (cube_dtype(*dt) ? "float32, float16 or bfloat16" : "of the inputs' dtype")
       << " (the inputs compute in " << *dt << ")";
    return invalid(op, os.str());
  }
  if (*dt == DType::BFloat16 && cubeMathType == USE_FP16)
    return invalid(op, "cubeMathType USE_FP16 does not apply to bfloat16");
  return ACLNN_SUCCESS;
}

// The GEMM's strides: the operands' batch strides (0 on broadcast dims), row and column strides,
// and out's in its logical [*batch, M, N] form; a size-1 matrix dim gets the stride GEMM engines
// accept.
void plan_strides(const std::vector<int64_t>& ash, const std::vector<int64_t>& ast, const std::vector<int64_t>& bsh,
                  const std::vector<int64_t>& bst, IntArrayRef out_strides, Plan* p) {
  auto bstrides = [&](const std::vector<int64_t>& sh, const std::vector<int64_t>& st) {
    std::vector<int64_t> r(p->batch.size(), 0);
    size_t lead = p->batch.size() - (sh.size() - 2);
    for (size_t i = 0; i + 2 < sh.size(); ++i)
      if (sh[i] == p->batch[lead + i]) r[lead + i] = st[i];
    return r;
  };
  p->a_bs = bstrides(ash, ast);
  p->b_bs = bstrides(bsh, bst);
  p->a_rs = ast[ast.size() - 2];
  p->a_cs = ast.back();
  p->b_rs = bst[bst.size() - 2];
  p->b_cs = bst.back();
  // out: strides of its logical [*batch, M, N] form.
  std::vector<int64_t> ost(out_strides.begin(), out_strides.end());
  p->o_bs.assign(ost.begin(), ost.begin() + static_cast<int64_t>(p->batch.size()));
  size_t pos = p->batch.size();
  p->o_rs = p->a_vec ? 0 : ost[pos++];
  p->o_cs = p->b_vec ? 1 : ost[pos];
  // A size-1 matrix dim may carry any stride: give it the one GEMM engines accept.
  if (p->M == 1) {
    p->a_rs = p->K * (p->a_cs ? p->a_cs : 1);
    p->o_rs = p->N * (p->o_cs ? p->o_cs : 1);
  }
  if (p->N == 1) {
    p->b_cs = 1;
    p->o_cs = 1;
  }
}

// Shapes and strides: self and mat2 as [*batch, M, K] and [*batch, K, N] (a vector gets a size-1
// dim), batch broadcast, out checked against the result's shape.
aclnnStatus plan_shapes(const char* op, const aclTensor* self, const aclTensor* mat2, const aclTensor* out, Plan* p) {
  IntArrayRef as = shape_of(self), bs = shape_of(mat2);
  if (as.empty() || bs.empty() || as.size() > 6 || bs.size() > 6)
    return invalid(op, "self and mat2 need 1 to 6 dimensions, got " + shape_str(as) + " and " + shape_str(bs));
  p->a_vec = as.size() == 1;
  p->b_vec = bs.size() == 1;
  std::vector<int64_t> ash(as.begin(), as.end()), ast(strides_of(self).begin(), strides_of(self).end());
  std::vector<int64_t> bsh(bs.begin(), bs.end()), bst(strides_of(mat2).begin(), strides_of(mat2).end());
  if (p->a_vec) {
    ash.insert(ash.begin(), 1);
    ast.insert(ast.begin(), 0);
  }
  if (p->b_vec) {
    bsh.push_back(1);
    bst.push_back(0);
  }
  p->M = ash[ash.size() - 2];
  p->K = ash.back();
  p->N = bsh.back();
  if (bsh[bsh.size() - 2] != p->K)
    return invalid(op, "the inner dimensions of " + shape_str(as) + " and " + shape_str(bs) + " do not agree (" +
                           std::to_string(p->K) + " vs " + std::to_string(bsh[bsh.size() - 2]) + ")");
  std::vector<int64_t> ab(ash.begin(), ash.end() - 2), bb(bsh.begin(), bsh.end() - 2);
  if (!broadcast(IntArrayRef(ab), IntArrayRef(bb), &p->batch))
    return invalid(op, "the batch dimensions of " + shape_str(as) + " and " + shape_str(bs) + " cannot be broadcast");
  p->out_shape = p->batch;
  if (!p->a_vec) p->out_shape.push_back(p->M);
  if (!p->b_vec) p->out_shape.push_back(p->N);
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef(p->out_shape))) return s;
  plan_strides(ash, ast, bsh, bst, strides_of(out), p);
  return ACLNN_SUCCESS;
}

uint64_t round64(uint64_t n) { return (n + 63) / 64 * 64; }

// The workspace: GEMM staging, then (HF32/FP16 modes) rounded copies of one matrix of each
// operand. Throws ShapeError (caught by phase 1) if the sizes overflow.
uint64_t plan_workspace(Plan* p, int8_t cubeMathType) {
  const DType dt = p->dt;
  p->round_inputs = p->promoted == DType::Float32 && (cubeMathType == ALLOW_FP32_DOWN_PRECISION || cubeMathType == USE_HF32 ||
                                             cubeMathType == USE_FP16);
  p->to_fp16 = cubeMathType == USE_FP16;
  cpu::Matrix ma = mat(nullptr, dt, p->M, p->K, p->a_rs, p->a_cs), mb = mat(nullptr, dt, p->K, p->N, p->b_rs, p->b_cs),
              mo = mat(nullptr, dt, p->M, p->N, p->o_rs, p->o_cs);
  const char* what = "aclnnMatmul workspace";
  const int64_t esz = static_cast<int64_t>(element_size(dt));
  if (p->round_inputs || p->a_dt != dt) {
    p->stage_a = checked_bytes(checked_mul(p->M, p->K, what), esz, what);
    ma = mat(nullptr, dt, p->M, p->K, p->K, 1);
  }
  if (p->round_inputs || p->b_dt != dt) {
    p->stage_b = checked_bytes(checked_mul(p->K, p->N, what), esz, what);
    mb = mat(nullptr, dt, p->K, p->N, p->N, 1);
  }
  if (p->o_dt != dt) {
    p->stage_o = checked_bytes(checked_mul(p->M, p->N, what), esz, what);
    mo = mat(nullptr, dt, p->M, p->N, p->N, 1);
  }
  p->gemm_scratch = cpu::gemm_scratch_bytes(1, ma, mb, mo);
  if (batch_count(*p) == 0 || p->M == 0 || p->N == 0) return 0;
  const uint64_t limit = uint64_t(1) << 60;
  if (p->gemm_scratch > limit || p->stage_a > limit || p->stage_b > limit || p->stage_o > limit)
    EMBER_THROW(ShapeError, "aclnnMatmul: the workspace for ", shape_str(IntArrayRef(p->out_shape)), " is too large");
  return round64(p->gemm_scratch) + round64(p->stage_a) + round64(p->stage_b) + round64(p->stage_o);
}

// A matrix as a 2-D strided view.
cpu::Strided strided(const cpu::Matrix& m) {
  return cpu::Strided(m.data, m.dtype, DimVector{m.rows, m.cols}, DimVector{m.row_stride, m.col_stride});
}

// m converted to p.dt into the contiguous `stage` (and rounded in the HF32/FP16 modes); the staged
// matrix. m as it is when the plan stages nothing for it.
cpu::Matrix staged(const Plan& p, const cpu::Matrix& m, char* stage) {
  if (!stage) return m;
  cpu::Matrix s = mat(stage, p.dt, m.rows, m.cols, m.cols, 1);
  if (m.rows && m.cols) cpu::copy(strided(s), strided(m));
  if (p.round_inputs) {
    float* v = static_cast<float*>(s.data);
    for (int64_t i = 0, n = m.rows * m.cols; i < n; ++i) v[i] = p.to_fp16 ? static_cast<float>(Half(v[i])) : round_hf32(v[i]);
  }
  return s;
}

// The kernel: one GEMM per batch entry, on staged operands where the plan converts or rounds them
// and into a staged result cast to out where out's dtype is not the compute dtype.
void run(KernelContext& k, const Plan& p, const TensorRef& ra, const TensorRef& rb, const TensorRef& ro) {
  cpu::Strided av = k.view(ra), bv = k.view(rb), ov = k.view(ro);
  const int64_t B = batch_count(p);
  if (B == 0 || p.M == 0 || p.N == 0) return;
  char* wsp = static_cast<char*>(k.workspace());
  void* scratch = p.gemm_scratch ? wsp : nullptr;
  char* sa = p.stage_a ? wsp + round64(p.gemm_scratch) : nullptr;
  char* sb = p.stage_b ? wsp + round64(p.gemm_scratch) + round64(p.stage_a) : nullptr;
  char* so = p.stage_o ? wsp + round64(p.gemm_scratch) + round64(p.stage_a) + round64(p.stage_b) : nullptr;
  // With K == 0 the operands are empty views without an address: nothing to offset.
  auto at = [](const cpu::Strided& v, int64_t elems) {
    return v.data ? v.bytes() + elems * static_cast<int64_t>(element_size(v.dtype)) : nullptr;
  };
  for (int64_t i = 0; i < B; ++i) {
    cpu::Matrix ma = mat(at(av, batch_offset(i, p.batch, p.a_bs)), p.a_dt, p.M, p.K, p.a_rs, p.a_cs);
    cpu::Matrix mb = mat(at(bv, batch_offset(i, p.batch, p.b_bs)), p.b_dt, p.K, p.N, p.b_rs, p.b_cs);
    cpu::Matrix mo = mat(at(ov, batch_offset(i, p.batch, p.o_bs)), p.o_dt, p.M, p.N, p.o_rs, p.o_cs);
    cpu::Matrix mc = so ? mat(so, p.dt, p.M, p.N, p.N, 1) : mo;
    cpu::gemm(1, staged(p, ma, sa), staged(p, mb, sb), mc, scratch, p.gemm_scratch);
    if (so) cpu::copy(strided(mo), strided(mc));
  }
}

// Addmm's bias against out: disjoint, or exactly out's storage (InplaceAddmm), then staged in the
// workspace (at *offset, growing *wsb) before the GEMMs write out.
aclnnStatus plan_bias(const char* op, const aclTensor* bias, const aclTensor* out, uint64_t* wsb, uint64_t* offset) {
  if (!bias) return ACLNN_SUCCESS;
  if (aclnnStatus s = check_overlap(op, "out", out, {{"bias", bias}})) return s;
  if (bias->data != out->data) return ACLNN_SUCCESS;
  uint64_t bytes = 0;
  if (aclnnStatus s = workspace_bytes(op, numel_of(shape_of(bias)), static_cast<int64_t>(element_size(dtype_of(bias))),
                                      &bytes))
    return s;
  *offset = round64(*wsb);
  *wsb = *offset + bytes;
  return ACLNN_SUCCESS;
}

// Phase 1 of the matmul family: ranks, the operands' checks and plan, and the kernel. rank 0:
// torch.matmul's 1-6 D; 2: Mm (both 2-D); 3: BatchMatMul (both 3-D). epilogue (may be empty)
// runs on the result after the GEMMs, with bias (may be null): Addmm's scaling and bias. A bias
// sharing out's storage (InplaceAddmm) is copied into the workspace before the GEMMs write out.
using Epilogue = std::function<void(KernelContext&, const TensorRef& out, const cpu::Strided& bias)>;
aclnnStatus matmul_op(const char* op, int rank, const aclTensor* self, const aclTensor* mat2, const aclTensor* out,
                      int8_t cubeMathType, const aclTensor* bias, Epilogue epilogue, uint64_t* ws,
                      aclOpExecutor** ex) {
  DType dt = DType::Float32;
  if (aclnnStatus s = check_args(op, self, mat2, out, cubeMathType, &dt)) return s;
  if (rank != 0 && (shape_of(self).size() != static_cast<size_t>(rank) ||
                    shape_of(mat2).size() != static_cast<size_t>(rank)))
    return invalid(op, "self " + shape_str(shape_of(self)) + " and mat2 " + shape_str(shape_of(mat2)) + " must be " +
                           std::to_string(rank) + "-D");
  Plan p;
  if (aclnnStatus s = plan_shapes(op, self, mat2, out, &p)) return s;
  p.a_dt = dtype_of(self);
  p.b_dt = dtype_of(mat2);
  p.o_dt = dtype_of(out);
  p.promoted = dt;
  p.dt = cube_dtype(dt) && p.o_dt != dt ? DType::Float32 : dt;
  uint64_t wsb;
  try {
    wsb = plan_workspace(&p, cubeMathType);
  } catch (const Error& e) {
    return invalid(op, e);
  }
  if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}, {"mat2", mat2}}, /*identical_ok=*/false)) return s;
  const bool stage_bias = bias && bias->data == out->data;
  uint64_t bias_off = 0;
  if (aclnnStatus s = plan_bias(op, bias, out, &wsb, &bias_off)) return s;
  TensorRef ra = ref(self), rb = ref(mat2), ro = ref(out), rbias = ref(bias);
  return make_executor(op, wsb, [=](KernelContext& k) {
    cpu::Strided bias_view;
    if (stage_bias) {
      cpu::Strided bv = k.view(rbias);
      bias_view = bv.contiguous_at(static_cast<char*>(k.workspace()) + bias_off, bv.dtype);
      cpu::copy(bias_view, bv);
    } else if (rbias.defined()) {
      bias_view = k.view(rbias);
    }
    run(k, p, ra, rb, ro);
    if (epilogue) epilogue(k, ro, bias_view);
  }, ws, ex);
}

}  // namespace

extern "C" aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor* self, const aclTensor* mat2, aclTensor* out,
                                                   int8_t cubeMathType, uint64_t* ws, aclOpExecutor** ex) {
  return matmul_op("aclnnMatmul", 0, self, mat2, out, cubeMathType, nullptr, nullptr, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnMatmul)

extern "C" aclnnStatus aclnnMmGetWorkspaceSize(const aclTensor* self, const aclTensor* mat2, aclTensor* out,
                                               int8_t cubeMathType, uint64_t* ws, aclOpExecutor** ex) {
  return matmul_op("aclnnMm", 2, self, mat2, out, cubeMathType, nullptr, nullptr, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnMm)

extern "C" aclnnStatus aclnnBatchMatMulGetWorkspaceSize(const aclTensor* self, const aclTensor* mat2, aclTensor* out,
                                                        int8_t cubeMathType, uint64_t* ws, aclOpExecutor** ex) {
  return matmul_op("aclnnBatchMatMul", 3, self, mat2, out, cubeMathType, nullptr, nullptr, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnBatchMatMul)

// CANN header aclnnop/aclnn_mv.h: out = self @ vec, self 2-D, vec 1-D (aclnnMatmul's dtype rules and cubeMathType)
extern "C" aclnnStatus aclnnMvGetWorkspaceSize(const aclTensor* self, const aclTensor* vec, aclTensor* out,
                                               int8_t cubeMathType, uint64_t* workspaceSize, aclOpExecutor** executor) {
  const char* op = "aclnnMv";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"vec", vec}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"self", self}, {"vec", vec}, {"out", out}})) return s;
  if (shape_of(self).size() != 2 || shape_of(vec).size() != 1)
    return invalid(op, "self must be 2-D and vec 1-D, got " + shape_str(shape_of(self)) + " and " +
                           shape_str(shape_of(vec)));
  return matmul_op(op, 0, self, vec, out, cubeMathType, nullptr, nullptr, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnMv)

namespace {
// out = beta * self + alpha * (mat1 @ mat2), self broadcast to out's shape.
aclnnStatus addmm_op(const char* op, const aclTensor* self, const aclTensor* mat1, const aclTensor* mat2,
                     const aclScalar* beta, const aclScalar* alpha, const aclTensor* out, int8_t cubeMathType,
                     uint64_t* ws, aclOpExecutor** ex) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"beta", beta}, {"alpha", alpha}})) return s;
  if (aclnnStatus s = check_tensor(op, "self", self)) return s;
  if (out && dtype_of(self) != dtype_of(out)) return invalid(op, "self must have out's dtype");
  if (out) {
    std::vector<int64_t> b;
    if (!broadcast(shape_of(self), shape_of(out), &b) || IntArrayRef(b) != shape_of(out))
      return invalid(op, "self " + shape_str(shape_of(self)) + " cannot be broadcast to out " +
                             shape_str(shape_of(out)));
  }
  const double a = scalar_value(alpha), bt = scalar_value(beta);
  const DType dt = out ? dtype_of(out) : DType::Float32;
  Epilogue ep = [a, bt, dt](KernelContext& k, const TensorRef& ro, const cpu::Strided& bias) {
    cpu::Strided ov = k.view(ro);
    if (a != 1) cpu::affine(ov, ov, a, 0.0);
    if (bt != 0) cpu::add(ov, ov, expand_to(bias, ov.sizes), bt, dt);
  };
  return matmul_op(op, 2, mat1, mat2, out, cubeMathType, self, ep, ws, ex);
}
}  // namespace

extern "C" aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor* self, const aclTensor* mat1, const aclTensor* mat2,
                                                  const aclScalar* beta, const aclScalar* alpha, aclTensor* out,
                                                  int8_t cubeMathType, uint64_t* ws, aclOpExecutor** ex) {
  return addmm_op("aclnnAddmm", self, mat1, mat2, beta, alpha, out, cubeMathType, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnAddmm)

// selfRef = beta * selfRef + alpha * (mat1 @ mat2) (CANN declares selfRef const).
extern "C" aclnnStatus aclnnInplaceAddmmGetWorkspaceSize(const aclTensor* selfRef, const aclTensor* mat1,
                                                         const aclTensor* mat2, const aclScalar* beta,
                                                         const aclScalar* alpha, int8_t cubeMathType, uint64_t* ws,
                                                         aclOpExecutor** ex) {
  return addmm_op("aclnnInplaceAddmm", selfRef, mat1, mat2, beta, alpha, selfRef, cubeMathType, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnInplaceAddmm)

}  // namespace npu
}  // namespace ember
