// ember (internal to the library): the MPI group, device/comm's transport between processes.
// mpi.h itself stays out of every header: callers see only Transport.
#pragma once

#include <memory>
#include <string>

#include "ember/device/comm/collective.h"

namespace ember {
namespace comm {
namespace mpi {

// Whether this build has MPI (CMake option EMBER_WITH_MPI, OpenMPI from Debian).
bool built();
// Whether the process was started by an MPI launcher (mpirun sets OMPI_COMM_WORLD_SIZE, PMIx and
// Hydra their own variables).
bool launched();
// Initialises MPI once, asking for MPI_THREAD_MULTIPLE (collectives run on stream workers and
// process-group threads). A program that initialised MPI itself keeps its own set-up; below
// MPI_THREAD_MULTIPLE, ember's MPI calls then take a lock, and the program's own MPI calls must not
// run while ember's collectives are in flight. ember finalises at exit what it initialised.
// Throws NotImplementedError without MPI in the build.
void ensure_init();
int world_rank();
int world_size();
// This process's rank among the processes of the job on this machine (MPI_Comm_split_type
// SHARED), e.g. to pick its device.
int local_rank();
// A group of every process of the job, rank = key (ranks given by the caller, each in
// [0, world_size), all distinct; -1: the MPI rank). Collective over MPI_COMM_WORLD: every process
// calls it, in the same order. tag names it in messages ("HcclCommInitRootInfo").
std::shared_ptr<Transport> world_group(int key, const char* tag);

}  // namespace mpi
}  // namespace comm
}  // namespace ember
