// ember: what this CPU can do, read at run time, and the cap that tests the weaker paths.
//
// Every choice between kernels or libraries is made here, at run time, never from the build's
// -march: the same binary runs on AVX2-only Zen 3, AVX-512 + AVX512_BF16 Zen 5 and AMX Xeons
// (README, "Benchmarks"). EMBER_MAX_CPU_ISA caps what ember uses, as ONEDNN_MAX_CPU_ISA caps
// oneDNN; when only ember's cap is set, it is handed on to oneDNN too, so one variable makes an
// AMX machine choose what a Zen 3 machine chooses. Code the compiler vectorised follows the
// build's -march (native, or the portable x86-64-v3 baseline) and is not affected by the cap.
#pragma once

#include <string>

namespace ember {
namespace cpu {

// Ordered: each level includes the ones below it.
enum class Isa : int {
  Baseline = 0,    // x86-64 (SSE4.1 at best): no vector FMA
  Avx2 = 1,        // AVX2 + FMA + F16C (x86-64-v3): 8-lane fp32 FMA, 16-bit <-> fp32 conversion only
  Avx512 = 2,      // AVX-512 F/BW/DQ/VL: 16-lane fp32 FMA
  Avx512Bf16 = 3,  // + AVX512_BF16: bf16 dot products (vdpbf16ps; twice the fp32 rate on Zen 4/5, half on some Xeons)
  Amx = 4,         // + AMX-BF16: bf16 tile matrix multiply
};

struct CpuInfo {
  std::string model;             // the CPU's brand string
  Isa detected = Isa::Baseline;  // what the CPU and OS offer
  Isa cap = Isa::Amx;            // EMBER_MAX_CPU_ISA (Amx when unset)
  bool capped = false;           // EMBER_MAX_CPU_ISA was set
  bool f16c = false;             // fp16 <-> fp32 conversion instructions
  bool avx512_fp16 = false;      // AVX512-FP16 arithmetic (no kernel uses it yet; reported)
  Isa effective() const { return detected < cap ? detected : cap; }
};

// Detected once. Throws ValueError (on every call) when EMBER_MAX_CPU_ISA names no level.
const CpuInfo& cpu_info();
// True when ember may use `isa` on this CPU under the cap.
bool cpu_has(Isa isa);
// "baseline", "avx2", "avx512", "avx512_bf16", "amx".
const char* isa_name(Isa isa);
// True when bf16 GEMMs should run on the bf16 units (oneDNN's bf16 kernels) rather than as fp32
// GEMMs on converted copies: with AMX always; with AVX512_BF16 alone when vdpbf16ps, timed once
// on this core, does at least 0.75x the FLOP rate of fp32 FMA. It does 2x on AMD Zen 4/5 and
// about 0.5x on the Intel Xeon guests without AMX (there the fp32 route made the bf16 LLaMA MLP
// step 1.7x faster, bench BM_llama_mlp_step). EMBER_BF16_UNITS=on / off overrides the timing
// (on still needs the units); any other value is a ValueError.
bool bf16_units_pay();
// The bf16 units exist under the cap and EMBER_BF16_UNITS is not off: memory-bound bf16 GEMMs
// run on them even where they do not pay for compute (gemm.cpp).
bool bf16_units_allowed();
// The timing behind bf16_units_pay: vdpbf16ps FLOP rate over fp32 FMA's on one core; 0 when it
// was not timed (no AVX512_BF16 under the cap, AMX, or EMBER_BF16_UNITS set).
double bf16_dot_to_fma_ratio();
// One line for logs and benchmark context: model, ISA, cap.
// e.g. "Intel(R) Xeon(R) Processor; ISA amx, capped at avx2 by EMBER_MAX_CPU_ISA".
std::string cpu_summary();

}  // namespace cpu
}  // namespace ember
