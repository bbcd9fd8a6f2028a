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

}  // namespace

GradcheckResult gradcheck_detailed(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                                   const std::vector<Tensor>& inputs, double eps, double atol, double rtol) {
  GradcheckResult res;
  std::vector<size_t> checked;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (!x.defined() || !x.requires_grad()) continue;
    EMBER_CHECK_DTYPE(x.dtype() == DType::Float64 && x.device().is_cpu(), "gradcheck: input ", i,
                      " must be a float64 CPU tensor, got ", x.dtype(), " on ", x.device());
    EMBER_CHECK_VALUE(x.is_leaf(), "gradcheck: input ", i, " must be a leaf");
    checked.push_back(i);
  }
  EMBER_CHECK_VALUE(!checked.empty(), "gradcheck: no input requires grad");
  Tensor y = fn(inputs);
  EMBER_CHECK_DTYPE(y.dtype() == DType::Float64, "gradcheck: fn must return float64, got ", y.dtype());
  if (!y.requires_grad()) {
    // No input reaches the output: every numeric derivative must be zero.
    for (size_t i : checked) {
      std::vector<int64_t> offs = element_offsets(inputs[i]);
      double* base = static_cast<double*>(inputs[i].impl()->storage()->data());
      for (int64_t off : offs) {
        double v = base[off];
        base[off] = v + eps;
        std::vector<double> yp = eval(fn, inputs);
        base[off] = v - eps;
        std::vector<double> ym = eval(fn, inputs);
        base[off] = v;
        for (size_t k = 0; k < yp.size(); ++k) {
          if (std::fabs((yp[k] - ym[k]) / (2 * eps)) > atol) {
            res.ok = false;
            res.message = "output does not require grad but depends on input " + std::to_string(i);
            return res;
          }
        }
      }
    }
    return res;
  }
  std::vector<Tensor> req;
  for (size_t i : checked) req.push_back(inputs[i]);
  int64_t n_out = y.numel();
  int64_t n_in = 0;
  for (const Tensor& x : req) n_in += x.numel();
  auto check = [&](const std::string& where, double analytic, double numeric) {
    if (std::fabs(analytic - numeric) <= atol + rtol * std::fabs(numeric)) return true;
    res.ok = false;
    res.message = where + ": analytic " + fmt(analytic) + " vs numeric " + fmt(numeric);
    return false;
  };

  if (n_out <= kFullLimit && n_in <= kFullLimit) {
    // Analytic Jacobian rows: one backward per output element.
    std::vector<std::vector<std::vector<double>>> rows(req.size());  // [input][out k][in j]
    for (int64_t k = 0; k < n_out; ++k) {
      Tensor go = new_f64(y.sizes());
      go.fill_(0);
      go.data_ptr<double>()[k] = 1.0;
      std::vector<Tensor> g = grad({y}, req, {go}, /*retain_graph=*/true, /*allow_unused=*/true);
      for (size_t r = 0; r < req.size(); ++r) {
        rows[r].push_back(g[r].defined() ? g[r].to_vector<double>() : std::vector<double>(static_cast<size_t>(req[r].numel()), 0.0));
      }
    }
    for (size_t r = 0; r < req.size(); ++r) {
      std::vector<int64_t> offs = element_offsets(req[r]);
      double* base = static_cast<double*>(req[r].impl()->storage()->data());
      for (size_t j = 0; j < offs.size(); ++j) {
        double v = base[offs[j]];
        base[offs[j]] = v + eps;
        std::vector<double> yp = eval(fn, inputs);
        base[offs[j]] = v - eps;
        std::vector<double> ym = eval(fn, inputs);
        base[offs[j]] = v;
        for (int64_t k = 0; k < n_out; ++k) {
          double numeric = (yp[static_cast<size_t>(k)] - ym[static_cast<size_t>(k)]) / (2 * eps);
          double analytic = rows[r][static_cast<size_t>(k)][j];
          if (!check("input " + std::to_string(checked[r]) + " element " + std::to_string(j) + ", output element " +
                         std::to_string(k),
                     analytic, numeric))
            return res;
        }
      }
    }
    return res;
  }

  // Fast mode: random output weights u and input directions v.
  std::mt19937_64 gen(1234);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (int trial = 0; trial < 2; ++trial) {
    Tensor u = new_f64(y.sizes());
    for (int64_t k = 0; k < n_out; ++k) u.data_ptr<double>()[k] = dist(gen);
    std::vector<Tensor> g = grad({y}, req, {u}, true, true);
    std::vector<double> uv = u.to_vector<double>();
    for (size_t r = 0; r < req.size(); ++r) {
      std::vector<int64_t> offs = element_offsets(req[r]);
      std::vector<double> v(offs.size());
      for (double& d : v) d = dist(gen);
      std::vector<double> gr = g[r].defined() ? g[r].to_vector<double>() : std::vector<double>(offs.size(), 0.0);
      double analytic = 0;
      for (size_t j = 0; j < offs.size(); ++j) analytic += gr[j] * v[j];
      double* base = static_cast<double*>(req[r].impl()->storage()->data());
      std::vector<double> saved(offs.size());
      for (size_t j = 0; j < offs.size(); ++j) saved[j] = base[offs[j]];
      auto shift = [&](double s) {
        for (size_t j = 0; j < offs.size(); ++j) base[offs[j]] = saved[j] + s * v[j];
      };
      shift(eps);
      std::vector<double> yp = eval(fn, inputs);
      shift(-eps);
      std::vector<double> ym = eval(fn, inputs);
      shift(0);
      double numeric = 0;
      for (size_t k = 0; k < yp.size(); ++k) numeric += (yp[k] - ym[k]) / (2 * eps) * uv[k];
      if (!check("input " + std::to_string(checked[r]) + ", random direction " + std::to_string(trial), analytic,
                 numeric))
        return res;
    }
  }
  return res;
}

bool gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
               double eps, double atol, double rtol) {
  return gradcheck_detailed(fn, inputs, eps, atol, rtol).ok;
}

}  // namespace autograd
}  // namespace ember
