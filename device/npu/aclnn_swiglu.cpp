// aclnn SwiGLU: SwiGlu / SwiGluGrad (CANN: x split in halves along dim), and ember's two-input
// extensions SiluMul / SiluMulGrad.
#include "ember/device/cpu/elementwise.h"
#include "ember/device/npu/aclnn_common.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {

// Checks x for SwiGlu(Grad): floating, contiguous (CANN lists non-contiguous x as unsupported),
// dim in range, even size; returns the wrapped dim and the half shape.
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
  if (!is_contiguous(x)) return invalid(op, "x must be contiguous");
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

}  // namespace npu
}  // namespace ember
