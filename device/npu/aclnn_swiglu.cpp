// aclnn gated activations: SwiGlu / SwiGluGrad and GeGluV3 (CANN: x split in halves along dim),
// and ember's two-input extensions SiluMul / SiluMulGrad.
#include <cmath>

#include "ember/device/cpu/elementwise.h"
#include "ember/device/npu/aclnn_common.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {

// Checks x for SwiGlu(Grad): floating, dim in range, even size; returns the wrapped dim and the
// half shape. Any layout: CANN's doc lists a non-contiguous x as unsupported, but ggml's CANN
// backend, which runs on hardware, passes views (README's fidelity table).
aclnnStatus check_split(const char* op, const aclTensor* x, int64_t dim, int64_t* d, std::vector<int64_t>* half) {
  if (aclnnStatus s = check_tensor(op, "x", x)) return s;
  if (aclnnStatus s = check_dtype(op, "x", x, kFloats)) return s;
  IntArrayRef shape = shape_of(x);
  int64_t n = static_cast<int64_t>(shape.size());
  if (n == 0) return invalid(op, "x must have at least 1 dimension");
  if (dim < -n || dim >= n)
    return invalid(op, "dim " + std::to_string(dim) + " out of range [" + std::to_string(-n) + ", " + std::to_string(n - 1) + "]");
  *d = dim < 0 ? dim + n : dim;
  if (shape[static_cast<size_t>(*d)] % 2 != 0)
    return invalid(op, "x's size along dim " + std::to_string(*d) + " must be even, got shape " + shape_str(shape));
  half->assign(shape.begin(), shape.end());
  (*half)[static_cast<size_t>(*d)] /= 2;
  return ACLNN_SUCCESS;
}

// The halves of a view along dim.
std::pair<cpu::Strided, cpu::Strided> halves(const cpu::Strided& x, int64_t d) {
  cpu::Strided a = x, b = x;
  int64_t h = x.sizes[static_cast<size_t>(d)] / 2;
  a.sizes[static_cast<size_t>(d)] = h;
  b.sizes[static_cast<size_t>(d)] = h;
  // An empty view has no address (KernelContext::view gives null): no half to offset.
  if (x.data) b.data = x.bytes() + h * x.strides[static_cast<size_t>(d)] * static_cast<int64_t>(element_size(x.dtype));
  return {a, b};
}
}  // namespace

extern "C" aclnnStatus aclnnSwiGluGetWorkspaceSize(const aclTensor* x, int64_t dim, const aclTensor* out, uint64_t* ws,
                                                   aclOpExecutor** ex) {
  const char* op = "aclnnSwiGlu";
  if (aclnnStatus s = check_not_null(op, {{"x", x}, {"out", out}})) return s;
  int64_t d;
  std::vector<int64_t> half;
  if (aclnnStatus s = check_split(op, x, dim, &d, &half)) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (aclnnStatus s = check_shape(op, "out", out, IntArrayRef(half))) return s;
  if (dtype_of(out) != dtype_of(x)) return invalid(op, "out must have x's dtype");
  TensorRef rx = ref(x), ro = ref(out);
  DType c = cpu::compute_dtype(dtype_of(x));
  return make_executor(op, 0, [=](KernelContext& k) {
    auto [a, b] = halves(k.view(rx), d);
    cpu::silu_mul(k.view(ro), a, b, c);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnSwiGlu)

extern "C" aclnnStatus aclnnSwiGluGradGetWorkspaceSize(const aclTensor* yGrad, const aclTensor* x, int64_t dim,
                                                       const aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnSwiGluGrad";
  if (aclnnStatus s = check_not_null(op, {{"yGrad", yGrad}, {"x", x}, {"out", out}})) return s;
  int64_t d;
  std::vector<int64_t> half;
  if (aclnnStatus s = check_split(op, x, dim, &d, &half)) return s;
  if (aclnnStatus s = check_tensor(op, "yGrad", yGrad)) return s;
  if (aclnnStatus s = check_shape(op, "yGrad", yGrad, IntArrayRef(half))) return s;
  if (aclnnStatus s = check_tensor(op, "out", out)) return s;
  if (aclnnStatus s = check_shape(op, "out", out, shape_of(x))) return s;
  if (!is_contiguous(out)) return invalid(op, "out must be contiguous");
  TensorRef rg = ref(yGrad), rx = ref(x), ro = ref(out);
  DType c = cpu::compute_dtype(dtype_of(x));
  return make_executor(op, 0, [=](KernelContext& k) {
    auto [a, b] = halves(k.view(rx), d);
    auto [ga, gb] = halves(k.view(ro), d);
    cpu::Strided g = k.view(rg);
    cpu::silu_mul_grad_a(ga, g, a, b, c);
    cpu::silu_mul(gb, a, g, c);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnSwiGluGrad)

extern "C" aclnnStatus aclnnEmberSiluMulGetWorkspaceSize(const aclTensor* a, const aclTensor* b, aclTensor* out,
                                                         uint64_t* ws, aclOpExecutor** ex) {
  if (out && !is_floating_point(dtype_of(out))) return invalid("aclnnEmberSiluMul", "out must be a floating dtype");
  return binary_op("aclnnEmberSiluMul", a, b, out, false, cpu::silu_mul, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnEmberSiluMul)

extern "C" aclnnStatus aclnnEmberSiluMulGradGetWorkspaceSize(const aclTensor* grad, const aclTensor* a,
                                                             const aclTensor* b, aclTensor* gradA, aclTensor* gradB,
                                                             uint64_t* ws, aclOpExecutor** ex) {
  const char* op = "aclnnEmberSiluMulGrad";
  if (aclnnStatus s = check_not_null(op, {{"grad", grad}, {"a", a}, {"b", b}, {"gradA", gradA}, {"gradB", gradB}})) return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"grad", grad}, {"a", a}, {"b", b}, {"gradA", gradA},
                         {"gradB", gradB}})
    if (aclnnStatus s = check_tensor(op, name, t)) return s;
  std::vector<int64_t> s1, shape;
  if (!broadcast(shape_of(grad), shape_of(a), &s1) || !broadcast(IntArrayRef(s1), shape_of(b), &shape))
    return invalid(op, "grad, a and b cannot be broadcast together");
  if (aclnnStatus s = check_shape(op, "gradA", gradA, IntArrayRef(shape))) return s;
  if (aclnnStatus s = check_shape(op, "gradB", gradB, IntArrayRef(shape))) return s;
  DType c = cpu::compute_dtype(promote_types(promote_types(dtype_of(grad), dtype_of(a)), dtype_of(b)));
  TensorRef rg = ref(grad), ra = ref(a), rb = ref(b), rga = ref(gradA), rgb = ref(gradB);
  return make_executor(op, 0, [=](KernelContext& k) {
    cpu::Strided oa = k.view(rga), ob = k.view(rgb);
    cpu::Strided g = expand_to(k.view(rg), oa.sizes), av = expand_to(k.view(ra), oa.sizes), bv = expand_to(k.view(rb), oa.sizes);
    cpu::silu_mul_grad_a(oa, g, av, bv, c);
    cpu::silu_mul(ob, av, g, c);
  }, ws, ex);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnEmberSiluMulGrad)

// CANN header aclnnop/aclnn_geglu.h: self split in halves (A, B) along dim; activateLeft: out = gelu(A) B and outGelu = gelu(A), else out = A gelu(B) and outGelu = gelu(B); approximate 0: erf form, 1: tanh form
extern "C" aclnnStatus aclnnGeGluV3GetWorkspaceSize(const aclTensor* self, int64_t dim, int64_t approximate,
                                                    bool activateLeft, aclTensor* out, aclTensor* outGelu,
                                                    uint64_t* workspaceSize, aclOpExecutor** executor) {
  const char* op = "aclnnGeGluV3";
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}, {"outGelu", outGelu}})) return s;
  if (aclnnStatus s = check_all(op, {{"self", self}, {"out", out}, {"outGelu", outGelu}})) return s;
  if (aclnnStatus s = check_dtype(op, "self", self, {DType::Float32, DType::Float16, DType::BFloat16})) return s;
  if (approximate != 0 && approximate != 1)
    return invalid(op, "approximate must be 0 (none) or 1 (tanh), got " + std::to_string(approximate));
  IntArrayRef shape = shape_of(self);
  const int64_t n = static_cast<int64_t>(shape.size());
  if (n == 0) return invalid(op, "self must have at least 1 dimension");
  if (dim < -n || dim >= n) return invalid(op, "dim " + std::to_string(dim) + " is out of range for " + std::to_string(n) + " dims");
  const size_t d = static_cast<size_t>(dim < 0 ? dim + n : dim);
  if (shape[d] % 2) return invalid(op, "self's size along dim " + std::to_string(d) + " must be even, got " + shape_str(shape));
  std::vector<int64_t> half(shape.begin(), shape.end());
  half[d] /= 2;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"out", out}, {"outGelu", outGelu}}) {
    if (dtype_of(t) != dtype_of(self)) return invalid(op, std::string(name) + " must have self's dtype");
    if (aclnnStatus s = check_shape(op, name, t, IntArrayRef(half))) return s;
  }
  if (aclnnStatus s = check_overlap(op, "out", out, {{"self", self}, {"outGelu", outGelu}}, false)) return s;
  if (aclnnStatus s = check_overlap(op, "outGelu", outGelu, {{"self", self}}, false)) return s;
  uint64_t wsb = 0, o_at = 0, g_at = 0;
  F64Input x;
  const int64_t m = numel_of(IntArrayRef(half));
  if (aclnnStatus s = stage_f64(op, self, &wsb, &x)) return s;
  if (aclnnStatus s = reserve_f64(op, m, &wsb, &o_at)) return s;
  if (aclnnStatus s = reserve_f64(op, m, &wsb, &g_at)) return s;
  int64_t inner = 1;
  for (size_t q = d + 1; q < shape.size(); ++q) inner *= shape[q];
  const int64_t h = half[d], outer = (h * inner != 0) ? m / (h * inner) : 0;
  TensorRef ro = ref(out), rg = ref(outGelu);
  return make_executor(op, wsb, [=](KernelContext& k) {
    const double* v = x.load(k);
    double *o = f64_at(k, o_at), *g = f64_at(k, g_at);
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t j = 0; j < h * inner; ++j) {
        const double left = v[(a * 2 * h) * inner + j], right = v[(a * 2 * h + h) * inner + j];
        const double act = activateLeft ? left : right, other = activateLeft ? right : left;
        const double ge = approximate == 1
                              ? 0.5 * act * (1 + std::tanh(std::sqrt(2 / M_PI) * (act + 0.044715 * act * act * act)))
                              : 0.5 * act * (1 + std::erf(act / std::sqrt(2.0)));
        g[a * h * inner + j] = ge;
        o[a * h * inner + j] = ge * other;
      }
    store_f64(k, ro, o);
    store_f64(k, rg, g);
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnGeGluV3)

}  // namespace npu
}  // namespace ember
