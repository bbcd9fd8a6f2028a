// ember/torch.h: libtorch's C++ frontend names over ember, for porting libtorch programs.
//
//   #include <ember/torch.h>          // instead of <torch/torch.h>
//   torch::Tensor x = torch::randn({3, 4}, torch::requires_grad());
//   auto fc = torch::nn::Linear(4, 1);               // a module holder, as libtorch's
//   torch::optim::SGD opt(fc->parameters(), 0.1);    // lr converts to SGDOptions
//
// What is what:
//   - Aliases. torch::Tensor, the factories, the ops, NoGradGuard, save/load, the dtypes and
//     devices are ember's own (using-declarations): a torch::Tensor is an ember::Tensor, and code
//     can mix both spellings freely.
//   - Holders. torch::nn::Linear, Sequential, ReLU, MSELoss, ... are nn::ModuleHolder<...> of
//     ember's modules (ember::nn::Linear is the module itself, libtorch's LinearImpl).
//   - Builders. libtorch's optimizer options are chainable (SGDOptions(0.01).momentum(0.5)) and
//     ember's are aggregates (SGDOptions{0.01, 0.5}); torch::optim has its own option classes
//     that build ember's, and optimizers that take them.
//   - Devices. There is no CUDA: torch::kNPU and torch::npu::is_available() take the places of
//     kCUDA and cuda::is_available().
//
// Nothing here is a separate implementation: every call ends in ember's API. README's "Coming
// from libtorch" lists the renames a port needs and what libtorch has that ember does not.
#pragma once

#include <cmath>  // libtorch's headers bring it, and programs written for them call std::isnan without it
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "ember/ember.h"

// libtorch's Module has no virtual forward, so a module written for it declares forward(Tensor x)
// by value and hides nothing there. Here that forward hides ember's virtual forward(const Tensor&)
// (ember calls it all the same: Module::adopt_forward), so the compilers' -Woverloaded-virtual
// (in clang's -Wall, and in g++'s from g++ 13) would flag every such module of a ported program.
// The warning is off for the rest of a translation unit that includes this header.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Woverloaded-virtual"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Woverloaded-virtual"
#endif

// c10's checks: TORCH_CHECK(cond, message parts...) and AT_ASSERT(cond) throw ember::Error.
#ifndef TORCH_CHECK
#define TORCH_CHECK(cond, ...) EMBER_CHECK(cond, "Expected " #cond " to be true. ", ##__VA_ARGS__)
#endif
// libtorch's option macro, for options classes written for libtorch (EMBER_ARG, ember/nn/options.h).
#ifndef TORCH_ARG
#define TORCH_ARG(T, name) EMBER_ARG(T, name)
#endif
#ifndef AT_ASSERT
#define AT_ASSERT(cond) EMBER_CHECK(cond, "assertion failed: " #cond)
#endif

namespace torch {

// ---------------------------------------------------------------- types, dtypes, devices
using ember::Device;
using ember::DeviceType;
using ember::IntArrayRef;
using ember::Scalar;
using ember::Tensor;
using ember::TensorOptions;
using ScalarType = ember::DType;
using ember::DType;
using ember::kBFloat16;
using ember::kBool;
using ember::kByte;
using ember::kCPU;
using ember::kChar;
using ember::kDouble;
using ember::kFloat;
using ember::kFloat16;
using ember::kFloat32;
using ember::kFloat64;
using ember::kHalf;
using ember::kInt;
using ember::kInt32;
using ember::kInt64;
using ember::kInt8;
using ember::kInt16;
using ember::kLong;
using ember::kShort;
using ember::kNPU;
using ember::kUInt8;
using ember::device;
using ember::dtype;
using ember::requires_grad;
using ember::Layout;
using ember::MemoryFormat;
using ember::kStrided;
// c10's errors: every ember error is a torch::Error (c10::Error), so catch (const c10::Error&)
// catches what ember throws.
using Error = ember::Error;
using ember::IndexError;
using ember::NotImplementedError;
using ember::TypeError;
using ember::ValueError;
namespace indexing = ember::indexing;

// ---------------------------------------------------------------- autograd mode
using ember::AutoGradMode;
using ember::NoGradGuard;

// ---------------------------------------------------------------- factories and ops
using ember::arange;
using ember::empty;
using ember::empty_like;
using ember::eye;
using ember::from_blob;
using ember::full;
using ember::full_like;
using ember::linspace;
using ember::manual_seed;
using ember::ones;
using ember::ones_like;
using ember::rand;
using ember::rand_like;
using ember::randint;
using ember::randn;
using ember::randn_like;
using ember::randperm;
using ember::index_select;
template <class T>
using optional = std::optional<T>;
using ember::scalar_tensor;
using ember::tensor;
using ember::zeros;
using ember::zeros_like;

using ember::add;
using ember::div;
using ember::mul;
using ember::neg;
using ember::pow;
using ember::sub;
#define EMBER_TORCH_USING(name, ...) using ember::name;
EMBER_UNARY_OPS(EMBER_TORCH_USING)
EMBER_BINARY_OPS(EMBER_TORCH_USING)
EMBER_REDUCE_OPS(EMBER_TORCH_USING)
#undef EMBER_TORCH_USING
using ember::clamp;
using ember::clamp_max;
using ember::clamp_min;
using ember::gelu;
using ember::leaky_relu;
using ember::relu;
using ember::eq;
using ember::ge;
using ember::gt;
using ember::le;
using ember::logical_and;
using ember::logical_not;
using ember::logical_or;
using ember::lt;
using ember::ne;
using ember::where;
using ember::all;
using ember::any;
using ember::argmax;
using ember::argmin;
// (and the exported ops' names, generated: cmake/public_ops.cmake)
#include "ember/gen/torch_names.inc"
using ember::log_softmax;
using ember::max;
using ember::mean;
using ember::min;
using ember::norm;
using ember::softmax;
using ember::var;
using ember::bmm;
using ember::cat;
using ember::linear;
using ember::matmul;
using ember::mm;
using ember::stack;
using ember::chunk;
using ember::clone;
using ember::contiguous;
using ember::detach;
using ember::expand;
using ember::flatten;
using ember::narrow;
using ember::permute;
using ember::reshape;
using ember::select;
using ember::slice;
using ember::split;
using ember::squeeze;
using ember::t;
using ember::transpose;
using ember::unsqueeze;
using ember::view;
using ember::allclose;
using ember::equal;
using ember::result_type;
using ember::embedding;
// libtorch's composites (ember/ops/composite.h)
using ember::atleast_1d;
using ember::atleast_2d;
using ember::atleast_3d;
using ember::broadcast_tensors;
using ember::broadcast_to;
using ember::concat;
using ember::dstack;
using ember::empty_strided;
using ember::flip;
using ember::fliplr;
using ember::flipud;
using ember::hstack;
using ember::is_nonzero;
using ember::is_same_size;
using ember::isfinite;
using ember::isinf;
using ember::isnan;
using ember::isneginf;
using ember::isposinf;
using ember::logical_xor;
using ember::logspace;
using ember::masked_fill;
using ember::meshgrid;
using ember::moveaxis;
using ember::movedim;
using ember::multinomial;
using ember::randint_like;
using ember::ravel;
using ember::split_with_sizes;
using ember::swapaxes;
using ember::swapdims;
using ember::tile;
using ember::tril_indices;
using ember::triu_indices;
using ember::unbind;
using ember::unflatten;
using ember::vstack;
using ember::addcdiv;
using ember::addcmul;
using ember::addmm;
using ember::addmv;
using ember::aminmax;
using ember::argsort;
using ember::argwhere;
using ember::baddbmm;
using ember::clip;
using ember::count_nonzero;
using ember::cross;
using ember::cummax;
using ember::cummin;
using ember::diag;
using ember::diag_embed;
using ember::diagonal;
using ember::dist;
using ember::dot;
using ember::floor_divide;
using ember::fmax;
using ember::fmin;
using ember::fmod;
using ember::gather;
using ember::greater;
using ember::hypot;
using ember::index_add;
using ember::index_copy;
using ember::index_fill;
using ember::isclose;
using ember::kron;
using ember::kthvalue;
using ember::less;
using ember::lerp;
using ember::logsumexp;
using ember::masked_select;
using ember::median;
using ember::mv;
using ember::nan_to_num;
using ember::nanmean;
using ember::nonzero;
using ember::outer;
using ember::prod;
using ember::range;
using ember::remainder;
using ember::repeat_interleave;
using ember::rot90;
using ember::scatter;
using ember::sort;
using ember::take;
using ember::take_along_dim;
using ember::tensor_split;
using ember::topk;
using ember::true_divide;
using ember::var_mean;
using ember::xlogy;
using ember::std;
using ember::std_mean;
using ember::cumprod;
using ember::bincount;
using ember::histc;
using ember::unique_consecutive;
using ember::sgn;
using ember::logit;
using ember::addbmm;
using ember::scatter_add;
using ember::scatter_reduce;
using ember::masked_scatter;
using ember::einsum;
using ember::tensordot;
using ember::cdist;
using ember::adaptive_avg_pool2d;
using ember::avg_pool2d;
using ember::col2im;
using ember::conv1d;
using ember::conv2d;
using ember::conv_transpose2d;
using ember::im2col;
using ember::max_pool2d;
using ember::nn::functional::dropout;
using ember::nn::functional::feature_dropout;
using ember::ExpandingArray;
// named_parameters()' type: OrderedDict<std::string, Tensor> (keys are names).
template <class Key, class Value>
using OrderedDict = ember::OrderedDict<Value>;
using ember::binary_cross_entropy;
using ember::binary_cross_entropy_with_logits;
using ember::cross_entropy;
using ember::l1_loss;
using ember::mse_loss;
using ember::nll_loss;
using ember::smooth_l1_loss;
namespace Reduction = ember::Reduction;
// libtorch's enum-style reductions: MSELossOptions(torch::kSum), .reduction(torch::kMean), and
// (unlike libtorch, where those take at::Reduction) the functions' reduction argument too.
constexpr int64_t kNone = ember::Reduction::None;
constexpr int64_t kMean = ember::Reduction::Mean;
constexpr int64_t kSum = ember::Reduction::Sum;
constexpr int64_t kBatchMean = ember::nn::kBatchMean;  // KLDivLossOptions(torch::kBatchMean)
// RNN's nonlinearity: RNNOptions(...).nonlinearity(torch::kReLU).
constexpr ember::nn::RNNNonlinearity kTanh = ember::nn::RNNNonlinearity::kTanh;
constexpr ember::nn::RNNNonlinearity kReLU = ember::nn::RNNNonlinearity::kReLU;
// The modes of F::pad, F::interpolate, F::grid_sample, EmbeddingBag and the Transformer's activation.
constexpr ember::nn::Mode kConstant = ember::nn::Mode::kConstant;
constexpr ember::nn::Mode kReflect = ember::nn::Mode::kReflect;
constexpr ember::nn::Mode kReplicate = ember::nn::Mode::kReplicate;
constexpr ember::nn::Mode kCircular = ember::nn::Mode::kCircular;
constexpr ember::nn::Mode kNearest = ember::nn::Mode::kNearest;
constexpr ember::nn::Mode kNearestExact = ember::nn::Mode::kNearestExact;
constexpr ember::nn::Mode kLinear = ember::nn::Mode::kLinear;
constexpr ember::nn::Mode kBilinear = ember::nn::Mode::kBilinear;
constexpr ember::nn::Mode kBicubic = ember::nn::Mode::kBicubic;
constexpr ember::nn::Mode kTrilinear = ember::nn::Mode::kTrilinear;
constexpr ember::nn::Mode kArea = ember::nn::Mode::kArea;
constexpr ember::nn::Mode kZeros = ember::nn::Mode::kZeros;
constexpr ember::nn::Mode kBorder = ember::nn::Mode::kBorder;
constexpr ember::nn::Mode kReflection = ember::nn::Mode::kReflection;
constexpr ember::nn::Mode kMax = ember::nn::Mode::kMax;
constexpr ember::nn::Mode kGELU = ember::nn::Mode::kGELU;

// ---------------------------------------------------------------- checkpoints, strings
using ember::load;
using ember::save;

// torch::str(a, b, ...): the arguments streamed into one string (c10::str).
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (void)(os << ... << args);
  return os.str();
}

// ---------------------------------------------------------------- devices
namespace npu {
using ember::npu::device_count;
using ember::npu::is_available;
using ember::npu::synchronize;
}  // namespace npu

// ---------------------------------------------------------------- autograd
namespace autograd {
using ember::autograd::AutogradContext;
using ember::autograd::is_grad_enabled;
using ember::autograd::set_grad_enabled;
using ember::autograd::backward;
using ember::autograd::Function;
using ember::autograd::gradcheck;
using tensor_list = std::vector<Tensor>;
using variable_list = std::vector<Tensor>;

using ember::autograd::grad;  // libtorch's argument order: retain_graph, create_graph, allow_unused
using ember::autograd::gradgradcheck;
}  // namespace autograd

// ---------------------------------------------------------------- nn: torch_nn.h (included below)

// ---------------------------------------------------------------- data
namespace data = ember::data;

// ---------------------------------------------------------------- optim
// torch::optim: torch_optim.h (included below).

}  // namespace torch

// c10's and ATen's spellings of the same names: c10::optional, c10::Error, at::Tensor, at::zeros...
namespace c10 {
template <class T>
using optional = std::optional<T>;
using nullopt_t = std::nullopt_t;
using std::nullopt;
using std::make_optional;
using string_view = std::string_view;
using Error = ember::Error;
using ember::IndexError;
using ember::NotImplementedError;
using ember::TypeError;
using ember::ValueError;
using ember::Device;
using ember::DeviceType;
using ember::IntArrayRef;
using ember::Layout;
using ember::MemoryFormat;
using ember::Scalar;
using ScalarType = ember::DType;
using torch::str;
}  // namespace c10
namespace at {
using namespace ::torch;  // NOLINT: at::Tensor, at::kFloat, at::zeros, ... are torch's
}  // namespace at

#include "ember/torch_nn.h"     // IWYU pragma: export
#include "ember/torch_optim.h"  // IWYU pragma: export
