// ember (internal to device/comm, MPI builds only): the MPI set-up shared by mpi.cpp's groups and
// mpi_init.cpp: the lock for MPI below MPI_THREAD_MULTIPLE, error strings, and ember's element
// types and reductions as MPI's (fp16/bf16 as datatypes and operations of ember's own).
#pragma once

#ifdef EMBER_HAVE_MPI
#include <mutex>
#include <string>

#define OMPI_SKIP_MPICXX 1  // the C API only (no libmpi_cxx)
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "ember/device/comm/collective.h"

namespace ember {
namespace comm {
namespace mpi {
namespace detail {

// Whether ember's MPI calls must take serial_mutex() (MPI initialised below THREAD_MULTIPLE).
bool serialized();
std::mutex& serial_mutex();

// Holds serial_mutex() around one MPI call when MPI is not thread-safe.
struct Serial {
  std::unique_lock<std::mutex> lk;
  Serial() {
    if (serialized()) lk = std::unique_lock<std::mutex>(serial_mutex());
  }
};

// MPI's message for an error code.
std::string mpi_error(int code);
// The MPI datatype and reduction of an element type (after ensure_init).
MPI_Datatype datatype(Elem e);
MPI_Op mpi_op(Elem e, RedOp op);

}  // namespace detail
}  // namespace mpi
}  // namespace comm
}  // namespace ember
#endif  // EMBER_HAVE_MPI
