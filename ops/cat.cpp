// cat(tensors, dim): joins along an existing dim (dtypes promote; shapes must agree elsewhere;
// legacy 1-D empty tensors are skipped as in PyTorch). stack(tensors, dim): along a new dim.
#include "ember/device/cpu/strided.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(cat, Promote, "ember::cat(Tensor[] tensors, int dim=0) -> Tensor",
                 Tensor(const std::vector<Tensor>&, int64_t));
EMBER_DECLARE_OP(stack, Promote, "ember::stack(Tensor[] tensors, int dim=0) -> Tensor",
                 Tensor(const std::vector<Tensor>&, int64_t));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

struct CatMeta {
  DimVector shape;
  DType dtype;
  Device device;
  int64_t dim;
  std::vector<const Tensor*> parts;  // the tensors that contribute (skips legacy empty 1-D)
};

CatMeta cat_meta(const std::vector<Tensor>& ts, int64_t dim) {
  EMBER_CHECK_VALUE(!ts.empty(), op::cat::op_name(), ": expected a non-empty list of tensors");
  CatMeta m;
  const Tensor* ref = nullptr;
  for (const Tensor& t : ts) {
    EMBER_CHECK_VALUE(t.defined(), op::cat::op_name(), ": got an undefined tensor");
    if (t.dim() == 1 && t.numel() == 0) continue;  // legacy empty tensor
    if (!ref) ref = &t;
    m.parts.push_back(&t);
  }
  if (!ref) ref = &ts[0];
  EMBER_CHECK_SHAPE(ref->dim() > 0, op::cat::op_name(), ": zero-dimensional tensor cannot be concatenated");
  m.dim = wrap_dim(dim, ref->dim(), op::cat::op_name());
  m.shape = ref->sizes_ref();
  m.shape[static_cast<size_t>(m.dim)] = 0;
  m.dtype = ref->dtype();
  m.device = ref->device();
  for (size_t i = 0; i < m.parts.size(); ++i) {
    const Tensor& t = *m.parts[i];
    EMBER_CHECK_DEVICE(t.device() == m.device, op::cat::op_name(),
                       ": Expected all tensors to be on the same device, but found ", m.device, " and ", t.device());
    EMBER_CHECK_SHAPE(t.dim() == ref->dim(), op::cat::op_name(),
                      ": tensors must have the same number of dimensions: got ", ref->dim(), " and ", t.dim(),
                      " (tensor ", i, " has shape ", t.sizes_ref(), ")");
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (d == m.dim) continue;
      EMBER_CHECK_SHAPE(t.size(d) == ref->size(d), op::cat::op_name(),
                        ": sizes of tensors must match except in dimension ", m.dim, ". Expected size ", ref->size(d),
                        " but got size ", t.size(d), " for tensor number ", i, " in the list (shape ", t.sizes_ref(),
                        " vs ", ref->sizes_ref(), ")");
    }
    m.shape[static_cast<size_t>(m.dim)] += t.size(m.dim);
    m.dtype = promote_types(m.dtype, t.dtype());
  }
  return m;
}

Tensor cat_cpu(const std::vector<Tensor>& ts, int64_t dim) {
  CatMeta m = cat_meta(ts, dim);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  int64_t offset = 0;
  for (const Tensor* t : m.parts) {
    int64_t n = t->size(m.dim);
    if (n) cpu::copy(strided(out.narrow(m.dim, offset, n)), strided(*t));
    offset += n;
  }
  return out;
}

Tensor cat_npu(const std::vector<Tensor>& ts, int64_t dim) {
  CatMeta m = cat_meta(ts, dim);
  Tensor out = empty_on(m.shape, m.dtype, m.device);
  std::vector<Tensor> parts;
  for (const Tensor* t : m.parts) parts.push_back(*t);
  EXEC_NPU_CMD(npu::aclnnCat, parts, m.dim, out);
  return out;
}

Tensor stack_any(const std::vector<Tensor>& ts, int64_t dim) {
  EMBER_CHECK_VALUE(!ts.empty(), op::stack::op_name(), ": expected a non-empty list of tensors");
  int64_t d = wrap_dim(dim, ts[0].dim() + 1, op::stack::op_name());
  std::vector<Tensor> parts;
  for (size_t i = 0; i < ts.size(); ++i) {
    EMBER_CHECK_SHAPE(ts[i].sizes_ref() == ts[0].sizes_ref(), op::stack::op_name(),
                      ": expects each tensor to be equal size, but got ", ts[0].sizes_ref(), " at entry 0 and ",
                      ts[i].sizes_ref(), " at entry ", i);
    parts.push_back(ts[i].unsqueeze(d));
  }
  return ember::cat(parts, d);
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::cat());
  m.def(op::stack(), &stack_any);
}
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl(op::cat(), &cat_cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl(op::cat(), &cat_npu); }

using Sig = Tensor(const std::vector<Tensor>&, int64_t);
Tensor cat(const std::vector<Tensor>& ts, int64_t dim) { return op::cat::call(ts, dim); }
Tensor stack(const std::vector<Tensor>& ts, int64_t dim) { return op::stack::call(ts, dim); }

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
// d cat(xs, dim) = g split back into the parts' extents along dim (legacy empty parts get none)
std::vector<Tensor> cat_bw(const BackwardCtx<Sig>& c) {
  const auto& parts = c.list_meta<0>();
  Tensor g = c.grad();
  int64_t dim = c.arg<1>();
  int64_t d = -1;
  for (const auto& p : parts)
    if (!(p.meta.sizes.size() == 1 && p.meta.sizes[0] == 0))
      d = wrap_dim(dim, static_cast<int64_t>(p.meta.sizes.size()), op::cat::op_name());
  std::vector<Tensor> out;
  int64_t offset = 0;
  for (const auto& p : parts) {
    if (p.meta.sizes.size() == 1 && p.meta.sizes[0] == 0) {
      out.push_back(Tensor());
      continue;
    }
    int64_t n = p.meta.sizes[static_cast<size_t>(d)];
    out.push_back(g.narrow(d, offset, n));
    offset += n;
  }
  return out;
}
const auto kCat = spec_of<op::cat>("CatBackward", &cat_bw);
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) { m.impl(op::cat(), autograd_kernel<&kCat>()); }

}  // namespace ember
