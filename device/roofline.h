// ember: this machine's limits, measured at run time, and a bound model built from them: how fast
// a training step could possibly run here. The benchmarks (bench/, BM_peak, BM_llama_mlp_step)
// and the LLaMA MLP demo report their time against it as "of_bound".
//
//   peak FLOP/s   independent accumulator chains of one instruction on every intra-op thread:
//                   f32_fma/avx2          vfmadd231ps ymm (8 lanes x 2 FLOP), every x86-64-v3 CPU
//                   f32_fma/avx512        vfmadd231ps zmm (16 x 2)
//                   bf16_dot/avx512_bf16  vdpbf16ps zmm (16 lanes x 2 products x 2)
//                   bf16_tile/amx         tdpbf16ps on 16x32 bf16 tiles (16 x 16 x 32 x 2 FLOP)
//   bandwidth     a[i] += s * b[i] over two 64 Mi-element fp32 arrays (512 MiB, past any L3
//                 seen) on every intra-op thread, counted as 12 bytes per element: an in-place
//                 update, as the optimizer's, so no write-allocate traffic goes uncounted.
//
// Every measurement keeps the best figure seen in the process (measure_* record theirs), so a
// benchmark that measured longer raises the peak its later cases are compared with.
#pragma once

#include <cstdint>
#include <vector>

#include "ember/core/dtype.h"

namespace ember {
namespace roofline {

enum class Unit { F32FmaAvx2, F32FmaAvx512, Bf16DotAvx512, Bf16TileAmx };

const std::vector<Unit>& all_units();
// "f32_fma/avx2", "f32_fma/avx512", "bf16_dot/avx512_bf16", "bf16_tile/amx".
const char* unit_name(Unit unit);
// The hardware (and OS) has the unit, whatever EMBER_MAX_CPU_ISA says: the cap chooses which
// peak a GEMM is compared with, not what the hardware does.
bool has_unit(Unit unit);
// The unit a GEMM in this dtype runs on here, under the caps (bf16 on the f32 units where its
// own do not pay: cpu::bf16_units_pay).
Unit gemm_unit(DType dtype);

// One run of `trips` x 12 instructions of the unit on the calling thread; seconds taken (0 when
// the hardware lacks the unit).
double time_unit_on_this_thread(Unit unit, int64_t trips);
// One run on every intra-op thread (~2 ms): FLOP/s. Recorded.
double measure_flops(Unit unit);
// The best FLOP/s recorded in this process; measured now (best over ~0.25 s) when none was.
// 0 when the hardware lacks the unit.
double peak_flops(Unit unit);
// One pass of the in-place update: bytes/s. Recorded.
double measure_bandwidth();
// The best recorded, or measured now (best of a few passes).
double peak_bandwidth();

// The work of a step as the bound counts it.
struct Cost {
  double gemm_flops = 0;  // matrix products, at the GEMM unit's peak
  double bytes = 0;       // memory traffic that cannot stay in cache, at the peak bandwidth
  Cost& operator+=(const Cost& o) {
    gemm_flops += o.gemm_flops;
    bytes += o.bytes;
    return *this;
  }
};

// The fastest a GEMM in this dtype could run here: the peak of the unit it runs on, or for bf16
// of the fp32 FMA unit when that is faster (a bf16 GEMM can always be staged through fp32), so a
// slow choice of unit never raises of_bound.
double gemm_peak_flops(DType dtype);
// Seconds the cost takes at this machine's limits: gemm_flops at gemm_peak_flops(gemm_dtype) plus
// bytes at peak_bandwidth(), with nothing overlapping.
double bound_seconds(const Cost& cost, DType gemm_dtype);

// One LLaMA MLP block (RMSNorm, SwiGLU of gate/up/down projections, residual) over `tokens` rows,
// forward and backward, activations in `compute` (fp32, or the autocast dtype) and x, y in fp32:
//   gemm_flops = 18 tokens d_model d_ff (three products forward, each twice in backward);
//   bytes: each element-wise pass reads its inputs and writes its outputs once:
//     forward   RMSNorm x -> n, SwiGLU (g, u) -> h, residual (x, o) -> y;
//     backward  SwiGLU (dh, g, u) -> (dg, du), RMSNorm's weight gradient (dn, x);
//   that is tokens (d_model (16 + 3 s) + 8 s d_ff) bytes for s = sizeof(compute).
// Casts and the loss are not counted: an implementation can fold them into the passes above.
Cost llama_mlp_block(int64_t tokens, int64_t d_model, int64_t d_ff, DType compute);
// A Linear layer's products forward and backward (input and weight gradients): 6 rows in out.
Cost linear_layer(int64_t rows, int64_t in_features, int64_t out_features);
// One AdamW step over `params` fp32 parameters: reads p, g, m, v and writes p, m, v (28 bytes each).
Cost adamw(int64_t params);

}  // namespace roofline
}  // namespace ember
