// KernelContext (kernel.h): what a planned kernel sees when its stream runs it: its tensors' host
// views (at a repeatable executor's new addresses, if set), the emulated cores, the launch.
#include "ember/core/error.h"
#include "ember/device/env.h"
#include "ember/device/npu/kernel.h"
#include "ember/device/npu/runtime.h"
#include "ember/device/parallel.h"

namespace ember {
namespace npu {

cpu::Strided KernelContext::view(const TensorRef& t) const {
  cpu::Strided s;
  s.dtype = t.dtype;
  s.sizes = IntArrayRef(t.view);
  s.strides = IntArrayRef(t.strides);
  int64_t n = numel_of(s.sizes);
  if (n == 0) {
    s.data = nullptr;
    return s;
  }
  size_t esz = element_size(t.dtype);
  const void* data = t.data;
  bool tracked = t.tracked;
  if (addresses_)
    for (const auto& [src, addr] : *addresses_)
      if (src == t.source) {
        data = addr;
        tracked = false;  // a new address: looked up (and checked) below
      }
  char* base;
  if (tracked) {
    base = detail::host_ptr(t.data);  // phase 1 checked the range; the executor keeps it allocated
  } else {  // a TensorRef not made by ref()
    int64_t storage = numel_of(IntArrayRef(t.storage));
    base = static_cast<char*>(detail::translate(data, static_cast<size_t>(storage) * esz));
    EMBER_CHECK(base != nullptr, "tensor memory at ", data, " (", numel_of(IntArrayRef(t.storage)) * static_cast<int64_t>(esz),
                " bytes) was freed, never allocated or too small when the kernel ran");
  }
  s.data = base + t.offset * static_cast<int64_t>(esz);
  return s;
}

uint32_t KernelContext::cores() const {
  static const uint32_t n = static_cast<uint32_t>(env_int("EMBER_NPU_CORES", 1, 1024).value_or(8));
  return n;
}

void KernelContext::launch(uint32_t block_dim, const std::function<void(uint32_t, uint32_t)>& fn) const {
  parallel_for(static_cast<int64_t>(block_dim), 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) fn(static_cast<uint32_t>(b), block_dim);
  });
}

}  // namespace npu
}  // namespace ember
