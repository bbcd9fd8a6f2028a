// ember: Tensor, a cheap handle on a TensorImpl.
//
// Methods mirror libtorch's. The op methods are thin forwards to the free functions of
// ops/ops.h (each defined next to its op in ops/*.cpp, the rest in ops/tensor_methods.cpp), which
// call the dispatcher through typed handles.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <tuple>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/tables/binary_ops.def"
#include "ember/core/tables/reduce_ops.def"
#include "ember/core/tables/unary_ops.def"
#include "ember/device/device.h"
#include "ember/core/dtype.h"
#include "ember/core/error.h"
#include "ember/tensor/options.h"
#include "ember/core/scalar.h"
#include "ember/core/shape.h"
#include "ember/tensor/tensor_impl.h"

namespace ember {

namespace autograd {
class Node;
}
namespace indexing {
class TensorIndex;  // ops/indexing.h
}

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- properties ----
  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const IntrusivePtr<TensorImpl>& impl_ptr() const { return impl_; }
  // Like libtorch, sizes() and strides() view the tensor's own metadata (valid while the tensor
  // lives and is not resized); they convert implicitly to Shape: `Shape s = t.sizes();`.
  IntArrayRef sizes() const { return checked()->sizes(); }
  IntArrayRef strides() const { return checked()->strides(); }
  IntArrayRef sizes_ref() const { return checked()->sizes(); }
  IntArrayRef strides_ref() const { return checked()->strides(); }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return checked()->dim(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return checked()->numel(); }
  int64_t storage_offset() const { return checked()->storage_offset(); }
  DType dtype() const { return checked()->dtype(); }
  DType scalar_type() const { return dtype(); }
  Device device() const { return checked()->device(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_npu() const { return device().is_npu(); }
  bool is_contiguous() const { return checked()->is_contiguous(); }
  bool is_contiguous(MemoryFormat f) const;  // channels-last: the strides of an NHWC (NDHWC) layout
  bool is_floating_point() const { return ember::is_floating_point(dtype()); }
  size_t element_size() const { return element_size_of_dtype(); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size_of_dtype(); }
  TensorOptions options() const { return TensorOptions().dtype(dtype()).device(device()); }
  uint32_t version() const { return checked()->version(); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  // True if both share one storage (a view of the other, or both views of one base).
  bool is_alias_of(const Tensor& o) const;

  // ---- data ----
  // Host pointer to element 0; CPU only (NPU tensors throw DeviceError), T must match dtype().
  template <class T>
  T* data_ptr() const {
    check_data_ptr(dtype_of<T>);
    return static_cast<T*>(impl_->data());
  }
  void* raw_data_ptr() const;  // CPU only, any dtype
  void* data_ptr() const { return raw_data_ptr(); }  // libtorch's untyped form
  Scalar item() const;         // one-element tensors; synchronises NPU work
  template <class T>
  T item() const {
    return item().to<T>();
  }
  // All elements in row-major order, converted to T, copied to the host as needed.
  template <class T>
  std::vector<T> to_vector() const {
    if constexpr (std::is_same<T, bool>::value) {  // vector<bool> has no data()
      std::unique_ptr<bool[]> buf(new bool[static_cast<size_t>(numel())]);
      copy_to_host(buf.get(), kBool);
      return std::vector<bool>(buf.get(), buf.get() + numel());
    } else {
      std::vector<T> out(static_cast<size_t>(numel()));
      copy_to_host(out.data(), dtype_of<T>);
      return out;
    }
  }
  void print() const;
  std::string str() const;

  // ---- conversion ----
  // libtorch's overloads: copy forces a new tensor even when nothing changes; a memory format
  // other than Contiguous/Preserve is refused (NotImplementedError); non_blocking is accepted.
  Tensor to(Device device, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(DeviceType type) const { return to(Device(type)); }  // x.to(kNPU), unambiguous
  Tensor to(DType dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(Device device, DType dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(const TensorOptions& options, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(std::optional<DType> dtype, std::optional<Layout> layout, std::optional<Device> device,
            std::optional<bool> pin_memory, bool non_blocking, bool copy,
            std::optional<MemoryFormat> memory_format) const;
  Tensor type_as(const Tensor& other) const { return to(other.dtype()); }
  Tensor toType(DType t) const { return to(t); }
  Tensor cpu() const;
  Tensor npu(int index = -1) const;  // -1: the current npu (Note [Current device])
  Tensor contiguous(MemoryFormat memory_format = MemoryFormat::Contiguous) const;
  Tensor clone(std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor detach() const;
  // Makes this tensor hold other's data (storage, dtype, shape, device) while staying the same
  // tensor object for everyone holding it; autograd state (requires_grad, grad) is kept.
  // PyTorch's `param.data = other`. Used by Module::to.
  void set_data(const Tensor& other);
  Tensor& copy_(const Tensor& src);

  // ---- views (share storage) ----
  Tensor view(IntArrayRef shape) const;
  Tensor reshape(IntArrayRef shape) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor permute(IntArrayRef dims) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor expand(IntArrayRef shape, bool implicit = false) const;
  Tensor expand_as(const Tensor& other) const;
  Tensor slice(int64_t dim = 0, int64_t start = 0, int64_t end = INT64_MAX, int64_t step = 1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor operator[](int64_t index) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) const;
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides) const { return as_strided(sizes, strides, storage_offset()); }

  // ---- libtorch's composites (ops/composite*.cpp), declared in their own file
#include "ember/tensor/tensor_composites.inc"

  // ---- arithmetic (broadcasting, type promotion) ----
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(const Scalar& other) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(const Scalar& exponent) const;
  // maximum, minimum, ...: the binary table (core/tables/binary_ops.def)
#define EMBER_DECLARE_BINARY_METHOD(name, ...) Tensor name(const Tensor& other) const;
  EMBER_BINARY_OPS(EMBER_DECLARE_BINARY_METHOD)
#undef EMBER_DECLARE_BINARY_METHOD
  // ... and their in-place forms (atan2_, ...: the rows marked I)
#define EMBER_DECLARE_BINARY_INPLACE_N(name)
#define EMBER_DECLARE_BINARY_INPLACE_I(name) Tensor& name##_(const Tensor& other);
#define EMBER_DECLARE_BINARY_INPLACE(name, Acl, kind, expr, saves, ga, gb, ref, lo, hi, exact, policy, inplace) \
  EMBER_DECLARE_BINARY_INPLACE_##inplace(name)
  EMBER_BINARY_OPS(EMBER_DECLARE_BINARY_INPLACE)
#undef EMBER_DECLARE_BINARY_INPLACE
#undef EMBER_DECLARE_BINARY_INPLACE_I
#undef EMBER_DECLARE_BINARY_INPLACE_N
  Tensor neg() const;
  // abs, sign, exp, log, sqrt, ...: the unary table (core/tables/unary_ops.def)
#define EMBER_DECLARE_UNARY_METHOD(name, ...) Tensor name() const;
  EMBER_UNARY_OPS(EMBER_DECLARE_UNARY_METHOD)
#undef EMBER_DECLARE_UNARY_METHOD
  Tensor relu() const;
  Tensor gelu(const std::string& approximate = "none") const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor clamp_min(const Scalar& min) const;
  Tensor clamp_max(const Scalar& max) const;
  Tensor eq(const Tensor& other) const;
  Tensor eq(const Scalar& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor ne(const Scalar& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor lt(const Scalar& other) const;
  Tensor le(const Tensor& other) const;
  Tensor le(const Scalar& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor gt(const Scalar& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor ge(const Scalar& other) const;
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;

  // ---- in place (bump the version counter) ----
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& other, const Scalar& alpha = 1);
  Tensor& sub_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& sub_(const Scalar& other, const Scalar& alpha = 1);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(const Scalar& other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(const Scalar& other);
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor& relu_();
  Tensor& zero_();
  Tensor& fill_(const Scalar& value);
  // Random values from ember's global generator (manual_seed), as torch's in-place fills.
  Tensor& uniform_(double from = 0, double to = 1);
  Tensor& normal_(double mean = 0, double std = 1);

  // ---- reductions ----
  // sum, amax, amin, ...: the reduce table (core/tables/reduce_ops.def)
#define EMBER_DECLARE_REDUCE_METHOD_S(name)                     \
  Tensor name(std::optional<DType> dtype = std::nullopt) const; \
  Tensor name(IntArrayRef dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
#define EMBER_DECLARE_REDUCE_METHOD_M(name) Tensor name(IntArrayRef dims = {}, bool keepdim = false) const;
#define EMBER_DECLARE_REDUCE_METHOD(name, Acl, form, ...) EMBER_DECLARE_REDUCE_METHOD_##form(name)
  EMBER_REDUCE_OPS(EMBER_DECLARE_REDUCE_METHOD)
#undef EMBER_DECLARE_REDUCE_METHOD
#undef EMBER_DECLARE_REDUCE_METHOD_S
#undef EMBER_DECLARE_REDUCE_METHOD_M
  Tensor mean() const;
  Tensor mean(IntArrayRef dims, bool keepdim = false) const;
  Tensor max() const;
  Tensor min() const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor var(IntArrayRef dims, bool unbiased = true, bool keepdim = false) const;
  Tensor var(bool unbiased = true) const;
  Tensor norm() const;
  Tensor norm(const Scalar& p, IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor all(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor any(IntArrayRef dims = {}, bool keepdim = false) const;
  // Same shape, dtype and values (ember::equal).
  bool equal(const Tensor& other) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;
  // The methods of the ops marked EMBER_EXPORT_OP(..., method) (cumsum, ...), generated from their
  // declarations (cmake/public_ops.cmake).
#include "ember/gen/tensor_methods.inc"

  // ---- autograd (autograd/tensor_autograd.cpp) ----
  bool requires_grad() const;
  // Leaves only; floating dtypes only.
  Tensor& requires_grad_(bool requires_grad = true);
  // The accumulated gradient (undefined until a backward reaches this tensor).
  Tensor grad() const;
  Tensor& mutable_grad();
  void set_grad(const Tensor& grad);
  bool is_leaf() const;
  void backward() const;  // one-element tensors: d(self)/d(leaves) into leaves' .grad
  // grad: undefined means ones (one-element tensors). retain_graph defaults to create_graph;
  // create_graph records the backward so the gradients can be differentiated again.
  void backward(const Tensor& grad, std::optional<bool> retain_graph = std::nullopt, bool create_graph = false) const;
  void retain_grad();     // non-leaves keep .grad too
  bool retains_grad() const;
  // hook(grad) runs when this tensor's gradient is computed; a defined return replaces it.
  void register_hook(std::function<Tensor(const Tensor&)> hook);
  // Leaves only: hook(leaf) runs after a backward pass has accumulated into leaf.grad (torch's
  // register_post_accumulate_grad_hook; DistributedDataParallel starts its all-reduces from it).
  void register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook);
  std::shared_ptr<autograd::Node> grad_fn() const;  // nullptr for leaves
  uint32_t output_nr() const;

 private:
  TensorImpl* checked() const {
    if (EMBER_UNLIKELY(!impl_)) throw_undefined();
    return impl_.get();
  }
  [[noreturn]] static void throw_undefined();
  size_t element_size_of_dtype() const { return ember::element_size(dtype()); }
  void check_data_ptr(DType requested) const;
  void copy_to_host(void* dst, DType dst_dtype) const;

  IntrusivePtr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Operators (libtorch's): arithmetic with tensors and scalars; comparisons return Bool tensors.
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Scalar& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Scalar& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Scalar& b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, const Scalar& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Scalar& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Scalar& b);

}  // namespace ember
