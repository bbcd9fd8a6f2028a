// The two-phase NPU API of the DispersionCorrection custom op (nn/dispersion_correction.cpp),
// CANN-style: call GetWorkspaceSize, allocate workspaceSize bytes of device memory (the per-row
// mean and 1/std live there), then run on a stream. Most code calls it through
// nn::functional::dispersion_correction or nn::DispersionCorrection instead.
#pragma once

#include "ember/device/npu/acl.h"

namespace ember {
namespace nn {

npu::aclnnStatus aclnnDispersionCorrectionGetWorkspaceSize(const npu::aclTensor* x, const npu::aclTensor* gamma,
                                                           double alpha, int64_t mode, double eps, npu::aclTensor* y,
                                                           uint64_t* workspaceSize, npu::aclOpExecutor** executor);
npu::aclnnStatus aclnnDispersionCorrection(void* workspace, uint64_t workspaceSize, npu::aclOpExecutor* executor,
                                           npu::aclrtStream stream);
// dx and dgamma from dy (workspace: one dgamma partial per block of rows).
npu::aclnnStatus aclnnDispersionCorrectionGradGetWorkspaceSize(const npu::aclTensor* dy, const npu::aclTensor* x,
                                                               const npu::aclTensor* gamma, double alpha, int64_t mode,
                                                               double eps, npu::aclTensor* dx, npu::aclTensor* dgamma,
                                                               uint64_t* workspaceSize, npu::aclOpExecutor** executor);
npu::aclnnStatus aclnnDispersionCorrectionGrad(void* workspace, uint64_t workspaceSize, npu::aclOpExecutor* executor,
                                               npu::aclrtStream stream);

}  // namespace nn
}  // namespace ember
