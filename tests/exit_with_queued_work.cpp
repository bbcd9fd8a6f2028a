// Exits with NPU work still queued (Note [Orderly shutdown]); tests/check_exit.sh runs it many times
// in each mode and fails on any crash. Modes:
//   return    returns from main with matmuls (oneDNN's among them) queued on npu:0
//   exit      prints an error of its own and calls exit(3), work queued
//   finalize  aclInit ... aclFinalize around the work, then returns
//   profile   the profiler records while the process exits
//   thread    exit(0) from a thread other than main, work queued
//   mpirun    under mpirun: an HCCL process group, all-reduces queued behind the matmuls, then
//             returns (MPI is finalized by its own atexit handler, after the streams finished)
// Before any of that, an atexit handler is registered; it runs after ember's shutdown and checks
// that the last task queued (a device memset copied into pinned host memory) has run.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <ember/device/npu/acl.h>
#include <ember/ember.h>

using namespace ember;

namespace {
unsigned char* g_pinned = nullptr;
// Reachable at exit (no leak report under ASan): a volatile store the compiler cannot drop.
profiler::Profile* volatile g_recording = nullptr;
constexpr size_t kBytes = 256;

void check_drained() {
  if (!g_pinned) return;
  for (size_t i = 0; i < kBytes; ++i) {
    if (g_pinned[i] != 0x2A) {
      std::fprintf(stderr, "exit_with_queued_work: the last queued task had not run at exit (byte %zu is %d)\n", i,
                   g_pinned[i]);
      std::fflush(stderr);
      std::_Exit(7);
    }
  }
}

void queue_work(int device = 0) {
  Device npu(DeviceType::NPU, device);
  Tensor a = randn({192, 192}).to(npu), b = randn({192, 192}).to(npu);
  Tensor ah = a.to(kBFloat16), bh = b.to(kBFloat16);
  Tensor c, d;
  for (int i = 0; i < 40; ++i) {
    c = a.matmul(b);
    d = ah.matmul(bh);
  }
  void* dev = nullptr;
  aclrtMalloc(&dev, kBytes, ACL_MEM_MALLOC_HUGE_FIRST);
  aclrtMemsetAsync(dev, kBytes, 0x2A, kBytes, nullptr);
  aclrtMemcpyAsync(g_pinned, kBytes, dev, kBytes, ACL_MEMCPY_DEVICE_TO_HOST, nullptr);
}

int queue_collectives() {
  namespace dist = ember::distributed;
  if (!dist::launched_by_mpirun()) {
    std::fprintf(stderr, "exit_with_queued_work mpirun: run me under mpirun\n");
    return 2;
  }
  const int device = dist::local_rank() % npu::device_count();
  aclrtSetDevice(device);  // the group's ranks, the memset and the copy below go to this device
  dist::init_process_group("hccl");
  Tensor g = ones({1 << 16}, Device(DeviceType::NPU, device));
  for (int i = 0; i < 8; ++i) dist::all_reduce(g, dist::ReduceOp::SUM, /*async_op=*/true);
  queue_work(device);
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "return";
  std::atexit(check_drained);
  void* pinned = nullptr;
  if (aclrtMallocHost(&pinned, kBytes) != ACL_SUCCESS) return 2;
  std::memset(pinned, 0, kBytes);
  g_pinned = static_cast<unsigned char*>(pinned);
  if (mode == "finalize") aclInit(nullptr);
  if (mode == "profile") g_recording = new profiler::Profile();  // still recording at exit
  if (mode == "mpirun") return queue_collectives();
  if (mode == "thread") {
    queue_work();
    std::thread([] { std::exit(0); }).join();
  }
  queue_work();
  if (mode == "exit") {
    std::fprintf(stderr, "my own error message\n");
    std::exit(3);
  }
  if (mode == "finalize") aclFinalize();
  return 0;
}
