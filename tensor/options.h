// ember: TensorOptions, the dtype/device/requires_grad of a new tensor.
#pragma once

#include "ember/device/device.h"
#include "ember/core/dtype.h"

namespace ember {

// libtorch's memory formats. ember's tensors are row-major (strided); Contiguous and Preserve are
// accepted wherever libtorch takes a format, the channels-last formats are refused by name.
enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };
// libtorch's layouts: ember has dense strided tensors only.
enum class Layout : int8_t { Strided };
constexpr Layout kStrided = Layout::Strided;

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(DType d) : dtype_(d), has_dtype_(true) {}          // NOLINT: zeros({2}, kInt64)
  TensorOptions(Device d) : device_(d), has_device_(true) {}       // NOLINT: zeros({2}, Device("npu:0"))
  TensorOptions(DeviceType t) : device_(t), has_device_(true) {}   // NOLINT: zeros({2}, kNPU)

  TensorOptions dtype(DType d) const {
    TensorOptions o = *this;
    o.dtype_ = d;
    o.has_dtype_ = true;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    o.has_device_ = true;
    return o;
  }
  TensorOptions requires_grad(bool r) const {
    TensorOptions o = *this;
    o.requires_grad_ = r;
    return o;
  }

  TensorOptions layout(Layout) const { return *this; }  // strided only
  TensorOptions memory_format(MemoryFormat) const { return *this; }

  DType dtype() const { return has_dtype_ ? dtype_ : default_float_dtype(); }
  bool has_dtype() const { return has_dtype_; }
  DType dtype_or(DType d) const { return has_dtype_ ? dtype_ : d; }
  Device device() const { return device_; }  // the CPU unless set
  bool has_device() const { return has_device_; }
  bool requires_grad() const { return requires_grad_; }

 private:
  // Plain members with flags, not std::optional: g++ 12 at -O1 reports copies of a TensorOptions
  // holding an optional<Device> as "may be used uninitialized" (a false positive that -Werror
  // builds of user code would stop on).
  DType dtype_ = DType::Float32;
  Device device_ = Device(DeviceType::CPU);
  bool has_dtype_ = false;
  bool has_device_ = false;
  bool requires_grad_ = false;
};

inline TensorOptions dtype(DType d) { return TensorOptions().dtype(d); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

}  // namespace ember
