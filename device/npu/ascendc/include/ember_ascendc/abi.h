// ember: the calls Ascend C kernels make into libember (the emulated NPU's side of
// kernel_operator.h). C linkage, so a kernel library built by any C++ compiler links against
// libember's exported symbols; errors are C++ exceptions (AscendC::KernelError) thrown through.
//
// Note [Ascend C on the emulated NPU]
// A launch (ACLRT_LAUNCH_KERNEL, <<<...>>>, ICPU_RUN_KF) is one task on its stream. The task runs
// the kernel once per core, blockDim cores at a time on a pool of host threads, each core with its
// own Unified Buffer (192 KiB, an Atlas A2 (910B) AI Core's vector UB). Kernel code reaches global
// memory only through GlobalTensor (SetGlobalBuffer maps a device address to the runtime's host
// view of it, bounded by both the allocation and the length given), and the UB only through
// LocalTensor. Every API call checks what the hardware requires or leaves undefined (32-byte
// DataCopy blocks, UB capacity, queue states, tensor lifetimes, dtypes per op) and throws
// KernelError naming the call; the launch then faults its stream with ACL_ERROR_RT_AICORE_EXCEPTION,
// reported by the next synchronize with the kernel, the core and the message.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// The core running on the calling thread (null outside a kernel).
struct ember_ascendc_core {
  uint32_t block_idx;
  uint32_t block_num;
  char* ub;          // this core's Unified Buffer
  uint64_t ub_size;  // bytes
  uint64_t ub_used;  // bytes handed out by TPipe / LocalMemAllocator, from ub on
  const char* kernel;
  int race;    // EMBER_ASCENDC_RACE: GM accesses are recorded
  int atomic;  // SetAtomicAdd's dtype code, or -1
  int32_t events[64][8];  // SetFlag count minus WaitFlag count, by HardEvent and event id
};
ember_ascendc_core* ember_ascendc_current_core(void);

// Global memory: where the device address dev lives. Fills *host (the runtime's view of dev),
// *avail (bytes from dev to the end of its region), *base (the region's device address) and *what
// (the region: an aclrtMalloc allocation, a block of ember's caching allocator, i.e. a tensor's
// memory, or a GmAlloc block); returns 0 when dev is in no live region.
int ember_ascendc_gm_map(const void* dev, char** host, uint64_t* avail, uintptr_t* base, const char** what);
// Race mode: notes that this core read or wrote [dev, dev + bytes) in `call`.
void ember_ascendc_gm_note(const void* dev, uint64_t bytes, int write, const char* call);

// dst[i] += src[i] under the runtime's lock (SetAtomicAdd copies), in the dtype's compute type.
void ember_ascendc_atomic_add(int dtype, void* dst, const void* src, uint64_t n);

// A kernel body: runs the kernel with its arguments on the calling core.
typedef void (*ember_ascendc_body)(void* args);
typedef void (*ember_ascendc_free)(void* args);
// Enqueues the launch on stream (null: the current device's default stream). Returns an
// aclError: the launch's own argument errors; kernel faults come at the next synchronize.
// args is freed with free_args once the launch has run (or failed to enqueue). ptrs: the launch's
// pointer arguments, whose allocations stay in use until it has run (aclrtFree checks them).
int ember_ascendc_launch(const char* kernel, uint32_t block_dim, void* stream, ember_ascendc_body body, void* args,
                         ember_ascendc_free free_args, const void* const* ptrs, uint32_t nptrs);
// CANN's CPU debug mode (ICPU_RUN_KF): runs the launch now, on the calling thread's pool,
// without a device. On a fault, returns nonzero and fills msg (null-terminated, truncated).
int ember_ascendc_run_now(const char* kernel, uint32_t block_dim, ember_ascendc_body body, void* args, char* msg,
                          size_t msg_size);

// GmAlloc / GmFree: host memory that kernels may use as global memory (CPU debug mode).
void* ember_ascendc_gm_alloc(size_t bytes);
void ember_ascendc_gm_free(void* p);

// ---- vector math over UB buffers (checked by the caller; n elements, contiguous) ----
// dtype codes
enum { EMBER_ASC_F32 = 0, EMBER_ASC_F16 = 1, EMBER_ASC_BF16 = 2, EMBER_ASC_I32 = 3, EMBER_ASC_I16 = 4,
       EMBER_ASC_I8 = 5, EMBER_ASC_U8 = 6, EMBER_ASC_U16 = 7, EMBER_ASC_U32 = 8, EMBER_ASC_I64 = 9 };
enum { EMBER_ASC_ADD, EMBER_ASC_SUB, EMBER_ASC_MUL, EMBER_ASC_DIV, EMBER_ASC_MAX, EMBER_ASC_MIN,
       EMBER_ASC_AND, EMBER_ASC_OR };
enum { EMBER_ASC_EXP, EMBER_ASC_LN, EMBER_ASC_ABS, EMBER_ASC_SQRT, EMBER_ASC_RSQRT, EMBER_ASC_RECIPROCAL,
       EMBER_ASC_RELU, EMBER_ASC_SILU, EMBER_ASC_GELU, EMBER_ASC_SIGMOID, EMBER_ASC_TANH, EMBER_ASC_NOT,
       EMBER_ASC_NEG };
// dst[i] = a[i] op b[i] (strided: element i of repeat r, block k at base + r*rep + k*blk + e).
void ember_ascendc_binary(int op, int dtype, void* dst, const void* a, const void* b, uint64_t n);
// dst[i] = a[i] op s (op: ADD, MUL, MAX, MIN; s converted to the dtype's compute type)
void ember_ascendc_scalar(int op, int dtype, void* dst, const void* a, double s, uint64_t n);
void ember_ascendc_unary(int op, int dtype, void* dst, const void* a, uint64_t n);
// dst[i] = (dst_dtype) src[i], rounded by round (AscendC::RoundMode's value).
void ember_ascendc_cast(int dst_dtype, void* dst, int src_dtype, const void* src, int round, uint64_t n);
}
