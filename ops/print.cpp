// Printing like PyTorch: tensor([[ 0.1000, -2.0000], ...]) with dtype/device/grad suffixes. It
// lives in ops/, above autograd, because the grad_fn suffix is autograd's.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <vector>

#include "ember/autograd/meta.h"
#include "ember/tensor/tensor.h"

namespace ember {

namespace {

constexpr int64_t kSummarizeThreshold = 1000;
constexpr int64_t kEdgeItems = 3;

struct Formatter {
  bool floating = false, is_bool = false, int_mode = false, sci_mode = false;
  int width = 1;
  int precision = 4;

  std::string fmt(double v, int64_t iv) const {
    char buf[64];
    if (is_bool) return iv ? "True" : "False";
    if (!floating) {
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(iv));
    } else if (std::isnan(v)) {
      return "nan";
    } else if (std::isinf(v)) {
      return v > 0 ? "inf" : "-inf";
    } else if (sci_mode) {
      std::snprintf(buf, sizeof buf, "%.*e", precision, v);
    } else if (int_mode) {
      std::snprintf(buf, sizeof buf, "%.0f.", v);
    } else {
      std::snprintf(buf, sizeof buf, "%.*f", precision, v);
    }
    return buf;
  }
};

struct Printer {
  const std::vector<double>* fv;
  const std::vector<int64_t>* iv;
  IntArrayRef sizes;
  DimVector strides;
  bool summarize;
  Formatter f;

  std::string elem(int64_t idx) const {
    std::string s = f.fmt(f.floating ? (*fv)[static_cast<size_t>(idx)] : 0.0,
                          f.floating ? 0 : (*iv)[static_cast<size_t>(idx)]);
    if (static_cast<int>(s.size()) < f.width) s = std::string(static_cast<size_t>(f.width) - s.size(), ' ') + s;
    return s;
  }

  void rec(std::ostringstream& os, size_t dim, int64_t base, int indent) const {
    if (dim == sizes.size()) {
      os << elem(base);
      return;
    }
    int64_t n = sizes[dim];
    os << '[';
    for (int64_t i = 0; i < n; ++i) {
      if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
        if (dim + 1 == sizes.size()) {
          os << "..., ";
        } else {
          os << "...,\n" << std::string(static_cast<size_t>(indent + 1), ' ');
          if (sizes.size() - dim > 2) os << "\n" << std::string(static_cast<size_t>(indent + 1), ' ');
        }
        i = n - kEdgeItems;
      }
      rec(os, dim + 1, base + i * strides[dim], indent + 1);
      if (i + 1 < n) {
        if (dim + 1 == sizes.size()) {
          os << ", ";
        } else {
          os << ",\n";
          for (size_t k = 0; k + dim + 2 < sizes.size(); ++k) os << "\n";
          os << std::string(static_cast<size_t>(indent + 1), ' ');
        }
      }
    }
    os << ']';
  }
};

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "[ Tensor (undefined) ]";
  Tensor c = cpu().contiguous();
  DType dt = c.dtype();
  int64_t n = c.numel();
  std::vector<double> fv;
  std::vector<int64_t> iv;
  Formatter f;
  f.floating = ember::is_floating_point(dt);
  f.is_bool = dt == DType::Bool;
  if (f.floating) {
    fv = c.to_vector<double>();
  } else {
    iv = c.to_vector<int64_t>();
  }
  bool summarize = n > kSummarizeThreshold;
  // Choose the float format from the finite non-zero magnitudes, as PyTorch does.
  if (f.floating) {
    double amin = INFINITY, amax = 0;
    bool all_int = true, any = false;
    for (double v : fv) {
      if (!std::isfinite(v)) continue;
      if (v != std::ceil(v)) all_int = false;
      double a = std::fabs(v);
      if (a == 0) continue;
      any = true;
      amin = std::min(amin, a);
      amax = std::max(amax, a);
    }
    f.int_mode = all_int;
    if (any) {
      if (all_int) {
        f.sci_mode = amax > 1e8;
      } else {
        f.sci_mode = amax / amin > 1000.0 || amax > 1e8 || amin < 1e-4;
      }
    }
  }
  for (size_t i = 0; i < (f.floating ? fv.size() : iv.size()); ++i)
    f.width = std::max(f.width, static_cast<int>(f.fmt(f.floating ? fv[i] : 0, f.floating ? 0 : iv[i]).size()));

  std::ostringstream os;
  os << "tensor(";
  if (c.dim() == 0) {
    os << Printer{&fv, &iv, c.sizes_ref(), DimVector(), false, f}.elem(0);
  } else if (n == 0) {
    os << "[]";
    if (c.dim() > 1) os << ", size=" << c.sizes_ref();
  } else {
    Printer p{&fv, &iv, c.sizes_ref(), contiguous_strides(c.sizes_ref()), summarize, f};
    p.rec(os, 0, 0, 7);
  }
  if (dt != DType::Float32 && dt != DType::Int64 && dt != DType::Bool) os << ", dtype=" << dt;
  if (!device().is_cpu()) os << ", device='" << device() << "'";
  os << autograd::print_suffix(*this) << ")";
  return os.str();
}

void Tensor::print() const { std::cout << str() << std::endl; }

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace ember
