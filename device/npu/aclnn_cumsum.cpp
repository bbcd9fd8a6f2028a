// aclnn Cumsum and CumsumV2: running sums along a dim (cpu::cumsum). Their CANN header,
// aclnnop/aclnn_cumsum.h, is generated from the definitions below (cmake/cann_headers.cmake reads
// each "CANN header" comment and the phase-1 signature under it).
#include "ember/gen/cpu_kernels.h"
#include "ember/device/npu/aclnn_common.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {

// self and out: live, same shape, at most 8 dims (CANN's limit), dim in range, out not
// overlapping self. Returns the wrapped dim (0 for a 0-d self).
aclnnStatus check_scan(const char* op, const aclTensor* self, int64_t dim, const aclTensor* out, int64_t* d) {
  if (aclnnStatus s = check_not_null(op, {{"self", self}, {"out", out}})) return s;
  if (aclnnStatus s = check_all(op, {{"self", self}, {"out", out}})) return s;
  if (aclnnStatus s = check_shape(op, "out", out, shape_of(self))) return s;
  int64_t n = static_cast<int64_t>(shape_of(self).size()), m = n > 0 ? n : 1;
  if (n > 8) return invalid(op, "self has " + std::to_string(n) + " dims; at most 8 are supported");
  if (dim < -m || dim >= m)
    return invalid(op, "dim " + std::to_string(dim) + " out of range [" + std::to_string(-m) + ", " + std::to_string(m - 1) + "]");
  *d = n == 0 ? 0 : (dim < 0 ? dim + n : dim);
  return check_overlap(op, "out", out, {{"self", self}});
}

aclnnStatus scan_executor(const char* op, const aclTensor* self, int64_t d, bool exclusive, bool reverse,
                          const aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  TensorRef a = ref(self), o = ref(out);
  return make_executor(op, 0, [=](KernelContext& k) { cpu::cumsum(k.view(o), k.view(a), d, exclusive, reverse); },
                       ws, ex);
}

}  // namespace

// CANN header aclnnop/aclnn_cumsum.h: out = the running sum of self along dim, in dtype (out's dtype)
extern "C" aclnnStatus aclnnCumsumGetWorkspaceSize(const aclTensor* self, int64_t dim, aclDataType dtype,
                                                   aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  const char* op = "aclnnCumsum";
  int64_t d;
  if (aclnnStatus s = check_scan(op, self, dim, out, &d)) return s;
  DType dt;
  if (!dtype_from_acl(dtype, &dt)) return invalid(op, "unsupported dtype " + std::to_string(dtype));
  if (dt == DType::Bool) return invalid(op, "dtype must not be BOOL");
  if (dtype_of(out) != dt) return invalid(op, "out's dtype must be dtype");
  if (aclnnStatus s = check_castable(op, dtype_of(self), out)) return s;
  return scan_executor(op, self, d, false, false, out, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnCumsum)

// CANN header aclnnop/aclnn_cumsum.h: the same in self's dtype; exclusive leaves each element out of its own sum, reverse runs from the end
extern "C" aclnnStatus aclnnCumsumV2GetWorkspaceSize(const aclTensor* self, int64_t dim, bool exclusive, bool reverse,
                                                     aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  const char* op = "aclnnCumsumV2";
  int64_t d;
  if (aclnnStatus s = check_scan(op, self, dim, out, &d)) return s;
  if (dtype_of(out) != dtype_of(self)) return invalid(op, "out must have self's dtype");
  if (dtype_of(self) == DType::Bool) return invalid(op, "self must not be BOOL");
  return scan_executor(op, self, d, exclusive, reverse, out, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnCumsumV2)

}  // namespace npu
}  // namespace ember
