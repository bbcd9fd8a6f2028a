// Gradient conformance: every registered op is differentiable with a backward that passes
// gradcheck on its samples (float64), or is marked not differentiable / unsupported. For
// differentiable ops, float32 and bfloat16 gradients agree with float64 ones.
#include <cmath>
#include <random>
#include <set>

#include "ember/testing/reference.h"
#include "test_util.h"

using namespace ember;
using ember::testing::OpInfo;
using ember::testing::Sample;
using Support = OperatorHandle::AutogradSupport;

namespace {

// Positions of floating tensors in a sample: (argument, index in a list or -1).
std::vector<std::pair<size_t, int>> float_inputs(const Stack& args) {
  std::vector<std::pair<size_t, int>> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_tensor() && args[i].to_tensor().defined() && args[i].to_tensor().is_floating_point())
      out.emplace_back(i, -1);
    if (args[i].is_tensor_list()) {
      const auto& l = args[i].to_tensor_list();
      for (size_t k = 0; k < l.size(); ++k)
        if (l[k].is_floating_point()) out.emplace_back(i, static_cast<int>(k));
    }
  }
  return out;
}

Stack with_inputs(const Stack& args, const std::vector<std::pair<size_t, int>>& pos, const std::vector<Tensor>& xs) {
  Stack st = args;
  for (size_t j = 0; j < pos.size(); ++j) {
    auto [i, k] = pos[j];
    if (k < 0) {
      st[i] = IValue(xs[j]);
    } else {
      std::vector<Tensor> l = st[i].to_tensor_list();
      l[static_cast<size_t>(k)] = xs[j];
      st[i] = IValue(l);
    }
  }
  return st;
}

std::vector<Tensor> float_outputs(const Stack& out) {
  std::vector<Tensor> r;
  for (const IValue& v : out) {
    if (v.is_tensor() && v.to_tensor().is_floating_point()) r.push_back(v.to_tensor());
    if (v.is_tensor_list())
      for (const Tensor& t : v.to_tensor_list())
        if (t.is_floating_point()) r.push_back(t);
  }
  return r;
}

// Runs the op on leaves xs (in-place ops write into a clone of argument 0, so the leaf stays).
std::vector<Tensor> run(const OperatorHandle& op, const OpInfo& info, const Stack& args,
                        const std::vector<std::pair<size_t, int>>& pos, const std::vector<Tensor>& xs) {
  Stack st = with_inputs(args, pos, xs);
  if (info.inplace) st[0] = IValue(st[0].to_tensor().clone());
  op.call_boxed(&st);
  return float_outputs(st);
}

// Leaf copies of the floating inputs, keeping their strides; as_f64 converts mixed-dtype
// samples (e.g. a float32 operand in a float64 sample) for gradcheck.
std::vector<Tensor> leaves_of(const Stack& args, const std::vector<std::pair<size_t, int>>& pos, bool as_f64 = false) {
  std::vector<Tensor> xs;
  for (auto [i, k] : pos) {
    Tensor t = k < 0 ? args[i].to_tensor() : args[i].to_tensor_list()[static_cast<size_t>(k)];
    Tensor c = ember_test::deep_copy(t);
    if (as_f64 && c.dtype() != kFloat64) c = c.to(kFloat64);
    xs.push_back(c.requires_grad_());
  }
  return xs;
}

class OpGradients : public ::testing::TestWithParam<std::string> {};

TEST_P(OpGradients, BackwardMatchesFiniteDifferencesAndLowPrecisionAgrees) {
  const std::string& name = GetParam();
  OperatorHandle op = Dispatcher::singleton().find_schema(name);
  const OpInfo* info = ember::testing::find_op_info(name);
  ASSERT_NE(info, nullptr) << name << " has no samples";
  Support support = op.autograd_support();
  ASSERT_NE(support, Support::Missing) << name
      << ": no autograd kernel. Write a backward (autograd/op_spec.h) or mark it "
         "m.impl_not_differentiable / m.impl_autograd_unsupported in EMBER_LIBRARY_IMPL(ns, Autograd, m)";
  bool has_float = false;
  for (DType dt : info->dtypes) has_float |= is_floating_point(dt);
  if (!has_float) return;
  std::vector<Sample> samples = info->samples(kFloat64);
  int checked = 0;
  for (const Sample& s : samples) {
    auto pos = float_inputs(s.args);
    if (pos.empty()) continue;
    std::vector<Tensor> xs = leaves_of(s.args, pos, true);
    std::string where = name + " sample '" + s.desc + "'";
    if (support == Support::Unsupported) {
      EXPECT_THROW(run(op, *info, s.args, pos, xs), NotImplementedError) << where;
      ++checked;
      continue;
    }
    bool writes_input = false;
    for (const auto& a : op.schema().arguments) writes_input |= a.is_mutable;
    if (support == Support::NotDifferentiable && writes_input) {
      // Writing into a tensor that requires grad is refused in grad mode; fine under NoGradGuard.
      ember_test::expect_error<NotImplementedError>([&] { run(op, *info, s.args, pos, xs); }, {"NoGradGuard"});
      NoGradGuard no_grad;
      for (const Tensor& o : run(op, *info, s.args, pos, xs)) EXPECT_FALSE(o.requires_grad()) << where;
      ++checked;
      continue;
    }
    std::vector<Tensor> outs = run(op, *info, s.args, pos, xs);
    if (support == Support::NoDoubleBackward) {
      // A backward kernel without a derivative: recorded, and differentiating through it is a
      // named error.
      ASSERT_FALSE(outs.empty()) << where;
      EXPECT_TRUE(outs[0].requires_grad()) << where;
      ember_test::expect_error<NotImplementedError>([&] { outs[0].sum().backward(); },
                                                    {name.c_str(), "double backward is not implemented"});
      ++checked;
      continue;
    }
    if (support == Support::NotDifferentiable) {
      for (const Tensor& o : outs) EXPECT_FALSE(o.requires_grad()) << where << ": marked not differentiable";
      ++checked;
      continue;
    }
    if (outs.empty()) {  // e.g. all/any of a float: bool outputs carry no gradient
      Stack st = with_inputs(s.args, pos, xs);
      op.call_boxed(&st);
      for (const IValue& v : st) {
        if (v.is_tensor()) {
          EXPECT_FALSE(v.to_tensor().requires_grad()) << where << ": a non-floating output";
        }
      }
      ++checked;
      continue;
    }
    bool f64_out = true;
    for (const Tensor& o : outs) f64_out &= o.dtype() == kFloat64;
    if (!f64_out) continue;  // finite differences need float64 outputs (e.g. to(float16) is checked below)
    auto fn = [&](const std::vector<Tensor>& in) {
      std::vector<Tensor> o = run(op, *info, s.args, pos, in);
      std::vector<Tensor> flat;
      for (const Tensor& t : o) flat.push_back(t.reshape({-1}));
      return cat(flat);
    };
    auto r = autograd::gradcheck_detailed(fn, xs, 1e-6, 1e-5, 1e-3);
    EXPECT_TRUE(r.ok) << where << ": " << r.message;
    ++checked;
  }
  if (support != Support::Differentiable) return;

  // float32 / bfloat16 gradients vs float64 gradients of the same (exactly representable) inputs.
  // Tolerance relative to the largest reference gradient: fp32 formulas carry ~1e-6 rounding
  // per op; bf16 stores every intermediate with 8 bits (2^-8 = 3.9e-3 relative), and a formula
  // chains a few ops, each adding up to half an ulp, plus the rounded forward values it reuses.
  for (DType dt : {kFloat32, kBFloat16}) {
    if (std::find(info->dtypes.begin(), info->dtypes.end(), dt) == info->dtypes.end()) continue;
    auto tol_for = [&](DType t) {
      double base = t == kFloat64 || t == kFloat32 ? 1e-4 : t == kFloat16 ? 2e-3 : 4e-2;
      return base * info->tol_scale;
    };
    for (const Sample& s : info->samples(dt)) {
      auto pos = float_inputs(s.args);
      if (pos.empty()) continue;
      Stack ref_args = ember::testing::to_float64(s.args);
      std::vector<Tensor> xs = leaves_of(s.args, pos), xr = leaves_of(ref_args, pos);
      std::vector<Tensor> out = run(op, *info, s.args, pos, xs), outr = run(op, *info, ref_args, pos, xr);
      if (out.empty() || !out[0].requires_grad()) continue;
      std::mt19937_64 gen(5);
      std::normal_distribution<double> nd;
      std::vector<Tensor> go, gor;
      for (const Tensor& o : outr) {
        std::vector<double> v(static_cast<size_t>(o.numel()));
        for (double& d : v) d = nd(gen);
        Tensor g = tensor(v, {}, kFloat64).reshape(o.sizes());
        gor.push_back(g);
      }
      for (size_t i = 0; i < out.size(); ++i) go.push_back(gor[i].to(out[i].dtype()));
      // Round the reference's grad_outputs the same way.
      for (size_t i = 0; i < out.size(); ++i) gor[i] = go[i].to(kFloat64);
      std::vector<Tensor> g = autograd::grad(out, xs, go, false, false, true);
      std::vector<Tensor> gr = autograd::grad(outr, xr, gor, false, false, true);
      for (size_t j = 0; j < g.size(); ++j) {
        if (!gr[j].defined()) continue;
        ASSERT_TRUE(g[j].defined()) << name << " [" << dt << "] '" << s.desc << "': input " << j << " got no gradient";
        // The gradient is stored in the input's dtype: the coarser of the two decides.
        double tol = std::max(tol_for(dt), tol_for(g[j].dtype()));
        std::vector<double> a = g[j].to_vector<double>(), b = gr[j].to_vector<double>();
        double scale = 0;
        for (double v : b) scale = std::max(scale, std::fabs(v));
        for (size_t e = 0; e < a.size(); ++e) {
          if (std::isnan(b[e]) && std::isnan(a[e])) continue;
          ASSERT_LE(std::fabs(a[e] - b[e]), tol * (scale + std::fabs(b[e])) + 1e-12)
              << name << " [" << dt << "] '" << s.desc << "': input " << j << " element " << e << " = " << a[e]
              << ", float64 " << b[e] << " (scale " << scale << ")";
        }
      }
    }
  }
  EXPECT_GT(checked, 0) << name << ": no sample with floating inputs was checked";
}

std::string param_name(const ::testing::TestParamInfo<std::string>& p) {
  std::string s;
  for (char c : p.param) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpGradients, ::testing::ValuesIn(Dispatcher::singleton().list_ops()), param_name);

// Second derivatives: every differentiable op passes gradgradcheck on its float64 samples, on
// the CPU and on the NPU (inputs moved there inside the function, so the NPU kernels run both
// backward passes), or, if its backward goes through a kernel without a derivative, raises
// NotImplementedError saying so. Which ops do is listed here, so a change either way shows.
const std::set<std::string> kNoDoubleBackward = {
    "ember::cross_entropy", "ember::softmax", "ember::log_softmax", "ember::gelu",       "ember::embedding",
    "ember::rms_norm",      "ember::_rms_norm", "ember::silu_mul",  "ember::swiglu",
    "ember::index_select",  "nn::dispersion_correction"};

class OpGradGrad : public ::testing::TestWithParam<std::string> {};

TEST(GradGrad, TheListOfOpsWithoutDoubleBackwardNamesRegisteredOps) {
  for (const std::string& name : kNoDoubleBackward)
    EXPECT_NO_THROW(Dispatcher::singleton().find_schema(name)) << name << " is not a registered op";
}

TEST_P(OpGradGrad, SecondDerivativesMatchFiniteDifferencesOnCpuAndNpu) {
  const std::string& name = GetParam();
  OperatorHandle op = Dispatcher::singleton().find_schema(name);
  const OpInfo* info = ember::testing::find_op_info(name);
  ASSERT_NE(info, nullptr) << name << " has no samples";
  if (op.autograd_support() != Support::Differentiable || info->inplace) return;
  if (std::find(info->dtypes.begin(), info->dtypes.end(), kFloat64) == info->dtypes.end()) return;
  bool expect_error = kNoDoubleBackward.count(name) > 0;
  int checked = 0, refused = 0, non_floating = 0;
  for (const char* dev : {"cpu", "npu:0"}) {
    Device d(dev);
    if (d.is_npu() && !op.has_kernel(DispatchKey::NPU)) continue;  // (test ops with a CPU kernel only)
    for (const Sample& s : info->samples(kFloat64)) {
      auto pos = float_inputs(s.args);
      if (pos.empty()) continue;
      std::vector<Tensor> xs = leaves_of(s.args, pos, true);
      Stack args = s.args;
      for (IValue& v : args) {  // the other tensor arguments (indices, masks) go to the device too
        if (v.is_tensor() && v.to_tensor().defined()) v = IValue(v.to_tensor().to(d));
      }
      auto fn = [&](const std::vector<Tensor>& in) {
        std::vector<Tensor> on;
        for (const Tensor& x : in) on.push_back(x.to(d));
        std::vector<Tensor> o = run(op, *info, args, pos, on);
        std::vector<Tensor> flat;
        for (const Tensor& t : o) flat.push_back(t.to(Device("cpu")).reshape({-1}));
        return flat.size() == 1 ? flat[0] : cat(flat);
      };
      std::string where = name + " [" + dev + "] sample '" + s.desc + "'";
      bool f64_out = true;
      {
        std::vector<Tensor> on;
        for (const Tensor& x : xs) on.push_back(x.detach().to(d));
        std::vector<Tensor> o = run(op, *info, args, pos, on);
        f64_out = !o.empty();
        for (const Tensor& t : o) f64_out &= t.dtype() == kFloat64;
      }
      if (!f64_out) {  // no floating output (all, any) or a conversion (to float16)
        ++non_floating;
        continue;
      }
      try {
        auto r = autograd::gradgradcheck_detailed(fn, xs, 1e-6, 1e-5, 1e-3);
        EXPECT_TRUE(r.ok) << where << ": " << r.message;
        EXPECT_FALSE(expect_error) << where << ": listed as having no double backward, but it passed gradgradcheck";
        ++checked;
      } catch (const NotImplementedError& e) {
        EXPECT_TRUE(expect_error) << where << ": " << e.what();
        EXPECT_NE(std::string(e.what()).find("double backward is not implemented"), std::string::npos) << e.what();
        ++refused;
      }
    }
  }
  EXPECT_GT(checked + refused + non_floating, 0) << name << ": no sample checked";
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpGradGrad, ::testing::ValuesIn(Dispatcher::singleton().list_ops()), param_name);

}  // namespace
