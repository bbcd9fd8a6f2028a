// copy_ (any dtype to any dtype, strided, broadcasting src), clone, contiguous, to, detach.
#include "ember/device/cpu/strided.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(copy_, Keep, "ember::copy_(Tensor(a!) self, Tensor src) -> Tensor(a!)",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(clone, Keep, "ember::clone(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_DECLARE_OP(detach, Keep, "ember::detach(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_DECLARE_OP(to, Keep, "ember::to(Tensor self, Device device, ScalarType dtype) -> Tensor",
                 Tensor(const Tensor&, Device, DType));
EMBER_DECLARE_OP(contiguous, Keep, "ember::contiguous(Tensor self) -> Tensor", Tensor(const Tensor&));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

// ---------------------------------------------------------------- rules + CPU kernels
void check_copy(const Tensor& self, const Tensor& src) {
  EMBER_CHECK_SHAPE(
      IntArrayRef(broadcast_shapes(self.sizes_ref(), src.sizes_ref(), op::copy_::op_name())) == self.sizes_ref(),
      op::copy_::op_name(), ": source of shape ", src.sizes_ref(), " cannot be broadcast to destination shape ",
      self.sizes_ref());
}

Tensor copy__cpu(const Tensor& self, const Tensor& src) {
  check_copy(self, src);
  EMBER_CHECK_DEVICE(self.device().is_cpu() && src.device().is_cpu(), op::copy_::op_name(), ": CPU kernel got ",
                     self.device(), " <- ", src.device());
  if (!self.is_same(src)) cpu::copy(strided(self), strided_as(src, self.sizes_ref()));
  bump_version(self);
  return self;
}

// NPU copies. Within one device: aclnnInplaceCopy (strides, dtypes, broadcasting). Host to
// device: the source is converted on the host to the destination's dtype and layout, then
// uploaded with aclrtMemcpyAsync on the current stream (pageable memory is staged by the
// runtime, so the host tensor may die right away). Device to host: the device is synchronised
// (the source may come from any stream), copied down with aclrtMemcpy, then converted on the
// host. Between devices: through the host.
const char* copy_what(bool to_npu) {
  static const std::string up = std::string(op::copy_::op_name()) + " (host to npu)";
  static const std::string down = std::string(op::copy_::op_name()) + " (npu to host)";
  return (to_npu ? up : down).c_str();
}

void upload(const Tensor& dst, const Tensor& src) {
  Tensor host = src.to(dst.dtype()).expand(dst.sizes()).contiguous();
  npu::DeviceGuard g(dst.device().index());
  if (dst.is_contiguous()) {
    npu::check_acl(npu::aclrtMemcpyAsync(dst.impl()->data(), dst.nbytes(), host.impl()->data(), host.nbytes(),
                                         npu::ACL_MEMCPY_HOST_TO_DEVICE, npu::current_stream().raw()),
                   copy_what(true));
    return;
  }
  Tensor staged = empty_on(dst.sizes(), dst.dtype(), dst.device());
  upload(staged, host);
  EXEC_NPU_CMD(npu::aclnnInplaceCopy, dst, staged);
}

void download(const Tensor& dst, const Tensor& src) {
  Tensor dev = src;
  if (!src.is_contiguous() || src.sizes() != dst.sizes()) {
    dev = empty_on(dst.sizes(), src.dtype(), src.device());
    EXEC_NPU_CMD(npu::aclnnInplaceCopy, dev, src);
  }
  npu::synchronize(src.device().index());
  Tensor host = dst.is_contiguous() && dst.dtype() == dev.dtype() ? dst : empty_on(dst.sizes(), dev.dtype(), dst.device());
  npu::DeviceGuard g(src.device().index());
  npu::check_acl(npu::aclrtMemcpy(host.impl()->data(), host.nbytes(), dev.impl()->data(), dev.nbytes(),
                                  npu::ACL_MEMCPY_DEVICE_TO_HOST),
                 copy_what(false));
  if (!host.is_same(dst)) cpu::copy(strided(dst), strided(host));
}

Tensor copy__npu(const Tensor& self, const Tensor& src) {
  check_copy(self, src);
  if (!self.is_same(src) && self.numel() > 0) {
    if (self.is_npu() && src.is_npu() && self.device() == src.device()) {
      EXEC_NPU_CMD(npu::aclnnInplaceCopy, self, src);
    } else if (self.is_npu() && src.is_npu()) {
      upload(self, src.cpu());
    } else if (self.is_npu()) {
      upload(self, src);
    } else {
      download(self, src);
    }
  }
  bump_version(self);
  return self;
}

// clone: a new contiguous tensor with the same values.
Tensor clone_any(const Tensor& x) {
  Tensor out = empty_on(x.sizes_ref(), x.dtype(), x.device());
  Tensor o = out;
  copy_(o, x);
  return out;
}

// to(device, dtype): a no-op when nothing changes, else a converted copy.
Tensor to_any(const Tensor& x, Device device, DType dtype) {
  if (x.device() == device && x.dtype() == dtype) return x;
  Tensor out = empty_on(x.sizes_ref(), dtype, device);
  copy_(out, x);
  return out;
}

Tensor contiguous_any(const Tensor& x) { return x.is_contiguous() ? x : clone(x); }

// detach: shares storage (and the version counter) but is outside autograd.
Tensor detach_any(const Tensor& x) {
  Tensor d = view_of(x, x.sizes_ref(), x.strides_ref(), x.storage_offset());
  d.impl()->set_view_base({});  // not a view autograd follows
  return d;
}

}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::copy_());
  // clone is written as empty + copy_, so its gradient flows through copy_'s backward.
  m.def(op::clone(), &clone_any);
  m.def(op::detach());
  m.impl(op::detach(), DispatchKey::CompositeExplicit, &detach_any);
  m.def(op::to(), &to_any);
  m.def(op::contiguous(), &contiguous_any);
}

EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl(op::copy_(), &copy__cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl(op::copy_(), &copy__npu); }

Tensor& copy_(Tensor& self, const Tensor& src) {
  op::copy_::call(self, src);
  return self;
}
Tensor clone(const Tensor& x) { return op::clone::call(x); }
Tensor detach(const Tensor& x) { return op::detach::call(x); }
Tensor contiguous(const Tensor& x) { return op::contiguous::call(x); }
Tensor to(const Tensor& x, Device device, DType dtype) {
  return op::to::call(x, device, dtype);
}

Tensor& Tensor::copy_(const Tensor& src) {
  ember::copy_(*this, src);
  return *this;
}
// libtorch's memory_format arguments: row-major strided tensors only.
void check_memory_format(const char* op, std::optional<MemoryFormat> f) {
  EMBER_CHECK_T(NotImplementedError, !f || *f == MemoryFormat::Contiguous || *f == MemoryFormat::Preserve, op,
                ": memory format ", f ? static_cast<int>(*f) : 0,
                " (channels-last) is not supported: ember's tensors are row-major strided (use Contiguous)");
}
namespace {
// The tail of every Tensor::to: a copy when asked for one, contiguous when asked.
Tensor finish_to(const Tensor& self, Tensor r, bool copy, std::optional<MemoryFormat> f) {
  check_memory_format("Tensor::to", f);
  if (copy && r.is_same(self)) r = ember::clone(self);
  if (f && *f == MemoryFormat::Contiguous) r = r.contiguous();
  return r;
}
}  // namespace

Tensor Tensor::clone(std::optional<MemoryFormat> f) const {
  check_memory_format("Tensor::clone", f);
  return ember::clone(*this);
}
Tensor Tensor::detach() const { return ember::detach(*this); }
Tensor Tensor::contiguous(MemoryFormat f) const {
  check_memory_format("Tensor::contiguous", f);
  return is_contiguous() ? *this : ember::contiguous(*this);
}
Tensor Tensor::to(Device d, bool, bool copy, std::optional<MemoryFormat> f) const {
  return finish_to(*this, ember::to(*this, d, dtype()), copy, f);
}
Tensor Tensor::to(DType t, bool, bool copy, std::optional<MemoryFormat> f) const {
  return finish_to(*this, ember::to(*this, device(), t), copy, f);
}
Tensor Tensor::to(Device d, DType t, bool, bool copy, std::optional<MemoryFormat> f) const {
  return finish_to(*this, ember::to(*this, d, t), copy, f);
}
Tensor Tensor::to(const TensorOptions& o, bool, bool copy, std::optional<MemoryFormat> f) const {
  return finish_to(*this, ember::to(*this, o.has_device() ? o.device() : device(), o.dtype_or(dtype())), copy, f);
}
Tensor Tensor::to(const Tensor& other, bool, bool copy, std::optional<MemoryFormat> f) const {
  return finish_to(*this, ember::to(*this, other.device(), other.dtype()), copy, f);
}
Tensor Tensor::to(std::optional<DType> t, std::optional<Layout>, std::optional<Device> d, std::optional<bool>, bool,
                  bool copy, std::optional<MemoryFormat> f) const {
  return finish_to(*this, ember::to(*this, d.value_or(device()), t.value_or(dtype())), copy, f);
}
Tensor Tensor::cpu() const { return device().is_cpu() ? *this : to(Device(DeviceType::CPU)); }
Tensor Tensor::npu(int index) const { return to(Device(DeviceType::NPU, index)); }

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
using CopySig = Tensor(const Tensor&, const Tensor&);
// copy_(self, src): self's old value is overwritten (no gradient); src gets g (the engine
// reduces broadcast dims and converts dtype/device back to src's).
std::vector<Tensor> copy_bw(const BackwardCtx<CopySig>& c) { return {Tensor(), c.grad()}; }
const auto kCopy = spec_of<op::copy_>("CopyBackward", &copy_bw).in_place();
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::copy_(), autograd_kernel<&kCopy>());
  m.impl_not_differentiable(op::detach());
}

}  // namespace ember
