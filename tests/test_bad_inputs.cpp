// Bad inputs to every op of the registry (issue 10): each op's first sample, broken one argument
// at a time (mixed devices, dims and sizes that are huge, negative or INT64_MIN, empty tensors,
// other dtypes, non-contiguous layouts), on cpu and on npu:0.
//
// Each case has an expected outcome: mixed devices and out-of-range dims are a DeviceError /
// IndexError; every other case either works or throws one of ember's named errors (a subclass
// of ember::Error, never the bare base class, never another exception), and the two devices
// agree: the same error class, or results of the same shape and dtype with the same values.
// Non-contiguous inputs always work and equal the contiguous result.
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "ember/dispatch/dispatcher.h"
#include "ember/testing/op_info.h"
#include "test_util.h"

using namespace ember;

namespace {

const Device kNpu("npu:0");

struct Outcome {
  std::string kind;  // "ok", or the error class
  std::string msg;
  Stack out;         // outputs, on the CPU
};

std::string error_kind(const Error& e) {
  if (dynamic_cast<const ShapeError*>(&e)) return "ShapeError";
  if (dynamic_cast<const DTypeError*>(&e)) return "DTypeError";
  if (dynamic_cast<const DeviceError*>(&e)) return "DeviceError";
  if (dynamic_cast<const IndexError*>(&e)) return "IndexError";
  if (dynamic_cast<const NotImplementedError*>(&e)) return "NotImplementedError";
  if (dynamic_cast<const OutOfMemoryError*>(&e)) return "OutOfMemoryError";
  if (dynamic_cast<const ValueError*>(&e)) return "ValueError";
  if (dynamic_cast<const TypeError*>(&e)) return "TypeError";
  return "Error";
}

IValue to_cpu(const IValue& v) {
  if (v.is_tensor() && v.to_tensor().defined()) return IValue(v.to_tensor().cpu());
  if (v.is_tensor_list()) {
    std::vector<Tensor> l;
    for (const Tensor& t : v.to_tensor_list()) l.push_back(t.defined() ? t.cpu() : t);
    return IValue(l);
  }
  return v;
}

IValue to_device(const IValue& v, const Device& d) {
  if (v.is_tensor() && v.to_tensor().defined()) return IValue(v.to_tensor().to(d));
  if (v.is_tensor_list()) {
    std::vector<Tensor> l;
    for (const Tensor& t : v.to_tensor_list()) l.push_back(t.defined() ? t.to(d) : t);
    return IValue(l);
  }
  return v;
}

// Runs the op on copies of args (in-place ops must not touch the sample), outputs read back.
Outcome run(const OperatorHandle& op, const Stack& args) {
  Outcome o;
  Stack s;
  for (const IValue& v : args)
    s.push_back(v.is_tensor() && v.to_tensor().defined() ? IValue(v.to_tensor().clone()) : v);
  try {
    op.call_boxed(&s);
    for (const IValue& v : s) o.out.push_back(to_cpu(v));  // NPU faults surface here
    o.kind = "ok";
  } catch (const Error& e) {
    o.kind = error_kind(e);
    o.msg = e.what();
  } catch (const std::exception& e) {
    o.kind = std::string("std::exception (not an ember::Error)");
    o.msg = e.what();
  }
  return o;
}

Stack on(const Stack& args, const Device& d) {
  Stack s;
  for (const IValue& v : args) s.push_back(to_device(v, d));
  return s;
}

bool same_tensor(const Tensor& a, const Tensor& b, std::string* why) {
  if (a.defined() != b.defined()) return *why = "one output is undefined", false;
  if (!a.defined()) return true;
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) {
    std::ostringstream os;
    os << "outputs differ: " << a.sizes() << " " << a.dtype() << " vs " << b.sizes() << " " << b.dtype();
    return *why = os.str(), false;
  }
  if (a.numel() == 0) return true;
  Tensor x = a.to(kFloat64).contiguous(), y = b.to(kFloat64).contiguous();
  const double* px = x.data_ptr<double>();
  const double* py = y.data_ptr<double>();
  // Both devices compute with the same engine; the tolerance covers reduced-precision rounding.
  double tol = a.dtype() == kFloat16 || a.dtype() == kBFloat16 ? 2e-2 : 1e-4;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (std::isnan(px[i]) && std::isnan(py[i])) continue;
    if (px[i] == py[i]) continue;  // equal infinities
    if (!(std::fabs(px[i] - py[i]) <= tol * (1 + std::fabs(px[i])))) {
      return *why = "element " + std::to_string(i) + ": " + std::to_string(px[i]) + " vs " + std::to_string(py[i]),
             false;
    }
  }
  return true;
}

bool same_outputs(const Outcome& a, const Outcome& b, std::string* why) {
  if (a.out.size() != b.out.size()) return *why = "different numbers of outputs", false;
  for (size_t i = 0; i < a.out.size(); ++i) {
    if (a.out[i].is_tensor() && !same_tensor(a.out[i].to_tensor(), b.out[i].to_tensor(), why)) return false;
    if (a.out[i].is_tensor_list()) {
      const auto& la = a.out[i].to_tensor_list();
      const auto& lb = b.out[i].to_tensor_list();
      if (la.size() != lb.size()) return *why = "list lengths differ", false;
      for (size_t k = 0; k < la.size(); ++k)
        if (!same_tensor(la[k], lb[k], why)) return false;
    }
  }
  return true;
}

class BadInputs : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string& name = GetParam();
    info_ = ember::testing::find_op_info(name);
    ASSERT_NE(info_, nullptr);
    op_ = Dispatcher::singleton().find_schema(name);
    DType dt = info_->dtypes.front();
    for (DType d : info_->dtypes)
      if (d == kFloat32) dt = d;
    std::vector<ember::testing::Sample> samples = info_->samples(dt);
    ASSERT_FALSE(samples.empty());
    args_ = samples.front().args;
    for (size_t i = 0; i < args_.size(); ++i)
      if (args_[i].is_tensor() && args_[i].to_tensor().defined()) tensors_.push_back(i);
    Outcome npu = run(op_, on(args_, kNpu));
    has_npu_kernel_ = !(npu.kind == "NotImplementedError" && npu.msg.find("no kernel for dispatch key NPU") != std::string::npos);
  }

  // The variant must work or throw a named error, the same on both devices.
  void expect_consistent(const Stack& variant, const std::string& what) {
    Outcome c = run(op_, variant), n = run(op_, on(variant, kNpu));
    std::string where = GetParam() + ", " + what;
    if (!has_npu_kernel_) n = c;  // ops registered by tests for the CPU only
    EXPECT_NE(c.kind, "Error") << where << ": the bare ember::Error on cpu, not a named one: " << c.msg;
    EXPECT_EQ(c.kind.find("std::"), std::string::npos) << where << " on cpu: " << c.msg;
    EXPECT_EQ(c.kind, n.kind) << where << ": cpu gives " << c.kind << " (" << c.msg << "), npu gives " << n.kind << " ("
                              << n.msg << ")";
    std::string why;
    if (c.kind == "ok" && n.kind == "ok") {
      EXPECT_TRUE(same_outputs(c, n, &why)) << where << ": cpu and npu results differ: " << why;
    }
    ++cases_;
  }

  // The variant must throw E on both devices, its message holding every part.
  template <class E>
  void expect_named(const Stack& variant, const std::string& what, std::initializer_list<std::string> parts) {
    for (const Device& d : {Device(DeviceType::CPU), kNpu}) {
      if (d == kNpu && !has_npu_kernel_) continue;
      SCOPED_TRACE(GetParam() + ", " + what + " on " + d.str());
      ember_test::expect_error<E>([&] { Outcome o = run_throwing(d == kNpu ? on(variant, kNpu) : variant); },
                                  parts);
    }
    ++cases_;
  }
  Outcome run_throwing(const Stack& args) {
    Stack s = args;
    op_.call_boxed(&s);
    Outcome o;
    for (const IValue& v : s) o.out.push_back(to_cpu(v));
    return o;
  }

  void MixedDevicesAreADeviceError();
  void DimsOutOfRangeAreAnIndexError();
  void HugeNegativeAndExtremeIntegersWorkOrRaiseNamedErrors();
  void EmptyTensorsWorkOrRaiseNamedErrors();
  void OtherDtypesWorkOrRaiseNamedErrors();
  void NonContiguousInputsGiveTheContiguousResult();

  const ember::testing::OpInfo* info_ = nullptr;
  OperatorHandle op_;
  Stack args_;
  std::vector<size_t> tensors_;  // indices of the defined tensor arguments
  int cases_ = 0;
  bool has_npu_kernel_ = true;
};

bool is_dim_name(const std::string& n) { return n == "dim" || n == "dims" || n == "dim0" || n == "dim1"; }

void BadInputs::MixedDevicesAreADeviceError() {
  if (tensors_.size() < 2 || GetParam() == "ember::copy_") return;  // copy_ copies between devices
  for (size_t k : tensors_) {
    Stack v = args_;
    v[k] = to_device(v[k], kNpu);
    ember_test::expect_error<DeviceError>([&] { run_throwing(v); }, {"npu:0", "cpu"});
    Stack w = on(args_, kNpu);
    w[k] = to_device(w[k], Device(DeviceType::CPU));
    ember_test::expect_error<DeviceError>([&] { run_throwing(w); }, {"npu:0", "cpu"});
    cases_ += 2;
  }
}

void BadInputs::DimsOutOfRangeAreAnIndexError() {
  const auto& schema = op_.schema().arguments;
  for (size_t i = 0; i < args_.size() && i < schema.size(); ++i) {
    if (!is_dim_name(schema[i].name)) continue;
    for (int64_t bad : {int64_t(1) << 40, -(int64_t(1) << 40), std::numeric_limits<int64_t>::min()}) {
      Stack v = args_;
      if (schema[i].type == ArgType::Int || schema[i].type == ArgType::OptionalInt) {
        v[i] = IValue(bad);
      } else if (schema[i].type == ArgType::IntList && !v[i].to_int_list().empty()) {
        std::vector<int64_t> l = v[i].to_int_list();
        l.back() = bad;  // one dim of the list out of range
        v[i] = IValue(l);
      } else {
        continue;
      }
      expect_named<IndexError>(v, schema[i].name + " = " + std::to_string(bad), {"out of range"});
    }
  }
}

void BadInputs::HugeNegativeAndExtremeIntegersWorkOrRaiseNamedErrors() {
  const auto& schema = op_.schema().arguments;
  const int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < args_.size() && i < schema.size(); ++i) {
    if (is_dim_name(schema[i].name)) continue;  // above
    if (schema[i].type == ArgType::Int || schema[i].type == ArgType::OptionalInt) {
      for (int64_t bad : {int64_t(1) << 62, -(int64_t(1) << 62), kMin, kMax, int64_t(-5)}) {
        Stack v = args_;
        v[i] = IValue(bad);
        expect_consistent(v, schema[i].name + " = " + std::to_string(bad));
      }
    } else if (schema[i].type == ArgType::IntList) {
      for (std::vector<int64_t> bad : {std::vector<int64_t>{int64_t(1) << 62, int64_t(1) << 62},
                                       std::vector<int64_t>{-5}, std::vector<int64_t>{kMin}, std::vector<int64_t>{kMax, 2}}) {
        Stack v = args_;
        v[i] = IValue(bad);
        expect_consistent(v, schema[i].name + " = a list starting " + std::to_string(bad[0]));
      }
    }
  }
}

void BadInputs::EmptyTensorsWorkOrRaiseNamedErrors() {
  for (size_t k : tensors_) {
    const Tensor& t = args_[k].to_tensor();
    if (t.dim() == 0) continue;
    std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
    shape[0] = 0;
    Stack v = args_;
    v[k] = IValue(empty(shape, t.dtype()));
    expect_consistent(v, "argument " + std::to_string(k) + " empty");
  }
}

void BadInputs::OtherDtypesWorkOrRaiseNamedErrors() {
  for (size_t k : tensors_) {
    for (DType d : {kFloat64, kFloat16, kInt64, kInt32, kBool}) {
      Stack v = args_;
      v[k] = IValue(v[k].to_tensor().to(d));
      std::ostringstream what;
      what << "argument " << k << " as " << d;
      expect_consistent(v, what.str());
    }
  }
}

void BadInputs::NonContiguousInputsGiveTheContiguousResult() {
  Outcome base = run(op_, args_);
  ASSERT_EQ(base.kind, "ok") << base.msg;
  for (size_t k : tensors_) {
    const Tensor& t = args_[k].to_tensor();
    if (t.dim() < 2 || info_->inplace) continue;
    for (const Device& d : {Device(DeviceType::CPU), kNpu}) {
      if (d == kNpu && !has_npu_kernel_) continue;
      // The same values in a transposed buffer: same shape, other strides.
      Stack v = on(args_, d);
      v[k] = IValue(t.to(d).transpose(0, -1).contiguous().transpose(0, -1));
      Outcome o = run(op_, v);
      ASSERT_EQ(o.kind, "ok") << GetParam() << " on " << d.str() << ", argument " << k << " non-contiguous: " << o.msg;
      std::string why;
      EXPECT_TRUE(same_outputs(base, o, &why)) << GetParam() << " on " << d.str() << ", argument " << k
                                               << " non-contiguous: " << why;
      ++cases_;
    }
  }
}

// One test per op: each kind of bad input that applies to the op's arguments.
TEST_P(BadInputs, WorkOrRaiseNamedErrorsTheSameOnCpuAndNpu) {
  MixedDevicesAreADeviceError();
  DimsOutOfRangeAreAnIndexError();
  HugeNegativeAndExtremeIntegersWorkOrRaiseNamedErrors();
  EmptyTensorsWorkOrRaiseNamedErrors();
  OtherDtypesWorkOrRaiseNamedErrors();
  NonContiguousInputsGiveTheContiguousResult();
  EXPECT_GT(cases_, 0) << GetParam() << ": no bad input applies";
}

std::vector<std::string> ops_with_samples() {
  std::vector<std::string> names;
  for (const ember::testing::OpInfo* i : ember::testing::all_op_infos()) names.push_back(i->name);
  return names;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& p) {
  std::string s;
  for (char c : p.param) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(EveryOp, BadInputs, ::testing::ValuesIn(ops_with_samples()), test_name);

}  // namespace
