// ember: CANN's CPU debug entry points (ICPU_RUN_KF, AscendC::GmAlloc/GmFree/SetKernelMode) on
// the emulated NPU: the kernel runs on all its cores with every check of a device launch.
#pragma once

#include "kernel_operator.h"
