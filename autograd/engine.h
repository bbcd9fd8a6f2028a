// ember: the backward engine.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "ember/tensor/tensor.h"

namespace ember {
namespace autograd {

// Accumulates d(outputs)/d(leaf) into every leaf's .grad. grad_outputs[i] may be undefined
// (or omitted) for a one-element output, meaning ones. Without retain_graph the saved tensors
// are freed as nodes run, so a second backward through the same graph throws; retain_graph
// defaults to create_graph. create_graph: the gradients are computed with a graph of their own
// (the backward formulas are recorded), so they can be differentiated again (gradient
// penalties, Hessian-vector products); a formula that cannot be raises NotImplementedError when
// that second backward reaches it.
void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);

// Returns d(outputs)/d(inputs) without touching any .grad. An input the outputs do not depend
// on is an error unless allow_unused (then its gradient is undefined). libtorch's argument
// order; retain_graph and create_graph as in backward().
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false, bool allow_unused = false);

// From inside a backward pass (a hook, a node): cb runs once that pass has run every node, before
// backward() / grad() returns, on the thread that called it (torch's queue_callback; callbacks
// queued by callbacks run too). Outside a backward pass: ValueError.
void queue_callback(std::function<void()> cb);

// Zeroes (or, with set_to_none, drops) a leaf's .grad under the lock accumulation holds, so a
// backward pass on another thread never sees a half-reset gradient (Module/Optimizer::zero_grad).
void zero_grad(const Tensor& leaf, bool set_to_none);

// Reduces a broadcast gradient to shape (sums the broadcast dims); throws ShapeError if g
// cannot be a broadcast of shape.
Tensor sum_to(const Tensor& g, IntArrayRef shape);

}  // namespace autograd
}  // namespace ember
