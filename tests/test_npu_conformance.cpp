// NPU parity: every registered op runs on npu:0 on its samples, in each dtype, and agrees with
// the CPU kernel (float32 tightly, float16/bfloat16 within their rounding), forward and, for
// differentiable ops, backward.
#include <cmath>
#include <random>

#include "ember/testing/reference.h"
#include "test_util.h"

using namespace ember;
using ember::testing::OpInfo;

namespace {

// t on npu:0 with the same sizes, strides and storage offset.
Tensor to_npu_strided(const Tensor& t) {
  if (!t.defined()) return t;
  Tensor flat = ember_test::deep_copy(t).as_strided({static_cast<int64_t>(t.impl()->storage()->nbytes() / t.element_size())},
                                                    {1}, 0);
  Tensor dev = flat.npu();
  return dev.as_strided(t.sizes(), t.strides(), t.storage_offset());
}

IValue to_npu(const IValue& v) {
  if (v.is_tensor()) return IValue(to_npu_strided(v.to_tensor()));
  if (v.is_tensor_list()) {
    std::vector<Tensor> l;
    for (const Tensor& t : v.to_tensor_list()) l.push_back(to_npu_strided(t));
    return IValue(l);
  }
  if (v.tag() == IValue::Tag::Device && v.to_device().is_cpu()) return IValue(Device("npu:0"));
  return v;
}

IValue to_cpu_copy(const IValue& v) {
  if (v.is_tensor()) return IValue(ember_test::deep_copy(v.to_tensor()));
  return v;
}

// Bitwise equality is expected almost everywhere (the NPU kernels run the CPU engine); GEMM may
// pick another engine for another layout, reductions may split differently: fp32 accumulation
// noise, and one rounding step of a 16-bit result.
double tol_for(DType t, const OpInfo& info) {
  switch (t) {
    case kFloat64: return 1e-12 * info.tol_scale;
    case kFloat32: return 1e-5 * info.tol_scale;
    case kFloat16: return 2e-3 * info.tol_scale;
    case kBFloat16: return 1.6e-2 * info.tol_scale;
    default: return 0;
  }
}

void expect_close(const Tensor& npu, const Tensor& cpu, const OpInfo& info, const std::string& where) {
  ASSERT_TRUE(npu.defined() && cpu.defined()) << where;
  ASSERT_EQ(npu.sizes(), cpu.sizes()) << where;
  ASSERT_EQ(npu.dtype(), cpu.dtype()) << where << ": dtype";
  std::vector<double> a = npu.to_vector<double>(), b = cpu.to_vector<double>();
  double tol = tol_for(cpu.dtype(), info);
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) {
      continue;
    }
    ASSERT_LE(std::fabs(a[i] - b[i]), tol * (1 + std::fabs(b[i]))) << where << ": element " << i << " npu " << a[i]
                                                                    << " vs cpu " << b[i];
  }
}

std::vector<Tensor> tensors_of(const Stack& s) {
  std::vector<Tensor> out;
  for (const IValue& v : s) {
    if (v.is_tensor()) out.push_back(v.to_tensor());
    if (v.is_tensor_list())
      for (const Tensor& t : v.to_tensor_list()) out.push_back(t);
  }
  return out;
}

class OpNpu : public ::testing::TestWithParam<std::string> {};

TEST_P(OpNpu, ForwardAndBackwardMatchCpu) {
  const std::string& name = GetParam();
  const OpInfo* info = ember::testing::find_op_info(name);
  ASSERT_NE(info, nullptr);
  OperatorHandle op = Dispatcher::singleton().find_schema(name);
  ASSERT_TRUE(op.has_kernel(DispatchKey::NPU)) << name << " has no NPU kernel";
  bool differentiable = op.autograd_support() == OperatorHandle::AutogradSupport::Differentiable;
  int cases = 0;
  for (DType dt : info->dtypes) {
    for (const auto& s : info->samples(dt)) {
      std::string where = name + " [" + dtype_name(dt) + "] '" + s.desc + "'";
      Stack cpu_args, npu_args;
      for (const IValue& v : s.args) {
        cpu_args.push_back(to_cpu_copy(v));
        npu_args.push_back(to_npu(v));
      }
      Stack cpu_out = cpu_args, npu_out = npu_args;
      try {
        op.call_boxed(&cpu_out);
        op.call_boxed(&npu_out);
      } catch (const std::exception& e) {
        ADD_FAILURE() << where << ": threw " << e.what();
        continue;
      }
      std::vector<Tensor> co = tensors_of(cpu_out), no = tensors_of(npu_out);
      ASSERT_EQ(co.size(), no.size()) << where;
      for (size_t i = 0; i < co.size(); ++i) {
        EXPECT_TRUE(no[i].is_npu()) << where << ": output " << i << " is not on the npu";
        expect_close(no[i], co[i], *info, where + " output " + std::to_string(i));
      }
      if (info->inplace) {
        EXPECT_TRUE(npu_out[0].to_tensor().is_same(npu_args[0].to_tensor())) << where;
      }
      ++cases;
      // Backward: the same random output gradients on both devices.
      if (!differentiable || !is_floating_point(dt)) continue;
      std::vector<Tensor> cx, nx;  // leaves: floating tensor arguments
      Stack cpu_in = cpu_args, npu_in = npu_args;
      for (size_t i = 0; i < s.args.size(); ++i) {
        if (!s.args[i].is_tensor() || !s.args[i].to_tensor().is_floating_point()) continue;
        Tensor c = ember_test::deep_copy(s.args[i].to_tensor()).requires_grad_();
        Tensor n = to_npu_strided(s.args[i].to_tensor()).detach().requires_grad_();
        cpu_in[i] = IValue(info->inplace && i == 0 ? c.clone() : c);
        npu_in[i] = IValue(info->inplace && i == 0 ? n.clone() : n);
        cx.push_back(c);
        nx.push_back(n);
      }
      if (cx.empty()) continue;
      Stack cr = cpu_in, nr = npu_in;
      op.call_boxed(&cr);
      op.call_boxed(&nr);
      std::vector<Tensor> couts, nouts, cgo, ngo;
      std::mt19937_64 gen(9);
      std::normal_distribution<double> nd;
      std::vector<Tensor> cro = tensors_of(cr), nro = tensors_of(nr);
      for (size_t i = 0; i < cro.size(); ++i) {
        if (!cro[i].requires_grad()) continue;
        std::vector<double> v(static_cast<size_t>(cro[i].numel()));
        for (double& d : v) d = nd(gen);
        Tensor g = tensor(v, {}, kFloat64).reshape(cro[i].sizes()).to(cro[i].dtype());
        couts.push_back(cro[i]);
        nouts.push_back(nro[i]);
        cgo.push_back(g);
        ngo.push_back(g.npu());
      }
      if (couts.empty()) continue;
      std::vector<Tensor> cg = autograd::grad(couts, cx, cgo, false, false, true);
      std::vector<Tensor> ng = autograd::grad(nouts, nx, ngo, false, false, true);
      for (size_t j = 0; j < cg.size(); ++j) {
        if (!cg[j].defined()) {
          EXPECT_FALSE(ng[j].defined()) << where;
          continue;
        }
        ASSERT_TRUE(ng[j].defined()) << where << ": npu got no gradient for input " << j;
        EXPECT_TRUE(ng[j].is_npu()) << where;
        expect_close(ng[j], cg[j], *info, where + " grad " + std::to_string(j));
      }
    }
  }
  EXPECT_GT(cases, 0);
}

std::string param_name(const ::testing::TestParamInfo<std::string>& p) {
  std::string s;
  for (char c : p.param) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

std::vector<std::string> builtin_ops() {
  std::vector<std::string> out;
  for (const auto& n : Dispatcher::singleton().list_ops())
    if (n.rfind("ember::", 0) == 0 || n.rfind("nn::", 0) == 0) out.push_back(n);  // ops ember ships
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpNpu, ::testing::ValuesIn(builtin_ops()), param_name);

}  // namespace
