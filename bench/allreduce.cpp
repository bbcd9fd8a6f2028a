// All-reduce bandwidth between processes, nccl-tests style, beside a raw MPI_Allreduce on the same
// buffers. Run under mpirun:
//   mpirun -np 2 build/bench/allreduce_bench [--min-mb 1] [--max-mb 256] [--iters N]
// For each size (fp32, sum, in place): the time of one all-reduce (the slowest rank's, median of
// the iterations) for
//   mpi    MPI_Allreduce(MPI_IN_PLACE, ...) on the calling thread;
//   ember  ember::distributed::all_reduce on a cpu tensor ("mpi" backend: the group's thread,
//          the calls compared first, then MPI_Iallreduce polled to its deadline);
//   hccl   ember::distributed::all_reduce on an npu tensor ("hccl" backend, the emulated HCCL on
//          the tensor's stream; --no-hccl skips it);
// with nccl-tests' definitions: algbw = bytes / time, busbw = algbw * 2 (n - 1) / n. The three are
// interleaved per iteration, so drift on a shared machine hits them alike.
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <ember/ember.h>

namespace dist = ember::distributed;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The slowest rank's time.
double slowest(double t) {
  double m = 0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int min_mb = 1, max_mb = 256, iters = 0;
  bool hccl = true;
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const char* usage =
      "usage: mpirun -np N allreduce_bench [--min-mb M] [--max-mb M] [--iters K] [--no-hccl]\n"
      "  All-reduce bandwidth between processes: MPI_Allreduce, ember's \"mpi\" group and its \"hccl\" group,\n"
      "  fp32 sums in place, sizes from --min-mb to --max-mb doubling.\n\n"
      "options:\n"
      "  --min-mb M   smallest size in MiB (default 1)\n"
      "  --max-mb M   largest size in MiB (default 256)\n"
      "  --iters K    timed all-reduces per size (default: fewer for larger sizes)\n"
      "  --no-hccl    leave out the hccl group\n";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--min-mb" && i + 1 < argc) min_mb = std::atoi(argv[++i]);
    else if (a == "--max-mb" && i + 1 < argc) max_mb = std::atoi(argv[++i]);
    else if (a == "--iters" && i + 1 < argc) iters = std::atoi(argv[++i]);
    else if (a == "--no-hccl") hccl = false;
    else {
      const bool help = a == "--help" || a == "-h";
      if (rank == 0) std::fprintf(help ? stdout : stderr, "%s%s", help ? "" : ("unknown option " + a + "\n").c_str(), usage);
      MPI_Finalize();
      return help ? 0 : 2;
    }
  }
  if (n < 2) {  // one rank reduces nothing: a table of copies would mislead
    std::fprintf(stderr, "allreduce_bench: 1 rank; an all-reduce needs 2 or more processes:\n%s", usage);
    MPI_Finalize();
    return 2;
  }
  const int npu_index = dist::local_rank() % ember::npu::device_count();
  ember::npu::DeviceGuard guard(npu_index);
  // Two groups side by side are not possible (one default group): the cpu one first, then hccl.
  struct Row {
    double bytes, mpi, ember, hccl;
  };
  std::vector<Row> rows;
  for (int mb = min_mb; mb <= max_mb; mb *= 2) rows.push_back({mb * 1048576.0, 0, 0, 0});

  for (const std::string backend : {"mpi", "hccl"}) {
    if (backend == "hccl" && !hccl) break;
    dist::init_process_group(backend);
    for (Row& row : rows) {
      const int64_t count = static_cast<int64_t>(row.bytes / 4);
      const int it = iters > 0 ? iters : std::max(5, std::min(50, static_cast<int>(2048.0 * 1048576.0 / row.bytes)));
      std::vector<float> raw(static_cast<size_t>(count), 1.0f);
      ember::Tensor t = ember::ones({count}, ember::TensorOptions().device(
                                                 backend == "mpi" ? ember::Device(ember::DeviceType::CPU)
                                                                  : ember::Device(ember::DeviceType::NPU, npu_index)));
      std::vector<double> tm, te;
      for (int k = -2; k < it; ++k) {  // two warm-up rounds
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (backend == "mpi") MPI_Allreduce(MPI_IN_PLACE, raw.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                                            MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        double t2 = MPI_Wtime();
        dist::all_reduce(t);  // waits (for npu: the stream)
        double t3 = MPI_Wtime();
        if (k >= 0) {
          if (backend == "mpi") tm.push_back(slowest(t1 - t0));
          te.push_back(slowest(t3 - t2));
        }
      }
      if (backend == "mpi") {
        row.mpi = median(tm);
        row.ember = median(te);
      } else {
        row.hccl = median(te);
      }
    }
    dist::destroy_process_group();
  }
  if (rank == 0) {
    const double f = 2.0 * (n - 1) / n;
    std::printf("all-reduce, fp32 sum in place, %d ranks (busbw = algbw * %.2f); times: slowest rank, median\n", n, f);
    std::printf("%10s %12s %9s %9s %12s %9s %9s %8s %12s %9s\n", "size", "mpi us", "algbw", "busbw", "ember us",
                "algbw", "busbw", "ember/mpi", "hccl us", "busbw");
    for (const Row& r : rows) {
      auto bw = [&](double t) { return r.bytes / t / 1e9; };
      std::printf("%7.0f MiB %12.1f %9.2f %9.2f %12.1f %9.2f %9.2f %8.2f", r.bytes / 1048576, r.mpi * 1e6, bw(r.mpi),
                  bw(r.mpi) * f, r.ember * 1e6, bw(r.ember), bw(r.ember) * f, r.mpi / r.ember);
      if (hccl) std::printf(" %12.1f %9.2f", r.hccl * 1e6, bw(r.hccl) * f);
      std::printf("\n");
    }
    std::printf("(GB/s = 1e9 bytes/s; ember/mpi = mpi time / ember time, bandwidth ratio: 1 = as fast as raw MPI)\n");
  }
  MPI_Finalize();
  return 0;
}
