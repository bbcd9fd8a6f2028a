// ember: per-op sample inputs and float64 references for the conformance tests.
//
// Each op file declares, next to its kernels, the inputs its tests run (shapes, dtypes, value
// ranges, non-contiguous and broadcast cases) and a reference computed independently of the
// kernels in float64 (naive index loops, see reference.h). tests/test_conformance.cpp walks the
// dispatcher's registry and fails on any op without an OpInfo.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ember/dispatch/ivalue.h"
#include "ember/dispatch/library.h"

namespace ember {
namespace testing {

struct Sample {
  Stack args;        // boxed arguments; tensors on the CPU in the sample's dtype
  std::string desc;  // what the case covers, e.g. "broadcast [3,1] x [4]"
};

struct OpInfo {
  std::string name;  // "ember::add"
  // dtypes the samples are generated in (floating ops: f32, f64, f16, bf16).
  std::vector<DType> dtypes{DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
  std::function<std::vector<Sample>(DType)> samples;
  // Outputs for the float64 version of a sample (floating tensors converted to float64).
  std::function<Stack(const Stack&)> reference;
  // Multiplies the dtype tolerance (e.g. long accumulations).
  double tol_scale = 1.0;
  // For ops whose output is exactly determined (views, copies, comparisons on exact inputs).
  bool exact = false;
  // The op writes into argument 0 and returns it (in-place); the test checks aliasing and version.
  bool inplace = false;
  // The result is a view of argument 0 (shares its storage).
  bool view = false;
};

void register_op_info(OpInfo info);
const OpInfo* find_op_info(const std::string& name);
std::vector<const OpInfo*> all_op_infos();

struct OpInfoRegistrar {
  OpInfoRegistrar(const char* name, void (*fn)(OpInfo&));
};

}  // namespace testing
}  // namespace ember

// EMBER_OP_INFO("ember::add", info) { info.samples = ...; info.reference = ...; }
#define EMBER_OP_INFO_UID(name, info, uid)                                                   \
  static void uid(::ember::testing::OpInfo&);                                                \
  static const ::ember::testing::OpInfoRegistrar EMBER_CONCAT(uid, _reg)(name, &uid);        \
  static void uid(::ember::testing::OpInfo& info)
#define EMBER_OP_INFO(name, info) EMBER_OP_INFO_UID(name, info, EMBER_CONCAT(ember_op_info_, __COUNTER__))
