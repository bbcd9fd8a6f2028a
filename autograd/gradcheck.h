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

// Second derivatives (PyTorch's gradgradcheck): gradcheck, with respect to the inputs and to v,
// of w . (v^T J(inputs)), fn's vector-Jacobian product computed with create_graph and projected
// on fixed random weights w (v and w: fixed random float64 tensors). Passing needs every backward formula on the way
// to be differentiable; one that is not raises NotImplementedError ("double backward is not
// implemented").
GradcheckResult gradgradcheck_detailed(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                                       const std::vector<Tensor>& inputs, double eps = 1e-6, double atol = 1e-5,
                                       double rtol = 1e-3);
bool gradgradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
                   double eps = 1e-6, double atol = 1e-5, double rtol = 1e-3);

}  // namespace autograd
}  // namespace ember
