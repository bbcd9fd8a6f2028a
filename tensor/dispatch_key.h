// ember: dispatch keys and key sets.
//
// Leaf vocabulary (like c10/core/DispatchKey.h): TensorImpl carries a key set, the dispatcher
// (dispatch/) picks the highest-priority key of a call. Higher value = handled first.
#pragma once

#include <cstdint>
#include <ostream>

#include "ember/device/device.h"

namespace ember {

enum class DispatchKey : uint8_t {
  Undefined = 0,
  CPU = 1,
  NPU = 2,
  Autograd = 3,
  Autocast = 4,
  // Alias keys: registering to one fills several runtime keys (never found on a tensor).
  CompositeExplicit = 5,  // all backend keys (CPU, NPU): device-agnostic kernels, e.g. views
  CompositeImplicit = 6,  // all backends + Autograd: ops written in terms of other ops
};
constexpr int kNumRuntimeKeys = 5;  // Undefined .. Autocast
constexpr int kNumDispatchKeys = 7;

const char* dispatch_key_name(DispatchKey k);
std::ostream& operator<<(std::ostream& os, DispatchKey k);
// Parses "CPU", "NPU", "Autograd", ... ; throws ValueError.
DispatchKey dispatch_key_from_string(const char* s);

class DispatchKeySet {
 public:
  constexpr DispatchKeySet() = default;
  constexpr explicit DispatchKeySet(DispatchKey k)
      : bits_(k == DispatchKey::Undefined ? 0u : 1u << static_cast<int>(k)) {}
  static constexpr DispatchKeySet from_bits(uint32_t b) {
    DispatchKeySet s;
    s.bits_ = b;
    return s;
  }
  static constexpr DispatchKeySet backends() {
    return from_bits((1u << static_cast<int>(DispatchKey::CPU)) | (1u << static_cast<int>(DispatchKey::NPU)));
  }
  static constexpr DispatchKeySet all_runtime() { return from_bits((1u << kNumRuntimeKeys) - 2); }

  constexpr uint32_t bits() const { return bits_; }
  constexpr bool has(DispatchKey k) const { return (bits_ & DispatchKeySet(k).bits_) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr DispatchKeySet operator|(DispatchKeySet o) const { return from_bits(bits_ | o.bits_); }
  constexpr DispatchKeySet operator&(DispatchKeySet o) const { return from_bits(bits_ & o.bits_); }
  constexpr DispatchKeySet operator-(DispatchKeySet o) const { return from_bits(bits_ & ~o.bits_); }
  constexpr DispatchKeySet add(DispatchKey k) const { return *this | DispatchKeySet(k); }
  constexpr DispatchKeySet remove(DispatchKey k) const { return *this - DispatchKeySet(k); }
  // Keys strictly below k.
  constexpr DispatchKeySet below(DispatchKey k) const {
    return from_bits(bits_ & ((1u << static_cast<int>(k)) - 1u));
  }
  DispatchKey highest() const {
    return bits_ == 0 ? DispatchKey::Undefined : static_cast<DispatchKey>(31 - __builtin_clz(bits_));
  }
  friend constexpr bool operator==(DispatchKeySet a, DispatchKeySet b) { return a.bits_ == b.bits_; }
  friend constexpr bool operator!=(DispatchKeySet a, DispatchKeySet b) { return a.bits_ != b.bits_; }

 private:
  uint32_t bits_ = 0;
};

std::ostream& operator<<(std::ostream& os, DispatchKeySet ks);

constexpr DispatchKey backend_key(DeviceType t) {
  return t == DeviceType::CPU ? DispatchKey::CPU : DispatchKey::NPU;
}

}  // namespace ember
