// What EMBER_MAX_CPU_ISA does, checked in a process of its own (the variable is read once).
// CTest runs it with the variable set (tests/CMakeLists.txt):
//   isa_cap_check invalid   the value names no level: every GEMM entry point reports it as a
//                           ValueError naming the variable and the value; nothing crashes.
//   isa_cap_check <level>   the cap is <level>: ember uses no more than it, hands it to oneDNN
//                           when oneDNN has no cap of its own, runs bf16 natively only at
//                           avx512_bf16 and above, and bf16 matmul on cpu and npu:0 still agrees
//                           with a float64 reference.
//   isa_cap_check bf16_units_off|bf16_units_on   run with EMBER_BF16_UNITS=off / on: off stages
//                           bf16 GEMMs through fp32 on any CPU, on runs them on the bf16 units
//                           wherever the CPU has them (no timing either way); both still agree
//                           with float64.
//   isa_cap_check bf16_units_bad   EMBER_BF16_UNITS=maybe: a ValueError naming the variable.
#include <cstdlib>
#include <iostream>
#include <string>

#include <ember/device/cpu/gemm.h>
#include <ember/device/cpu/isa.h>
#include <ember/ember.h>

using namespace ember;
using cpu::Isa;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::cout << (ok ? "ok:   " : "FAIL: ") << what << "\n";
  if (!ok) ++failures;
}

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

int check_invalid() {
  const std::string value = std::getenv("EMBER_MAX_CPU_ISA") ? std::getenv("EMBER_MAX_CPU_ISA") : "";
  auto throws_naming_value = [&](auto fn) {
    try {
      fn();
    } catch (const ValueError& e) {
      std::string msg = e.what();
      return msg.find("EMBER_MAX_CPU_ISA='" + value + "'") != std::string::npos && msg.find("avx2") != std::string::npos;
    }
    return false;
  };
  expect(throws_naming_value([] { cpu::cpu_info(); }), "cpu_info() throws a ValueError naming the value");
  Tensor x = ones({64, 64}, kBFloat16);
  expect(throws_naming_value([&] { x.matmul(x); }), "a bf16 matmul on cpu throws the same ValueError");
  expect(throws_naming_value([&] { x.to(Device("npu:0")).matmul(x.to(Device("npu:0"))).cpu(); }),
         "a bf16 matmul on npu:0 throws the same ValueError");
  return failures ? 1 : 0;
}

// bf16 products still right on either device (inputs rounded to bf16, fp32 accumulation).
int bf16_products_right() {
  manual_seed(3);
  Tensor a = randn({300, 257}, kFloat64), b = randn({257, 190}, kFloat64);
  Tensor ab = a.to(kBFloat16), bb = b.to(kBFloat16);
  Tensor ref = ab.to(kFloat64).matmul(bb.to(kFloat64));
  expect(allclose(ab.matmul(bb).to(kFloat64), ref, 8e-3, 0.1), "bf16 matmul on cpu agrees with float64");
  Device npu("npu:0");
  expect(allclose(ab.to(npu).matmul(bb.to(npu)).cpu().to(kFloat64), ref, 8e-3, 0.1),
         "bf16 matmul on npu:0 agrees with float64");
  return failures ? 1 : 0;
}

int check_level(const std::string& level) {
  const cpu::CpuInfo& ci = cpu::cpu_info();
  std::cout << "cpu: " << cpu::cpu_summary() << "\noneDNN: " << cpu::onednn_isa() << "\n";
  expect(ci.capped && level == cpu::isa_name(ci.cap), std::string("the cap reads as ") + level);
  expect(ci.effective() == std::min(ci.detected, ci.cap), "ember uses min(detected, cap)");
  if (ci.cap < Isa::Avx512Bf16)
    expect(!cpu::gemm_native_bf16(), "bf16 GEMM is staged through fp32 below avx512_bf16");
  // The cap reaches oneDNN unless oneDNN was given its own.
  if (cpu::onednn_isa() != "none" && !env_set("ONEDNN_MAX_CPU_ISA") && !env_set("DNNL_MAX_CPU_ISA") && ci.detected >= ci.cap) {
    const char* want = ci.cap == Isa::Avx2 ? "avx2" : ci.cap == Isa::Avx512 ? "avx512_core" : nullptr;
    if (want) expect(cpu::onednn_isa() == want, std::string("oneDNN's ISA is ") + want + " (it reports " + cpu::onednn_isa() + ")");
  }
  return bf16_products_right();
}

int check_bf16_units(const std::string& mode) {
  if (mode == "bf16_units_bad") {
    bool named = false;
    try {
      cpu::bf16_units_pay();
    } catch (const ValueError& e) {
      named = std::string(e.what()).find("EMBER_BF16_UNITS='maybe'") != std::string::npos;
    }
    expect(named, "bf16_units_pay() throws a ValueError naming EMBER_BF16_UNITS='maybe'");
    return failures ? 1 : 0;
  }
  const bool on = mode == "bf16_units_on";
  expect(cpu::bf16_units_pay() == (on && cpu::cpu_has(Isa::Avx512Bf16)),
         std::string("EMBER_BF16_UNITS=") + (on ? "on" : "off") + " decides, without a timing");
  expect(cpu::bf16_dot_to_fma_ratio() == 0, "nothing was timed");
  if (!on) expect(!cpu::gemm_native_bf16(), "bf16 GEMMs are not native");
  return bf16_products_right();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: isa_cap_check invalid|<level>|bf16_units_off|bf16_units_on|bf16_units_bad\n";
    return 2;
  }
  std::string mode = argv[1];
  int rc = mode == "invalid"                  ? check_invalid()
           : mode.rfind("bf16_units", 0) == 0 ? check_bf16_units(mode)
                                              : check_level(mode);
  std::cout << (rc ? "isa_cap_check: FAILED\n" : "isa_cap_check: passed\n");
  return rc;
}
