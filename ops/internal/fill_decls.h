// ember (internal to ops/): the declarations of ops/fill.cpp's ops that other op files call.
#pragma once

#include "ember/dispatch/op_decl.h"

namespace ember::op {
EMBER_DECLARE_OP(arange_fill_, Keep, "ember::arange_fill_(Tensor(a!) self, Scalar start, Scalar step) -> Tensor(a!)",
                 Tensor(const Tensor&, const Scalar&, const Scalar&));
EMBER_DECLARE_OP(normal_, Keep,
                 "ember::normal_(Tensor(a!) self, float mean=0, float std=1, int seed=0, "
                 "int offset=0) -> Tensor(a!)",
                 Tensor(const Tensor&, double, double, int64_t, int64_t));
EMBER_DECLARE_OP(random_, Keep,
                 "ember::random_(Tensor(a!) self, int low, int high, int seed=0, "
                 "int offset=0) -> Tensor(a!)",
                 Tensor(const Tensor&, int64_t, int64_t, int64_t, int64_t));
EMBER_DECLARE_OP(randperm_fill_, Keep, "ember::randperm_fill_(Tensor(a!) self, int seed=0, int offset=0) -> Tensor(a!)",
                 Tensor(const Tensor&, int64_t, int64_t));
EMBER_DECLARE_OP(uniform_, Keep,
                 "ember::uniform_(Tensor(a!) self, float from=0, float to=1, int seed=0, "
                 "int offset=0) -> Tensor(a!)",
                 Tensor(const Tensor&, double, double, int64_t, int64_t));
}  // namespace ember::op
