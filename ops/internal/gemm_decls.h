// ember (internal): the declarations of the GEMM ops that autocast's rounded-GEMM path names
// (nn/amp/autocast.cpp) besides their own files (ops/matmul.cpp, ops/linear.cpp).
#pragma once

#include "ember/dispatch/op_decl.h"

namespace ember::op {
EMBER_DECLARE_OP(mm, Lower, "ember::mm(Tensor self, Tensor mat2) -> Tensor", Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(matmul, Lower, "ember::matmul(Tensor self, Tensor other) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(linear, Lower, "ember::linear(Tensor input, Tensor weight) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(linear_bias, Lower, "ember::linear.bias(Tensor input, Tensor weight, Tensor bias) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&));
}  // namespace ember::op
