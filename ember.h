// ember: the umbrella header. #include <ember/ember.h>
#pragma once

#include "ember/autograd/engine.h"
#include "ember/autograd/function.h"
#include "ember/autograd/gradcheck.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/op_spec.h"
#include "ember/device/npu/acl.h"
#include "ember/device/npu/kernel.h"
#include "ember/device/npu/npu.h"
#include "ember/device/parallel.h"
#include "ember/ops/dispatch/dispatcher.h"
#include "ember/ops/dispatch/library.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/ops.h"
#include "ember/tensor/tensor.h"
