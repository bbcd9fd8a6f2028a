// ember: operator schemas, e.g. "add(Tensor self, Tensor other, Scalar alpha=1) -> Tensor".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ember/dispatch/ivalue.h"

namespace ember {

enum class ArgType : uint8_t {
  Tensor, OptionalTensor, TensorList, Int, OptionalInt, Float, OptionalFloat, Bool, IntList,
  Str, Scalar, OptionalScalar, DType, OptionalDType, Device,
};

// The schema spelling ("Tensor?", "int[]") and the canonical C++ parameter type of a kernel
// ("const std::optional<Tensor>&", "IntArrayRef").
const char* arg_type_name(ArgType t);
const char* arg_type_cpp(ArgType t);
// The C++ type an op returning t returns ("Tensor", "int64_t", ...), or "?" when t cannot be returned.
const char* return_type_cpp(ArgType t);

// What autocast does with an op's floating inputs (Note [Autocast policies] in nn/amp/autocast.h):
// Keep: nothing; Lower: float32 ones run in the autocast dtype; Float32: float16/bfloat16 ones
// run in float32; Promote: all run in the widest dtype among them.
enum class AmpPolicy : uint8_t { Keep, Lower, Float32, Promote };

struct Argument {
  std::string name;
  ArgType type;
  std::optional<IValue> default_value;
  bool is_mutable = false;  // Tensor(a!): written in place
};

struct FunctionSchema {
  std::string ns;        // "ember"
  std::string name;      // "add"
  std::string overload;  // "Scalar" for "add.Scalar", else empty
  std::vector<Argument> arguments;
  std::vector<Argument> returns;
  // The op writes one value to every element of its written-to tensors (fill_, zero_), so one whose
  // elements alias each other (an expanded view) is allowed, as PyTorch allows it for these.
  bool writes_idempotent = false;
  AmpPolicy amp = AmpPolicy::Keep;  // the op's autocast policy

  std::string full_name() const;  // "ember::add.Scalar"
  std::string str() const;        // the schema as text
  // Canonical C++ kernel signature, e.g. "Tensor (const Tensor&, const Tensor&, const Scalar&)".
  std::string cpp_signature() const;
  // Checks a boxed argument against this schema's argument i; throws TypeError naming the op.
  void check_argument(size_t i, const IValue& v) const;
};

// Parses "name[.overload](args) -> returns" for namespace ns; throws TypeError with the position
// and what was expected on malformed input.
FunctionSchema parse_schema(const std::string& ns, const std::string& text);

}  // namespace ember
