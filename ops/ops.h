// ember: the ops as free functions (ember::add(a, b), ...) and the factories.
//
// Each function calls the dispatcher through a typed handle resolved once; the op's schema,
// kernels, backward and samples live in its own file under ops/.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ember/core/tables/binary_ops.def"
#include "ember/core/tables/reduce_ops.def"
#include "ember/core/tables/unary_ops.def"
#include "ember/tensor/tensor.h"
// The functions of the ops marked EMBER_EXPORT_OP (cumsum, ...), generated from their
// declarations (cmake/public_ops.cmake).
#include "ember/gen/functions.h"

namespace ember {

// ---------------------------------------------------------------- factories
Tensor empty(IntArrayRef shape, const TensorOptions& options = {});
// memory_format: Contiguous or Preserve (ember makes contiguous tensors); a channels-last format
// is refused by name.
Tensor empty(IntArrayRef shape, const TensorOptions& options, std::optional<MemoryFormat> memory_format);
Tensor zeros(IntArrayRef shape, const TensorOptions& options = {});
Tensor ones(IntArrayRef shape, const TensorOptions& options = {});
Tensor full(IntArrayRef shape, const Scalar& value, const TensorOptions& options = {});
Tensor rand(IntArrayRef shape, const TensorOptions& options = {});   // uniform [0, 1)
Tensor randn(IntArrayRef shape, const TensorOptions& options = {});  // standard normal
Tensor randint(int64_t low, int64_t high, IntArrayRef shape, const TensorOptions& options = kInt64);
// A random permutation of 0 .. n-1 (int64 unless options say otherwise), from the global generator.
Tensor randperm(int64_t n, const TensorOptions& options = kInt64);
Tensor arange(const Scalar& end, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1, const TensorOptions& options = {});
Tensor eye(int64_t n, const TensorOptions& options = {});
Tensor linspace(double start, double end, int64_t steps, const TensorOptions& options = {});
Tensor zeros_like(const Tensor& t, const TensorOptions& options = {},
                  std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor ones_like(const Tensor& t, const TensorOptions& options = {},
                 std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor empty_like(const Tensor& t, const TensorOptions& options = {},
                  std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor full_like(const Tensor& t, const Scalar& value, const TensorOptions& options = {},
                 std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor rand_like(const Tensor& t, const TensorOptions& options = {},
                 std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor randn_like(const Tensor& t, const TensorOptions& options = {},
                  std::optional<MemoryFormat> memory_format = std::nullopt);
// A tensor holding a copy of values, viewed as shape ({n} when empty).
Tensor tensor(const std::vector<float>& values, IntArrayRef shape = {}, const TensorOptions& options = {});
Tensor tensor(const std::vector<double>& values, IntArrayRef shape = {}, const TensorOptions& options = kFloat64);
Tensor tensor(const std::vector<int64_t>& values, IntArrayRef shape = {}, const TensorOptions& options = kInt64);
Tensor tensor(const std::vector<int32_t>& values, IntArrayRef shape = {}, const TensorOptions& options = kInt32);
Tensor tensor(const std::vector<bool>& values, IntArrayRef shape = {}, const TensorOptions& options = kBool);
// tensor({1.0, 2.0}) (float32 unless options say otherwise).
Tensor tensor(std::initializer_list<double> values, IntArrayRef shape = {}, const TensorOptions& options = {});
// libtorch's torch::tensor(std::vector<T>, options): 1-D, the options' dtype or T's.
inline Tensor tensor(const std::vector<float>& v, const TensorOptions& o) { return tensor(v, {}, o.dtype(o.dtype_or(kFloat32))); }
inline Tensor tensor(const std::vector<double>& v, const TensorOptions& o) { return tensor(v, {}, o.dtype(o.dtype_or(kFloat64))); }
inline Tensor tensor(const std::vector<int64_t>& v, const TensorOptions& o) { return tensor(v, {}, o.dtype(o.dtype_or(kInt64))); }
inline Tensor tensor(const std::vector<int32_t>& v, const TensorOptions& o) { return tensor(v, {}, o.dtype(o.dtype_or(kInt32))); }
inline Tensor tensor(const std::vector<bool>& v, const TensorOptions& o) { return tensor(v, {}, o.dtype(o.dtype_or(kBool))); }
// tensor({1, 2, 3}): integer values make an int64 tensor, as torch::tensor does.
template <class T, std::enable_if_t<std::is_integral<T>::value && !std::is_same<T, bool>::value, int> = 0>
Tensor tensor(std::initializer_list<T> values, IntArrayRef shape = {}, const TensorOptions& options = kInt64) {
  return tensor(std::vector<int64_t>(values.begin(), values.end()), shape, options);
}
// libtorch's form, options second: tensor({0.1, 1.0}, kFloat), tensor({1, 2}, kInt32).
inline Tensor tensor(std::initializer_list<double> values, const TensorOptions& options) {
  return tensor(values, IntArrayRef(), options);
}
template <class T, std::enable_if_t<std::is_integral<T>::value && !std::is_same<T, bool>::value, int> = 0>
Tensor tensor(std::initializer_list<T> values, const TensorOptions& options) {
  return tensor(std::vector<int64_t>(values.begin(), values.end()), {}, options.dtype(options.dtype_or(kInt64)));
}
// libtorch's torch::tensor(value, options): a 0-d tensor (integers int64, floats the default
// float dtype unless options say otherwise).
template <class T, std::enable_if_t<std::is_arithmetic<T>::value && !std::is_same<T, bool>::value, int> = 0>
Tensor tensor(T value, const TensorOptions& options = {}) {
  if constexpr (std::is_integral<T>::value) {
    return tensor(std::vector<int64_t>{static_cast<int64_t>(value)}, {}, options.dtype(options.dtype_or(kInt64)))
        .reshape({});
  } else {
    return tensor(std::vector<double>{static_cast<double>(value)}, {}, options.dtype(options.dtype())).reshape({});
  }
}
// A 0-d tensor.
Tensor scalar_tensor(const Scalar& value, const TensorOptions& options = {});
// Wraps host memory without copying (CPU). The memory must outlive the tensor.
Tensor from_blob(void* data, IntArrayRef shape, DType dtype);
Tensor from_blob(void* data, IntArrayRef shape, IntArrayRef strides, DType dtype);
// libtorch's forms: options' dtype (default float32; CPU only), and a deleter called with data
// when the last tensor on it goes.
Tensor from_blob(void* data, IntArrayRef shape, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef shape, IntArrayRef strides, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef shape, const std::function<void(void*)>& deleter,
                 const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef shape, IntArrayRef strides, const std::function<void(void*)>& deleter,
                 const TensorOptions& options = {});
// Seeds the global generator: the same seed gives the same values on every device.
void manual_seed(uint64_t seed);

// ---------------------------------------------------------------- elementwise
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Scalar& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Scalar& b);
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor pow(const Tensor& a, const Scalar& exponent);
// maximum, minimum, ...: the binary table (core/tables/binary_ops.def)
#define EMBER_DECLARE_BINARY_FN(name, ...) Tensor name(const Tensor& a, const Tensor& b);
EMBER_BINARY_OPS(EMBER_DECLARE_BINARY_FN)
#undef EMBER_DECLARE_BINARY_FN
Tensor neg(const Tensor& x);
// abs, sign, exp, log, sqrt, ...: the unary table (core/tables/unary_ops.def)
#define EMBER_DECLARE_UNARY_FN(name, ...) Tensor name(const Tensor& x);
EMBER_UNARY_OPS(EMBER_DECLARE_UNARY_FN)
#undef EMBER_DECLARE_UNARY_FN
Tensor relu(const Tensor& x);
// x > 0 ? x : negative_slope x.
Tensor leaky_relu(const Tensor& x, const Scalar& negative_slope = 0.01);
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
Tensor clamp(const Tensor& x, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor clamp_min(const Tensor& x, const Scalar& min);
Tensor clamp_max(const Tensor& x, const Scalar& max);
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Scalar& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Scalar& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Scalar& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Scalar& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Scalar& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Scalar& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);
// swiglu(x, dim): x split in halves a, b along dim (CANN's SwiGlu); silu(a) * b.
Tensor swiglu(const Tensor& x, int64_t dim = -1);
// The fused two-input form: silu(a) * b.
Tensor swiglu(const Tensor& a, const Tensor& b);
Tensor silu_mul(const Tensor& a, const Tensor& b);

// RMSNorm over the trailing dims covered by weight: x / sqrt(mean(x^2) + eps) * weight (fp32
// math; result dtype promoted from x and weight). _rms_norm also returns rstd (CANN's RmsNorm).
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps = 1e-6);
std::tuple<Tensor, Tensor> _rms_norm(const Tensor& x, const Tensor& weight, double eps = 1e-6);

// Rows of weight [num, dim] picked by int64/int32 indices: shape indices.shape + [dim].
Tensor embedding(const Tensor& weight, const Tensor& indices);
// The slices of x at index (int64/int32, 1-D or 0-D) along dim.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// Mean cross entropy of logits [N, C] (or [C]) against int64 class targets [N] (or 0-d),
// log-softmax fused in; rows whose target is ignore_index do not count.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, int64_t ignore_index = -100);
// x weight^T (+ bias): weight [out_features, in_features] (PyTorch's F.linear).
Tensor linear(const Tensor& x, const Tensor& weight);
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);
// How a loss reduces its per-element values (libtorch's at::Reduction): None keeps them, Mean
// averages them, Sum adds them.
namespace Reduction {
enum Reduction : int64_t { None = 0, Mean = 1, Sum = 2 };
}
// (input - target)^2, broadcasting.
Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean);
// |input - target|.
Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean);
// Huber-like: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean,
                      double beta = 1.0);
// Negative log-likelihood of log-probabilities [N, C] (or [C]) at int64 classes [N] (or 0-d),
// optionally weighted per class; Mean divides by the summed weights of the counted rows.
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                int64_t reduction = Reduction::Mean, int64_t ignore_index = -100);
// nll_loss's op: (loss, total weight), the sum of weight[target] over the rows not ignored
// (libtorch's nll_loss_forward). nll_loss runs it unless a class weight requires grad.
std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& input, const Tensor& target,
                                            const std::optional<Tensor>& weight = std::nullopt,
                                            int64_t reduction = Reduction::Mean, int64_t ignore_index = -100);
// The losses' backward ops: the input's gradient (libtorch's names; CANN's aclnnXxxBackward on
// the NPU). The result has the broadcast shape of grad, input and target (and weights).
Tensor mse_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target, int64_t reduction);
// (l1_loss_backward: torch_npu's and CANN's; libtorch 1.13 has none, its l1_loss being a composite.)
Tensor l1_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target, int64_t reduction);
Tensor smooth_l1_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target, int64_t reduction,
                               double beta);
Tensor binary_cross_entropy_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                                     const std::optional<Tensor>& weight, int64_t reduction);
Tensor binary_cross_entropy_with_logits_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                                                 const std::optional<Tensor>& weight,
                                                 const std::optional<Tensor>& pos_weight, int64_t reduction);
Tensor nll_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                         const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                         const Tensor& total_weight);
// -(y log(x) + (1 - y) log(1 - x)) for probabilities x in [0, 1] (logs clamped at -100).
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const std::optional<Tensor>& weight = std::nullopt, int64_t reduction = Reduction::Mean);
// binary_cross_entropy(sigmoid(input), target) in a numerically stable form; pos_weight scales
// the positive term per class.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight = std::nullopt,
                                        const std::optional<Tensor>& pos_weight = std::nullopt,
                                        int64_t reduction = Reduction::Mean);
// One fused AdamW update in place (PyTorch's rule) at the step held in `step` (int64, 1 element,
// on the param's device); maximize ascends. Used by optim::AdamW.
Tensor& _adamw_step_(Tensor& param, Tensor& exp_avg, Tensor& exp_avg_sq, const Tensor& grad, const Tensor& step,
                     double lr, double beta1, double beta2, double weight_decay, double eps, bool maximize = false);
// The same with AMSGrad: max_exp_avg_sq = max(max_exp_avg_sq, exp_avg_sq) is the denominator.
Tensor& _adamw_step_amsgrad_(Tensor& param, Tensor& exp_avg, Tensor& exp_avg_sq, Tensor& max_exp_avg_sq,
                             const Tensor& grad, const Tensor& step, double lr, double beta1, double beta2,
                             double weight_decay, double eps, bool maximize = false);

// ---------------------------------------------------------------- convolution and pooling
// A kernel_size, stride, padding or dilation of one value stands for both dims (libtorch's
// ExpandingArray). Inputs [N, C, H, W] (or [C, H, W]); see ops/conv.cpp.
// The sliding windows of x: [N, C kh kw, L] (PyTorch's unfold, CANN's Im2col).
Tensor im2col(const Tensor& x, IntArrayRef kernel_size, IntArrayRef dilation = {1}, IntArrayRef padding = {0},
              IntArrayRef stride = {1});
// im2col's adjoint (fold, CANN's Im2colBackward): windows summed back into [N, C, output_size].
Tensor col2im(const Tensor& cols, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation = {1},
              IntArrayRef padding = {0}, IntArrayRef stride = {1});
// weight [out_channels, in_channels / groups, kh, kw], bias [out_channels].
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
// conv2d as a node of its own, with a backward of its own (conv2d_backward): oneDNN on the CPU
// (float32, bfloat16), aclnnConvolution on the NPU; conv2d chooses it. Elsewhere it computes
// conv2d's numbers the GEMM way.
Tensor _convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                      IntArrayRef padding, IntArrayRef dilation, int64_t groups);
// conv2d's gradients with respect to input, weight and bias from grad (each only when asked;
// undefined otherwise). Has no derivative of its own: conv2d's backward with create_graph uses
// differentiable ops instead.
std::tuple<Tensor, Tensor, Tensor> conv2d_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                   int64_t groups, bool input_grad = true, bool weight_grad = true,
                                                   bool bias_grad = true);
// weight [out_channels, in_channels / groups, k], bias [out_channels]; input [N, C, L] or [C, L].
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
// weight [in_channels, out_channels / groups, kh, kw]: conv2d's gradient with respect to its input.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});
// conv_transpose2d's node on the NPU (CANN's aclnnConvolution with transposed = true) and its
// backward (aclnnConvolutionBackward, transposed); the composite elsewhere.
Tensor _conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                         IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                         int64_t groups = 1, IntArrayRef dilation = {1});
std::tuple<Tensor, Tensor, Tensor> conv_transpose2d_backward(const Tensor& grad, const Tensor& input,
                                                             const Tensor& weight, IntArrayRef stride,
                                                             IntArrayRef padding, IntArrayRef output_padding,
                                                             int64_t groups, IntArrayRef dilation,
                                                             bool input_grad = true, bool weight_grad = true,
                                                             bool bias_grad = true);
// stride empty: kernel_size. ceil_mode rounds the output size up (PyTorch's rule). On the CPU
// it runs oneDNN's max pooling (mkldnn_max_pool2d below) where oneDNN has a kernel for it, else
// max_pool2d_with_indices.
Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  IntArrayRef dilation = {1}, bool ceil_mode = false);
// The max and its flat position y W + x within each plane (int64), as libtorch's.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = {0},
                                                   IntArrayRef dilation = {1}, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true);
// Any output size: output (i, j) averages rows [floor(i H / oh), ceil((i + 1) H / oh)) and the
// same columns (PyTorch's windows).
Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size);
// The pooling ops' backward (libtorch's names): self's gradient from the pooled output's.
Tensor max_pool2d_with_indices_backward(const Tensor& grad, const Tensor& self, IntArrayRef kernel_size,
                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                        const Tensor& indices);
Tensor avg_pool2d_backward(const Tensor& grad, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                           IntArrayRef padding, bool ceil_mode, bool count_include_pad);
Tensor adaptive_avg_pool2d_backward(const Tensor& grad, const Tensor& self);
// max_pool2d's CPU op where oneDNN has a kernel (float32; bfloat16 with AVX-512), as libtorch's
// mkldnn path: node MkldnnMaxPool2DBackward0. An input with a NaN (oneDNN's max skips them), and
// any other dtype or device, run max_pool2d_with_indices' kernel instead. Its backward op takes
// self, not libtorch's (output, input), and recomputes oneDNN's argmax (or the indices).
Tensor mkldnn_max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                         IntArrayRef padding = {0}, IntArrayRef dilation = {1}, bool ceil_mode = false);
Tensor mkldnn_max_pool2d_backward(const Tensor& grad, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);

// ---------------------------------------------------------------- batch normalization
// batch_norm's op (nn::functional::batch_norm is the libtorch-style entry): input [N, C, ...]
// normalized per channel by the batch's statistics (training) or the running ones; returns
// (output, save_mean, save_invstd), the statistics used, and never writes the running ones.
std::tuple<Tensor, Tensor, Tensor> _batch_norm(const Tensor& input, const std::optional<Tensor>& weight = std::nullopt,
                                               const std::optional<Tensor>& bias = std::nullopt,
                                               const std::optional<Tensor>& running_mean = std::nullopt,
                                               const std::optional<Tensor>& running_var = std::nullopt,
                                               bool training = false, double eps = 1e-5);
// Its backward (libtorch's name and arguments): the gradients of input, weight and bias.
std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(
    const Tensor& grad_out, const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd, bool train, double eps,
    bool input_grad = true, bool weight_grad = true, bool bias_grad = true);

// group_norm's op (libtorch's name and arguments): input [N, C, ...] with HxW trailing elements
// per channel, each sample's groups of C / group channels normalized; returns (output, mean,
// rstd), the statistics [N, group].
std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, int64_t N, int64_t C,
                                                     int64_t HxW, int64_t group, double eps);
std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& mean, const Tensor& rstd,
                                                              const std::optional<Tensor>& weight, int64_t N, int64_t C,
                                                              int64_t HxW, int64_t group, bool input_grad = true,
                                                              bool weight_grad = true, bool bias_grad = true);

// dropout's op: element i kept (and scaled by 1 / (1 - p)) when the uniform of Philox counter
// offset + i is >= p; returns (output, mask), mask CANN's bit mask (uint8, align(numel, 128) / 8
// bytes, bit i for element i). _dropout_backward applies the mask to a gradient.
std::tuple<Tensor, Tensor> _dropout(const Tensor& input, double p, int64_t seed, int64_t offset);
Tensor _dropout_backward(const Tensor& grad, const Tensor& mask, double p);
// Reserves n counters of the global random stream (manual_seed decides it): (seed, first counter),
// for ops taking explicit seed and offset (uniform_, _dropout, ...).
std::pair<int64_t, int64_t> random_counters(int64_t n);

// layer_norm's op (libtorch's name and arguments): rows of the trailing normalized_shape dims;
// returns (output, mean, rstd), the statistics shaped as input with those dims as 1.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, double eps);
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              IntArrayRef normalized_shape, const Tensor& mean,
                                                              const Tensor& rstd, const std::optional<Tensor>& weight,
                                                              const std::optional<Tensor>& bias,
                                                              bool input_grad = true, bool weight_grad = true,
                                                              bool bias_grad = true);

// ---------------------------------------------------------------- in place
Tensor& add_(Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor& mul_(Tensor& self, const Tensor& other);
Tensor& fill_(Tensor& self, const Scalar& value);
Tensor& zero_(Tensor& self);
Tensor& copy_(Tensor& self, const Tensor& src);

// ---------------------------------------------------------------- reductions
// sum, amax, amin, ...: the reduce table (core/tables/reduce_ops.def). Sum-like (S) reductions take an
// output dtype; the others (M) keep the input's.
#define EMBER_DECLARE_REDUCE_FN_S(name) \
  Tensor name(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
#define EMBER_DECLARE_REDUCE_FN_M(name) Tensor name(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
#define EMBER_DECLARE_REDUCE_FN(name, Acl, form, ...) EMBER_DECLARE_REDUCE_FN_##form(name)
EMBER_REDUCE_OPS(EMBER_DECLARE_REDUCE_FN)
#undef EMBER_DECLARE_REDUCE_FN
#undef EMBER_DECLARE_REDUCE_FN_S
#undef EMBER_DECLARE_REDUCE_FN_M
Tensor mean(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor var(const Tensor& x, IntArrayRef dims = {}, bool unbiased = true, bool keepdim = false);
Tensor norm(const Tensor& x);
// The p-norm over dims (all when empty): p = 2, 1, inf, -inf, 0 (non-zeros) or sum(|x|^p)^(1/p).
Tensor norm(const Tensor& x, const Scalar& p, IntArrayRef dims = {}, bool keepdim = false);
// Whether all (any) elements are non-zero, over dims (all when empty): a bool tensor.
Tensor all(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
Tensor any(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

// ---------------------------------------------------------------- linear algebra, joining
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
// The product of a and b cast to dtype (bf16/f16), rounded to dtype and stored as out_dtype (f32
// or dtype), with the casts folded into the GEMM; a and b are f32 or dtype. Autocast's mm.
Tensor _mm_rounded(const Tensor& a, const Tensor& b, DType dtype, DType out_dtype);
// linear(x.to(dtype), w.to(dtype)) the same way. Autocast's linear on CPUs without bf16 units.
Tensor _linear_rounded(const Tensor& x, const Tensor& w, DType dtype);
// x.to(dtype).to(x.dtype()) in one pass (floating x and dtype); with a bf16/f16 dtype the result
// is marked rounded (is_rounded_to), and the rounded products read it in place. Autocast rounds
// each f32 weight of its linear once so.
Tensor _round_to(const Tensor& x, DType dtype);
// Whether every element of t is known to be a value of dtype: t is of that dtype, or its storage
// was marked so by the kernel that wrote it (_round_to, and the f32 results of _mm_rounded) and
// has not been modified in place since.
bool is_rounded_to(const Tensor& t, DType dtype);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);

// ---------------------------------------------------------------- views and conversion
Tensor view(const Tensor& x, IntArrayRef shape);
Tensor reshape(const Tensor& x, IntArrayRef shape);
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor t(const Tensor& x);
Tensor permute(const Tensor& x, IntArrayRef dims);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor squeeze(const Tensor& x);
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor expand(const Tensor& x, IntArrayRef shape);
Tensor slice(const Tensor& x, int64_t dim = 0, int64_t start = 0, int64_t end = INT64_MAX, int64_t step = 1);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
Tensor as_strided(const Tensor& x, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
Tensor contiguous(const Tensor& x);
Tensor clone(const Tensor& x);
Tensor detach(const Tensor& x);
Tensor to(const Tensor& x, Device device, DType dtype);

// Broadcast shape of two shapes (numpy rules); throws ShapeError.
Shape broadcast_shapes(IntArrayRef a, IntArrayRef b);
// The dtype PyTorch's type promotion gives a binary op on these operands.
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, const Scalar& b);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8);
bool equal(const Tensor& a, const Tensor& b);

}  // namespace ember

#include "ember/ops/composite.h"  // IWYU pragma: export
#include "ember/ops/indexing.h"   // IWYU pragma: export
