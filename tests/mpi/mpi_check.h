// The checks of the programs in tests/mpi/ (each runs on every rank under mpirun): EXPECT prints
// the failure with the rank and counts it; main returns mpi_check::failures != 0.
#pragma once

#include <cstdio>

namespace mpi_check {
inline int rank = 0;
inline int failures = 0;
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
