#include "ember/tensor/dispatch_key.h"

#include <cstring>

#include "ember/core/error.h"

namespace ember {

static const char* kKeyNames[kNumDispatchKeys] = {"Undefined", "CPU", "NPU", "Autograd", "Autocast",
                                                  "CompositeExplicit", "CompositeImplicit"};

const char* dispatch_key_name(DispatchKey k) { return kKeyNames[static_cast<int>(k)]; }
std::ostream& operator<<(std::ostream& os, DispatchKey k) { return os << dispatch_key_name(k); }

DispatchKey dispatch_key_from_string(const char* s) {
  for (int i = 0; i < kNumDispatchKeys; ++i)
    if (std::strcmp(s, kKeyNames[i]) == 0) return static_cast<DispatchKey>(i);
  EMBER_THROW(ValueError, "unknown dispatch key '", s, "'");
}

std::ostream& operator<<(std::ostream& os, DispatchKeySet ks) {
  os << '{';
  bool first = true;
  for (int i = 1; i < kNumRuntimeKeys; ++i) {
    if (ks.has(static_cast<DispatchKey>(i))) {
      os << (first ? "" : ", ") << static_cast<DispatchKey>(i);
      first = false;
    }
  }
  return os << '}';
}

}  // namespace ember
