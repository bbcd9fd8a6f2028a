// ember: CANN's Ascend C kernel API (namespace AscendC) for kernels that run on ember's emulated
// NPU: GlobalTensor/LocalTensor, TPipe/TQue/TBuf, DataCopy(Pad), the vector instructions, Cast,
// Compare/Select, reductions, synchronisation and debug printing, with the hardware's rules
// checked on every call (Note [Ascend C on the emulated NPU], ember_ascendc/abi.h).
#pragma once

#include "ember_ascendc/base.h"
#include "ember_ascendc/copy.h"
#include "ember_ascendc/launch.h"
#include "ember_ascendc/pipe.h"
#include "ember_ascendc/tensor.h"
#include "ember_ascendc/vector.h"
