// Every error class, with messages that name the op and the offending shapes/dtypes/devices.
#include "test_util.h"

using namespace ember;
using ember_test::expect_error;

namespace {

TEST(Errors, AllDeriveFromEmberError) {
  try {
    ones({2, 3}) + ones({4});
    FAIL();
  } catch (const Error& e) {
    SUCCEED();
  }
}

TEST(Errors, ShapeErrorNamesOpAndShapes) {
  expect_error<ShapeError>([] { add(ones({2, 3}), ones({4})); }, {"add", "[2, 3]", "[4]", "broadcast"});
  expect_error<ShapeError>([] { mm(ones({2, 3}), ones({4, 5})); },
                           {"mm", "mat1 and mat2 shapes cannot be multiplied", "2x3", "4x5"});
  expect_error<ShapeError>([] { matmul(ones({2, 3, 4}), ones({5, 6})); }, {"matmul", "[2, 3, 4]", "[5, 6]"});
  expect_error<ShapeError>([] { ones({2, 3}).view({4}); }, {"view", "[4]", "invalid for input of size 6"});
  expect_error<ShapeError>([] { ones({4, 6}).t().view({24}); }, {"view", "not compatible", "reshape"});
  expect_error<ShapeError>([] { cat({ones({2, 3}), ones({2, 4})}, 0); }, {"cat", "Expected size 3 but got size 4"});
  expect_error<ShapeError>([] { ones({2, 1}).expand({2, 3, 4}); }, {"expand", "existing size (2)"});
  expect_error<ShapeError>([] { swiglu(ones({2, 5})); }, {"swiglu", "even", "[2, 5]"});
  Tensor x = ones({2, 3});
  expect_error<ShapeError>([&] { x.add_(ones({4, 2, 3})); }, {"add_", "[2, 3]", "[4, 2, 3]"});
}

TEST(Errors, DTypeErrorNamesOpAndDtypes) {
  expect_error<DTypeError>([] { mm(ones({2, 2}), ones({2, 2}, kFloat64)); }, {"mm", "float32", "float64"});
  Tensor i = ones({3}, kInt64);
  expect_error<DTypeError>([&] { i.add_(ones({3})); }, {"add_", "float32", "int64"});
  expect_error<DTypeError>([&] { i.add(i, 0.5); }, {"add", "alpha", "int64"});
  expect_error<DTypeError>([] { -ones({2}, kBool); }, {"neg", "bool"});
  expect_error<DTypeError>([] { ones({2}, kInt64).mean(); }, {"mean", "int64"});
  expect_error<DTypeError>([] { ones({2}).data_ptr<double>(); }, {"data_ptr", "float64", "float32"});
  expect_error<DTypeError>([] { where(ones({2}), ones({2}), ones({2})); }, {"where", "bool", "float32"});
}

TEST(Errors, IndexErrorNamesOpAndRange) {
  expect_error<IndexError>([] { ones({2, 3}).select(1, 3); }, {"select", "index 3", "[2, 3]", "dimension 1"});
  expect_error<IndexError>([] { ones({2, 3}).sum({2}); }, {"sum", "dimension out of range", "[-2, 1]", "got 2"});
  expect_error<IndexError>([] { ones({2, 3}).transpose(0, -3); }, {"transpose", "got -3"});
  expect_error<IndexError>([] { ones({4}).narrow(0, 2, 3); }, {"narrow", "exceeds dimension size (4)"});
  expect_error<IndexError>([] { ones({2, 2}).as_strided({3}, {2}, 1); }, {"as_strided", "storage holds 4 elements"});
  expect_error<IndexError>([] { ones({2, 3}).permute({0, 0}); }, {"permute", "repeated dim"});
}

TEST(Errors, ValueErrorNamesOpAndValue) {
  expect_error<ValueError>([] { arange(0, 5, 0); }, {"arange", "step must be nonzero"});
  expect_error<ValueError>([] { Device("gpu:0"); }, {"Device", "gpu:0"});
  expect_error<ValueError>([] { set_num_threads(0); }, {"set_num_threads", "got 0"});
  expect_error<ValueError>([] { ones({3}).item(); }, {"item", "one-element", "[3]"});
  expect_error<ValueError>([] { gelu(ones({2}), "fast"); }, {"gelu", "'fast'"});
  expect_error<ValueError>([] { clamp(ones({2}), std::optional<Scalar>(), std::nullopt); }, {"clamp", "min", "max"});
}

TEST(Errors, TypeErrorForSchemasAndSignatures) {
  expect_error<TypeError>([] { Dispatcher::singleton().find_schema("ember::add").typed<Tensor(const Tensor&, double)>(); },
                          {"typed<", "ember::add", "expected typed<Tensor (const Tensor&, const Tensor&, const Scalar&)>"});
  expect_error<TypeError>([] { parse_schema("x", "foo(Tensr a) -> Tensor"); }, {"schema parse error", "Tensr"});
  Stack s{IValue(ones({2})), IValue("not a tensor")};
  expect_error<TypeError>([&] { Dispatcher::singleton().call_boxed("ember::add", s); },
                          {"ember::add", "argument 1 'other' expects Tensor", "str"});
}

TEST(Errors, NotImplementedErrorListsAvailableKernels) {
  expect_error<NotImplementedError>([] { Dispatcher::singleton().find_schema("ember::addd"); },
                                    {"no operator named 'ember::addd'", "ember::add"});
  Library def(Library::Kind::Def, "errtest");
  def.def("npu_only(Tensor x) -> Tensor");
  Library npu(Library::Kind::Impl, "errtest", DispatchKey::NPU);
  npu.impl("npu_only", +[](const Tensor& x) { return x; });
  expect_error<NotImplementedError>(
      [] { Dispatcher::singleton().find_schema("errtest::npu_only").typed<Tensor(const Tensor&)>().call(ones({1})); },
      {"errtest::npu_only", "no kernel for dispatch key CPU", "[NPU]"});
}

TEST(Errors, DeviceErrorNamesTheDevices) {
  Tensor c = ones({3}), n = ones({3}, Device("npu:0"));
  expect_error<DeviceError>([&] { add(c, n); },
                            {"add", "Expected all tensors to be on the same device", "cpu", "npu:0"});
  expect_error<DeviceError>([&] { mm(ones({2, 2}), ones({2, 2}, Device("npu:0"))); }, {"mm", "cpu", "npu:0"});
  expect_error<DeviceError>([&] { n.data_ptr<float>(); }, {"data_ptr", "npu:0", "not host-accessible"});
  expect_error<DeviceError>([] { zeros({2}, Device("npu:7")); }, {"npu:7", "does not exist", "EMBER_NPU_DEVICES"});
}

TEST(Errors, OutOfMemoryErrorIsThrownNotAborted) {
  expect_error<OutOfMemoryError>([] { empty({int64_t(1) << 50}); }, {"out of memory", "bytes"});
  // The allocator is still usable afterwards.
  EXPECT_EQ(ones({4}).sum().item<double>(), 4.0);
}

}  // namespace
