// The dispatcher: schemas, typed and boxed calls, registration through the public Library API,
// overriding and restoring kernels, dumps.
#include <cmath>
#include "ember/testing/reference.h"

#include "test_util.h"

using namespace ember;

namespace {

// A user op registered exactly as built-in ops are.
Tensor scale_shift_cpu(const Tensor& x, double a, double b) { return x * a + b; }
Tensor scale_shift_twice(const Tensor& x, double a, double b) { return (x * a + b) * 2; }

EMBER_LIBRARY(disp_test, m) {
  m.def("scale_shift(Tensor x, float a, float b=1.5) -> Tensor");
  m.def("pair(Tensor x) -> (Tensor, Tensor)");
  m.def("composite_square(Tensor x) -> Tensor", +[](const Tensor& x) { return x * x; });
}
EMBER_LIBRARY_IMPL(disp_test, CPU, m) {
  m.impl("scale_shift", &scale_shift_cpu);
  m.impl("pair", +[](const Tensor& x) { return std::make_tuple(x + 1, x - 1); });
}
// d(a x + b)/dx = a
using ScaleShiftSig = Tensor(const Tensor&, double, double);
std::vector<Tensor> scale_shift_backward(const autograd::BackwardCtx<ScaleShiftSig>& c) { return {c.grad() * c.arg<1>()}; }
const auto kScaleShift = autograd::OpSpec<ScaleShiftSig>{"ScaleShiftBackward", "disp_test::scale_shift", &scale_shift_backward};
EMBER_LIBRARY_IMPL(disp_test, Autograd, m) {
  m.impl("scale_shift", autograd::autograd_kernel<&kScaleShift>());
  m.impl_not_differentiable("pair");
}

// Users declare samples for their ops exactly like built-in ops do; the conformance test walks
// the whole registry, so these ops are checked too.
EMBER_OP_INFO("disp_test::scale_shift", info) {
  info.samples = [](DType dt) {
    auto s = ember::testing::unary_samples(dt);
    for (auto& u : s) u.args.push_back(IValue(2.0));
    return s;
  };
  info.reference = [](const Stack& a) -> Stack {
    double b = a.size() > 2 ? a[2].to_double() : 1.5, k = a[1].to_double();
    return {ember::testing::ref_map(a[0].to_tensor(), [=](double x) { return x * k + b; })};
  };
  info.dtypes = {kFloat32, kFloat64};
}
EMBER_OP_INFO("disp_test::composite_square", info) {
  info.dtypes = {kFloat32, kFloat64};
  ember::testing::set_unary_info(info, [](double x) { return x * x; });
}
EMBER_OP_INFO("disp_test::pair", info) {
  info.dtypes = {kFloat32, kFloat64};
  info.samples = [](DType dt) { return ember::testing::unary_samples(dt); };
  info.reference = [](const Stack& a) -> Stack {
    return {ember::testing::ref_map(a[0].to_tensor(), [](double x) { return x + 1; }),
            ember::testing::ref_map(a[0].to_tensor(), [](double x) { return x - 1; })};
  };
}

TEST(Schema, ParsesTypesDefaultsAndOverloads) {
  FunctionSchema s = parse_schema("ember", "sum.dim(Tensor self, int[] dim=[0, 1], bool keepdim=False, ScalarType? dtype=None) -> Tensor");
  EXPECT_EQ(s.full_name(), "ember::sum.dim");
  ASSERT_EQ(s.arguments.size(), 4u);
  EXPECT_EQ(s.arguments[1].type, ArgType::IntList);
  EXPECT_EQ(s.arguments[1].default_value->to_int_list(), (std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(s.arguments[2].default_value->to_bool());
  EXPECT_TRUE(s.arguments[3].default_value->is_none());
  EXPECT_EQ(s.cpp_signature(), "Tensor (const Tensor&, IntArrayRef, bool, std::optional<DType>)");
  FunctionSchema inplace = parse_schema("ember", "add_(Tensor(a!) self, Tensor other, Scalar alpha=1) -> Tensor(a!)");
  EXPECT_TRUE(inplace.arguments[0].is_mutable);
  EXPECT_EQ(parse_schema("x", "f(str mode='none', float eps=1e-6) -> Tensor").arguments[1].default_value->to_double(), 1e-6);
  EXPECT_EQ(parse_schema("x", "g(Tensor a) -> (Tensor, Tensor)").returns.size(), 2u);
}

TEST(Schema, RejectsMalformedText) {
  for (const char* bad : {"f(Tensor a -> Tensor", "f(Tensor a) Tensor", "f(Tensor a=3) -> Tensor", "f(int a=None) -> Tensor",
                          "f(Tensor a, Tensor a) -> Tensor", "(Tensor a) -> Tensor", "f(Tensor a) -> Foo"}) {
    EXPECT_THROW(parse_schema("x", bad), TypeError) << bad;
  }
}

TEST(Dispatcher, TypedCallOfAUserOp) {
  auto op = Dispatcher::singleton().find_schema("disp_test::scale_shift").typed<Tensor(const Tensor&, double, double)>();
  Tensor y = op.call(tensor({1.0, 2.0}), 2.0, 1.0);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{3, 5}));
}

TEST(Dispatcher, BoxedCallFillsDefaultsAndChecksTypes) {
  Stack s{IValue(tensor({1.0, 2.0})), IValue(2.0)};
  Dispatcher::singleton().call_boxed("disp_test::scale_shift", s);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].to_tensor().to_vector<float>(), (std::vector<float>{3.5, 5.5}));  // b defaults to 1.5
  Stack bad{IValue(tensor({1.0})), IValue(true)};
  EXPECT_THROW(Dispatcher::singleton().call_boxed("disp_test::scale_shift", bad), TypeError);
  Stack few;
  EXPECT_THROW(Dispatcher::singleton().call_boxed("disp_test::scale_shift", few), TypeError);
}

TEST(Dispatcher, TupleReturnsBoxAndUnbox) {
  auto op = Dispatcher::singleton().find_schema("disp_test::pair").typed<std::tuple<Tensor, Tensor>(const Tensor&)>();
  auto [a, b] = op.call(tensor({1.0}));
  EXPECT_EQ(a.item<double>(), 2.0);
  EXPECT_EQ(b.item<double>(), 0.0);
  Stack s{IValue(tensor({1.0}))};
  Dispatcher::singleton().call_boxed("disp_test::pair", s);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].to_tensor().item<double>(), 0.0);
}

TEST(Dispatcher, CompositeImplicitKernelServesEveryBackend) {
  auto op = Dispatcher::singleton().find_schema("disp_test::composite_square").typed<Tensor(const Tensor&)>();
  EXPECT_EQ(op.call(tensor({3.0})).item<double>(), 9.0);
  EXPECT_TRUE(op.handle().has_kernel(DispatchKey::CPU));
  EXPECT_TRUE(op.handle().has_kernel(DispatchKey::NPU));
}

TEST(Dispatcher, SignatureMismatchIsATypeErrorNamingTheExpectedSignature) {
  try {
    Dispatcher::singleton().find_schema("disp_test::scale_shift").typed<Tensor(const Tensor&, int64_t, double)>();
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("expected typed<Tensor (const Tensor&, double, double)>"), std::string::npos) << e.what();
  }
}

TEST(Dispatcher, ALaterRegistrationShadowsAndIsRemovedWithItsLibrary) {
  auto op = Dispatcher::singleton().find_schema("disp_test::scale_shift").typed<Tensor(const Tensor&, double, double)>();
  {
    Library override_lib(Library::Kind::Impl, "disp_test", DispatchKey::CPU, "override.cpp", 7);
    override_lib.impl("scale_shift", &scale_shift_twice);
    EXPECT_EQ(op.call(tensor({1.0}), 1.0, 0.0).item<double>(), 2.0);
    std::string dump = Dispatcher::singleton().dump("disp_test::scale_shift");
    EXPECT_NE(dump.find("override.cpp:7"), std::string::npos) << dump;
    EXPECT_NE(dump.find("shadowed by a later registration"), std::string::npos) << dump;
    EXPECT_NE(dump.find("is replaced by the one from override.cpp:7"), std::string::npos) << dump;
  }
  EXPECT_EQ(op.call(tensor({1.0}), 1.0, 0.0).item<double>(), 1.0);
}

TEST(Dispatcher, KernelWithTheWrongSignatureIsRecordedAndReported) {
  Library def(Library::Kind::Def, "disp_bad");
  def.def("f(Tensor x, float a) -> Tensor");
  Library impl(Library::Kind::Impl, "disp_bad", DispatchKey::CPU, "bad.cpp", 3);
  impl.impl("f", +[](const Tensor& x, int64_t) { return x; });
  try {
    Dispatcher::singleton().find_schema("disp_bad::f");
    FAIL();
  } catch (const TypeError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("bad.cpp:3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Tensor (const Tensor&, double)"), std::string::npos) << msg;
  }
}

TEST(Dispatcher, ListsAndDumpsBuiltins) {
  auto ops = Dispatcher::singleton().list_ops();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "ember::add"), ops.end());
  EXPECT_NE(std::find(ops.begin(), ops.end(), "ember::swiglu"), ops.end());
  EXPECT_NE(std::find(ops.begin(), ops.end(), "disp_test::scale_shift"), ops.end());
  std::string dump = Dispatcher::singleton().dump("ember::add");
  EXPECT_NE(dump.find("ember::add(Tensor self, Tensor other, Scalar alpha=1) -> Tensor"), std::string::npos) << dump;
  EXPECT_NE(dump.find("CPU: binary.cpp"), std::string::npos) << dump;
}

TEST(Dispatcher, ThreadLocalExclusionSkipsAKey) {
  // Excluding CPU leaves no backend for a CPU tensor: the error names the Undefined key.
  ExcludeDispatchKeyGuard g(DispatchKey::CPU);
  EXPECT_THROW(add(ones({1}), ones({1})), NotImplementedError);
}

}  // namespace

// Findings of fuzz/schema_fuzz.cpp: every schema that parses prints as text that parses back to
// the same schema, and malformed names, annotations and defaults are refused.
TEST(Schema, PrintedSchemasParseBackToTheSameSchema) {
  for (const char* text : {"f(float eps=-0.0, float a=1e-06, float b=0.1, float c=-2.5e+300) -> Tensor",
                           "g(Tensor(a!)? out, Tensor[](a!) outs, Tensor(a) view) -> Tensor(a!)",
                           "h.overload_1(int x=-9223372036854775808, int[] s=[1, -2]) -> (Tensor, Tensor)"}) {
    SCOPED_TRACE(text);
    FunctionSchema s = parse_schema("t", text);
    const std::string printed = s.str();
    EXPECT_EQ(parse_schema("t", printed.substr(3)).str(), printed);  // "t::" dropped
  }
  FunctionSchema z = parse_schema("t", "f(float eps=-0.0) -> Tensor");
  EXPECT_TRUE(std::signbit(z.arguments[0].default_value->to_double()));
  EXPECT_NE(z.str().find("eps=-0.0"), std::string::npos) << z.str();
  EXPECT_NE(parse_schema("t", "g(Tensor(a!)? out) -> Tensor").str().find("Tensor(a!)? out"), std::string::npos);
  for (auto [text, part] : std::vector<std::pair<const char*, const char*>>{
           {"r(int(a!)? x) -> Tensor", "alias annotations apply to Tensor types only"},
           {"r(Tensor 0x) -> Tensor", "expected an argument name"},
           {"t:::k(Tensor x) -> Tensor", "expected an operator name"},
           {"::zz(Tensor x) -> Tensor", "namespace ''"},
           {"k.a.b(Tensor x) -> Tensor", "bad overload name"},
           {"f(int x=99999999999999999999) -> Tensor", "does not fit in 64 bits"},
           {"f(float x=1e999) -> Tensor", "out of range"}}) {
    const char* t = text;  // (a lambda may not capture a structured binding before C++20)
    ember_test::expect_error<TypeError>([t] { parse_schema("t", t); }, {part});
  }
}
