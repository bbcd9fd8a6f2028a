#include "ember/dispatch/library.h"

namespace ember {

Library::Library(Kind kind, std::string ns, DispatchKey key, const char* file, int line)
    : kind_(kind), ns_(std::move(ns)), key_(key), file_(file ? file : ""), line_(line) {}

Library::~Library() {
  if (keep_) return;
  for (auto it = ids_.rbegin(); it != ids_.rend(); ++it) Dispatcher::singleton().deregister(*it);
}

std::string Library::where() const {
  std::string f = file_;
  auto slash = f.rfind('/');
  if (slash != std::string::npos) f = f.substr(slash + 1);
  return f.empty() ? std::string("(run-time Library)") : f + ":" + std::to_string(line_);
}

std::string Library::qualify(const std::string& name) const {
  std::string n = name;
  // strip whitespace
  while (!n.empty() && n.back() == ' ') n.pop_back();
  if (n.find("::") != std::string::npos) return n;
  return ns_ + "::" + n;
}

Library& Library::def(const std::string& schema) { return def(schema, {}); }

Library& Library::def(const std::string& schema, std::initializer_list<OpTag> tags) {
  bool idempotent = false;
  AmpPolicy amp = AmpPolicy::Keep;
  for (OpTag t : tags) {
    if (t == OpTag::WritesIdempotent) idempotent = true;
    if (t == OpTag::AutocastLower) amp = AmpPolicy::Lower;
    if (t == OpTag::AutocastFloat32) amp = AmpPolicy::Float32;
    if (t == OpTag::AutocastPromote) amp = AmpPolicy::Promote;
  }
  return def_schema(schema, idempotent, amp);
}

Library& Library::def_schema(const std::string& schema, bool writes_idempotent, AmpPolicy amp) {
  EMBER_CHECK_VALUE(kind_ == Kind::Def, "Library(", ns_, "): def() is only allowed in EMBER_LIBRARY blocks");
  FunctionSchema s = parse_schema(ns_, schema);
  s.writes_idempotent = writes_idempotent;
  s.amp = amp;
  uint64_t id = Dispatcher::singleton().register_schema(std::move(s), where());
  if (id) ids_.push_back(id);
  return *this;
}

Library& Library::impl_for(DispatchKey key, const std::string& name, KernelFunction kernel) {
  EMBER_CHECK_VALUE(key != DispatchKey::Undefined, "Library(", ns_, ")::impl('", name,
                    "'): no dispatch key; use EMBER_LIBRARY_IMPL(ns, Key, m) or impl(name, key, fn)");
  EMBER_CHECK_VALUE(ns_ != "_", "Library(_): only fallback() is allowed for namespace _");
  kernel.debug = where();
  uint64_t id = Dispatcher::singleton().register_kernel(qualify(name), key, std::move(kernel));
  if (id) ids_.push_back(id);
  return *this;
}

Library& Library::impl_boxed(const std::string& name, BoxedKernel fn) {
  return impl_for(key_, name, KernelFunction::from_boxed(std::move(fn)));
}

Library& Library::impl_boxed(const std::string& name, BoxedKernel fn, AutogradTag tag) {
  KernelFunction k = KernelFunction::from_boxed(std::move(fn));
  k.autograd_tag = tag;
  return impl_for(key_, name, std::move(k));
}

Library& Library::impl_not_differentiable(const std::string& name) {
  KernelFunction k = KernelFunction::from_boxed([](const OperatorHandle& op, Stack* stack) {
    // Reached only in grad mode with an argument that requires grad. Writing into such a tensor
    // in place would change a value the graph depends on without recording it: refuse, as
    // PyTorch does (optimizer updates run under NoGradGuard).
    const auto& args = op.schema().arguments;
    for (size_t i = 0; i < args.size() && i < stack->size(); ++i) {
      if (!args[i].is_mutable || !(*stack)[i].is_tensor()) continue;
      const Tensor& t = (*stack)[i].to_tensor();
      EMBER_CHECK_T(NotImplementedError, !(t.defined() && t.requires_grad()), op.name(), ": writes in place into '",
                    args[i].name, "', which requires grad, and is not differentiable; call it under NoGradGuard "
                    "(as optimizer updates are)");
    }
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    op.call_boxed(stack);
  });
  k.autograd_tag = AutogradTag::NotDifferentiable;
  return impl_for(DispatchKey::Autograd, name, std::move(k));
}

Library& Library::impl_autograd_unsupported(const std::string& name, const std::string& reason) {
  std::string full = qualify(name);
  KernelFunction k = KernelFunction::from_boxed([full, reason](const OperatorHandle& op, Stack* stack) {
    // Reached only when an argument carries the Autograd key; the key is excluded in no-grad mode.
    EMBER_THROW(NotImplementedError, full, ": autograd is not supported (", reason,
                "); call it under NoGradGuard or on tensors that do not require grad");
    (void)op;
    (void)stack;
  });
  k.autograd_tag = AutogradTag::Unsupported;
  return impl_for(DispatchKey::Autograd, name, std::move(k));
}

Library& Library::fallback(KernelFunction kernel) {
  EMBER_CHECK_VALUE(kind_ == Kind::Impl, "Library(", ns_, "): fallback() needs EMBER_LIBRARY_IMPL(_, Key, m)");
  kernel.debug = where() + " [fallback]";
  ids_.push_back(Dispatcher::singleton().register_fallback(key_, std::move(kernel)));
  return *this;
}

Library& Library::fallback(KernelFunction kernel, AmpPolicy policy) {
  EMBER_CHECK_VALUE(kind_ == Kind::Impl && key_ == DispatchKey::Autocast, "Library(", ns_,
                    "): a policy fallback needs EMBER_LIBRARY_IMPL(_, Autocast, m)");
  kernel.debug = where() + " [policy fallback]";
  ids_.push_back(Dispatcher::singleton().register_policy_fallback(policy, std::move(kernel)));
  return *this;
}

LibraryInit::LibraryInit(Library::Kind kind, const char* ns, DispatchKey key, void (*fn)(Library&),
                         const char* file, int line) {
  Library lib(kind, ns, key, file, line);
  lib.keep_ = true;
  try {
    fn(lib);
  } catch (const std::exception& e) {
    Dispatcher::singleton().record_registration_error(std::string(ns) + "::<" + lib.where() + ">", e.what());
  }
}

}  // namespace ember
