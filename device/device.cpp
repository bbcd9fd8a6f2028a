#include "ember/device/device.h"

#include <atomic>
#include <cstdlib>

#include "ember/core/error.h"

namespace ember {

namespace {
std::atomic<int (*)()> g_current_fn[kNumDeviceTypes] = {};
int current_index(DeviceType type) {
  int (*fn)() = g_current_fn[static_cast<int>(type)].load(std::memory_order_acquire);
  return fn ? fn() : 0;
}
}  // namespace

void detail::set_current_device_fn(DeviceType type, int (*fn)()) {
  g_current_fn[static_cast<int>(type)].store(fn, std::memory_order_release);
}

// Note [Current device]
Device::Device(DeviceType type, int index)
    : type_(type), index_(static_cast<int16_t>(index == -1 ? current_index(type) : index)) {
  EMBER_CHECK_VALUE(index >= -1 && index < 1024, "Device: index must be in [0, 1024) (or -1: the current device), got ",
                    index);
  EMBER_CHECK_VALUE(type != DeviceType::CPU || index_ == 0, "Device: cpu has only index 0, got cpu:", index);
}

static Device parse_device(const std::string& s) {
  auto colon = s.find(':');
  std::string type = s.substr(0, colon);
  int index = -1;  // the current device
  if (colon != std::string::npos) {
    std::string idx = s.substr(colon + 1);
    char* end = nullptr;
    long v = idx.empty() ? -1 : std::strtol(idx.c_str(), &end, 10);
    EMBER_CHECK_VALUE(!idx.empty() && end && *end == '\0' && v >= 0, "Device: invalid device string '",
                      s, "'; expected \"cpu\", \"npu\" or \"npu:<index>\"");
    index = static_cast<int>(v);
  }
  if (type == "cpu") return Device(DeviceType::CPU, index);
  if (type == "npu") return Device(DeviceType::NPU, index);
  EMBER_THROW(ValueError, "Device: invalid device string '", s,
              "'; expected \"cpu\", \"npu\" or \"npu:<index>\"");
}

Device::Device(const std::string& spec) : Device(parse_device(spec)) {}

const char* device_type_name(DeviceType t) { return t == DeviceType::CPU ? "cpu" : "npu"; }

std::string Device::str() const {
  if (type_ == DeviceType::CPU) return "cpu";
  return std::string(device_type_name(type_)) + ":" + std::to_string(index_);
}

std::ostream& operator<<(std::ostream& os, Device d) { return os << d.str(); }
std::ostream& operator<<(std::ostream& os, DeviceType t) { return os << device_type_name(t); }

}  // namespace ember
