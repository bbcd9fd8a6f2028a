// ember::distributed under mpirun (2 or more processes): the "mpi" backend on cpu tensors, then
// the "hccl" backend on npu tensors (each rank on its own emulated NPU). Every collective, dtype
// and reduction, sizes 0, 1, odd and 64 MiB, against values computed here; async work that the
// host overlaps with its own compute (and, on npu, kernels queued after it); counts that differ
// between ranks; misuse. Prints "ok" on every rank and exits 0 when everything holds.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <ember/ember.h>

#include "mpi/mpi_check.h"

using namespace ember;
namespace dist = ember::distributed;

namespace {

int& g_rank = mpi_check::rank;
int g_size = 1;

// Rank r's element i: small integers, exact in every dtype (and their sums and products over a few
// ranks).
double value(int r, int64_t i) { return static_cast<double>((i * 5 + r * 3 + i / 7) % 7 - 3); }

Tensor values(int r, int64_t n, DType dt, Device dev) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = value(r, i);
  return tensor(v, {n}).to(dev, dt);
}

std::vector<double> host(const Tensor& t) { return t.to(kFloat64).cpu().to_vector<double>(); }

double reduce(dist::ReduceOp op, int64_t i, int64_t offset = 0) {
  double acc = value(0, i + offset);
  for (int r = 1; r < g_size; ++r) {
    const double v = value(r, i + offset);
    switch (op) {
      case dist::ReduceOp::SUM:
      case dist::ReduceOp::AVG: acc += v; break;
      case dist::ReduceOp::PRODUCT: acc *= v; break;
      case dist::ReduceOp::MAX: acc = v > acc ? v : acc; break;
      case dist::ReduceOp::MIN: acc = v < acc ? v : acc; break;
    }
  }
  return op == dist::ReduceOp::AVG ? acc / g_size : acc;
}

void collectives(Device dev) {
  const DType dtypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kInt8};
  for (DType dt : dtypes)
    for (int64_t n : {int64_t(0), int64_t(1), int64_t(1001)}) {
      for (dist::ReduceOp op : {dist::ReduceOp::SUM, dist::ReduceOp::AVG, dist::ReduceOp::PRODUCT,
                                dist::ReduceOp::MAX, dist::ReduceOp::MIN}) {
        if (op == dist::ReduceOp::AVG && !is_floating_point(dt)) continue;
        Tensor t = values(g_rank, n, dt, dev);
        dist::all_reduce(t, op);
        auto h = host(t);
        for (int64_t i = 0; i < n; ++i) {
          double want = reduce(op, i);
          if (op == dist::ReduceOp::AVG) want = tensor(std::vector<double>{want}, {1}).to(dt).item<double>();
          if (h[static_cast<size_t>(i)] != want) {
            EXPECT(false, "all_reduce %s op %d n %lld i %lld: %g, expected %g", dtype_name(dt), static_cast<int>(op),
                   static_cast<long long>(n), static_cast<long long>(i), h[static_cast<size_t>(i)], want);
            break;
          }
        }
      }
      Tensor b = values(g_rank, n, dt, dev);
      dist::broadcast(b, g_size - 1);
      EXPECT(host(b) == host(values(g_size - 1, n, dt, dev)), "broadcast %s n %lld", dtype_name(dt),
             static_cast<long long>(n));
      Tensor in = values(g_rank, n, dt, dev);
      Tensor out = zeros({g_size * n}, TensorOptions().dtype(dt).device(dev));
      dist::all_gather_into_tensor(out, in);
      std::vector<double> want;
      for (int r = 0; r < g_size; ++r) {
        auto part = host(values(r, n, dt, dev));
        want.insert(want.end(), part.begin(), part.end());
      }
      EXPECT(host(out) == want, "all_gather %s n %lld", dtype_name(dt), static_cast<long long>(n));
      Tensor big = values(g_rank, g_size * n, dt, dev);
      Tensor mine = zeros({n}, TensorOptions().dtype(dt).device(dev));
      dist::reduce_scatter_tensor(mine, big, dist::ReduceOp::MAX);
      auto hm = host(mine);
      for (int64_t i = 0; i < n; ++i)
        EXPECT(hm[static_cast<size_t>(i)] == reduce(dist::ReduceOp::MAX, i, g_rank * n), "reduce_scatter %s i %lld",
               dtype_name(dt), static_cast<long long>(i));
    }
  // bool: SUM is logical or, PRODUCT logical and, as in torch (never a byte of 2)
  for (dist::ReduceOp op : {dist::ReduceOp::SUM, dist::ReduceOp::PRODUCT, dist::ReduceOp::MAX, dist::ReduceOp::MIN}) {
    const int64_t n = 101;
    Tensor t = values(g_rank, n, kFloat32, dev) != 0;  // (true on both ranks at most i)
    dist::all_reduce(t, op);
    const bool any = op == dist::ReduceOp::SUM || op == dist::ReduceOp::MAX;
    std::vector<uint8_t> raw(static_cast<size_t>(n));
    Tensor c = t.cpu().contiguous();
    std::memcpy(raw.data(), c.impl()->data(), raw.size());
    for (int64_t i = 0; i < n; ++i) {
      bool want = !any;
      for (int r = 0; r < g_size; ++r) want = any ? (want || value(r, i) != 0) : (want && value(r, i) != 0);
      if (raw[static_cast<size_t>(i)] != (want ? 1 : 0)) {
        EXPECT(false, "all_reduce bool op %d i %lld: byte %d, expected %d", static_cast<int>(op),
               static_cast<long long>(i), raw[static_cast<size_t>(i)], want ? 1 : 0);
        break;
      }
    }
  }
  // send / recv around the ring, then a barrier
  const int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
  Tensor out = values(g_rank, 10, kFloat32, dev), in = zeros({10}, TensorOptions().device(dev));
  if (g_rank % 2 == 0) {
    dist::send(out, next);
    dist::recv(in, prev);
  } else {
    dist::recv(in, prev);
    dist::send(out, next);
  }
  dist::barrier();
  EXPECT(host(in) == host(values(prev, 10, kFloat32, dev)), "send/recv");
}

// A 64 MiB all-reduce launched async: the call returns at once, the host computes meanwhile, and
// the result is right after wait().
void async_overlap(Device dev) {
  const int64_t n = (64 << 20) / 4;
  Tensor x = full({n}, static_cast<double>(g_rank + 1), TensorOptions().device(dev));
  const auto t0 = std::chrono::steady_clock::now();
  dist::WorkPtr w = dist::all_reduce(x, dist::ReduceOp::SUM, /*async_op=*/true);
  const auto t1 = std::chrono::steady_clock::now();
  Tensor a = randn({256, 256}), b = randn({256, 256});
  Tensor c = matmul(a, b);  // host compute while the collective runs
  (void)c.sum().item<float>();
  w->wait();
  const auto t2 = std::chrono::steady_clock::now();
  const double launch = std::chrono::duration<double, std::milli>(t1 - t0).count();
  const double total = std::chrono::duration<double, std::milli>(t2 - t0).count();
  std::printf("rank %d (%s): 64 MiB all_reduce: launch %.3f ms, launch + compute + wait %.1f ms\n", g_rank,
              dev.str().c_str(), launch, total);
  EXPECT(launch < 0.5 * total, "the async launch took %.3f of %.3f ms", launch, total);
  EXPECT(w->is_completed(), "work not completed after wait");
  const double want = g_size * (g_size + 1) / 2.0;
  Tensor wrong = (x != want).sum();
  EXPECT(wrong.item<int64_t>() == 0, "%lld wrong elements", static_cast<long long>(wrong.item<int64_t>()));
}

// npu: the collective runs on the group's stream, so a kernel queued after it on the current
// stream finishes while the 64 MiB all-reduce is still running (on one stream it would wait for it).
void device_overlap(Device dev) {
  const int64_t n = (64 << 20) / 4;
  Tensor x = full({n}, static_cast<double>(g_rank + 1), TensorOptions().device(dev));
  npu::synchronize(dev.index());
  dist::barrier();
  dist::WorkPtr w = dist::all_reduce(x, dist::ReduceOp::SUM, /*async_op=*/true);
  Tensor small = ones({1024}, TensorOptions().device(dev)) * 3.0;  // queued after the all-reduce
  npu::Event after_kernel;
  after_kernel.record();
  after_kernel.synchronize();
  const bool collective_still_running = !w->is_completed();
  EXPECT(collective_still_running, "the kernel queued after the async all_reduce waited for it");
  EXPECT(small.sum().item<double>() == 3072, "kernel result");
  w->wait();
  const double want = g_size * (g_size + 1) / 2.0;
  EXPECT((x != want).sum().item<int64_t>() == 0, "wrong elements after the overlapped all_reduce");
  std::printf("rank %d (%s): a kernel queued after a 64 MiB async all_reduce finished %s it\n", g_rank,
              dev.str().c_str(), collective_still_running ? "before" : "after");
}

void mismatch(Device dev) {
  Tensor t = ones({4 + g_rank}, TensorOptions().device(dev));
  std::string msg;
  try {
    dist::all_reduce(t);
  } catch (const Error& e) {
    msg = e.what();
  }
  // (named "all_reduce" by the mpi backend, "HcclAllReduce" by hccl's)
  EXPECT((msg.find("all_reduce") != std::string::npos || msg.find("HcclAllReduce") != std::string::npos) &&
             msg.find("rank 0: ") != std::string::npos &&
             msg.find("count 4") != std::string::npos && msg.find("count 5") != std::string::npos,
         "message: '%s'", msg.c_str());
  dist::barrier();  // the group is still usable
}

void misuse(const std::string& backend, Device dev) {
  const Device other = backend == "mpi" ? Device(DeviceType::NPU, 0) : Device(DeviceType::CPU);
  Tensor t = ones({4}, TensorOptions().device(other));
  std::string msg;
  try {
    dist::all_reduce(t);
  } catch (const DeviceError& e) {
    msg = e.what();
  }
  EXPECT(msg.find("the \"" + backend + "\" backend takes") != std::string::npos, "message: '%s'", msg.c_str());
  Tensor nc = ones({4, 4}, TensorOptions().device(dev)).transpose(0, 1);
  msg.clear();
  try {
    dist::all_reduce(nc);
  } catch (const ValueError& e) {
    msg = e.what();
  }
  EXPECT(msg.find("must be contiguous") != std::string::npos, "message: '%s'", msg.c_str());
  Tensor i = ones({4}, TensorOptions().dtype(kInt32).device(dev));
  msg.clear();
  try {
    dist::all_reduce(i, dist::ReduceOp::AVG);
  } catch (const DTypeError& e) {
    msg = e.what();
  }
  EXPECT(msg.find("AVG needs a floating-point tensor") != std::string::npos, "message: '%s'", msg.c_str());
}

}  // namespace

int main() {
  return mpi_check::on_both_backends([](const std::string& backend, Device dev) {
    g_size = dist::get_world_size();
    collectives(dev);
    async_overlap(dev);
    if (dev.is_npu()) device_overlap(dev);
    if (g_size == 2) mismatch(dev);
    misuse(backend, dev);
  });
}
