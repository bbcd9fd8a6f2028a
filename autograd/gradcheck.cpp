#include "ember/autograd/gradcheck.h"

#include <cmath>
#include <random>
#include <sstream>

#include "ember/autograd/engine.h"
#include "ember/autograd/grad_mode.h"

namespace ember {
namespace autograd {
namespace {

constexpr int64_t kFullLimit = 256;  // full Jacobian when inputs and output are this small

Tensor new_f64(IntArrayRef shape) {
  return Tensor(IntrusivePtr<TensorImpl>::make(Storage::make(static_cast<size_t>(numel_of(shape)) * 8, Device()),
                                               DType::Float64, shape, contiguous_strides(shape), 0));
}

// Storage offsets (in elements) of every element of t in row-major order.
std::vector<int64_t> element_offsets(const Tensor& t) {
  std::vector<int64_t> out;
  int64_t n = t.numel();
  IntArrayRef sizes = t.sizes(), strides = t.strides();
  Shape idx(sizes.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < sizes.size(); ++d) off += idx[d] * strides[d];
    out.push_back(off);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

std::vector<double> eval(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& in) {
  NoGradGuard ng;
  Tensor y = fn(in);
  return y.to_vector<double>();
}

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// Compares backward's gradients with central differences: the full Jacobian for small problems,
// else random output weights and input directions (PyTorch's fast mode).
class Checker {
 public:
  Checker(const Fn& fn, const std::vector<Tensor>& inputs, double eps, double atol, double rtol)
      : fn_(fn), inputs_(inputs), eps_(eps), atol_(atol), rtol_(rtol) {}

  GradcheckResult run() {
    select_inputs();
    Tensor y = fn_(inputs_);
    EMBER_CHECK_DTYPE(y.dtype() == DType::Float64, "gradcheck: fn must return float64, got ", y.dtype());
    if (!y.requires_grad()) {
      independent();
    } else if (y.numel() <= kFullLimit && inputs_numel() <= kFullLimit) {
      full_jacobian(y);
    } else {
      random_directions(y);
    }
    return res_;
  }

 private:
  // The inputs that require grad: float64 CPU leaves.
  void select_inputs() {
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const Tensor& x = inputs_[i];
      if (!x.defined() || !x.requires_grad()) continue;
      EMBER_CHECK_DTYPE(x.dtype() == DType::Float64 && x.device().is_cpu(), "gradcheck: input ", i,
                        " must be a float64 CPU tensor, got ", x.dtype(), " on ", x.device());
      EMBER_CHECK_VALUE(x.is_leaf(), "gradcheck: input ", i, " must be a leaf");
      checked_.push_back(i);
      req_.push_back(x);
    }
    EMBER_CHECK_VALUE(!checked_.empty(), "gradcheck: no input requires grad");
  }
  int64_t inputs_numel() const {
    int64_t n = 0;
    for (const Tensor& x : req_) n += x.numel();
    return n;
  }
  static double* storage_of(const Tensor& t) { return static_cast<double*>(t.impl()->storage()->data()); }
  // d output / d (the input elements at offs, moved together along dir), by central differences.
  std::vector<double> numeric(double* base, const std::vector<int64_t>& offs, const std::vector<double>& dir) {
    std::vector<double> saved(offs.size());
    for (size_t j = 0; j < offs.size(); ++j) saved[j] = base[offs[j]];
    auto shift = [&](double s) {
      for (size_t j = 0; j < offs.size(); ++j) base[offs[j]] = saved[j] + s * dir[j];
    };
    shift(eps_);
    std::vector<double> d = eval(fn_, inputs_);
    shift(-eps_);
    std::vector<double> ym = eval(fn_, inputs_);
    shift(0);
    for (size_t k = 0; k < d.size(); ++k) d[k] = (d[k] - ym[k]) / (2 * eps_);
    return d;
  }
  std::vector<double> numeric_at(double* base, int64_t off) { return numeric(base, {off}, {1.0}); }
  bool check(const std::string& where, double analytic, double numeric) {
    if (std::fabs(analytic - numeric) <= atol_ + rtol_ * std::fabs(numeric)) return true;
    res_.ok = false;
    res_.message = where + ": analytic " + fmt(analytic) + " vs numeric " + fmt(numeric);
    return false;
  }
  std::vector<double> values_or_zeros(const Tensor& g, const Tensor& like) const {
    return g.defined() ? g.to_vector<double>() : std::vector<double>(static_cast<size_t>(like.numel()), 0.0);
  }

  // No input reaches the output: every numeric derivative must be zero.
  void independent() {
    for (size_t r = 0; r < req_.size(); ++r)
      for (int64_t off : element_offsets(req_[r]))
        for (double d : numeric_at(storage_of(req_[r]), off))
          if (std::fabs(d) > atol_) {
            res_.ok = false;
            res_.message = "output does not require grad but depends on input " + std::to_string(checked_[r]);
            return;
          }
  }

  // Analytic Jacobian rows (one backward per output element) against one central difference per
  // input element.
  void full_jacobian(const Tensor& y) {
    const int64_t n_out = y.numel();
    std::vector<std::vector<std::vector<double>>> rows(req_.size());  // [input][out k][in j]
    for (int64_t k = 0; k < n_out; ++k) {
      Tensor go = new_f64(y.sizes());
      go.fill_(0);
      go.data_ptr<double>()[k] = 1.0;
      std::vector<Tensor> g = grad({y}, req_, {go}, /*retain_graph=*/true, /*create_graph=*/false, /*allow_unused=*/true);
      for (size_t r = 0; r < req_.size(); ++r) rows[r].push_back(values_or_zeros(g[r], req_[r]));
    }
    for (size_t r = 0; r < req_.size(); ++r) {
      std::vector<int64_t> offs = element_offsets(req_[r]);
      for (size_t j = 0; j < offs.size(); ++j) {
        std::vector<double> d = numeric_at(storage_of(req_[r]), offs[j]);
        for (int64_t k = 0; k < n_out; ++k)
          if (!check("input " + std::to_string(checked_[r]) + " element " + std::to_string(j) + ", output element " +
                         std::to_string(k),
                     rows[r][static_cast<size_t>(k)][j], d[static_cast<size_t>(k)]))
            return;
      }
    }
  }

  // Two trials of u . J . v with random output weights u and input directions v.
  void random_directions(const Tensor& y) {
    std::mt19937_64 gen(1234);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (int trial = 0; trial < 2; ++trial) {
      Tensor u = new_f64(y.sizes());
      for (int64_t k = 0; k < y.numel(); ++k) u.data_ptr<double>()[k] = dist(gen);
      std::vector<Tensor> g = grad({y}, req_, {u}, true, false, true);
      std::vector<double> uv = u.to_vector<double>();
      for (size_t r = 0; r < req_.size(); ++r) {
        std::vector<int64_t> offs = element_offsets(req_[r]);
        std::vector<double> v(offs.size());
        for (double& d : v) d = dist(gen);
        std::vector<double> gr = values_or_zeros(g[r], req_[r]);
        double analytic = 0;
        for (size_t j = 0; j < offs.size(); ++j) analytic += gr[j] * v[j];
        std::vector<double> d = numeric(storage_of(req_[r]), offs, v);
        double num = 0;
        for (size_t k = 0; k < d.size(); ++k) num += d[k] * uv[k];
        if (!check("input " + std::to_string(checked_[r]) + ", random direction " + std::to_string(trial), analytic, num))
          return;
      }
    }
  }

  const Fn& fn_;
  const std::vector<Tensor>& inputs_;
  const double eps_, atol_, rtol_;
  std::vector<size_t> checked_;  // indices of the inputs that require grad
  std::vector<Tensor> req_;      // those inputs
  GradcheckResult res_;
};

}  // namespace

GradcheckResult gradcheck_detailed(const Fn& fn, const std::vector<Tensor>& inputs, double eps, double atol,
                                   double rtol) {
  return Checker(fn, inputs, eps, atol, rtol).run();
}

bool gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
               double eps, double atol, double rtol) {
  return gradcheck_detailed(fn, inputs, eps, atol, rtol).ok;
}

GradcheckResult gradgradcheck_detailed(const Fn& fn, const std::vector<Tensor>& inputs, double eps, double atol,
                                       double rtol) {
  std::vector<size_t> req;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].requires_grad()) req.push_back(i);
  EMBER_CHECK_VALUE(!req.empty(), "gradgradcheck: no input requires grad");
  Tensor y0 = [&] {
    NoGradGuard ng;
    return fn(inputs);
  }();
  EMBER_CHECK_DTYPE(y0.dtype() == DType::Float64, "gradgradcheck: fn must return float64, got ", y0.dtype());
  // The vector of the vector-Jacobian product: fixed random values, itself differentiated.
  std::mt19937_64 gen(4321);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Tensor v = new_f64(y0.sizes());
  for (int64_t k = 0; k < v.numel(); ++k) v.data_ptr<double>()[k] = dist(gen);
  v.requires_grad_();
  std::vector<Tensor> all = inputs;
  all.push_back(v);
  // Fixed random weights w_r, one per element of each input's gradient.
  std::vector<Tensor> w;
  for (size_t i : req) {
    Tensor t = new_f64(inputs[i].sizes());
    for (int64_t k = 0; k < t.numel(); ++k) t.data_ptr<double>()[k] = dist(gen);
    w.push_back(t);
  }
  // s(x, v) = sum_r w_r . (v^T J(x))_r, the vector-Jacobian product computed with a graph
  // (create_graph) and projected on w: its gradient in x is w's product with the second
  // derivatives, its gradient in v is J w, and gradcheck compares both, element by element, with
  // central differences.
  Fn vjp = [&](const std::vector<Tensor>& xs) {
    AutoGradMode grad_mode(true);  // (gradcheck's numeric passes run under NoGradGuard)
    std::vector<Tensor> in(xs.begin(), xs.end() - 1), wrt;
    for (size_t i : req) wrt.push_back(in[i]);
    Tensor y = fn(in);
    Tensor s = new_f64({});
    s.fill_(0);
    if (!y.requires_grad()) return s;
    std::vector<Tensor> g = grad({y}, wrt, {xs.back()}, /*retain_graph=*/true, /*create_graph=*/true,
                                 /*allow_unused=*/true);
    for (size_t r = 0; r < g.size(); ++r)
      if (g[r].defined()) s = s.add(g[r].mul(w[r]).sum());
    return s;
  };
  return Checker(vjp, all, eps, atol, rtol).run();
}

bool gradgradcheck(const Fn& fn, const std::vector<Tensor>& inputs, double eps, double atol, double rtol) {
  return gradgradcheck_detailed(fn, inputs, eps, atol, rtol).ok;
}

}  // namespace autograd
}  // namespace ember
