// Fuzzes the safetensors reader (nn::load_safetensors_bytes, the same checks as a file): any
// bytes either load or throw ember::Error; the limits are checked before anything is allocated.
#include <cstddef>
#include <cstdint>

#include <ember/ember.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto tensors = ember::nn::load_safetensors_bytes(data, size);
    for (auto& [name, t] : tensors) {
      if (t.numel() > 0) (void)t.reshape({-1}).to(ember::kFloat64).sum().item<double>();  // touch every element
    }
  } catch (const ember::Error&) {
  }
  return 0;
}
