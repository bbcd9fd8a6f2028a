// ember (internal to device/npu/ascendc): the host threads that run the cores of Ascend C launches.
#pragma once

#include <cstdint>
#include <string>

#include "ember/device/npu/ascendc/include/ember_ascendc/abi.h"

namespace ember {
namespace npu {
namespace ascendc {

constexpr uint64_t kUbBytes = 192 * 1024;  // an Atlas A2 (910B) vector core's Unified Buffer
constexpr uint32_t kMaxBlockDim = 65535;   // CANN's limit on blockDim

// Runs body(args) as cores 0 .. block_dim-1 of kernel, concurrently on the pool (the calling
// thread takes part), each with a fresh Unified Buffer. Returns "" or the fault: the lowest
// failing core's message (kernel, core, call), the number of other failing cores, and, in race
// mode, the first conflicting GM access between two cores.
std::string run_cores(const char* kernel, uint32_t block_dim, ember_ascendc_body body, void* args);

// Race mode (EMBER_ASCENDC_RACE=1): the GM accesses of the core running on this thread.
void note_access(uintptr_t addr, uint64_t bytes, int kind, const char* call);

}  // namespace ascendc
}  // namespace npu
}  // namespace ember
