// ember: the backward engine.
#pragma once

#include <functional>
#include <vector>

#include "ember/tensor/tensor.h"

namespace ember {
namespace autograd {

// Accumulates d(outputs)/d(leaf) into every leaf's .grad. grad_outputs[i] may be undefined
// (or omitted) for a one-element output, meaning ones. Without retain_graph the saved tensors
// are freed as nodes run, so a second backward through the same graph throws.
void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs = {},
              bool retain_graph = false);

// Returns d(outputs)/d(inputs) without touching any .grad. An input the outputs do not depend
// on is an error unless allow_unused (then its gradient is undefined).
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false,
                         bool allow_unused = false);

// From inside a backward pass (a hook, a node): cb runs once that pass has run every node, before
// backward() / grad() returns, on the thread that called it (torch's queue_callback; callbacks
// queued by callbacks run too). Outside a backward pass: ValueError.
void queue_callback(std::function<void()> cb);

// Reduces a broadcast gradient to shape (sums the broadcast dims); throws ShapeError if g
// cannot be a broadcast of shape.
Tensor sum_to(const Tensor& g, IntArrayRef shape);

}  // namespace autograd
}  // namespace ember
