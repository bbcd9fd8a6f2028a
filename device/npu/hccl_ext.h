// ember (internal): what ember's own process groups need from the emulated HCCL beyond CANN's API.
#pragma once

#include <chrono>

#include "hccl/hccl.h"

namespace ember {
namespace npu {

// The timeout of comm's collectives (HCCL_EXEC_TIMEOUT when it was made); HCCL_E_PARA for a comm
// that is not live.
HcclResult hccl_set_timeout(HcclComm comm, std::chrono::milliseconds timeout);

}  // namespace npu
}  // namespace ember
