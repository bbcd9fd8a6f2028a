// ember (internal to device/npu/ascendc): the host threads that run the cores of Ascend C launches.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember/device/npu/ascendc/include/ember_ascendc/abi.h"

namespace ember {
namespace npu {
namespace ascendc {

constexpr uint64_t kUbBytes = 192 * 1024;  // an Atlas A2 (910B) vector core's Unified Buffer
constexpr uint32_t kMaxBlockDim = 65535;   // CANN's limit on blockDim

// A piece of global memory a launch's pointer argument reaches, as it was when the launch was
// enqueued: the tensor's block of ember's caching allocator, or the aclrtMalloc allocation. (At
// run time the host may already have freed and reused a tensor's block for later, stream-ordered
// work, so the allocator's table then describes the future, not this launch.)
struct Region {
  uintptr_t start = 0;
  uint64_t size = 0;
  const char* what = "";
};

// Runs body(args) as cores 0 .. block_dim-1 of kernel, concurrently on the pool (the calling
// thread takes part), each with a fresh Unified Buffer. Returns "" or the fault: the lowest
// failing core's message (kernel, core, call), the number of other failing cores, and, in race
// mode, the first conflicting GM access between two cores.
// regions: the launch's (GlobalTensors inside one are bounded by it), or null.
// device, stream: the stream it runs on (the profiler draws each core on a row under it), or -1, 0.
std::string run_cores(const char* kernel, uint32_t block_dim, ember_ascendc_body body, void* args,
                      const std::vector<Region>* regions = nullptr, int device = -1, uint64_t stream = 0);
// The regions of the launch running on this thread (null outside a launch, or none given).
const std::vector<Region>* current_regions();

// Race mode (EMBER_ASCENDC_RACE=1): the GM accesses of the core running on this thread.
void note_access(uintptr_t addr, uint64_t bytes, int kind, const char* call);

}  // namespace ascendc
}  // namespace npu
}  // namespace ember
