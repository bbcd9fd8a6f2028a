// ember::nn::init: parameter initialisation in place (torch.nn.init), drawn from the global
// generator (manual_seed), computed in float64 and stored in the tensor's dtype and device.
#pragma once

#include <utility>

#include "ember/tensor/tensor.h"

namespace ember {
namespace nn {
namespace init {

Tensor& uniform_(Tensor& t, double a = 0.0, double b = 1.0);
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0);
Tensor& constant_(Tensor& t, double value);
Tensor& zeros_(Tensor& t);
Tensor& ones_(Tensor& t);
// (fan_in, fan_out) of a weight: [out, in, ...] as PyTorch computes them.
std::pair<int64_t, int64_t> fan_in_and_out(const Tensor& t);
// He uniform with leaky-ReLU slope a: bound = sqrt(6 / ((1 + a^2) fan_in)). PyTorch's Linear
// uses a = sqrt(5), i.e. bound = 1 / sqrt(fan_in).
Tensor& kaiming_uniform_(Tensor& t, double a = 0.0);
Tensor& kaiming_normal_(Tensor& t, double a = 0.0);
Tensor& xavier_uniform_(Tensor& t, double gain = 1.0);
Tensor& xavier_normal_(Tensor& t, double gain = 1.0);

}  // namespace init
}  // namespace nn
}  // namespace ember
