// The DistributedDataParallel step of the bench's LLaMA MLP case (BM_llama_mlp_step: tokens 512,
// d_model 1024, d_ff 2816, AdamW, loss mean(y^2)), with a scale model for larger jobs.
//
//   build/bench/ddp_step_bench --tokens 256                      # one process, half the batch
//   mpirun -np 2 build/bench/ddp_step_bench --tokens 512         # 2 ranks, 256 tokens each
//   options: --device npu|cpu (npu), --dtype bf16|fp32 (bf16 autocast), --iters N (20)
//            --latency-us A --busbw-gbs B: the network of the projection (defaults below)
//
// Each rank trains on tokens/ranks rows. Phases, interleaved step by step so drift hits all alike
// (times: the slowest rank's, median over iterations):
//   local  the step without DDP (no communication), every rank at once: the compute of a rank;
//   ddp    the step through DistributedDataParallel (its buckets' all-reduces in backward);
//   comm   the same all-reduces alone, one after the other, nothing to hide them behind.
// exposed = ddp - local is what communication adds to the step; hidden share = 1 - exposed / comm.
// Also measured: the backward part of the local step, and the latency of a 4-byte all-reduce.
//
// The projection: a ring all-reduce of S bytes over N ranks takes 2 (N - 1) a + 2 (N - 1) / N * S / B
// for a per-hop latency a and bus bandwidth B. That gives each bucket's time at N ranks (weak
// scaling: each rank's work stays the same). Two overlap cases:
//   none     every all-reduce adds to the step (what this 2-core machine shows, where the
//            transfers need the cores the compute uses);
//   overlap  a transfer engine of its own (as HCCL has on NPUs): all buckets but the last hide
//            behind the backward measured here, the last (ready when backward ends) cannot.
// Step efficiency = local / (local + exposed).
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <ember/ember.h>

using namespace ember;
namespace dist = ember::distributed;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double slowest(double t) {
  double m = 0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

void finish(const Device& dev) {
  if (dev.is_npu()) npu::synchronize(dev.index());
}

// Ring all-reduce time (seconds) of `bytes` over n ranks.
double ring_seconds(double bytes, int n, double latency_s, double bw_bytes_s) {
  if (n < 2) return 0;
  return 2.0 * (n - 1) * latency_s + 2.0 * (n - 1) / n * bytes / bw_bytes_s;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  std::string device = "npu", dtype = "bf16";
  int64_t tokens = 512, d_model = 1024, d_ff = 2816;
  int iters = 20;
  // An assumed cluster network for the projection: 200 Gb/s per NPU (RoCE, as Ascend 910B
  // servers have), of which 20 GB/s reached as bus bandwidth, and 10 us per ring hop.
  double net_latency_us = 10, net_busbw_gbs = 20;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ddp_step_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::printf(
          "usage: [mpirun -np N] ddp_step_bench [options]\n"
          "  One DDP training step of LlamaMLPBlock(1024, 2816) + AdamW, per rank, and the step projected\n"
          "  onto a cluster network.\n\n"
          "options:\n"
          "  --device npu|cpu     where each rank trains (default npu)\n"
          "  --dtype bf16|fp32    autocast dtype or fp32 (default bf16)\n"
          "  --tokens N           tokens of the whole step, split over the ranks (default 512)\n"
          "  --iters N            timed steps (default 20)\n"
          "  --latency-us X       the projection's latency per ring hop (default 10)\n"
          "  --busbw-gbs X        the projection's bus bandwidth in GB/s (default 20)\n");
      MPI_Finalize();
      return 0;
    }
    if (a == "--device") device = next();
    else if (a == "--dtype") dtype = next();
    else if (a == "--tokens") tokens = std::atoll(next().c_str());
    else if (a == "--iters") iters = std::atoi(next().c_str());
    else if (a == "--latency-us") net_latency_us = std::atof(next().c_str());
    else if (a == "--busbw-gbs") net_busbw_gbs = std::atof(next().c_str());
    else {
      std::fprintf(stderr, "ddp_step_bench: unknown option %s (try --help)\n", a.c_str());
      return 2;
    }
  }
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (tokens % n != 0 || (device != "npu" && device != "cpu") || (dtype != "bf16" && dtype != "fp32")) {
    if (rank == 0) std::fprintf(stderr, "ddp_step_bench: --tokens must divide by the ranks; --device npu|cpu; --dtype bf16|fp32\n");
    MPI_Finalize();
    return 2;
  }
  const bool npu_dev = device == "npu";
  const Device dev = npu_dev ? Device(DeviceType::NPU, dist::local_rank() % npu::device_count()) : Device(DeviceType::CPU);
  std::optional<npu::DeviceGuard> guard;
  if (npu_dev) guard.emplace(dev.index());
  const bool bf16 = dtype == "bf16";
  const int64_t rows = tokens / n;

  dist::init_process_group(npu_dev ? "hccl" : "mpi");
  manual_seed(0);
  auto local = std::make_shared<nn::LlamaMLPBlock>(d_model, d_ff);
  local->to(dev);
  auto block = std::make_shared<nn::LlamaMLPBlock>(d_model, d_ff);
  block->to(dev);
  auto ddp = std::make_shared<nn::parallel::DistributedDataParallel>(block);
  manual_seed(1 + static_cast<uint64_t>(rank));
  Tensor x = randn({rows, d_model}).to(dev);
  optim::AdamW opt_local(local->parameters(), {1e-4}), opt_ddp(ddp->parameters(), {1e-4});
  auto step = [&](nn::Module& m, optim::AdamW& opt) {
    opt.zero_grad();
    Tensor y;
    {
      amp::AutocastGuard g(dev.type(), kBFloat16, bf16);
      y = m(x);
    }
    y.square().mean().backward();
    opt.step();
    finish(dev);
  };
  // The buckets as DDP made them, for the comm phase and the projection.
  std::vector<Tensor> flats;
  std::vector<double> bucket_bytes;
  {
    auto named = block->named_parameters();
    for (const auto& names : ddp->bucket_names()) {
      int64_t numel = 0;
      for (const std::string& nm : names)
        for (auto& [k, t] : named)
          if ("module." + k == nm || k == nm) numel += t.numel();
      flats.push_back(zeros({numel}, dev));
      bucket_bytes.push_back(static_cast<double>(numel) * 4);
    }
  }
  std::vector<double> t_local, t_backward, t_ddp, t_comm, t_tiny, exposed_ms, total_ms;
  Tensor tiny = zeros({1}, dev);
  for (int k = -2; k < iters; ++k) {  // two warm-up rounds
    MPI_Barrier(MPI_COMM_WORLD);
    double a = MPI_Wtime();
    step(*local, opt_local);
    double b = slowest(MPI_Wtime() - a);
    MPI_Barrier(MPI_COMM_WORLD);
    double bwd = 0;  // the backward alone (a step of its own: the synchronisations around it cost)
    {
      opt_local.zero_grad();
      Tensor y;
      {
        amp::AutocastGuard g(dev.type(), kBFloat16, bf16);
        y = (*local)(x);
      }
      Tensor loss = y.square().mean();
      finish(dev);
      double b0 = MPI_Wtime();
      loss.backward();
      finish(dev);
      bwd = slowest(MPI_Wtime() - b0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    a = MPI_Wtime();
    step(*ddp, opt_ddp);
    double c = slowest(MPI_Wtime() - a);
    double ex = ddp->last_exposed_comm_ms(), tot = ddp->last_total_comm_ms();
    MPI_Barrier(MPI_COMM_WORLD);
    a = MPI_Wtime();
    for (Tensor& f : flats) dist::all_reduce(f, dist::ReduceOp::AVG);
    double d = slowest(MPI_Wtime() - a);
    std::vector<double> tiny_times;
    for (int r = 0; r < 10; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      a = MPI_Wtime();
      dist::all_reduce(tiny);
      tiny_times.push_back(slowest(MPI_Wtime() - a));
    }
    if (k >= 0) {
      t_local.push_back(b), t_backward.push_back(bwd), t_ddp.push_back(c), t_comm.push_back(d);
      t_tiny.push_back(median(tiny_times));
      exposed_ms.push_back(ex), total_ms.push_back(tot);
    }
  }
  const double local_s = median(t_local), ddp_s = median(t_ddp), comm_s = median(t_comm);
  const double backward_s = median(t_backward), tiny_s = median(t_tiny);
  const double exposed_s = std::max(0.0, ddp_s - local_s), hidden_s = std::max(0.0, comm_s - exposed_s);
  double total_bytes = 0;
  for (double b : bucket_bytes) total_bytes += b;
  if (rank == 0) {
    std::printf("DDP step, LlamaMLPBlock(%lld, %lld), AdamW, %s %s, %d rank(s) x %lld tokens (global batch %lld);\n"
                "%zu bucket(s), %.1f MB of gradients; times: slowest rank, median of %d steps\n",
                static_cast<long long>(d_model), static_cast<long long>(d_ff), device.c_str(), dtype.c_str(), n,
                static_cast<long long>(rows), static_cast<long long>(tokens), bucket_bytes.size(), total_bytes / 1e6,
                iters);
    std::printf("  local step (no DDP)          %9.2f ms   (backward %.2f ms)\n", local_s * 1e3, backward_s * 1e3);
    std::printf("  DDP step                     %9.2f ms   (x%.3f of local)\n", ddp_s * 1e3, ddp_s / local_s);
    std::printf("  all-reduces alone            %9.2f ms   (%.2f GB/s algbw over the buckets)\n", comm_s * 1e3,
                total_bytes / comm_s / 1e9);
    std::printf("  exposed (DDP - local)        %9.2f ms   hidden share of the all-reduce time: %.0f%%\n",
                exposed_s * 1e3, comm_s > 0 ? 100.0 * hidden_s / comm_s : 0.0);
    std::printf("  4-byte all-reduce            %9.1f us\n", tiny_s * 1e6);
    // On cpu the host waits for each op, so DDP's counters are the communication's; on npu the
    // host runs ahead of the device and they include kernels still queued.
    if (!npu_dev)
      std::printf("  DDP's own counters: waited after backward %.2f ms, launch-to-done summed %.2f ms (medians)\n",
                  median(exposed_ms), median(total_ms));
    if (n >= 2) {
      // This machine's network: the per-hop latency from the 4-byte all-reduce (2 (n - 1) hops)
      // and the bus bandwidth of the bucket all-reduces.
      const double here_latency = tiny_s / (2.0 * (n - 1)), here_busbw = total_bytes / comm_s * 2.0 * (n - 1) / n;
      std::printf("projection: ring all-reduce per bucket, weak scaling (%lld tokens and a %.1f ms local step per rank)\n",
                  static_cast<long long>(rows), local_s * 1e3);
      struct Net {
        const char* name;
        double latency_s, busbw;
      };
      const Net nets[] = {{"this machine (measured)", here_latency, here_busbw},
                          {"assumed cluster network", net_latency_us * 1e-6, net_busbw_gbs * 1e9}};
      for (const Net& net : nets) {
        std::printf("  %s: a = %.1f us per hop, B = %.2f GB/s bus bandwidth\n", net.name, net.latency_s * 1e6,
                    net.busbw / 1e9);
        std::printf("    %6s %14s %18s %18s\n", "ranks", "all-reduce ms", "efficiency: none", "overlap");
        for (int ranks : {8, 64, 512}) {
          double all = 0, last = 0;
          for (double b : bucket_bytes) {
            last = ring_seconds(b, ranks, net.latency_s, net.busbw);
            all += last;
          }
          const double overlapped = last + std::max(0.0, all - last - backward_s);
          std::printf("    %6d %14.2f %17.0f%% %17.0f%%\n", ranks, all * 1e3, 100.0 * local_s / (local_s + all),
                      100.0 * local_s / (local_s + overlapped));
        }
      }
    }
  }
  ddp.reset();
  dist::destroy_process_group();
  MPI_Finalize();
  return 0;
}
