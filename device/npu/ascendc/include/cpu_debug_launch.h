// ember: the <<<...>>> launch of CANN's CPU debug builds (ASCENDC_CPU_DEBUG). ember rewrites the
// launch in every mode, so this header only brings in the kernel API.
#pragma once

#include "kernel_operator.h"
