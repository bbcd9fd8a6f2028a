// The Autograd fallback: ops without an Autograd kernel. A call reaches it only when an argument
// requires grad; in grad mode that is an error naming the op (never a silently missing
// gradient); otherwise the call goes on to the backend.
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/meta.h"
#include "ember/autograd/op_spec.h"
#include "ember/dispatch/library.h"

namespace ember {
namespace autograd {


namespace {
bool stack_requires_grad(const Stack& s) {
  for (const IValue& v : s) {
    if (v.is_tensor() && any_requires_grad(v.to_tensor())) return true;
    if (v.is_tensor_list())
      for (const Tensor& t : v.to_tensor_list())
        if (any_requires_grad(t)) return true;
  }
  return false;
}

void autograd_fallback(const OperatorHandle& op, Stack* stack) {
  EMBER_CHECK_T(NotImplementedError, !(is_grad_enabled() && stack_requires_grad(*stack)), op.name(),
                ": no autograd kernel is registered, and an input requires grad. Register one with "
                "EMBER_LIBRARY_IMPL(<ns>, Autograd, m) (see autograd/op_spec.h or autograd::Function), mark the op "
                "with m.impl_not_differentiable(...), or call it under NoGradGuard");
  ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
  op.call_boxed(stack);
}
}  // namespace

EMBER_LIBRARY_IMPL(_, Autograd, m) { m.fallback(KernelFunction::from_boxed(&autograd_fallback)); }

namespace {
void add_tensor_edges(const IValue& v, std::vector<Edge>& edges) {
  if (v.is_tensor()) edges.push_back(gradient_edge(v.to_tensor()));
  if (v.is_tensor_list())
    for (const Tensor& t : v.to_tensor_list()) edges.push_back(gradient_edge(t));
}
}  // namespace

void no_double_backward_kernel(const OperatorHandle& op, Stack* stack) {
  bool need = is_grad_enabled() && stack_requires_grad(*stack);
  std::vector<Edge> edges;
  if (need)
    for (const IValue& v : *stack) add_tensor_edges(v, edges);
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    op.call_boxed(stack);
  }
  if (!need) return;
  auto node = not_implemented_node(op.name() + ": double backward is not implemented. A gradient computed with "
                                   "create_graph=true went through this backward kernel, and differentiating that "
                                   "gradient again needs the kernel's own derivative");
  node->set_next_edges(std::move(edges));
  for (const IValue& v : *stack) {
    if (v.is_tensor() && v.to_tensor().defined() && v.to_tensor().is_floating_point()) set_history(v.to_tensor(), node);
  }
}

}  // namespace autograd
}  // namespace ember
