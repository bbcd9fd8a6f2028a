// ember: device placement.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace ember {

enum class DeviceType : uint8_t { CPU, NPU };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kNPU = DeviceType::NPU;
constexpr int kNumDeviceTypes = 2;

// Note [Current device]: a Device without an index (Device(kNPU), Device("npu"), x.npu(),
// x.to(kNPU), zeros(..., kNPU)) is the calling thread's current device of its type when it is made
// (npu: aclrtSetDevice / npu::DeviceGuard; cpu: 0), as torch's current CUDA device. Unlike torch,
// the index is resolved then, not when the Device is used: a Device made before set_device keeps
// the index it got.
struct Device {
  Device(DeviceType type = DeviceType::CPU, int index = -1);  // NOLINT: implicit like c10::Device
  // "cpu", "npu" (the current npu), "npu:1"; throws ValueError on anything else.
  explicit Device(const std::string& spec);
  explicit Device(const char* spec) : Device(std::string(spec)) {}

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_npu() const { return type_ == DeviceType::NPU; }
  std::string str() const;

  friend bool operator==(Device a, Device b) { return a.type_ == b.type_ && a.index_ == b.index_; }
  friend bool operator!=(Device a, Device b) { return !(a == b); }

 private:
  DeviceType type_;
  int16_t index_;
};

namespace detail {
// The NPU runtime registers how to read the calling thread's current device (default: 0).
void set_current_device_fn(DeviceType type, int (*fn)());
}  // namespace detail

std::ostream& operator<<(std::ostream& os, Device d);
std::ostream& operator<<(std::ostream& os, DeviceType t);
const char* device_type_name(DeviceType t);

}  // namespace ember
