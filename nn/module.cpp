#include "ember/nn/module.h"

#include <algorithm>
#include <ostream>
#include <set>
#include <sstream>

#include "ember/autograd/engine.h"
#include "ember/autograd/function.h"
#include "ember/autograd/grad_mode.h"
#include "ember/ops/ops.h"

namespace ember {
namespace nn {

Tensor Module::forward(const Tensor& x) {
  if (direct_forward_) return direct_forward_(x);
  EMBER_THROW(NotImplementedError, name(),
              ": forward(const Tensor&) is not implemented by this module (a forward that takes its Tensor by value, "
              "as libtorch modules declare it, does not override it; ember calls it for a module it knows the type "
              "of: registered with register_module, held by a ModuleHolder or given to a Sequential or "
              "ModuleList; or declare Tensor forward(const Tensor& x) override)");
}

Tensor Module::operator()(const Tensor& x) {
  Tensor in = x;
  for (auto& [id, hook] : pre_hooks_)
    if (std::optional<Tensor> r = hook(*this, in)) in = *r;
  Tensor out = forward(in);
  for (auto& [id, hook] : hooks_)
    if (std::optional<Tensor> r = hook(*this, in, out)) out = *r;
  return out;
}

std::string Module::name() const { return autograd::detail::demangled_name(typeid(*this).name()); }

void Module::check_new_name(const std::string& n) const {
  EMBER_CHECK_VALUE(!n.empty() && n.find('.') == std::string::npos, name(), ": invalid member name '", n,
                    "' (non-empty, no dots)");
  auto taken = [&](const auto& v) {
    return std::any_of(v.begin(), v.end(), [&](const auto& kv) { return kv.first == n; });
  };
  EMBER_CHECK_VALUE(!taken(params_) && !taken(buffers_) && !taken(children_), name(), ": '", n,
                    "' is already registered");
}

Tensor Module::register_parameter(const std::string& n, Tensor t, bool requires_grad) {
  check_new_name(n);
  EMBER_CHECK_VALUE(t.defined(), name(), ".register_parameter('", n, "'): the tensor is undefined");
  if (!t.is_leaf()) t = t.detach();
  if (requires_grad) {
    EMBER_CHECK_DTYPE(t.is_floating_point(), name(), ".register_parameter('", n, "'): only floating tensors can require grad, got ",
                      t.dtype());
    t.requires_grad_(true);
  }
  params_.emplace_back(n, t);
  return t;
}

Tensor Module::register_buffer(const std::string& n, Tensor t) {
  check_new_name(n);
  EMBER_CHECK_VALUE(t.defined(), name(), ".register_buffer('", n, "'): the tensor is undefined");
  buffers_.emplace_back(n, t);
  return t;
}

void Module::add_child(const std::string& n, ModulePtr m) {
  check_new_name(n);
  EMBER_CHECK_VALUE(m != nullptr, name(), ".register_module('", n, "'): the module is null");
  EMBER_CHECK_VALUE(m.get() != this, name(), ".register_module('", n, "'): a module cannot contain itself");
  children_.emplace_back(n, std::move(m));
}

void Module::set_tensor(const std::string& n, const Tensor& value) {
  for (auto* list : {&params_, &buffers_})
    for (auto& [k, t] : *list)
      if (k == n) {
        EMBER_CHECK_SHAPE(t.sizes() == value.sizes(), name(), ".set_tensor('", n, "'): shape ", value.sizes(),
                          " does not match ", t.sizes());
        NoGradGuard ng;
        t.copy_(value);
        return;
      }
  EMBER_THROW(ValueError, name(), ".set_tensor: no parameter or buffer named '", n, "'");
}

void Module::collect(const std::string& prefix, bool params, bool recurse,
                     std::vector<std::pair<std::string, Tensor>>* out) const {
  for (const auto& [k, t] : params ? params_ : buffers_) out->emplace_back(prefix + k, t);
  if (!recurse) return;
  for (const auto& [k, m] : children_) m->collect(prefix + k + ".", params, true, out);
}

OrderedDict<Tensor> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> all;
  collect("", true, recurse, &all);
  OrderedDict<Tensor> out(all.begin(), all.end());
  // A parameter shared by two submodules is listed once (first name), as in PyTorch.
  std::set<const TensorImpl*> seen;
  out.erase(std::remove_if(out.begin(), out.end(), [&](const auto& kv) { return !seen.insert(kv.second.impl()).second; }),
            out.end());
  return out;
}

void Module::unregister(const std::string& n) {
  auto drop = [&n](auto& v) {
    v.erase(std::remove_if(v.begin(), v.end(), [&n](const auto& kv) { return kv.first == n; }), v.end());
  };
  drop(params_);
  drop(buffers_);
  drop(children_);
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& kv : named_parameters(recurse)) out.push_back(kv.second);
  return out;
}

OrderedDict<Tensor> Module::named_buffers(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> all;
  collect("", false, recurse, &all);
  return OrderedDict<Tensor>(all.begin(), all.end());
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& kv : named_buffers(recurse)) out.push_back(kv.second);
  return out;
}

std::vector<ModulePtr> Module::children() const {
  std::vector<ModulePtr> out;
  for (const auto& kv : children_) out.push_back(kv.second);
  return out;
}

std::vector<std::pair<std::string, ModulePtr>> Module::named_children() const { return children_; }

ModulePtr Module::child(const std::string& n) const {
  for (const auto& [k, m] : children_)
    if (k == n) return m;
  return nullptr;
}

void Module::collect_modules(const std::string& prefix, std::vector<std::pair<std::string, ModulePtr>>* out) {
  for (const auto& [k, m] : children_) {
    std::string full = prefix.empty() ? k : prefix + "." + k;
    out->emplace_back(full, m);
    m->collect_modules(full, out);
  }
}

std::vector<std::pair<std::string, ModulePtr>> Module::named_modules() {
  std::vector<std::pair<std::string, ModulePtr>> out;
  ModulePtr self;
  try {
    self = shared_from_this();
  } catch (const std::bad_weak_ptr&) {
    self = ModulePtr(this, [](Module*) {});  // a module not owned by a shared_ptr (on the stack)
  }
  out.emplace_back("", self);
  collect_modules("", &out);
  return out;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& kv : children_) kv.second->train(on);
}

void Module::apply_to_tensors(const std::function<Tensor(const Tensor&)>& fn) {
  NoGradGuard ng;
  std::set<const TensorImpl*> done;  // shared parameters move once
  for (auto* list : {&params_, &buffers_}) {
    for (auto& kv : *list) {
      Tensor& t = kv.second;
      if (!done.insert(t.impl()).second) continue;
      Tensor moved = fn(t);
      if (moved.impl() == t.impl()) continue;
      Tensor g = t.requires_grad() ? t.grad() : Tensor();
      t.set_data(moved);
      if (g.defined()) t.set_grad(fn(g));
    }
  }
  for (auto& kv : children_) kv.second->apply_to_tensors(fn);
}

Module& Module::to(Device device) {
  apply_to_tensors([&](const Tensor& t) { return t.device() == device ? t : t.to(device); });
  return *this;
}

Module& Module::to(DType dtype) {
  apply_to_tensors([&](const Tensor& t) { return t.is_floating_point() && t.dtype() != dtype ? t.to(dtype) : t; });
  return *this;
}

Module& Module::to(Device device, DType dtype) {
  to(dtype);
  return to(device);
}

void Module::zero_grad(bool set_to_none) { nn::zero_grad(parameters(), set_to_none); }

void zero_grad(std::vector<Tensor> params, bool set_to_none) {
  for (const Tensor& p : params) autograd::zero_grad(p, set_to_none);
}

std::map<std::string, Tensor> Module::state_dict() const {
  std::map<std::string, Tensor> out;
  std::vector<std::pair<std::string, Tensor>> all;
  collect("", true, true, &all);
  collect("", false, true, &all);
  for (auto& [k, t] : all) out.emplace(k, t.detach());
  return out;
}

LoadReport Module::load_state_dict(const std::map<std::string, Tensor>& state, bool strict) {
  std::vector<std::pair<std::string, Tensor>> mine;
  collect("", true, true, &mine);
  collect("", false, true, &mine);
  LoadReport report;
  std::vector<std::string> problems;
  std::set<std::string> own;
  for (const auto& [k, t] : mine) {
    own.insert(k);
    auto it = state.find(k);
    if (it == state.end()) {
      report.missing_keys.push_back(k);
      continue;
    }
    const Tensor& src = it->second;
    if (!src.defined()) {
      problems.push_back("'" + k + "': the state dict holds an undefined tensor");
    } else if (src.sizes() != t.sizes()) {
      problems.push_back("'" + k + "': shape " + to_string(src.sizes()) + " in the state dict, " + to_string(t.sizes()) +
                         " in the module");
    } else if (strict && src.dtype() != t.dtype()) {
      problems.push_back("'" + k + "': dtype " + std::string(dtype_name(src.dtype())) + " in the state dict, " +
                         dtype_name(t.dtype()) + " in the module");
    }
  }
  for (const auto& kv : state)
    if (!own.count(kv.first)) report.unexpected_keys.push_back(kv.first);
  if (strict) {
    for (const auto& k : report.missing_keys) problems.push_back("missing key '" + k + "'");
    for (const auto& k : report.unexpected_keys) problems.push_back("unexpected key '" + k + "'");
  }
  if (!problems.empty()) {
    std::ostringstream os;
    os << name() << ".load_state_dict" << (strict ? " (strict)" : "") << ": " << problems.size()
       << " problem(s), nothing was loaded:";
    for (const auto& p : problems) os << "\n  " << p;
    EMBER_THROW(Error, os.str());
  }
  NoGradGuard ng;
  for (auto& [k, t] : mine) {
    auto it = state.find(k);
    if (it != state.end()) Tensor(t).copy_(it->second);
  }
  return report;
}

size_t Module::register_forward_hook(ForwardHook hook) {
  hooks_.emplace_back(next_hook_, std::move(hook));
  return next_hook_++;
}

size_t Module::register_forward_pre_hook(ForwardPreHook hook) {
  pre_hooks_.emplace_back(next_hook_, std::move(hook));
  return next_hook_++;
}

bool Module::remove_hook(size_t handle) {
  auto drop = [handle](auto& v) {
    auto it = std::remove_if(v.begin(), v.end(), [handle](const auto& kv) { return kv.first == handle; });
    bool found = it != v.end();
    v.erase(it, v.end());
    return found;
  };
  bool a = drop(hooks_);
  bool b = drop(pre_hooks_);
  return a || b;
}

int64_t Module::num_parameters(bool recurse) const {
  int64_t n = 0;
  for (const Tensor& p : parameters(recurse)) n += p.numel();
  return n;
}

void Module::print(std::ostream& os, int indent) const {
  os << name() << "(" << extra_repr() << ")";
  if (!params_.empty() || !buffers_.empty()) {
    os << " {";
    const char* sep = "";
    for (auto* list : {&params_, &buffers_}) {
      for (const auto& [k, t] : *list) {
        os << sep << k << ": " << to_string(t.sizes()) << " " << t.dtype();
        if (!t.device().is_cpu()) os << " " << t.device();
        if (list == &buffers_) os << " (buffer)";
        sep = ", ";
      }
    }
    os << "}";
  }
  if (!children_.empty()) {
    os << " (\n";
    for (const auto& [k, m] : children_) {
      os << std::string(static_cast<size_t>(indent + 2), ' ') << "(" << k << "): ";
      m->print(os, indent + 2);
      os << "\n";
    }
    os << std::string(static_cast<size_t>(indent), ' ') << ")";
  }
}

std::ostream& operator<<(std::ostream& os, const Module& m) {
  m.print(os, 0);
  return os << "\n" << m.num_parameters() << " parameters";
}

}  // namespace nn
}  // namespace ember
