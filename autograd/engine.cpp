// The engine (PyTorch's semantics): dependency counts from the roots, a ready queue ordered by
// reverse creation (sequence_nr), gradients summed per node input, every gradient validated
// against the shape/dtype/device its consumer expects (broadcast dims reduced, dtype/device
// converted), leaves accumulated, saved tensors freed unless retain_graph.
#include "ember/autograd/engine.h"

#include <map>
#include <optional>
#include <queue>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/meta.h"
#include "ember/device/profiler.h"

namespace ember {
namespace autograd {

Tensor sum_to(const Tensor& g, IntArrayRef shape) {
  IntArrayRef gs = g.sizes();
  if (gs == shape) return g;
  EMBER_CHECK_SHAPE(gs.size() >= shape.size(), "sum_to: gradient of shape ", gs, " cannot be reduced to ", shape);
  size_t lead = gs.size() - shape.size();
  Shape dims;
  for (size_t d = 0; d < gs.size(); ++d) {
    if (d < lead) {
      dims.push_back(static_cast<int64_t>(d));
    } else if (shape[d - lead] == 1 && gs[d] != 1) {
      dims.push_back(static_cast<int64_t>(d));
    } else {
      EMBER_CHECK_SHAPE(shape[d - lead] == gs[d], "sum_to: gradient of shape ", gs, " cannot be reduced to ", shape);
    }
  }
  Tensor r = dims.empty() ? g : g.sum(dims, true);
  return r.view(shape);
}

namespace {

struct NodeHash {
  size_t operator()(const Node* n) const { return std::hash<const Node*>()(n); }
};

// Validates a gradient for the consumer `edge` expects; converts dtype/device, reduces
// broadcasting.
Tensor validate(const Node& producer, size_t index, Tensor g, const Edge& edge) {
  const TensorMeta& want = edge.fn->input_meta(edge.input_nr);
  if (IntArrayRef(want.sizes) != g.sizes()) {
    bool ok = true;
    try {
      g = sum_to(g, want.sizes);
    } catch (const ShapeError&) {
      ok = false;
    }
    EMBER_CHECK_SHAPE(ok, "Function ", producer.name(), " returned an invalid gradient at index ", index, " - got ",
                      g.sizes(), " but expected shape compatible with ", IntArrayRef(want.sizes));
  }
  if (g.dtype() != want.dtype || g.device() != want.device) g = g.to(want.device, want.dtype);
  return g;
}

struct GraphTask {
  bool retain_graph = false;
  bool create_graph = false;          // run the formulas in grad mode: gradients with a graph
  bool capture_mode = false;          // autograd::grad
  std::map<std::pair<Node*, uint32_t>, size_t> captures;  // (node, input_nr) -> output slot
  std::vector<Tensor> captured;
  std::unordered_set<Node*, NodeHash> needed;  // capture mode: nodes on a path to a capture
  std::unordered_map<Node*, int, NodeHash> deps;
  std::unordered_map<Node*, std::vector<Tensor>, NodeHash> buffers;
  std::unordered_map<Node*, std::shared_ptr<Node>, NodeHash> keep;  // keeps nodes alive while queued
};

void accumulate(std::vector<Tensor>& buf, size_t i, Tensor g) {
  if (!g.defined()) return;
  if (!buf[i].defined()) {
    buf[i] = std::move(g);
  } else {
    buf[i] = buf[i].add(g);  // out of place: either tensor may be shared
  }
}

// Post-order marking of the nodes from which a capture target can be reached.
bool mark_needed(Node* n, GraphTask& t, std::unordered_map<Node*, bool, NodeHash>& memo) {
  auto it = memo.find(n);
  if (it != memo.end()) return it->second;
  memo[n] = false;  // the graph is a DAG; guards nothing but keeps the walk finite
  bool need = false;
  for (const auto& c : t.captures)
    if (c.first.first == n) need = true;
  for (const Edge& e : n->next_edges())
    if (e.valid() && mark_needed(e.fn.get(), t, memo)) need = true;
  memo[n] = need;
  if (need) t.needed.insert(n);
  return need;
}

// Dependencies over the reachable (and, for grad(), needed) graph.
void count_dependencies(GraphTask& t, const std::vector<Edge>& roots) {
  std::vector<Node*> stack;
  std::unordered_set<Node*, NodeHash> seen;
  for (const Edge& e : roots) {
    t.keep[e.fn.get()] = e.fn;
    if (seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    if (t.capture_mode && !t.needed.count(n)) continue;
    for (const Edge& e : n->next_edges()) {
      if (!e.valid()) continue;
      if (t.capture_mode && !t.needed.count(e.fn.get())) continue;
      t.deps[e.fn.get()]++;
      if (seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
    }
  }
}

// n's gradient inputs after its pre-hooks. For grad(), records the inputs it captures and says
// whether n needs to run at all (it leads on to a needed node).
bool prepare_inputs(GraphTask& t, Node* n, std::vector<Tensor>& inputs) {
  inputs.resize(n->num_inputs());
  for (const auto& [nr, hook] : n->pre_hooks()) {
    if (nr < inputs.size() && inputs[nr].defined()) {
      Tensor r = hook(inputs[nr]);
      if (r.defined()) inputs[nr] = r;
    }
  }
  if (!t.capture_mode) return true;
  for (uint32_t i = 0; i < inputs.size(); ++i) {
    auto c = t.captures.find({n, i});
    if (c != t.captures.end()) t.captured[c->second] = inputs[i];
  }
  if (!t.needed.count(n) || dynamic_cast<AccumulateGrad*>(n)) return false;
  bool leads_on = false;
  for (const Edge& e : n->next_edges()) leads_on |= e.valid() && t.needed.count(e.fn.get()) > 0;
  return leads_on;
}

// Hands n's outputs to the nodes they feed; calls ready(target) for each whose dependencies are met.
template <class Ready>
void route_outputs(GraphTask& t, Node& n, std::vector<Tensor> outputs, Ready ready) {
  const auto& edges = n.next_edges();
  EMBER_ASSERT(outputs.empty() || outputs.size() == edges.size(), n.name(), " returned ", outputs.size(),
               " gradients for ", edges.size(), " inputs");
  for (size_t i = 0; i < edges.size(); ++i) {
    const Edge& e = edges[i];
    if (!e.valid()) continue;
    if (t.capture_mode && !t.needed.count(e.fn.get())) continue;
    Node* target = e.fn.get();
    if (i < outputs.size() && outputs[i].defined()) {
      auto& buf = t.buffers[target];
      buf.resize(target->num_inputs());
      accumulate(buf, e.input_nr, validate(n, i, std::move(outputs[i]), e));
    }
    t.keep[target] = e.fn;
    if (--t.deps[target] == 0) ready(target);
  }
}

bool grads_have_graph(const std::vector<Tensor>& grads) {
  for (const Tensor& g : grads)
    if (any_requires_grad(g)) return true;
  return false;
}

// create_graph: n received gradients with a graph, so the gradients it returns depend on them.
// One that comes back without a graph was computed off it (a kernel called below autograd, a
// host loop): differentiating it again would silently miss terms, so it gets a node that raises
// instead, linked to n's inputs so that a later backward towards them reaches it.
void guard_off_graph(Node& n, std::vector<Tensor>& outputs) {
  if (dynamic_cast<AccumulateGrad*>(&n)) return;
  std::shared_ptr<Node> guard;
  for (Tensor& o : outputs) {
    if (!o.defined() || o.requires_grad() || !o.is_floating_point()) continue;
    if (!guard) {
      guard = not_implemented_node(n.name() + ": its backward computed a gradient without recording it (create_graph="
                                   "true), so that gradient cannot be differentiated again (double backward is not "
                                   "implemented for it). Write the backward with differentiable ops");
      guard->set_next_edges(n.next_edges());
    }
    o = Tensor(IntrusivePtr<TensorImpl>::make(o.impl()->storage(), o.dtype(), o.sizes(), o.strides(),
                                              o.storage_offset()));
    set_history(o, guard);
  }
}

// The callbacks of the backward passes running on this thread, innermost last.
thread_local std::vector<std::vector<std::function<void()>>> tls_callbacks;

void execute_graph(GraphTask& t, const std::vector<Edge>& roots, std::vector<Tensor> root_grads);

void execute(GraphTask& t, const std::vector<Edge>& roots, std::vector<Tensor> root_grads) {
  tls_callbacks.emplace_back();
  struct Pop {
    ~Pop() { tls_callbacks.pop_back(); }
  } pop;
  execute_graph(t, roots, std::move(root_grads));
  for (size_t i = 0; i < tls_callbacks.back().size(); ++i) {
    std::function<void()> cb = std::move(tls_callbacks.back()[i]);  // (may queue more)
    cb();
  }
}

void execute_graph(GraphTask& t, const std::vector<Edge>& roots, std::vector<Tensor> root_grads) {
  count_dependencies(t, roots);
  auto cmp = [](Node* a, Node* b) { return a->sequence_nr() < b->sequence_nr(); };
  std::priority_queue<Node*, std::vector<Node*>, decltype(cmp)> ready(cmp);
  for (size_t i = 0; i < roots.size(); ++i) {
    Node* n = roots[i].fn.get();
    auto& buf = t.buffers[n];
    buf.resize(n->num_inputs());
    accumulate(buf, roots[i].input_nr, std::move(root_grads[i]));
  }
  std::unordered_set<Node*, NodeHash> queued;
  for (const Edge& e : roots) {
    Node* n = e.fn.get();
    if (t.deps[n] == 0 && queued.insert(n).second) ready.push(n);
  }

  // Formulas run without recording, unless the gradients are to be differentiated again.
  std::optional<NoGradGuard> no_grad;
  std::optional<AutoGradMode> grad_mode;
  if (t.create_graph) {
    grad_mode.emplace(true);
  } else {
    no_grad.emplace();
  }
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    std::vector<Tensor> inputs = std::move(t.buffers[n]);
    t.buffers.erase(n);
    if (!prepare_inputs(t, n, inputs)) continue;
    std::shared_ptr<Node> hold = n->shared_from_this();
    std::vector<Tensor> outputs;
    {
      // The profiler links a backward node to its forward op by the node's sequence number.
      profiler::detail::Scope scope("autograd", profiler::detail::enabled() ? n->name() : std::string(), std::string(),
                                    static_cast<int64_t>(n->sequence_nr()));
      bool graph_in = t.create_graph && grads_have_graph(inputs);
      outputs = n->apply(std::move(inputs));
      if (graph_in) guard_off_graph(*n, outputs);
    }
    if (!t.retain_graph) n->release_variables();
    route_outputs(t, *n, std::move(outputs), [&](Node* target) { ready.push(target); });
  }
}

std::vector<Edge> root_edges(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
                             std::vector<Tensor>* grads) {
  EMBER_CHECK_VALUE(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "backward: got ", outputs.size(),
                    " outputs but ", grad_outputs.size(), " grad_outputs");
  std::vector<Edge> roots;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    EMBER_CHECK_VALUE(out.defined(), "backward: output ", i, " is undefined");
    Edge e = gradient_edge(out);
    EMBER_CHECK(e.valid(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    Tensor g = grad_outputs.empty() ? Tensor() : grad_outputs[i];
    if (!g.defined()) {
      EMBER_CHECK_VALUE(out.numel() == 1, "backward: grad can be implicitly created only for scalar outputs, but output ",
                        i, " has shape ", out.sizes());
      g = out.detach().clone();
      g.fill_(1);
    } else {
      EMBER_CHECK_SHAPE(g.sizes() == out.sizes(), "backward: grad_output ", i, " has shape ", g.sizes(),
                        " but the output has shape ", out.sizes());
    }
    roots.push_back(e);
    grads->push_back(g);
  }
  return roots;
}

}  // namespace

void queue_callback(std::function<void()> cb) {
  EMBER_CHECK_VALUE(!tls_callbacks.empty(), "queue_callback: no backward pass is running on this thread");
  tls_callbacks.back().push_back(std::move(cb));
}

void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
              std::optional<bool> retain_graph, bool create_graph) {
  std::vector<Tensor> grads;
  std::vector<Edge> roots = root_edges(outputs, grad_outputs, &grads);
  GraphTask t;
  t.retain_graph = retain_graph.value_or(create_graph);
  t.create_graph = create_graph;
  execute(t, roots, std::move(grads));
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph, bool create_graph,
                         bool allow_unused) {
  std::vector<Tensor> grads;
  std::vector<Edge> roots = root_edges(outputs, grad_outputs, &grads);
  GraphTask t;
  t.retain_graph = retain_graph.value_or(create_graph);
  t.create_graph = create_graph;
  t.capture_mode = true;
  t.captured.resize(inputs.size());
  std::vector<Edge> targets;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Edge e = gradient_edge(inputs[i]);
    EMBER_CHECK(e.valid(), "grad: input ", i, " does not require grad");
    t.captures[{e.fn.get(), e.input_nr}] = i;
    targets.push_back(e);  // keeps accumulators alive during the pass
  }
  std::unordered_map<Node*, bool, NodeHash> memo;
  for (const Edge& r : roots) mark_needed(r.fn.get(), t, memo);
  execute(t, roots, std::move(grads));
  for (size_t i = 0; i < inputs.size(); ++i) {
    EMBER_CHECK(allow_unused || t.captured[i].defined(), "grad: one of the differentiated tensors (input ", i,
                ") appears to not have been used in the graph; pass allow_unused=true if this is intended");
  }
  return t.captured;
}

}  // namespace autograd
}  // namespace ember
