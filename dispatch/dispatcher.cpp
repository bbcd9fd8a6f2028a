#include "ember/dispatch/dispatcher.h"

#include <algorithm>
#include <sstream>

namespace ember {

LocalDispatchKeySet& tls_dispatch_keys() {
  static thread_local LocalDispatchKeySet tls;
  return tls;
}

ExcludeDispatchKeyGuard::ExcludeDispatchKeyGuard(DispatchKeySet ks) {
  auto& tls = tls_dispatch_keys();
  prev_ = tls.excluded;
  tls.excluded = tls.excluded | ks;
}
ExcludeDispatchKeyGuard::~ExcludeDispatchKeyGuard() { tls_dispatch_keys().excluded = prev_; }

IncludeDispatchKeyGuard::IncludeDispatchKeyGuard(DispatchKey k) {
  auto& tls = tls_dispatch_keys();
  prev_ = tls.included;
  tls.included = tls.included.add(k);
}
IncludeDispatchKeyGuard::~IncludeDispatchKeyGuard() { tls_dispatch_keys().included = prev_; }

// ---------------------------------------------------------------- OperatorHandle

const FunctionSchema& OperatorHandle::schema() const { return entry_->schema(); }
const std::string& OperatorHandle::name() const { return entry_->name(); }
bool OperatorHandle::has_kernel(DispatchKey k) const {
  return static_cast<int>(k) < kNumRuntimeKeys && entry_->table_[static_cast<int>(k)].valid();
}

OperatorHandle::AutogradSupport OperatorHandle::autograd_support() const {
  const auto& direct = entry_->kernels_[static_cast<int>(DispatchKey::Autograd)];
  if (!direct.empty()) {
    switch (direct.back().kernel.autograd_tag) {
      case AutogradTag::None: return AutogradSupport::Differentiable;
      case AutogradTag::NotDifferentiable: return AutogradSupport::NotDifferentiable;
      case AutogradTag::Unsupported: return AutogradSupport::Unsupported;
      case AutogradTag::NoDoubleBackward: return AutogradSupport::NoDoubleBackward;
    }
  }
  if (!entry_->kernels_[static_cast<int>(DispatchKey::CompositeImplicit)].empty()) return AutogradSupport::Differentiable;
  return AutogradSupport::Missing;
}

void OperatorHandle::check_signature(const std::string& sig) const {
  std::string expected = entry_->schema().cpp_signature();
  EMBER_CHECK_TYPE(sig == expected, "typed<", sig, ">: signature mismatch for ", entry_->schema().str(),
                   "; expected typed<", expected, ">");
}

void OperatorHandle::call_boxed(Stack* stack) const {
  const FunctionSchema& s = entry_->schema();
  EMBER_CHECK_TYPE(stack->size() <= s.arguments.size(), s.full_name(), ": got ", stack->size(),
                   " arguments but the schema takes ", s.arguments.size(), ": ", s.str());
  for (size_t i = stack->size(); i < s.arguments.size(); ++i) {
    EMBER_CHECK_TYPE(s.arguments[i].default_value.has_value(), s.full_name(), ": missing argument ", i,
                     " '", s.arguments[i].name, "' (no default); schema: ", s.str());
    stack->push_back(*s.arguments[i].default_value);
  }
  DispatchKeySet ks;
  for (size_t i = 0; i < stack->size(); ++i) {
    s.check_argument(i, (*stack)[i]);
    const IValue& v = (*stack)[i];
    if (v.is_tensor()) ks = ks | detail::keys_of(v.to_tensor());
    if (v.is_tensor_list()) ks = ks | detail::keys_of(v.to_tensor_list());
  }
  const KernelFunction& k = entry_->lookup(entry_->dispatch_key(ks));
  if (entry_->writes()) detail::check_writes_boxed(*entry_, stack);
  if (EMBER_UNLIKELY(profiler::detail::enabled())) {
    profiler::detail::Scope scope("op", entry_->name(), profiler::detail::record_shapes() ? describe_arguments(*stack) : "");
    k.call_boxed(*this, stack);
    return;
  }
  k.call_boxed(*this, stack);
}

std::string describe_arguments(const Stack& args) {
  std::ostringstream os;
  auto tensor = [&os](const Tensor& t) {
    if (t.defined()) {
      os << t.dtype() << t.sizes_ref();
    } else {
      os << "undefined";
    }
  };
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) os << ", ";
    const IValue& v = args[i];
    if (v.is_tensor()) {
      tensor(v.to_tensor());
    } else if (v.is_tensor_list()) {
      os << "[";
      const auto& l = v.to_tensor_list();
      for (size_t j = 0; j < l.size(); ++j) {
        if (j) os << ", ";
        tensor(l[j]);
      }
      os << "]";
    } else if (v.is_scalar()) {
      os << "scalar";
    } else if (v.is_int_list()) {
      os << "ints";
    } else if (v.is_none()) {
      os << "none";
    } else {
      os << "-";
    }
  }
  return os.str();
}

void OperatorHandle::redispatch_boxed(DispatchKeySet ks, Stack* stack) const {
  entry_->lookup(ks.highest()).call_boxed(*this, stack);
}

// ---------------------------------------------------------------- OperatorEntry

void OperatorEntry::report_missing(DispatchKey k) const {
  std::ostringstream have;
  bool any = false;
  for (int i = 1; i < kNumRuntimeKeys; ++i) {
    if (table_[i].valid() && !from_fallback_.has(static_cast<DispatchKey>(i))) {
      have << (any ? ", " : "") << static_cast<DispatchKey>(i);
      any = true;
    }
  }
  if (k == DispatchKey::Undefined) {
    EMBER_THROW(NotImplementedError, name_,
                ": cannot dispatch a call without any tensor argument (no backend key); kernels exist "
                "for: [",
                have.str(), "]");
  }
  EMBER_THROW(NotImplementedError, name_, ": no kernel for dispatch key ", k,
              k == DispatchKey::NPU ? " (arguments on the npu)" : "",
              "; this op has kernels for: [", have.str(), "]",
              k == DispatchKey::NPU ? ". It has no NPU implementation" : "");
}

void OperatorEntry::recompute() {
  const Dispatcher& d = Dispatcher::singleton();
  auto newest = [&](DispatchKey k) -> const KernelFunction* {
    const auto& v = kernels_[static_cast<int>(k)];
    return v.empty() ? nullptr : &v.back().kernel;
  };
  mask_ = DispatchKeySet::backends();
  from_fallback_ = DispatchKeySet();
  for (int i = 1; i < kNumRuntimeKeys; ++i) {
    auto k = static_cast<DispatchKey>(i);
    const KernelFunction* kf = newest(k);
    bool backend = k == DispatchKey::CPU || k == DispatchKey::NPU;
    if (!kf && backend) kf = newest(DispatchKey::CompositeExplicit);
    if (!kf && (backend || k == DispatchKey::Autograd)) kf = newest(DispatchKey::CompositeImplicit);
    if (!kf && k == DispatchKey::Autocast && has_schema_ && schema_.amp != AmpPolicy::Keep) {
      kf = d.policy_fallback(schema_.amp);  // the op's declared autocast policy
      if (kf) from_fallback_ = from_fallback_.add(k);
    }
    if (!kf) {
      const KernelFunction* fb = d.fallback(k);
      if (fb && !fb->fallthrough) {
        kf = fb;
        from_fallback_ = from_fallback_.add(k);
      }
    }
    table_[i] = kf ? *kf : KernelFunction();
    if (kf) mask_ = mask_.add(k);
  }
}

// ---------------------------------------------------------------- Dispatcher

Dispatcher& Dispatcher::singleton() {
  static auto* d = new Dispatcher();  // never destroyed: kernels may run during static destruction
  return *d;
}

OperatorEntry* Dispatcher::entry_locked(const std::string& name) {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) return it->second;
  entries_.emplace_back(name);
  OperatorEntry* e = &entries_.back();
  by_name_[name] = e;
  e->recompute();
  return e;
}

std::optional<OperatorHandle> Dispatcher::find(const std::string& name) {
  std::lock_guard<std::mutex> g(mu_);
  auto err = errors_.find(name);
  if (err != errors_.end()) EMBER_THROW(TypeError, err->second);
  auto it = by_name_.find(name);
  if (it == by_name_.end() || !it->second->has_schema()) return std::nullopt;
  return OperatorHandle(it->second);
}

OperatorHandle Dispatcher::find_schema(const std::string& name) {
  if (auto h = find(name)) return *h;
  std::lock_guard<std::mutex> g(mu_);
  auto it = by_name_.find(name);
  if (it != by_name_.end()) {
    EMBER_THROW(NotImplementedError, "find_schema: '", name,
                "' has kernels registered but no schema; define it with EMBER_LIBRARY(ns, m) { "
                "m.def(\"...\"); }");
  }
  // Suggest ops with the same base name.
  std::string base = name.substr(name.rfind(':') + 1);
  base = base.substr(0, base.find('.'));
  std::ostringstream similar;
  for (const auto& kv : by_name_) {
    if (kv.first.find(base) != std::string::npos && kv.second->has_schema()) similar << " " << kv.first;
  }
  EMBER_THROW(NotImplementedError, "find_schema: no operator named '", name, "'",
              similar.str().empty() ? std::string() : "; similar:" + similar.str(),
              name.find("::") == std::string::npos ? " (names are qualified: 'ns::op')" : "");
}

void Dispatcher::call_boxed(const std::string& name, Stack& stack) { find_schema(name).call_boxed(&stack); }

std::vector<std::string> Dispatcher::list_ops() {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<std::string> out;
  for (const auto& kv : by_name_)
    if (kv.second->has_schema()) out.push_back(kv.first);
  return out;
}

std::string Dispatcher::dump(const std::string& name) {
  OperatorHandle h = find_schema(name);
  std::lock_guard<std::mutex> g(mu_);
  const OperatorEntry& e = *h.entry();
  std::ostringstream os;
  os << "schema: " << e.schema().str() << "\n  defined at " << e.schema_debug_ << "\nregistered kernels:\n";
  for (int i = 1; i < kNumDispatchKeys; ++i) {
    const auto& regs = e.kernels_[i];
    for (size_t j = regs.size(); j-- > 0;) {
      os << "  " << static_cast<DispatchKey>(i) << ": " << regs[j].kernel.debug
         << (j + 1 < regs.size() ? " [shadowed by a later registration]" : "") << "\n";
    }
  }
  os << "computed table:\n";
  for (int i = 1; i < kNumRuntimeKeys; ++i) {
    auto k = static_cast<DispatchKey>(i);
    const KernelFunction& kf = e.table_[i];
    os << "  " << k << ": ";
    if (kf.valid()) {
      os << (kf.debug.empty() ? "kernel" : kf.debug);
    } else {
      const KernelFunction* fb = fallback(k);
      os << (fb && fb->fallthrough ? "fallthrough" : "missing");
    }
    os << "\n";
  }
  for (const auto& n : e.notes_) os << "note: " << n << "\n";
  return os.str();
}

uint64_t Dispatcher::register_schema(FunctionSchema schema, const std::string& debug) {
  std::lock_guard<std::mutex> g(mu_);
  std::string name = schema.full_name();
  OperatorEntry* e = entry_locked(name);
  if (e->has_schema()) {
    std::string msg = "EMBER_LIBRARY: operator '" + name + "' is defined twice: at " + e->schema_debug_ +
                      " and at " + debug;
    errors_.emplace(name, msg);
    return 0;
  }
  e->schema_ = std::move(schema);
  e->has_schema_ = true;
  e->written_.clear();
  for (size_t i = 0; i < e->schema_.arguments.size(); ++i)
    if (e->schema_.arguments[i].is_mutable) e->written_.push_back(i);
  e->schema_debug_ = debug;
  e->recompute();  // the schema's policy selects a policy fallback
  uint64_t id = next_id_++;
  e->schema_id_ = id;
  registrations_[id] = {name, DispatchKey::Undefined};
  // Kernels registered before the schema (static init order) are checked now.
  for (int k = 1; k < kNumDispatchKeys; ++k) {
    for (const auto& r : e->kernels_[k]) {
      if (!r.kernel.signature.empty() && r.kernel.signature != e->schema_.cpp_signature()) {
        errors_.emplace(name, "EMBER_LIBRARY_IMPL: kernel for " + name + " at " + r.kernel.debug +
                                  " has signature " + r.kernel.signature + " but the schema " +
                                  e->schema_.str() + " needs " + e->schema_.cpp_signature());
      }
    }
  }
  return id;
}

uint64_t Dispatcher::register_kernel(const std::string& op, DispatchKey key, KernelFunction kernel) {
  std::lock_guard<std::mutex> g(mu_);
  OperatorEntry* e = entry_locked(op);
  if (e->has_schema() && !kernel.signature.empty() && kernel.signature != e->schema_.cpp_signature()) {
    errors_.emplace(op, "EMBER_LIBRARY_IMPL: kernel for " + op + " at " + kernel.debug + " has signature " +
                            kernel.signature + " but the schema " + e->schema_.str() + " needs " +
                            e->schema_.cpp_signature());
    return 0;
  }
  auto& regs = e->kernels_[static_cast<int>(key)];
  if (!regs.empty()) {
    e->notes_.push_back(std::string("the ") + dispatch_key_name(key) + " kernel from " + regs.back().kernel.debug +
                        " is replaced by the one from " + kernel.debug);
  }
  uint64_t id = next_id_++;
  regs.push_back({id, std::move(kernel)});
  registrations_[id] = {op, key};
  e->recompute();
  return id;
}

uint64_t Dispatcher::register_fallback(DispatchKey key, KernelFunction kernel) {
  std::lock_guard<std::mutex> g(mu_);
  EMBER_CHECK_VALUE(static_cast<int>(key) < kNumRuntimeKeys, "fallback: ", key,
                    " is an alias key; fallbacks are registered for runtime keys");
  uint64_t id = next_id_++;
  fallbacks_[static_cast<int>(key)].emplace_back(id, std::move(kernel));
  registrations_[id] = {"", key};
  recompute_all_locked();
  return id;
}

uint64_t Dispatcher::register_policy_fallback(AmpPolicy policy, KernelFunction kernel) {
  std::lock_guard<std::mutex> g(mu_);
  EMBER_CHECK_VALUE(policy != AmpPolicy::Keep, "fallback: the Keep policy takes no kernel (autocast skips the op)");
  uint64_t id = next_id_++;
  policy_fallbacks_[static_cast<int>(policy)].emplace_back(id, std::move(kernel));
  registrations_[id] = {"", DispatchKey::Autocast};
  recompute_all_locked();
  return id;
}

void Dispatcher::deregister(uint64_t id) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = registrations_.find(id);
  if (it == registrations_.end()) return;
  auto [op, key] = it->second;
  registrations_.erase(it);
  if (op.empty()) {
    auto& fb = fallbacks_[static_cast<int>(key)];
    auto same = [&](const auto& p) { return p.first == id; };
    fb.erase(std::remove_if(fb.begin(), fb.end(), same), fb.end());
    for (auto& pf : policy_fallbacks_) pf.erase(std::remove_if(pf.begin(), pf.end(), same), pf.end());
    recompute_all_locked();
    return;
  }
  OperatorEntry* e = by_name_.at(op);
  if (key == DispatchKey::Undefined) {
    if (e->schema_id_ == id) {
      e->has_schema_ = false;
      e->schema_ = FunctionSchema();
      e->written_.clear();
      e->recompute();
    }
    return;
  }
  auto& regs = e->kernels_[static_cast<int>(key)];
  regs.erase(std::remove_if(regs.begin(), regs.end(), [&](const auto& r) { return r.id == id; }), regs.end());
  e->recompute();
}

void Dispatcher::record_registration_error(const std::string& op, const std::string& msg) {
  std::lock_guard<std::mutex> g(mu_);
  errors_.emplace(op, msg);
}

std::vector<std::string> Dispatcher::registration_errors() {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<std::string> out;
  for (const auto& kv : errors_) out.push_back(kv.second);
  return out;
}

const KernelFunction* Dispatcher::fallback(DispatchKey key) const {
  const auto& fb = fallbacks_[static_cast<int>(key)];
  return fb.empty() ? nullptr : &fb.back().second;
}

const KernelFunction* Dispatcher::policy_fallback(AmpPolicy policy) const {
  const auto& fb = policy_fallbacks_[static_cast<int>(policy)];
  return fb.empty() ? nullptr : &fb.back().second;
}

void Dispatcher::recompute_all_locked() {
  for (auto& e : entries_) e.recompute();
}

}  // namespace ember
