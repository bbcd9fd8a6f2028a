// ember: per-tensor autograd state, kept in TensorImpl's autograd slot.
#pragma once

#include <memory>
#include <vector>

#include "ember/autograd/node.h"

namespace ember {
namespace autograd {

struct AutogradMeta final : AutogradMetaInterface {
  bool requires_grad = false;  // set by the user on leaves
  Tensor grad;
  std::shared_ptr<Node> grad_fn;             // non-leaves
  std::weak_ptr<Node> grad_accumulator;      // leaves (weak: the node holds the leaf)
  uint32_t output_nr = 0;
  bool retains_grad = false;
  std::shared_ptr<Tensor> retained_grad;     // non-leaf .grad after retain_grad()
  std::vector<GradHook> leaf_hooks;          // register_hook on a leaf
  // Views recorded by autograd: their base (see Note [In-place on views]).
  bool is_view = false;
  Tensor view_base;
};

AutogradMeta* get_meta(const Tensor& t);      // nullptr if none
AutogradMeta& materialize_meta(const Tensor& t);

// Note [In-place on views]
// An in-place op on a view of a tensor that requires grad (or on a view that itself requires
// grad) would need the base's history rewritten (PyTorch's CopySlices); ember rejects it with an
// error naming the op instead of computing a wrong gradient. In-place ops on views of tensors
// that do not require grad, and on non-view non-leaf tensors, are supported.
void check_inplace(const char* op, const Tensor& self);

}  // namespace autograd
}  // namespace ember
