// ember: CPU row-normalisation kernels (RMSNorm, LayerNorm), on contiguous [rows, D] data.
#pragma once

#include "ember/device/cpu/strided.h"

namespace ember {
namespace cpu {

// y = x * rstd * gamma with rstd = 1 / sqrt(mean(x^2) + eps) per row; rstd stored (float32 or
// float64). x, y contiguous with rows * D elements; gamma contiguous [D]; fp32 (or fp64) math.
void rms_norm(const Strided& y, const Strided& rstd, const Strided& x, const Strided& gamma, double eps, int64_t rows,
              int64_t D);
// LayerNorm: y = (x - mean) * rstd * gamma + beta per row, rstd = 1 / sqrt(var + eps) with the
// biased variance; gamma / beta / mean / rstd may be undefined (data == nullptr): no scale, no
// shift, not stored. Layout and math as rms_norm's.
void layer_norm(const Strided& y, const Strided& mean, const Strided& rstd, const Strided& x, const Strided& gamma,
                const Strided& beta, double eps, int64_t rows, int64_t D);
// With xh = x * rstd and g = dy * gamma:
//   dx = rstd * (g - xh * mean(g * xh))      dgamma = sum over rows of dy * xh
// dgamma may be undefined (data == nullptr) when not wanted.
void rms_norm_backward(const Strided& dx, const Strided& dgamma, const Strided& dy, const Strided& x,
                       const Strided& rstd, const Strided& gamma, int64_t rows, int64_t D);

// LayerNorm's backward, per row with xh = (x - mean) * rstd and g = dy * gamma (dy without gamma):
//   dx = rstd * (g - mean(g) - xh * mean(g * xh))   dgamma = sum over rows of dy * xh
//   dbeta = sum over rows of dy
// mean and rstd hold one value per row; gamma, dx, dgamma and dbeta may be undefined (no scale,
// not wanted). The sums are taken over fixed blocks of rows, added in block order: the result
// does not depend on the thread count. Math in float64 for float64 x, else float32.
void layer_norm_backward(const Strided& dx, const Strided& dgamma, const Strided& dbeta, const Strided& dy,
                         const Strided& x, const Strided& mean, const Strided& rstd, const Strided& gamma,
                         int64_t rows, int64_t D);

// GroupNorm on contiguous float64 data [N, C, HxW]: each (sample, group of C / group channels)
// is normalised with its mean and rstd = 1 / sqrt(biased variance + eps), both [N, group];
// y = (x - mean) * rstd * gamma[c] + beta[c] (gamma, beta [C] may be null).
void group_norm_f64(double* y, double* mean, double* rstd, const double* x, const double* gamma, const double* beta,
                    int64_t N, int64_t C, int64_t HxW, int64_t group, double eps);
// Its backward, with xh = (x - mean) * rstd and g = dy * gamma[c], per (sample, group):
//   dx = rstd * (g - mean(g) - xh * mean(g * xh)); per channel dgamma = sum dy * xh, dbeta = sum dy.
void group_norm_backward_f64(double* dx, double* dgamma, double* dbeta, const double* dy, const double* x,
                             const double* mean, const double* rstd, const double* gamma, int64_t N, int64_t C,
                             int64_t HxW, int64_t group);

// BatchNorm on contiguous float64 data [N, C, S]. Training: per channel the batch mean and
// invstd = 1 / sqrt(biased variance + eps) normalise, and running_mean / running_var (when not
// null) become (1 - momentum) * r + momentum * stat (the unbiased variance); evaluation: the
// running statistics normalise. y = (x - mean) * invstd * weight[c] + bias[c] (weight, bias may be
// null); mean and invstd [C] receive the statistics used.
struct BatchNormShape {
  int64_t N = 0, C = 0, S = 1;
};
void batch_norm_f64(double* y, double* mean, double* invstd, double* running_mean, double* running_var,
                    const double* x, const double* weight, const double* bias, BatchNormShape b, bool training,
                    double momentum, double eps);
// Its backward. Training, with xh = (x - save_mean) * save_invstd and n = N * S, per channel:
//   dbias = sum dy, dweight = sum dy * xh, dx = weight * invstd / n * (n * dy - dbias - xh * dweight);
// evaluation: dx = dy * weight / sqrt(running_var + eps) (running_mean may be null: 0).
void batch_norm_backward_f64(double* dx, double* dweight, double* dbias, const double* dy, const double* x,
                             const double* weight, const double* running_mean, const double* running_var,
                             const double* save_mean, const double* save_invstd, BatchNormShape b, bool training,
                             double eps);

}  // namespace cpu
}  // namespace ember
