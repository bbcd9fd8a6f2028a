#include "ember/device/cpu/isa.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "ember/core/error.h"
#include "ember/device/roofline.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace ember {
namespace cpu {
namespace {

std::string lower(const char* s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

// Accepts ember's names and oneDNN's (ONEDNN_MAX_CPU_ISA spells them in capitals).
bool parse_isa(const std::string& s, Isa* out) {
  struct Name {
    const char* name;
    Isa isa;
  };
  static const Name kNames[] = {{"baseline", Isa::Baseline},      {"sse41", Isa::Baseline},
                                {"avx", Isa::Baseline},           {"avx2", Isa::Avx2},
                                {"avx2_vnni", Isa::Avx2},         {"avx512", Isa::Avx512},
                                {"avx512_core", Isa::Avx512},     {"avx512_core_vnni", Isa::Avx512},
                                {"avx512_bf16", Isa::Avx512Bf16}, {"avx512_core_bf16", Isa::Avx512Bf16},
                                {"amx", Isa::Amx},                {"avx512_core_amx", Isa::Amx},
                                {"all", Isa::Amx}};
  for (const Name& n : kNames)
    if (s == n.name) {
      *out = n.isa;
      return true;
    }
  return false;
}

std::string brand_string() {
#if defined(__x86_64__)
  unsigned int regs[12] = {};
  unsigned int max_ext = __get_cpuid_max(0x80000000u, nullptr);
  if (max_ext >= 0x80000004u) {
    for (unsigned int i = 0; i < 3; ++i) __get_cpuid(0x80000002u + i, &regs[4 * i], &regs[4 * i + 1], &regs[4 * i + 2], &regs[4 * i + 3]);
    char text[49] = {};
    std::memcpy(text, regs, 48);
    std::string s(text);
    size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
    if (b != std::string::npos) return s.substr(b, e - b + 1);
  }
#endif
  return "unknown CPU";
}

struct Detected {
  CpuInfo info;
  std::string error;  // set when EMBER_MAX_CPU_ISA is invalid
};

Detected detect() {
  Detected d;
  CpuInfo& c = d.info;
  c.model = brand_string();
#if defined(__x86_64__)
  // cpuid for what the CPU has, XCR0 for the vector state the OS saves (the same in g++ and
  // clang: clang 14's __builtin_cpu_supports knows no f16c, amx or avx512fp16).
  unsigned a1 = 0, b1 = 0, c1 = 0, d1 = 0, a7 = 0, b7 = 0, c7 = 0, d7 = 0, a71 = 0, b71 = 0, c71 = 0, d71 = 0;
  __get_cpuid(1, &a1, &b1, &c1, &d1);
  __get_cpuid_count(7, 0, &a7, &b7, &c7, &d7);
  __get_cpuid_count(7, 1, &a71, &b71, &c71, &d71);
  auto bit = [](unsigned r, int i) { return (r >> i) & 1u; };
  uint64_t xcr0 = 0;
  if (bit(c1, 27)) {  // OSXSAVE: xgetbv is available
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (uint64_t(hi) << 32) | lo;
  }
  const bool os_avx = (xcr0 & 0x6) == 0x6, os_avx512 = os_avx && (xcr0 & 0xE0) == 0xE0,
             os_amx = (xcr0 & 0x60000) == 0x60000;
  c.f16c = os_avx && bit(c1, 29);
  const bool avx2 = os_avx && bit(c1, 28) && bit(b7, 5) && bit(c1, 12) && c.f16c;
  const bool avx512 = avx2 && os_avx512 && bit(b7, 16) && bit(b7, 30) && bit(b7, 17) && bit(b7, 31);
  const bool bf16 = avx512 && bit(a71, 5);
  const bool amx = bf16 && os_amx && bit(d7, 24) && bit(d7, 22);
  c.avx512_fp16 = avx512 && bit(d7, 23);
  c.detected = amx ? Isa::Amx : bf16 ? Isa::Avx512Bf16 : avx512 ? Isa::Avx512 : avx2 ? Isa::Avx2 : Isa::Baseline;
#endif
  if (const char* env = std::getenv("EMBER_MAX_CPU_ISA")) {
    if (*env) {
      Isa cap;
      if (parse_isa(lower(env), &cap)) {
        c.cap = cap;
        c.capped = true;
      } else {
        d.error = std::string("EMBER_MAX_CPU_ISA='") + env +
                  "' names no ISA level; expected one of baseline, avx2, avx512, avx512_bf16, amx "
                  "(or oneDNN's names: sse41, avx512_core, avx512_core_bf16, avx512_core_amx, all)";
      }
    }
  }
  return d;
}

// vdpbf16ps's FLOP rate over vfmadd's on this core: best of 25 interleaved runs of ~10 us each
// (~1 ms in all), so a clock change or a neighbour on the host hits both alike.
double time_dot_to_fma() {
  using roofline::Unit;
  constexpr int64_t kTrips = 2048;
  double fma = 1e30, dot = 1e30;
  for (int i = 0; i < 25; ++i) {
    fma = std::min(fma, roofline::time_unit_on_this_thread(Unit::F32FmaAvx512, kTrips));
    dot = std::min(dot, roofline::time_unit_on_this_thread(Unit::Bf16DotAvx512, kTrips));
  }
  return (64.0 / dot) / (32.0 / fma);  // FLOP per instruction: 64 (16 lanes x 2 products x 2), 32
}

struct Bf16Choice {
  bool allowed = false;  // the units exist under the cap and EMBER_BF16_UNITS is not off
  bool pays = false;
  double ratio = 0;
  std::string error;
};

Bf16Choice choose_bf16() {
  Bf16Choice c;
  const char* env = std::getenv("EMBER_BF16_UNITS");
  const bool units = cpu_has(Isa::Avx512Bf16);
  if (env && *env) {
    std::string v = lower(env);
    if (v == "on" || v == "off") {
      c.pays = c.allowed = units && v == "on";
    } else {
      c.error = std::string("EMBER_BF16_UNITS='") + env + "' is neither on nor off";
    }
    return c;
  }
  if (!units) return c;
  c.allowed = true;
  if (cpu_has(Isa::Amx)) {
    c.pays = true;
    return c;
  }
  c.ratio = time_dot_to_fma();
  c.pays = c.ratio >= 0.75;
  return c;
}

const Bf16Choice& bf16_choice() {
  static const Bf16Choice c = choose_bf16();
  EMBER_CHECK_VALUE(c.error.empty(), c.error);
  return c;
}

const Detected& detected() {
  static const Detected d = detect();
  return d;
}

}  // namespace

const CpuInfo& cpu_info() {
  const Detected& d = detected();
  EMBER_CHECK_VALUE(d.error.empty(), d.error);
  return d.info;
}

bool cpu_has(Isa isa) { return static_cast<int>(cpu_info().effective()) >= static_cast<int>(isa); }

bool bf16_units_pay() { return bf16_choice().pays; }
bool bf16_units_allowed() { return bf16_choice().allowed; }
double bf16_dot_to_fma_ratio() { return bf16_choice().ratio; }

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Baseline: return "baseline";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    case Isa::Avx512Bf16: return "avx512_bf16";
    case Isa::Amx: return "amx";
  }
  return "?";
}

std::string cpu_summary() {
  const CpuInfo& c = cpu_info();
  std::string s = c.model + "; ISA " + isa_name(c.detected);
  if (c.capped && c.cap < c.detected) s += std::string(", capped at ") + isa_name(c.cap) + " by EMBER_MAX_CPU_ISA";
  return s;
}

}  // namespace cpu
}  // namespace ember
