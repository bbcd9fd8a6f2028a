// MPI's set-up for ember's groups (device/comm/mpi.cpp): MPI_Init_thread once, fp16/bf16
// datatypes and reductions, the world's ranks, and the element-type mappings.
#include <cstdlib>
#include <mutex>

#include "ember/core/error.h"
#include "ember/device/comm/mpi.h"
#include "ember/device/comm/mpi_detail.h"

#ifdef EMBER_HAVE_MPI
namespace ember {
namespace comm {
namespace mpi {
namespace {

std::once_flag g_init_once;
bool g_serialize = false;  // MPI below THREAD_MULTIPLE: ember's calls take g_mpi_mu
std::mutex g_mpi_mu;
MPI_Datatype g_f16 = MPI_DATATYPE_NULL, g_bf16 = MPI_DATATYPE_NULL;
MPI_Op g_half_ops[4];  // fp16/bf16 reductions (sum, prod, max, min), run in fp32

template <RedOp op>
void half_op(void* in, void* inout, int* len, MPI_Datatype* dt) {
  const Elem e = *dt == g_bf16 ? Elem::BF16 : Elem::F16;
  const void* srcs[2] = {inout, in};  // inout = inout op in (commutative)
  reduce(e, op, inout, srcs, 2, static_cast<size_t>(*len));
}

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

namespace detail {

bool serialized() { return g_serialize; }
std::mutex& serial_mutex() { return g_mpi_mu; }

std::string mpi_error(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, buf, &len);
  return std::string(buf, static_cast<size_t>(len));
}

MPI_Datatype datatype(Elem e) {
  switch (e) {
    case Elem::I8: return MPI_INT8_T;
    case Elem::U8: return MPI_UINT8_T;
    case Elem::I16: return MPI_INT16_T;
    case Elem::U16: return MPI_UINT16_T;
    case Elem::I32: return MPI_INT32_T;
    case Elem::U32: return MPI_UINT32_T;
    case Elem::I64: return MPI_INT64_T;
    case Elem::U64: return MPI_UINT64_T;
    case Elem::F16: return g_f16;
    case Elem::BF16: return g_bf16;
    case Elem::F32: return MPI_FLOAT;
    case Elem::F64: return MPI_DOUBLE;
  }
  return MPI_BYTE;
}

MPI_Op mpi_op(Elem e, RedOp op) {
  if (e == Elem::F16 || e == Elem::BF16) return g_half_ops[static_cast<int>(op)];
  switch (op) {
    case RedOp::Sum: return MPI_SUM;
    case RedOp::Prod: return MPI_PROD;
    case RedOp::Max: return MPI_MAX;
    case RedOp::Min: return MPI_MIN;
  }
  return MPI_SUM;
}

}  // namespace detail

using detail::mpi_error;
using detail::Serial;

void ensure_init() {
  std::call_once(g_init_once, [] {
    int inited = 0, provided = 0;
    MPI_Initialized(&inited);
    if (!inited) {
      int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
      if (rc != MPI_SUCCESS) throw Error("MPI_Init_thread failed: " + mpi_error(rc));
      std::atexit(finalize_at_exit);
    } else {
      MPI_Query_thread(&provided);
    }
    g_serialize = provided < MPI_THREAD_MULTIPLE;
    MPI_Type_dup(MPI_UINT16_T, &g_f16);
    MPI_Type_dup(MPI_UINT16_T, &g_bf16);
    MPI_Type_commit(&g_f16);
    MPI_Type_commit(&g_bf16);
    MPI_Op_create(&half_op<RedOp::Sum>, 1, &g_half_ops[0]);
    MPI_Op_create(&half_op<RedOp::Prod>, 1, &g_half_ops[1]);
    MPI_Op_create(&half_op<RedOp::Max>, 1, &g_half_ops[2]);
    MPI_Op_create(&half_op<RedOp::Min>, 1, &g_half_ops[3]);
    // Errors come back as codes (and become ember::Error), instead of aborting the job.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  });
}

int world_rank() {
  ensure_init();
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  ensure_init();
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

int local_rank() {
  static const int r = [] {
    ensure_init();
    Serial s;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int rank = 0;
    MPI_Comm_rank(node, &rank);
    MPI_Comm_free(&node);
    return rank;
  }();
  return r;
}

}  // namespace mpi
}  // namespace comm
}  // namespace ember
#endif  // EMBER_HAVE_MPI
