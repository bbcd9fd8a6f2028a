// Optimizer, the base of every optimizer: parameters, learning rate, per-parameter state, and
// the state_dict that saves and restores them (checked against the optimizer's state names).
#include <cmath>
#include <set>
#include <sstream>

#include "ember/autograd/grad_mode.h"
#include "ember/nn/module.h"
#include "ember/nn/optim/optim.h"
#include "ember/ops/ops.h"

namespace ember {
namespace optim {

Optimizer::Optimizer(std::vector<Tensor> params, double lr) : params_(std::move(params)), lr_(lr) {
  EMBER_CHECK_VALUE(!params_.empty(), "optimizer: got an empty parameter list");
  for (size_t i = 0; i < params_.size(); ++i) {
    EMBER_CHECK_VALUE(params_[i].defined() && params_[i].is_floating_point(), "optimizer: parameter ", i,
                      " must be a defined floating tensor");
    EMBER_CHECK_VALUE(params_[i].is_leaf(), "optimizer: parameter ", i, " is not a leaf (optimize leaves only)");
  }
  set_lr(lr);
  state_.resize(params_.size());
}

void Optimizer::set_lr(double lr) {
  EMBER_CHECK_VALUE(lr >= 0 && std::isfinite(lr), "optimizer: invalid learning rate ", lr);
  lr_ = lr;
}

void Optimizer::zero_grad(bool set_to_none) { nn::zero_grad(params_, set_to_none); }

const std::map<std::string, Tensor>& Optimizer::state(const Tensor& param) const {
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].is_same(param)) return state_[i];
  EMBER_THROW(ValueError, "optimizer.state: the tensor is not one of this optimizer's parameters");
}

std::map<std::string, Tensor> Optimizer::state_dict() const {
  std::map<std::string, Tensor> sd;
  for (size_t i = 0; i < state_.size(); ++i)
    for (const auto& [name, t] : state_[i]) sd["state." + std::to_string(i) + "." + name] = t;
  sd["lr"] = full({1}, lr_, TensorOptions(kFloat64));
  sd["steps"] = full({1}, steps_, TensorOptions(kInt64));
  return sd;
}

namespace {
// "state.<i>.<name>" gives i and name; false for a key of any other form.
bool parse_state_key(const std::string& key, size_t* i, std::string* name) {
  size_t dot = key.find('.', 6);
  if (key.compare(0, 6, "state.") != 0 || dot == std::string::npos || dot == 6 || dot > 6 + 9 ||
      dot + 1 == key.size() || key.find_first_not_of("0123456789", 6) != dot)
    return false;
  *i = std::stoull(key.substr(6, dot - 6));
  *name = key.substr(dot + 1);
  return true;
}
// What is wrong with state entry `key` (state `name` of parameter i, p), or "" if nothing: "step"
// is one int64 element, other state has the parameter's shape and dtype.
std::string state_entry_problem(const std::string& key, const std::string& name, size_t i, const Tensor& t,
                                const Tensor& p) {
  if (!t.defined()) return "'" + key + "': undefined tensor";
  if (name == "step" ? (t.numel() != 1 || t.dtype() != kInt64) : t.sizes() != p.sizes())
    return "'" + key + "': shape " + to_string(t.sizes()) + " " + dtype_name(t.dtype()) + ", expected " +
           (name == "step" ? std::string("one int64 element")
                           : to_string(p.sizes()) + " (parameter " + std::to_string(i) + ")");
  if (name != "step" && t.dtype() != p.dtype())
    return "'" + key + "': dtype " + std::string(dtype_name(t.dtype())) + ", the parameter's is " + dtype_name(p.dtype());
  return "";
}

// An entry holding one element of dtype dt (lr, steps); null, with a problem noted, otherwise.
const Tensor* scalar_entry(const std::map<std::string, Tensor>& sd, const char* key, DType dt,
                           std::vector<std::string>* problems) {
  auto it = sd.find(key);
  if (it == sd.end()) {
    problems->push_back(std::string("missing key '") + key + "'");
    return nullptr;
  }
  if (!it->second.defined() || it->second.numel() != 1 || it->second.dtype() != dt) {
    problems->push_back(std::string("'") + key + "' must be one " + dtype_name(dt) + " element");
    return nullptr;
  }
  return &it->second;
}

// The per-parameter state of a state dict, and which names each parameter had (incl. entries
// rejected).
struct IncomingState {
  std::vector<std::map<std::string, Tensor>> state;
  std::vector<std::set<std::string>> present;
};
// Sorts sd's state.<i>.<name> entries into `in`, noting a problem for every other key (but lr and
// steps), an index out of range, a name the optimizer keeps no state under, a wrong shape or dtype;
// then for every parameter with some state but not all of it.
IncomingState read_state(const std::map<std::string, Tensor>& sd, const std::vector<Tensor>& params,
                         const std::optional<std::vector<std::string>>& names, const char* kind,
                         std::vector<std::string>* problems) {
  IncomingState in{std::vector<std::map<std::string, Tensor>>(params.size()),
                   std::vector<std::set<std::string>>(params.size())};
  for (const auto& [key, t] : sd) {
    if (key == "lr" || key == "steps") continue;
    size_t i;
    std::string name;
    if (!parse_state_key(key, &i, &name)) {
      problems->push_back("unexpected key '" + key + "' (expected state.<index>.<name>, lr or steps)");
    } else if (i >= params.size()) {
      problems->push_back("'" + key + "': parameter index " + std::to_string(i) + " out of range (" +
                          std::to_string(params.size()) + " parameters)");
    } else if (names && std::find(names->begin(), names->end(), name) == names->end()) {
      problems->push_back("'" + key + "': " + kind + " with these options keeps no state '" + name + "'");
    } else {
      in.present[i].insert(name);
      std::string problem = state_entry_problem(key, name, i, t, params[i]);
      if (problem.empty()) {
        in.state[i][name] = t;
      } else {
        problems->push_back(problem);
      }
    }
  }
  for (size_t i = 0; names && i < in.present.size(); ++i) {
    if (in.present[i].empty()) continue;
    for (const auto& n : *names)
      if (!in.present[i].count(n))
        problems->push_back("parameter " + std::to_string(i) + " lacks 'state." + std::to_string(i) + "." + n +
                            "' (its state is partial)");
  }
  return in;
}
}  // namespace

void Optimizer::load_state_dict(const std::map<std::string, Tensor>& sd) {
  std::vector<std::string> problems;
  const Tensor* lr = scalar_entry(sd, "lr", kFloat64, &problems);
  const Tensor* steps = scalar_entry(sd, "steps", kInt64, &problems);
  IncomingState incoming = read_state(sd, params_, state_names(), kind(), &problems);
  if (lr && !(lr->item<double>() >= 0 && std::isfinite(lr->item<double>())))
    problems.push_back("'lr' holds an invalid learning rate " + std::to_string(lr->item<double>()));
  if (steps && steps->item<int64_t>() < 0) problems.push_back("'steps' is negative");
  if (!problems.empty()) {
    std::ostringstream os;
    os << kind() << ".load_state_dict: " << problems.size() << " problem(s), nothing was loaded:";
    for (const auto& pr : problems) os << "\n  " << pr;
    EMBER_THROW(ValueError, os.str());
  }
  NoGradGuard ng;
  for (size_t i = 0; i < incoming.state.size(); ++i) {
    std::map<std::string, Tensor> st;
    const Tensor& p = params_[i];
    for (const auto& [name, t] : incoming.state[i])
      st[name] = (name == "step" ? t.reshape({1}) : t).to(p.device()).clone();
    state_[i] = std::move(st);
  }
  lr_ = lr->item<double>();
  steps_ = steps->item<int64_t>();
}

}  // namespace optim
}  // namespace ember
