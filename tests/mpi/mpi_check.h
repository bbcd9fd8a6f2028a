// The checks of the programs in tests/mpi/ (each runs on every rank under mpirun): EXPECT prints
// the failure with the rank and counts it; main returns mpi_check::failures != 0.
#pragma once

#include <cstdio>
#include <string>

#include <ember/ember.h>

namespace mpi_check {
inline int rank = 0;
inline int failures = 0;

// Runs body(backend, device) with the "mpi" group on cpu, then the "hccl" group on npu, each
// process on its own emulated NPU (chosen before the group is made, as with torch_npu); then
// prints "ok" or "FAILED" for this rank and returns main's exit status.
template <class Body>
int on_both_backends(Body body) {
  namespace dist = ember::distributed;
  for (const std::string backend : {"mpi", "hccl"}) {
    const int npu_index = dist::local_rank() % ember::npu::device_count();
    ember::npu::DeviceGuard guard(npu_index);
    dist::init_process_group(backend);
    rank = dist::get_rank();
    body(backend, backend == "mpi" ? ember::Device(ember::DeviceType::CPU)
                                   : ember::Device(ember::DeviceType::NPU, npu_index));
    dist::destroy_process_group();
  }
  std::printf("rank %d: %s\n", rank, failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
}  // namespace mpi_check

#define EXPECT(cond, ...)                                                                                   \
  do {                                                                                                      \
    if (!(cond)) {                                                                                          \
      std::fprintf(stderr, "rank %d: %s:%d: failed: %s: ", mpi_check::rank, __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                                                    \
      std::fprintf(stderr, "\n");                                                                           \
      ++mpi_check::failures;                                                                                \
    }                                                                                                       \
  } while (0)
