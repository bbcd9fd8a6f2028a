// The emulated HCCL between the emulated NPUs of this process (HcclCommInitAll): every collective,
// every data type and reduction, sizes 0, 1, odd and large, in-place forms, stream order, and the
// failures: calls that differ between ranks, a rank that never comes, misuse of the API.
// Expected values are computed here from the inputs, independently of the library.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hccl_test_util.h"
#include "npu_test_util.h"

using namespace npu_test;
using namespace hccl_test;

namespace {

// Device memory of one emulated NPU, filled from / read back to host bytes.
struct DevBuf {
  void* p = nullptr;
  size_t bytes = 0;
  DevBuf(int device, size_t n) : bytes(n) {
    aclrtSetDevice(device);
    EXPECT_EQ(aclrtMalloc(&p, n ? n : 1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS) << recent_error();
  }
  ~DevBuf() {
    aclrtSynchronizeDevice();
    if (p) aclrtFree(p);
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  void put(const std::vector<char>& h) {
    if (!h.empty()) {
      ASSERT_EQ(aclrtMemcpy(p, bytes, h.data(), h.size(), ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    }
  }
  std::vector<char> get() const {
    std::vector<char> h(bytes);
    if (bytes) {
      EXPECT_EQ(aclrtMemcpy(h.data(), bytes, p, bytes, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    }
    return h;
  }
};

// Two ranks on npu:0 and npu:1, each with its own stream; collectives time out after `timeout`
// seconds (HCCL_EXEC_TIMEOUT, read when the communicators are made).
struct Pair {
  HcclComm comm[2] = {nullptr, nullptr};
  aclrtStream stream[2] = {nullptr, nullptr};
  explicit Pair(const char* timeout = "60") {
    const char* old = std::getenv("HCCL_EXEC_TIMEOUT");
    const std::string saved = old ? old : "";
    setenv("HCCL_EXEC_TIMEOUT", timeout, 1);
    int32_t devices[2] = {0, 1};
    EXPECT_EQ(HcclCommInitAll(2, devices, comm), HCCL_SUCCESS) << recent_error();
    if (old) {
      setenv("HCCL_EXEC_TIMEOUT", saved.c_str(), 1);
    } else {
      unsetenv("HCCL_EXEC_TIMEOUT");
    }
    for (int r = 0; r < 2; ++r) {
      aclrtSetDevice(r);
      EXPECT_EQ(aclrtCreateStream(&stream[r]), ACL_SUCCESS);
    }
    aclrtSetDevice(0);
  }
  ~Pair() {
    for (int r = 0; r < 2; ++r) {
      aclrtSynchronizeStream(stream[r]);
      aclrtDestroyStream(stream[r]);
      HcclCommDestroy(comm[r]);
    }
    aclGetRecentErrMsg();
  }
  void sync() {
    for (int r = 0; r < 2; ++r) ASSERT_EQ(aclrtSynchronizeStream(stream[r]), ACL_SUCCESS) << recent_error();
  }
};


const size_t kSizes[] = {0, 1, 1001};

}  // namespace

TEST(Hccl, AllReduceEveryTypeOpAndSize) {
  Pair pr;
  for (const TypeInfo& t : kTypes)
    for (HcclReduceOp op : {HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX, HCCL_REDUCE_MIN})
      for (size_t n : kSizes) {
        SCOPED_TRACE(std::string(t.name) + " op " + std::to_string(op) + " n " + std::to_string(n));
        DevBuf s0(0, n * t.size), s1(1, n * t.size), d0(0, n * t.size), d1(1, n * t.size);
        s0.put(host_values(t, 0, n));
        s1.put(host_values(t, 1, n));
        ASSERT_EQ(HcclAllReduce(s0.p, d0.p, n, t.type, op, pr.comm[0], pr.stream[0]), HCCL_SUCCESS) << recent_error();
        ASSERT_EQ(HcclAllReduce(s1.p, d1.p, n, t.type, op, pr.comm[1], pr.stream[1]), HCCL_SUCCESS) << recent_error();
        pr.sync();
        auto h0 = d0.get(), h1 = d1.get();
        ASSERT_EQ(h0, h1);  // every rank holds the same bytes
        for (size_t i = 0; i < n; ++i)
          ASSERT_EQ(decode(t.type, h0.data() + i * t.size), combine(op, value(t, 0, i), value(t, 1, i))) << "i " << i;
      }
}

// 64 MiB of fp32 per rank, summed in place (sendBuf == recvBuf).
TEST(Hccl, AllReduceLargeInPlace) {
  Pair pr;
  const size_t n = (64u << 20) / 4;
  DevBuf b0(0, n * 4), b1(1, n * 4);
  std::vector<float> x0(n), x1(n);
  for (size_t i = 0; i < n; ++i) {
    x0[i] = static_cast<float>(i % 1000) * 0.5f;
    x1[i] = -static_cast<float>(i % 777) * 0.25f;
  }
  ASSERT_EQ(aclrtMemcpy(b0.p, n * 4, x0.data(), n * 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpy(b1.p, n * 4, x1.data(), n * 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  ASSERT_EQ(HcclAllReduce(b0.p, b0.p, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, pr.comm[0], pr.stream[0]), HCCL_SUCCESS);
  ASSERT_EQ(HcclAllReduce(b1.p, b1.p, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, pr.comm[1], pr.stream[1]), HCCL_SUCCESS);
  pr.sync();
  std::vector<float> y0(n), y1(n);
  ASSERT_EQ(aclrtMemcpy(y0.data(), n * 4, b0.p, n * 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpy(y1.data(), n * 4, b1.p, n * 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(y0[i], x0[i] + x1[i]) << i;  // one fp32 addition: exact oracle
    ASSERT_EQ(y1[i], y0[i]) << i;
  }
}

// fp16 and bf16 sums are computed in fp32 and rounded once to nearest even.
TEST(Hccl, HalfSumsRoundOnce) {
  Pair pr;
  // 2048 + 1 is not an fp16 (spacing 2 there): rounds to even, 2048. 2049 + 2 = 2051 -> 2052.
  const float a[] = {2048.0f, 2050.0f, 0.1f}, b[] = {1.0f, 1.0f, 0.2f};
  for (const TypeInfo& t : kTypes) {
    if (t.type != HCCL_DATA_TYPE_FP16 && t.type != HCCL_DATA_TYPE_BFP16) continue;
    SCOPED_TRACE(t.name);
    DevBuf s0(0, 6), s1(1, 6), d0(0, 6), d1(1, 6);
    std::vector<char> h0(8 * 3), h1(8 * 3);  // (room for any type: 3 elements of 2 bytes are used)
    for (int i = 0; i < 3; ++i) {
      encode(t.type, a[i], h0.data() + 2 * i);  // (bf16: the fp32 value's top half, truncated)
      encode(t.type, b[i], h1.data() + 2 * i);
    }
    h0.resize(6);
    h1.resize(6);
    s0.put(h0);
    s1.put(h1);
    ASSERT_EQ(HcclAllReduce(s0.p, d0.p, 3, t.type, HCCL_REDUCE_SUM, pr.comm[0], pr.stream[0]), HCCL_SUCCESS);
    ASSERT_EQ(HcclAllReduce(s1.p, d1.p, 3, t.type, HCCL_REDUCE_SUM, pr.comm[1], pr.stream[1]), HCCL_SUCCESS);
    pr.sync();
    auto out = d0.get();
    for (int i = 0; i < 3; ++i) {
      const float sum = static_cast<float>(decode(t.type, h0.data() + 2 * i) + decode(t.type, h1.data() + 2 * i));
      std::vector<char> want(8);
      if (t.type == HCCL_DATA_TYPE_FP16) {
        encode(t.type, sum, want.data());  // aclFloatToFloat16 rounds to nearest even
      } else {
        uint32_t u;
        std::memcpy(&u, &sum, 4);
        const uint16_t r = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);  // RNE
        std::memcpy(want.data(), &r, 2);
      }
      EXPECT_EQ(std::memcmp(out.data() + 2 * i, want.data(), 2), 0) << "element " << i << ": " << sum;
    }
  }
}

TEST(Hccl, BroadcastAllGatherReduceScatter) {
  Pair pr;
  for (const TypeInfo& t : kTypes)
    for (size_t n : kSizes) {
      SCOPED_TRACE(std::string(t.name) + " n " + std::to_string(n));
      const size_t b = n * t.size;
      // Broadcast from rank 1.
      {
        DevBuf x0(0, b), x1(1, b);
        x0.put(host_values(t, 0, n));
        x1.put(host_values(t, 1, n));
        ASSERT_EQ(HcclBroadcast(x0.p, n, t.type, 1, pr.comm[0], pr.stream[0]), HCCL_SUCCESS) << recent_error();
        ASSERT_EQ(HcclBroadcast(x1.p, n, t.type, 1, pr.comm[1], pr.stream[1]), HCCL_SUCCESS) << recent_error();
        pr.sync();
        EXPECT_EQ(x0.get(), host_values(t, 1, n));
        EXPECT_EQ(x1.get(), host_values(t, 1, n));
      }
      // AllGather: rank 0's elements, then rank 1's, on both.
      {
        DevBuf s0(0, b), s1(1, b), d0(0, 2 * b), d1(1, 2 * b);
        s0.put(host_values(t, 0, n));
        s1.put(host_values(t, 1, n));
        ASSERT_EQ(HcclAllGather(s0.p, d0.p, n, t.type, pr.comm[0], pr.stream[0]), HCCL_SUCCESS) << recent_error();
        ASSERT_EQ(HcclAllGather(s1.p, d1.p, n, t.type, pr.comm[1], pr.stream[1]), HCCL_SUCCESS) << recent_error();
        pr.sync();
        std::vector<char> want = host_values(t, 0, n), second = host_values(t, 1, n);
        want.insert(want.end(), second.begin(), second.end());
        EXPECT_EQ(d0.get(), want);
        EXPECT_EQ(d1.get(), want);
      }
      // ReduceScatter (max): rank r gets the reduction of block r of both inputs.
      {
        DevBuf s0(0, 2 * b), s1(1, 2 * b), d0(0, b), d1(1, b);
        s0.put(host_values(t, 0, 2 * n));
        s1.put(host_values(t, 1, 2 * n));
        ASSERT_EQ(HcclReduceScatter(s0.p, d0.p, n, t.type, HCCL_REDUCE_MAX, pr.comm[0], pr.stream[0]), HCCL_SUCCESS)
            << recent_error();
        ASSERT_EQ(HcclReduceScatter(s1.p, d1.p, n, t.type, HCCL_REDUCE_MAX, pr.comm[1], pr.stream[1]), HCCL_SUCCESS)
            << recent_error();
        pr.sync();
        auto h0 = d0.get(), h1 = d1.get();
        for (size_t i = 0; i < n; ++i) {
          EXPECT_EQ(decode(t.type, h0.data() + i * t.size),
                    combine(HCCL_REDUCE_MAX, value(t, 0, i), value(t, 1, i)));
          EXPECT_EQ(decode(t.type, h1.data() + i * t.size),
                    combine(HCCL_REDUCE_MAX, value(t, 0, n + i), value(t, 1, n + i)));
        }
      }
    }
}

TEST(Hccl, InPlaceAllGatherSendRecvAndBarrier) {
  Pair pr;
  const TypeInfo& t = kTypes[4];  // fp32
  const size_t n = 33, b = n * t.size;
  // In place: each rank's send buffer is its own block of the output.
  DevBuf d0(0, 2 * b), d1(1, 2 * b);
  std::vector<char> init0 = host_values(t, 0, n), init1 = host_values(t, 1, n);
  std::vector<char> h0(2 * b, 0), h1(2 * b, 0);
  std::memcpy(h0.data(), init0.data(), b);
  std::memcpy(h1.data() + b, init1.data(), b);
  d0.put(h0);
  d1.put(h1);
  ASSERT_EQ(HcclAllGather(d0.p, d0.p, n, t.type, pr.comm[0], pr.stream[0]), HCCL_SUCCESS) << recent_error();
  ASSERT_EQ(HcclAllGather(static_cast<char*>(d1.p) + b, d1.p, n, t.type, pr.comm[1], pr.stream[1]), HCCL_SUCCESS)
      << recent_error();
  pr.sync();
  std::vector<char> want = init0;
  want.insert(want.end(), init1.begin(), init1.end());
  EXPECT_EQ(d0.get(), want);
  EXPECT_EQ(d1.get(), want);

  // Send / Recv both ways, then a barrier.
  DevBuf a0(0, b), a1(1, b), r0(0, b), r1(1, b);
  a0.put(init0);
  a1.put(init1);
  ASSERT_EQ(HcclSend(a0.p, n, t.type, 1, pr.comm[0], pr.stream[0]), HCCL_SUCCESS) << recent_error();
  ASSERT_EQ(HcclRecv(r0.p, n, t.type, 1, pr.comm[0], pr.stream[0]), HCCL_SUCCESS) << recent_error();
  ASSERT_EQ(HcclRecv(r1.p, n, t.type, 0, pr.comm[1], pr.stream[1]), HCCL_SUCCESS) << recent_error();
  ASSERT_EQ(HcclSend(a1.p, n, t.type, 0, pr.comm[1], pr.stream[1]), HCCL_SUCCESS) << recent_error();
  ASSERT_EQ(HcclBarrier(pr.comm[0], pr.stream[0]), HCCL_SUCCESS);
  ASSERT_EQ(HcclBarrier(pr.comm[1], pr.stream[1]), HCCL_SUCCESS);
  pr.sync();
  EXPECT_EQ(r1.get(), init0);
  EXPECT_EQ(r0.get(), init1);
}

// A collective is asynchronous: the host returns while the other rank has not come yet, and the
// stream runs what follows it only after it.
TEST(Hccl, CollectivesAreAsynchronousAndInStreamOrder) {
  Pair pr;
  const size_t n = 1000;
  DevBuf x0(0, n * 4), x1(1, n * 4), y0(0, n * 4);
  std::vector<float> v(n, 1.0f);
  ASSERT_EQ(aclrtMemcpy(x0.p, n * 4, v.data(), n * 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpy(x1.p, n * 4, v.data(), n * 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  ASSERT_EQ(HcclAllReduce(x0.p, x0.p, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, pr.comm[0], pr.stream[0]), HCCL_SUCCESS);
  // Queued after the all-reduce on rank 0's stream: copies its result.
  ASSERT_EQ(aclrtMemcpyAsync(y0.p, n * 4, x0.p, n * 4, ACL_MEMCPY_DEVICE_TO_DEVICE, pr.stream[0]), ACL_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  aclrtStreamStatus status = ACL_STREAM_STATUS_COMPLETE;
  ASSERT_EQ(aclrtStreamQuery(pr.stream[0], &status), ACL_SUCCESS);
  EXPECT_EQ(status, ACL_STREAM_STATUS_NOT_READY);  // waiting for rank 1
  ASSERT_EQ(HcclAllReduce(x1.p, x1.p, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, pr.comm[1], pr.stream[1]), HCCL_SUCCESS);
  pr.sync();
  std::vector<float> out(n);
  ASSERT_EQ(aclrtMemcpy(out.data(), n * 4, y0.p, n * 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  for (float f : out) ASSERT_EQ(f, 2.0f);
}

// Ranks that pass different counts fail on every rank, with a message listing both calls; the
// communicator stays usable.
TEST(Hccl, DifferentCountsFailOnEveryRank) {
  Pair pr;
  DevBuf x0(0, 64), x1(1, 64);
  ASSERT_EQ(HcclAllReduce(x0.p, x0.p, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, pr.comm[0], pr.stream[0]), HCCL_SUCCESS);
  ASSERT_EQ(HcclAllReduce(x1.p, x1.p, 5, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, pr.comm[1], pr.stream[1]), HCCL_SUCCESS);
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(aclrtSynchronizeStream(pr.stream[r]), ACL_SUCCESS);
    std::string msg = recent_error();
    EXPECT_NE(msg.find("HcclAllReduce"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rank 0: HcclAllReduce(count 4, fp32, sum)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rank 1: HcclAllReduce(count 5, fp32, sum)"), std::string::npos) << msg;
    HcclResult async = HCCL_SUCCESS;
    ASSERT_EQ(HcclGetCommAsyncError(pr.comm[r], &async), HCCL_SUCCESS);
    EXPECT_EQ(async, HCCL_E_PARA);
  }
  // The next matched call works.
  ASSERT_EQ(HcclBarrier(pr.comm[0], pr.stream[0]), HCCL_SUCCESS);
  ASSERT_EQ(HcclBarrier(pr.comm[1], pr.stream[1]), HCCL_SUCCESS);
  pr.sync();
}

// A rank that never comes: the other fails after HCCL_EXEC_TIMEOUT, naming the collective and the
// missing rank, and the communicator is broken from then on.
TEST(Hccl, MissingRankTimesOut) {
  Pair pr("1");
  DevBuf x0(0, 64);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(HcclAllReduce(x0.p, x0.p, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, pr.comm[0], pr.stream[0]), HCCL_SUCCESS);
  EXPECT_NE(aclrtSynchronizeStream(pr.stream[0]), ACL_SUCCESS);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string msg = recent_error();
  EXPECT_NE(msg.find("HcclAllReduce(count 4, fp32, max) on rank 0 of 2 timed out after 1 s waiting for rank(s) 1"),
            std::string::npos)
      << msg;
  EXPECT_GE(waited, 0.9);
  EXPECT_LT(waited, 10.0);
  HcclResult async = HCCL_SUCCESS;
  ASSERT_EQ(HcclGetCommAsyncError(pr.comm[0], &async), HCCL_SUCCESS);
  EXPECT_EQ(async, HCCL_E_TIMEOUT);
  // Rank 1 comes late: the communicator is broken, so it fails at once instead of waiting.
  DevBuf x1(1, 64);
  ASSERT_EQ(HcclBarrier(pr.comm[1], pr.stream[1]), HCCL_SUCCESS);
  EXPECT_NE(aclrtSynchronizeStream(pr.stream[1]), ACL_SUCCESS);
  msg = recent_error();
  EXPECT_NE(msg.find("HcclBarrier() on rank 1 of 2: the communicator is broken: HcclAllReduce"), std::string::npos)
      << msg;
}

// Misuse gets HCCL's codes at the call, with a message in aclGetRecentErrMsg.
TEST(Hccl, MisuseGetsHcclCodes) {
  Pair pr;
  DevBuf x0(0, 64), x1(1, 64);
  float host[16] = {};
  auto expect = [](HcclResult got, HcclResult want, const char* needle) {
    EXPECT_EQ(got, want) << needle;
    std::string msg = recent_error();
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  };
  expect(HcclAllReduce(x0.p, x0.p, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, nullptr, nullptr), HCCL_E_PTR,
         "HcclAllReduce: comm is null");
  expect(HcclAllReduce(host, x0.p, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, pr.comm[0], pr.stream[0]), HCCL_E_PARA,
         "sendBuf 0x");
  expect(HcclAllReduce(host, x0.p, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, pr.comm[0], pr.stream[0]), HCCL_E_PARA,
         "is not device memory");
  expect(HcclAllReduce(nullptr, x0.p, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, pr.comm[0], pr.stream[0]), HCCL_E_PTR,
         "sendBuf is null");
  expect(HcclAllReduce(x0.p, x0.p, 40, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, pr.comm[0], pr.stream[0]), HCCL_E_PARA,
         "is not inside one live aclrtMalloc allocation");
  expect(HcclAllReduce(x1.p, x1.p, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, pr.comm[0], pr.stream[0]), HCCL_E_PARA,
         "is memory of npu:1, but rank 0 of");
  expect(HcclAllReduce(x0.p, x0.p, 4, static_cast<HcclDataType>(99), HCCL_REDUCE_SUM, pr.comm[0], pr.stream[0]),
         HCCL_E_PARA, "dataType 99 is not an HcclDataType");
  expect(HcclAllReduce(x0.p, x0.p, 4, HCCL_DATA_TYPE_FP32, static_cast<HcclReduceOp>(7), pr.comm[0], pr.stream[0]),
         HCCL_E_PARA, "op 7 is not an HcclReduceOp");
  expect(HcclAllReduce(x0.p, x0.p, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, pr.comm[0], pr.stream[1]), HCCL_E_PARA,
         "the stream is on npu:1, but rank 0");
  expect(HcclBroadcast(x0.p, 4, HCCL_DATA_TYPE_FP32, 2, pr.comm[0], pr.stream[0]), HCCL_E_PARA,
         "root 2 is not a rank of");
  expect(HcclSend(x0.p, 4, HCCL_DATA_TYPE_FP32, 0, pr.comm[0], pr.stream[0]), HCCL_E_PARA, "the sender's own rank");
  expect(HcclAllGather(x0.p, x0.p, UINT64_MAX / 2 + 1, HCCL_DATA_TYPE_FP32, pr.comm[0], pr.stream[0]), HCCL_E_PARA,
         "overflows");
  // (an allocation of 64 bytes spans 128 with its padding: 2 ranks x 20 floats do not fit)
  expect(HcclReduceScatter(x0.p, x0.p, 20, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, pr.comm[0], pr.stream[0]),
         HCCL_E_PARA, "sendBuf range");
  int32_t dup[2] = {1, 1}, bad[1] = {7};
  HcclComm c[2];
  expect(HcclCommInitAll(2, dup, c), HCCL_E_PARA, "device 1 is listed twice");
  expect(HcclCommInitAll(1, bad, c), HCCL_E_PARA, "devices[0] = 7 is not a device");
  expect(HcclCommInitAll(2, nullptr, c), HCCL_E_PTR, "must not be null");

  uint32_t size = 0, rank = 9;
  ASSERT_EQ(HcclGetRankSize(pr.comm[1], &size), HCCL_SUCCESS);
  ASSERT_EQ(HcclGetRankId(pr.comm[1], &rank), HCCL_SUCCESS);
  EXPECT_EQ(size, 2u);
  EXPECT_EQ(rank, 1u);
  char name[COMM_NAME_MAX_LENGTH];
  ASSERT_EQ(HcclGetCommName(pr.comm[1], name), HCCL_SUCCESS);
  EXPECT_EQ(std::string(name).rfind("ember_hccl_", 0), 0u) << name;
  EXPECT_STREQ(HcclGetErrorString(HCCL_E_TIMEOUT), "timeout");

  // A destroyed communicator is recognised.
  int32_t one[1] = {0};
  HcclComm solo = nullptr;
  ASSERT_EQ(HcclCommInitAll(1, one, &solo), HCCL_SUCCESS);
  ASSERT_EQ(HcclCommDestroy(solo), HCCL_SUCCESS);
  expect(HcclBarrier(solo, nullptr), HCCL_E_PARA, "is not a live communicator");
  expect(HcclCommDestroy(solo), HCCL_E_PARA, "is not a live communicator");
}

// One rank: HcclGetRootInfo + HcclCommInitRootInfo in a single process, on the current device.
TEST(Hccl, RootInfoSingleRank) {
  HcclRootInfo info;
  ASSERT_EQ(HcclGetRootInfo(&info), HCCL_SUCCESS);
  aclrtSetDevice(1);
  HcclComm c = nullptr;
  ASSERT_EQ(HcclCommInitRootInfo(1, &info, 0, &c), HCCL_SUCCESS) << recent_error();
  DevBuf x(1, 16);
  std::vector<char> h(16);
  for (int i = 0; i < 4; ++i) encode(HCCL_DATA_TYPE_FP32, i + 1, h.data() + 4 * i);
  x.put(h);
  ASSERT_EQ(HcclAllReduce(x.p, x.p, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, nullptr), HCCL_SUCCESS) << recent_error();
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  EXPECT_EQ(x.get(), h);
  HcclRootInfo junk;
  std::memset(&junk, 0, sizeof junk);
  HcclComm c2 = nullptr;
  EXPECT_EQ(HcclCommInitRootInfo(1, &junk, 0, &c2), HCCL_E_PARA);
  EXPECT_EQ(HcclCommInitRootInfo(2, &info, 2, &c2), HCCL_E_PARA);
  ASSERT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
  aclrtSetDevice(0);
}

// ---- several ranks of one process through HcclGetRootInfo + HcclCommInitRootInfo, one thread
// per device, as CANN's HCCL samples run; and the collectives those samples call.
namespace {

// Runs body(rank, comm, stream) on one thread per device (npu:0, npu:1), each with a
// communicator from one rootInfo (with `config` when given) and its own stream.
template <class Body>
void on_two_ranks(Body body, const HcclCommConfig* config = nullptr) {
  HcclRootInfo info;
  ASSERT_EQ(HcclGetRootInfo(&info), HCCL_SUCCESS);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      ASSERT_EQ(aclrtSetDevice(static_cast<int32_t>(r)), ACL_SUCCESS);
      HcclComm comm = nullptr;
      ASSERT_EQ(config ? HcclCommInitRootInfoConfig(2, &info, r, config, &comm) : HcclCommInitRootInfo(2, &info, r, &comm),
                HCCL_SUCCESS)
          << recent_error();
      aclrtStream stream = nullptr;
      ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
      body(r, comm, stream);
      EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
      EXPECT_EQ(HcclCommDestroy(comm), HCCL_SUCCESS);
    });
  for (std::thread& t : threads) t.join();
  aclrtSetDevice(0);
}

std::vector<float> floats_of(const DevBuf& b) {
  std::vector<char> h = b.get();
  std::vector<float> f(h.size() / 4);
  std::memcpy(f.data(), h.data(), h.size());
  return f;
}
std::vector<char> bytes_of(const std::vector<float>& f) {
  std::vector<char> h(f.size() * 4);
  std::memcpy(h.data(), f.data(), h.size());
  return h;
}

}  // namespace

TEST(Hccl, RootInfoRanksAsThreadsOfOneProcessRunEveryCollective) {
  HcclCommConfig config;
  HcclCommConfigInit(&config);
  std::snprintf(config.hcclCommName, sizeof config.hcclCommName, "%s", "sample_comm");
  on_two_ranks([](uint32_t r, HcclComm comm, aclrtStream s) {
    const int dev = static_cast<int>(r);
    uint32_t size = 0, rank = 9;
    ASSERT_EQ(HcclGetRankSize(comm, &size), HCCL_SUCCESS);
    ASSERT_EQ(HcclGetRankId(comm, &rank), HCCL_SUCCESS);
    EXPECT_EQ(size, 2u);
    EXPECT_EQ(rank, r);
    char name[COMM_NAME_MAX_LENGTH];
    ASSERT_EQ(HcclGetCommName(comm, name), HCCL_SUCCESS);
    EXPECT_STREQ(name, "sample_comm");
    // AllReduce: 0..7 + 10 r.
    std::vector<float> mine(8);
    for (int i = 0; i < 8; ++i) mine[i] = static_cast<float>(i + 10 * r);
    DevBuf x(dev, 32), y(dev, 32);
    x.put(bytes_of(mine));
    ASSERT_EQ(HcclAllReduce(x.p, y.p, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s), HCCL_SUCCESS) << recent_error();
    // Reduce (max) to rank 1: rank 0 passes no recvBuf.
    DevBuf red(dev, 32);
    ASSERT_EQ(HcclReduce(x.p, r == 1 ? red.p : nullptr, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, 1, comm, s),
              HCCL_SUCCESS)
        << recent_error();
    // Scatter from rank 0 (0, 1, 2, 3): rank r gets elements 2r, 2r + 1; rank 1 passes no sendBuf.
    DevBuf sc_in(dev, 16), sc_out(dev, 8);
    if (r == 0) sc_in.put(bytes_of({0, 1, 2, 3}));
    ASSERT_EQ(HcclScatter(r == 0 ? sc_in.p : nullptr, sc_out.p, 2, HCCL_DATA_TYPE_FP32, 0, comm, s), HCCL_SUCCESS)
        << recent_error();
    // AlltoAll: block j of rank i (value 100 i + j) lands as block i of rank j.
    DevBuf a_in(dev, 16), a_out(dev, 16);
    a_in.put(bytes_of({100.0f * r, 100.0f * r, 100.0f * r + 1, 100.0f * r + 1}));
    ASSERT_EQ(HcclAlltoAll(a_in.p, 2, HCCL_DATA_TYPE_FP32, a_out.p, 2, HCCL_DATA_TYPE_FP32, comm, s), HCCL_SUCCESS)
        << recent_error();
    // AlltoAllV: rank 0 sends 1 element to itself and 3 to rank 1; rank 1 sends 2 to rank 0 and
    // none to itself; offsets skip a gap.
    const uint64_t sc[2][2] = {{1, 3}, {2, 0}}, sd[2][2] = {{0, 2}, {1, 0}};
    const uint64_t rc[2][2] = {{1, 2}, {3, 0}}, rd[2][2] = {{0, 1}, {0, 3}};
    DevBuf v_in(dev, 24), v_out(dev, 24);
    v_in.put(bytes_of({10.0f + r, 11.0f + r, 12.0f + r, 13.0f + r, 14.0f + r, 15.0f + r}));
    v_out.put(bytes_of(std::vector<float>(6, -1.0f)));
    ASSERT_EQ(HcclAlltoAllV(v_in.p, sc[r], sd[r], HCCL_DATA_TYPE_FP32, v_out.p, rc[r], rd[r], HCCL_DATA_TYPE_FP32, comm,
                            s),
              HCCL_SUCCESS)
        << recent_error();
    // A pairwise exchange in a group: both send first, which one at a time would wait for ever.
    DevBuf p_in(dev, 12), p_out(dev, 12);
    p_in.put(bytes_of({1.0f + r, 2.0f + r, 3.0f + r}));
    ASSERT_EQ(HcclGroupStart(), HCCL_SUCCESS);
    ASSERT_EQ(HcclSend(p_in.p, 3, HCCL_DATA_TYPE_FP32, 1 - r, comm, s), HCCL_SUCCESS) << recent_error();
    ASSERT_EQ(HcclRecv(p_out.p, 3, HCCL_DATA_TYPE_FP32, 1 - r, comm, s), HCCL_SUCCESS) << recent_error();
    ASSERT_EQ(HcclGroupEnd(), HCCL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS) << recent_error();

    std::vector<float> sum(8);
    for (int i = 0; i < 8; ++i) sum[i] = static_cast<float>(2 * i + 10);
    EXPECT_EQ(floats_of(y), sum);
    if (r == 1) {
      std::vector<float> mx(8);
      for (int i = 0; i < 8; ++i) mx[i] = static_cast<float>(i + 10);
      EXPECT_EQ(floats_of(red), mx);
    }
    EXPECT_EQ(floats_of(sc_out), (std::vector<float>{2.0f * r, 2.0f * r + 1}));
    EXPECT_EQ(floats_of(a_out), (std::vector<float>{0.0f + r, 0.0f + r, 100.0f + r, 100.0f + r}));
    const std::vector<float> v_want = r == 0 ? std::vector<float>{10, 12, 13, -1, -1, -1}
                                             : std::vector<float>{12, 13, 14, -1, -1, -1};
    EXPECT_EQ(floats_of(v_out), v_want);
    EXPECT_EQ(floats_of(p_out), (std::vector<float>{2.0f - r, 3.0f - r, 4.0f - r}));
  }, &config);
}

// The ranks' own calls are named when they differ; AlltoAllV's counts must pair up.
TEST(Hccl, RootInfoRanksThatDifferFailNamingEachRanksCall) {
  on_two_ranks([](uint32_t r, HcclComm comm, aclrtStream s) {
    const int dev = static_cast<int>(r);
    DevBuf x(dev, 64), y(dev, 64);
    if (r == 0) {
      ASSERT_EQ(HcclReduce(x.p, y.p, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, comm, s), HCCL_SUCCESS);
    } else {
      ASSERT_EQ(HcclAllReduce(x.p, y.p, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s), HCCL_SUCCESS);
    }
    EXPECT_NE(aclrtSynchronizeStream(s), ACL_SUCCESS);
    std::string msg = recent_error();
    EXPECT_NE(msg.find("rank 0: HcclReduce(count 4, fp32, sum, root 0); rank 1: HcclAllReduce(count 4, fp32, sum)"),
              std::string::npos)
        << msg;
    const uint64_t sc[2][2] = {{1, 1}, {1, 1}}, rc[2][2] = {{1, 2}, {1, 1}}, d[2] = {0, 2};
    ASSERT_EQ(HcclAlltoAllV(x.p, sc[r], d, HCCL_DATA_TYPE_FP32, y.p, rc[r], d, HCCL_DATA_TYPE_FP32, comm, s),
              HCCL_SUCCESS);
    EXPECT_NE(aclrtSynchronizeStream(s), ACL_SUCCESS);
    msg = recent_error();
    EXPECT_NE(msg.find("rank 1 sends 1 elements to rank 0, which expects 2 from it"), std::string::npos) << msg;
  });
}

// A rank that never calls HcclCommInitRootInfo: the others give up after HCCL_CONNECT_TIMEOUT,
// naming it; misuse of the new calls gets HCCL's codes.
TEST(Hccl, RootInfoRankThatNeverComesIsNamedAndMisuseIsRefused) {
  setenv("HCCL_CONNECT_TIMEOUT", "1", 1);
  HcclRootInfo info;
  ASSERT_EQ(HcclGetRootInfo(&info), HCCL_SUCCESS);
  HcclComm c = nullptr;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(HcclCommInitRootInfo(3, &info, 1, &c), HCCL_E_TIMEOUT);
  unsetenv("HCCL_CONNECT_TIMEOUT");
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.9);
  std::string msg = recent_error();
  EXPECT_NE(msg.find("rank(s) 0, 2 of 3 never came within 1 s (HCCL_CONNECT_TIMEOUT"), std::string::npos) << msg;

  EXPECT_EQ(HcclGroupEnd(), HCCL_E_PARA);
  HcclCommConfig bad;
  std::memset(&bad, 0, sizeof bad);
  HcclRootInfo one;
  ASSERT_EQ(HcclGetRootInfo(&one), HCCL_SUCCESS);
  EXPECT_EQ(HcclCommInitRootInfoConfig(1, &one, 0, &bad, &c), HCCL_E_PARA);
  EXPECT_NE(recent_error().find("HcclCommConfigInit"), std::string::npos);
  Pair pr;
  DevBuf x0(0, 64);
  EXPECT_EQ(HcclAlltoAll(x0.p, 4, HCCL_DATA_TYPE_FP32, static_cast<char*>(x0.p) + 8, 4, HCCL_DATA_TYPE_FP32, pr.comm[0],
                         pr.stream[0]),
            HCCL_E_PARA);
  EXPECT_NE(recent_error().find("overlap"), std::string::npos);
  EXPECT_EQ(HcclAlltoAll(x0.p, 4, HCCL_DATA_TYPE_FP32, x0.p, 3, HCCL_DATA_TYPE_FP32, pr.comm[0], pr.stream[0]),
            HCCL_E_PARA);
  EXPECT_EQ(HcclScatter(nullptr, x0.p, 4, HCCL_DATA_TYPE_FP32, 0, pr.comm[0], pr.stream[0]), HCCL_E_PTR);
  EXPECT_EQ(HcclReduce(x0.p, nullptr, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, pr.comm[0], pr.stream[0]), HCCL_E_PTR);
}

// HcclCommInitClusterInfo: two threads, ranks 1 and 0 of a rank table on devices 0 and 1 (rank ids
// need not follow device ids), all-reduce; and the table's mistakes, named.
TEST(Hccl, RankTableRanksAsThreadsOfOneProcess) {
  const std::string path = ::testing::TempDir() + "ember_ranktable.json";
  auto write = [&](const std::string& text) {
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  };
  write(R"({"status": "completed", "version": "1.0", "server_count": "1", "server_list": [
            {"server_id": "node_0", "device": [{"device_id": "0", "device_ip": "192.168.1.8", "rank_id": "1"},
                                               {"device_id": "1", "device_ip": "192.168.1.9", "rank_id": "0"}]}]})");
  std::vector<std::thread> threads;
  for (int dev = 0; dev < 2; ++dev)
    threads.emplace_back([&, dev] {
      ASSERT_EQ(aclrtSetDevice(dev), ACL_SUCCESS);
      const uint32_t rank = dev == 0 ? 1 : 0;
      HcclComm comm = nullptr;
      ASSERT_EQ(HcclCommInitClusterInfo(path.c_str(), rank, &comm), HCCL_SUCCESS) << recent_error();
      uint32_t size = 0, r = 9;
      HcclGetRankSize(comm, &size);
      HcclGetRankId(comm, &r);
      EXPECT_EQ(size, 2u);
      EXPECT_EQ(r, rank);
      aclrtStream s = nullptr;
      ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
      DevBuf x(dev, 8), y(dev, 8);
      x.put(bytes_of({1.0f + rank, 10.0f * (rank + 1)}));
      ASSERT_EQ(HcclAllReduce(x.p, y.p, 2, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s), HCCL_SUCCESS);
      ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS) << recent_error();
      EXPECT_EQ(floats_of(y), (std::vector<float>{3, 30}));
      EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
      EXPECT_EQ(HcclCommDestroy(comm), HCCL_SUCCESS);
    });
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  HcclComm comm = nullptr;
  EXPECT_EQ(HcclCommInitClusterInfo(path.c_str(), 0, &comm), HCCL_E_PARA);  // rank 0 is device 1
  EXPECT_NE(recent_error().find("rank 0 is device 1 in the rank table"), std::string::npos);
  write(R"({"status": "completed", "version": "1.0", "server_list": [{"device": [{"device_id": "0", "rank_id": "0"},
            {"device_id": "1", "rank_id": "2"}]}]})");
  EXPECT_EQ(HcclCommInitClusterInfo(path.c_str(), 0, &comm), HCCL_E_PARA);
  EXPECT_NE(recent_error().find("the rank_ids must be 0 .. 1"), std::string::npos);
  write(R"({"status": "initializing", "version": "1.0", "server_list": []})");
  EXPECT_EQ(HcclCommInitClusterInfo(path.c_str(), 0, &comm), HCCL_E_PARA);
  EXPECT_NE(recent_error().find("\"status\" must be \"completed\""), std::string::npos);
  EXPECT_EQ(HcclCommInitClusterInfo("/nonexistent/ranktable.json", 0, &comm), HCCL_E_PARA);
  EXPECT_NE(recent_error().find("cannot open the rank table"), std::string::npos);
  std::remove(path.c_str());
}
