// A CANN host program in C++11, written the way CANN's operator samples are: RAII holders made
// from the API's own function types, enumerators named through their enum, fp16 data converted
// with aclFloatToFloat16. It computes rowsum(x * y) in fp16 (accumulated in fp32) and casts the
// result to fp32; tests/check_cann_toolkit.sh builds it with CANN's documented g++ line.
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "acl/acl.h"
#include "aclnn_cast.h"  // found through -I$ASCEND_HOME_PATH/include/aclnnop, as CANN's docs build
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_reduce_sum.h"

#define CHECK_RET(cond, expr) \
  do {                        \
    if (!(cond)) {            \
      expr;                   \
    }                         \
  } while (0)

using TensorPtr = std::unique_ptr<aclTensor, decltype(&aclDestroyTensor)>;
using DevicePtr = std::unique_ptr<void, decltype(&aclrtFree)>;

static DevicePtr device_alloc(size_t bytes) {
  void* p = nullptr;
  if (aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) p = nullptr;
  return DevicePtr(p, &aclrtFree);
}

static TensorPtr make_tensor(const std::vector<int64_t>& shape, aclDataType dtype, void* data) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) strides[i] = shape[i + 1] * strides[i + 1];
  return TensorPtr(aclCreateTensor(shape.data(), shape.size(), dtype, strides.data(), 0, aclFormat::ACL_FORMAT_ND,
                                   shape.data(), shape.size(), data),
                   &aclDestroyTensor);
}

template <class Phase2>
static int launch(Phase2 phase2, uint64_t ws, aclOpExecutor* executor, aclrtStream stream) {
  DevicePtr workspace(nullptr, &aclrtFree);
  if (ws > 0) workspace = device_alloc(ws);
  auto ret = phase2(workspace.get(), ws, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, std::printf("phase 2 failed: %d\n", ret); return ret);
  return aclrtSynchronizeStream(stream);
}

int main() {
  auto ret = aclInit(nullptr);
  CHECK_RET(ret == ACL_SUCCESS, std::printf("aclInit failed: %d\n", ret); return 1);
  ret = aclrtSetDevice(0);
  CHECK_RET(ret == ACL_SUCCESS, std::printf("aclrtSetDevice failed: %d\n", ret); return 1);
  aclrtStream stream = nullptr;
  ret = aclrtCreateStream(&stream);
  CHECK_RET(ret == ACL_SUCCESS, std::printf("aclrtCreateStream failed: %d\n", ret); return 1);

  const int64_t rows = 3, cols = 4;
  std::vector<float> x(rows * cols), y(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) {
    x[i] = 0.25f * static_cast<float>(i) - 1.0f;
    y[i] = 1.5f - 0.125f * static_cast<float>(i);
  }
  std::vector<aclFloat16> xh(x.size()), yh(y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    xh[i] = aclFloatToFloat16(x[i]);
    yh[i] = aclFloatToFloat16(y[i]);
  }
  const size_t half_bytes = xh.size() * aclDataTypeSize(aclDataType::ACL_FLOAT16);
  DevicePtr xd = device_alloc(half_bytes), yd = device_alloc(half_bytes), pd = device_alloc(half_bytes);
  DevicePtr sd = device_alloc(rows * 2), outd = device_alloc(rows * sizeof(float));
  CHECK_RET(xd && yd && pd && sd && outd, std::printf("aclrtMalloc failed\n"); return 1);
  aclrtMemcpy(xd.get(), half_bytes, xh.data(), half_bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  aclrtMemcpy(yd.get(), half_bytes, yh.data(), half_bytes, ACL_MEMCPY_HOST_TO_DEVICE);

  TensorPtr xt = make_tensor({rows, cols}, aclDataType::ACL_FLOAT16, xd.get());
  TensorPtr yt = make_tensor({rows, cols}, aclDataType::ACL_FLOAT16, yd.get());
  TensorPtr pt = make_tensor({rows, cols}, aclDataType::ACL_FLOAT16, pd.get());
  TensorPtr st = make_tensor({rows, 1}, aclDataType::ACL_FLOAT16, sd.get());
  TensorPtr outt = make_tensor({rows, 1}, aclDataType::ACL_FLOAT, outd.get());
  const int64_t dim = 1;
  std::unique_ptr<aclIntArray, decltype(&aclDestroyIntArray)> dims(aclCreateIntArray(&dim, 1), &aclDestroyIntArray);

  uint64_t ws = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnMulGetWorkspaceSize(xt.get(), yt.get(), pt.get(), &ws, &executor);
  CHECK_RET(ret == ACL_SUCCESS, std::printf("aclnnMulGetWorkspaceSize failed: %d %s\n", ret, aclGetRecentErrMsg()); return 1);
  CHECK_RET(launch(aclnnMul, ws, executor, stream) == ACL_SUCCESS, return 1);
  ret = aclnnReduceSumGetWorkspaceSize(pt.get(), dims.get(), true, aclDataType::ACL_FLOAT16, st.get(), &ws, &executor);
  CHECK_RET(ret == ACL_SUCCESS, std::printf("aclnnReduceSumGetWorkspaceSize failed: %d %s\n", ret, aclGetRecentErrMsg()); return 1);
  CHECK_RET(launch(aclnnReduceSum, ws, executor, stream) == ACL_SUCCESS, return 1);
  ret = aclnnCastGetWorkspaceSize(st.get(), aclDataType::ACL_FLOAT, outt.get(), &ws, &executor);
  CHECK_RET(ret == ACL_SUCCESS, std::printf("aclnnCastGetWorkspaceSize failed: %d %s\n", ret, aclGetRecentErrMsg()); return 1);
  CHECK_RET(launch(aclnnCast, ws, executor, stream) == ACL_SUCCESS, return 1);

  std::vector<float> out(rows);
  aclrtMemcpy(out.data(), rows * sizeof(float), outd.get(), rows * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
  int bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    // The oracle: the same fp16 inputs, products rounded to fp16 as the Mul output is, summed in
    // double; the fp16 sum is then within one fp16 ulp of it (half an ulp of rounding, plus the
    // fp32 accumulation's error, far smaller).
    double expect = 0;
    for (int64_t c = 0; c < cols; ++c) {
      float prod = aclFloat16ToFloat(xh[r * cols + c]) * aclFloat16ToFloat(yh[r * cols + c]);
      expect += aclFloat16ToFloat(aclFloatToFloat16(prod));
    }
    double ulp = std::ldexp(1.0, static_cast<int>(std::floor(std::log2(std::fabs(expect) + 1e-30))) - 10);
    std::printf("row %lld: %.6f expected %.6f\n", static_cast<long long>(r), out[r], expect);
    if (std::fabs(out[r] - expect) > ulp) bad = 1;
  }
  for (TensorPtr* t : {&xt, &yt, &pt, &st, &outt}) t->reset();
  for (DevicePtr* d : {&xd, &yd, &pd, &sd, &outd}) d->reset();
  aclrtDestroyStream(stream);
  aclrtResetDevice(0);
  aclFinalize();
  std::printf(bad ? "mismatch\n" : "ok\n");
  return bad;
}
