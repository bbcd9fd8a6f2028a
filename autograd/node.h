// ember: the autograd graph. A Node is the backward of one recorded call; its edges point at the
// nodes of the call's inputs (grad_fn of a non-leaf, AccumulateGrad of a leaf).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/tensor/tensor.h"

namespace ember {
namespace autograd {

class Node;

struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return fn != nullptr; }
};

// Shape/dtype/device a gradient must have (one per forward output of a node).
struct TensorMeta {
  DimVector sizes;
  DType dtype = DType::Float32;
  Device device;
  TensorMeta() = default;
  explicit TensorMeta(const Tensor& t) : sizes(t.sizes()), dtype(t.dtype()), device(t.device()) {}
};

using GradHook = std::function<Tensor(const Tensor&)>;

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // "MulBackward", "AccumulateGrad", ...
  virtual std::string name() const = 0;
  // grads[i] is the gradient of forward output i (undefined = zero); returns one gradient per
  // next edge (undefined = no contribution).
  virtual std::vector<Tensor> apply(std::vector<Tensor>&& grads) = 0;
  // Frees saved tensors after a backward pass without retain_graph.
  virtual void release_variables() {}

  // Reverse creation order decides which ready node runs first.
  uint64_t sequence_nr() const { return sequence_nr_; }
  const std::vector<Edge>& next_edges() const { return next_edges_; }
  std::vector<Edge>& mutable_next_edges() { return next_edges_; }
  void set_next_edges(std::vector<Edge> e) { next_edges_ = std::move(e); }

  // Metadata of the forward outputs (the gradients this node receives).
  uint32_t add_input_meta(const Tensor& t) {
    input_meta_.emplace_back(t);
    return static_cast<uint32_t>(input_meta_.size() - 1);
  }
  size_t num_inputs() const { return input_meta_.size(); }
  const TensorMeta& input_meta(size_t i) const { return input_meta_[i]; }

  // Hooks on the gradient of forward output `output_nr` (Tensor::register_hook on a non-leaf,
  // retain_grad); they run before apply.
  void add_pre_hook(uint32_t output_nr, GradHook hook) { pre_hooks_.emplace_back(output_nr, std::move(hook)); }
  const std::vector<std::pair<uint32_t, GradHook>>& pre_hooks() const { return pre_hooks_; }

 private:
  uint64_t sequence_nr_;
  std::vector<Edge> next_edges_;
  std::vector<TensorMeta> input_meta_;
  std::vector<std::pair<uint32_t, GradHook>> pre_hooks_;
};

// A tensor kept for backward. Holds an alias of the data (same storage, so the same version
// counter) and the version at save time; unpacking a tensor modified in place since, or after
// the graph was freed, throws with the node's name.
class SavedTensor {
 public:
  SavedTensor() = default;
  // A tensor a node keeps for its backward: an input of the node, or (is_output) one of its own
  // outputs, `node` being the node and `output_nr` the output's index.
  explicit SavedTensor(const Tensor& t);
  SavedTensor(const Tensor& t, const std::shared_ptr<Node>& node, uint32_t output_nr);
  bool defined() const { return saved_; }
  // The saved value. In grad mode (a backward with create_graph) it comes back with its place in
  // the graph: a saved input is the input itself, a saved output is an output of its node, so a
  // formula written with differentiable ops is recorded and can be differentiated again.
  Tensor unpack(const char* node_name) const;
  void release() {
    data_ = Tensor();
    original_ = Tensor();
    released_ = true;
  }

 private:
  Tensor data_;      // an alias without autograd state
  Tensor original_;  // a saved input that requires grad (none for outputs: that would be a cycle)
  std::weak_ptr<Node> node_;  // a saved output's node (weak: the node holds this)
  uint32_t output_nr_ = 0;
  uint32_t version_ = 0;
  bool saved_ = false;
  bool released_ = false;
};

// The sink of a leaf: runs the leaf's hooks and accumulates into leaf.grad.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(const Tensor& leaf);
  std::string name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

// A node recorded where a derivative is missing (a backward kernel without one, a formula that
// computed a gradient off the graph under create_graph): a backward that reaches it raises
// NotImplementedError with `message`. Its name is "NotImplemented".
std::shared_ptr<Node> not_implemented_node(std::string message);

// Graph plumbing used by autograd kernels.
bool any_requires_grad(const Tensor& t);
// The edge a gradient for t flows into (its grad_fn, its AccumulateGrad, or invalid).
Edge gradient_edge(const Tensor& t);
// Makes fn the grad_fn of out (which becomes a non-leaf requiring grad).
void set_history(const Tensor& out, const std::shared_ptr<Node>& fn);

}  // namespace autograd
}  // namespace ember
