// ember: the umbrella header. #include <ember/ember.h>
#pragma once

#include "ember/device/parallel.h"
#include "ember/ops/dispatch/dispatcher.h"
#include "ember/ops/dispatch/library.h"
#include "ember/ops/ops.h"
#include "ember/tensor/tensor.h"
