// Typed op declarations (dispatch/op_decl.h): the compile-time checks of schema against C++
// signature, declared ops registered and called through their declaration, and autocast
// policies carried by declarations (and by the string API's tags) to the Autocast key.
#include "ember/testing/reference.h"

#include "test_util.h"

using namespace ember;
namespace decl = ember::detail::decl;

// ---------------------------------------------------------------- compile time
// (tests/compile_fail/op_decl.cpp shows the same checks failing a build.)
static_assert(decl::signature_matches<Tensor, const Tensor&, const Tensor&, const Scalar&>(
    "ns::add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"));
static_assert(decl::signature_matches<Tensor, const Tensor&, const Tensor&>(
    "ns::add_(Tensor(a!) self, Tensor other) -> Tensor(a!)"));
static_assert(
    decl::signature_matches<std::tuple<Tensor, Tensor>, const Tensor&, IntArrayRef, const std::optional<Tensor>&>(
        "ns::f(Tensor x, int[2] size=[1, 2], Tensor? w=None) -> (Tensor values, Tensor indices)"));
static_assert(decl::signature_matches<void, const std::vector<Tensor>&, const std::string&, std::optional<DType>>(
    "ns::g(Tensor[] xs, str mode='a, b)', ScalarType? dtype=None) -> ()"));
static_assert(decl::signature_matches<int64_t, Device, std::optional<double>, bool>(
    "ns::h(Device d, float? f=None, bool b=True) -> int"));
static_assert(!decl::signature_matches<Tensor, const Tensor&>("ns::f(Tensor x, float a) -> Tensor"));  // too few
static_assert(!decl::signature_matches<Tensor, const Tensor&, double, double>("ns::f(Tensor x, float a) -> Tensor"));
static_assert(!decl::signature_matches<Tensor, const Tensor&, int64_t>("ns::f(Tensor x, float a) -> Tensor"));
static_assert(!decl::signature_matches<Tensor, const Tensor&, IntArrayRef>("ns::f(Tensor x, int a) -> Tensor"));
static_assert(!decl::signature_matches<Tensor, const Tensor&>("ns::f(Tensor? x) -> Tensor"));  // optional
static_assert(!decl::signature_matches<Tensor, const Tensor&>("ns::f(Tensor x) -> (Tensor, Tensor)"));
static_assert(!decl::signature_matches<std::tuple<Tensor, Tensor>, const Tensor&>("ns::f(Tensor x) -> Tensor"));
static_assert(!decl::signature_matches<Tensor, const Tensor&>("ns::f(Tensor x) -> Tensor[]"));
static_assert(!decl::signature_matches<Tensor, const Tensor&>("ns::f(Tensor x)"));  // no return
static_assert(decl::name_matches("ember::linear.bias(Tensor x) -> Tensor", "linear_bias"));
static_assert(!decl::name_matches("ember::linear.bias(Tensor x) -> Tensor", "linear"));
static_assert(!decl::name_matches("linear(Tensor x) -> Tensor", "linear"));  // a declaration names its namespace

namespace {

namespace op {
EMBER_DECLARE_OP(record_dtype, Float32, "decl_test::record_dtype(Tensor x, float scale=2.0) -> Tensor",
                 Tensor(const Tensor&, double));
EMBER_DECLARE_OP(record_dtype_keep, Keep, "decl_test::record_dtype.keep(Tensor x) -> Tensor", Tensor(const Tensor&));
}  // namespace op

DType g_seen = DType::Float64;
Tensor record_dtype_cpu(const Tensor& x, double scale) {
  g_seen = x.dtype();
  return x * scale;
}
Tensor record_keep_cpu(const Tensor& x) {
  g_seen = x.dtype();
  return x.clone();
}
Tensor record_lower_cpu(const Tensor& x) {
  g_seen = x.dtype();
  return x.clone();
}

EMBER_LIBRARY(decl_test, m) {
  m.def(op::record_dtype());
  m.def(op::record_dtype_keep());
  m.def("record_lower(Tensor x) -> Tensor", {OpTag::AutocastLower});  // the string API's form
}
EMBER_LIBRARY_IMPL(decl_test, CPU, m) {
  m.impl(op::record_dtype(), &record_dtype_cpu);
  m.impl(op::record_dtype_keep(), &record_keep_cpu);
  m.impl("record_lower", &record_lower_cpu);
}
EMBER_LIBRARY_IMPL(decl_test, Autograd, m) {
  m.impl_not_differentiable(op::record_dtype());
  m.impl_not_differentiable(op::record_dtype_keep());
  m.impl_not_differentiable("record_lower");
}
// Samples, as every registered op has (the registry-driven suites walk these ops too).
EMBER_OP_INFO("decl_test::record_dtype", info) {
  info.dtypes = {kFloat32, kFloat64};
  info.samples = [](DType dt) { return ember::testing::unary_samples(dt); };
  info.reference = [](const Stack& a) -> Stack {
    return {ember::testing::ref_map(a[0].to_tensor(), [](double x) { return x * 2.0; })};
  };
}
EMBER_OP_INFO("decl_test::record_dtype.keep", info) {
  info.dtypes = {kFloat32, kFloat64};
  ember::testing::set_unary_info(info, [](double x) { return x; });
}
EMBER_OP_INFO("decl_test::record_lower", info) {
  info.dtypes = {kFloat32, kFloat64};
  ember::testing::set_unary_info(info, [](double x) { return x; });
}

}  // namespace

TEST(OpDecl, NamesComeFromTheSchema) {
  EXPECT_EQ(op::record_dtype::name(), "decl_test::record_dtype");
  EXPECT_EQ(op::record_dtype_keep::name(), "decl_test::record_dtype.keep");
  EXPECT_EQ(op::record_dtype_keep::local_name(), "record_dtype.keep");
  auto h = Dispatcher::singleton().find("decl_test::record_dtype.keep");
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->schema().str(), "decl_test::record_dtype.keep(Tensor x) -> Tensor");
}

TEST(OpDecl, CallsGoThroughTheDeclaration) {
  Tensor y = op::record_dtype::call(ones({3}), 3.0);
  EXPECT_TRUE(y.equal(full({3}, 3.0)));
  // The boxed path fills the schema's default from the declaration's text.
  Stack s{IValue(ones({2}))};
  Dispatcher::singleton().call_boxed("decl_test::record_dtype", &s);
  EXPECT_TRUE(s[0].to_tensor().equal(full({2}, 2.0)));
}

TEST(OpDecl, AutocastFollowsTheDeclaredPolicy) {
  Tensor h = ones({4}).to(kBFloat16), f = ones({4});
  op::record_dtype::call(h, 1.0);
  EXPECT_EQ(g_seen, kBFloat16);  // no autocast: as given
  {
    amp::AutocastGuard guard(DeviceType::CPU, kBFloat16);
    op::record_dtype::call(h, 1.0);
    EXPECT_EQ(g_seen, kFloat32);  // Float32: bf16 inputs run in float32
    op::record_dtype_keep::call(h);
    EXPECT_EQ(g_seen, kBFloat16);  // Keep: untouched
    Dispatcher::singleton().find_schema("decl_test::record_lower").typed<Tensor(const Tensor&)>().call(f);
    EXPECT_EQ(g_seen, kBFloat16);  // Lower (a tag of the string API): f32 inputs run in bf16
  }
  EXPECT_FALSE(Dispatcher::singleton().find_schema("decl_test::record_dtype.keep").has_kernel(DispatchKey::Autocast));
}

TEST(OpDecl, BuiltInOpsCarryPyTorchsAutocastLists) {
  auto amp_of = [](const char* name) { return Dispatcher::singleton().find_schema(name).schema().amp; };
  EXPECT_EQ(amp_of("ember::mm"), AmpPolicy::Lower);
  EXPECT_EQ(amp_of("ember::linear.bias"), AmpPolicy::Lower);
  EXPECT_EQ(amp_of("ember::conv2d"), AmpPolicy::Lower);
  EXPECT_EQ(amp_of("ember::exp"), AmpPolicy::Float32);    // a unary table row
  EXPECT_EQ(amp_of("ember::sum"), AmpPolicy::Float32);    // a reduction table row
  EXPECT_EQ(amp_of("ember::atan2"), AmpPolicy::Promote);  // a binary table row
  EXPECT_EQ(amp_of("ember::cross_entropy"), AmpPolicy::Float32);
  EXPECT_EQ(amp_of("nn::dispersion_correction"), AmpPolicy::Float32);
  EXPECT_EQ(amp_of("ember::cat"), AmpPolicy::Promote);
  EXPECT_EQ(amp_of("ember::add"), AmpPolicy::Keep);
  EXPECT_EQ(amp_of("ember::relu"), AmpPolicy::Keep);
  EXPECT_TRUE(Dispatcher::singleton().find_schema("ember::mm").has_kernel(DispatchKey::Autocast));
  EXPECT_FALSE(Dispatcher::singleton().find_schema("ember::add").has_kernel(DispatchKey::Autocast));
}

TEST(OpDecl, APolicyKernelIsReplacedAndRestoredWithItsLibrary) {
  Tensor h = ones({2}).to(kBFloat16);
  amp::AutocastGuard guard(DeviceType::CPU, kBFloat16);
  {
    Library mine(Library::Kind::Impl, "_", DispatchKey::Autocast, "mine.cpp", 1);
    mine.fallback(KernelFunction::from_boxed([](const OperatorHandle& op, Stack* s) {
                    ExcludeDispatchKeyGuard below(DispatchKey::Autocast);
                    (*s)[0] = IValue((*s)[0].to_tensor().to(kFloat64));
                    op.call_boxed(s);
                  }),
                  AmpPolicy::Float32);
    op::record_dtype::call(h, 1.0);
    EXPECT_EQ(g_seen, kFloat64);
  }
  op::record_dtype::call(h, 1.0);
  EXPECT_EQ(g_seen, kFloat32);
  EXPECT_THROW(Library(Library::Kind::Impl, "_", DispatchKey::CPU).fallback(KernelFunction(), AmpPolicy::Float32),
               ValueError);
}
