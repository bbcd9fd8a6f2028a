// ember: gradient checking against finite differences, in float64.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ember/tensor/tensor.h"

namespace ember {
namespace autograd {

struct GradcheckResult {
  bool ok = true;
  std::string message;  // the first mismatch, with input, element and both values
};

// Compares d fn(inputs) / d inputs from autograd with central differences for every input that
// requires grad (float64 tensors). Small problems compare the full Jacobian; large ones
// compare directional derivatives along random directions (as PyTorch's fast mode).
// Mismatch: |analytic - numeric| > atol + rtol * |numeric|.
GradcheckResult gradcheck_detailed(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                                   const std::vector<Tensor>& inputs, double eps = 1e-6, double atol = 1e-5,
                                   double rtol = 1e-3);
bool gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
               double eps = 1e-6, double atol = 1e-5, double rtol = 1e-3);

}  // namespace autograd
}  // namespace ember
