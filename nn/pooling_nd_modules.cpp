// The modules of nn/pooling_nd.h: forward is their functional with the options; extra_repr as libtorch prints them.
#include "ember/nn/internal/repr.h"
#include "ember/nn/pooling_nd.h"

namespace ember {
namespace nn {
namespace F = functional;
using detail::repr_ints;

AvgPool3d::AvgPool3d(const AvgPool3dOptions& o) : options(o) {}
Tensor AvgPool3d::forward(const Tensor& x) { return F::avg_pool3d(x, options); }
std::string AvgPool3d::extra_repr() const {
  return "kernel_size=" + repr_ints(options.kernel_size()) + ", stride=" + repr_ints(options.stride()) +
         ", padding=" + repr_ints(options.padding());
}
AdaptiveAvgPool3d::AdaptiveAvgPool3d(const AdaptiveAvgPool3dOptions& o) : options(o) {}
Tensor AdaptiveAvgPool3d::forward(const Tensor& x) { return F::adaptive_avg_pool3d(x, options); }
std::string AdaptiveAvgPool3d::extra_repr() const { return "output_size=" + repr_ints(options.output_size()); }

#define EMBER_DEFINE_INDEXED_POOL(Name, fn, repr)                                                                     \
  Name::Name(const Name##Options& o) : options(o) {}                                                                  \
  Tensor Name::forward(const Tensor& x) { return std::get<0>(F::fn##_with_indices(x, options)); }                     \
  std::tuple<Tensor, Tensor> Name::forward_with_indices(const Tensor& x) { return F::fn##_with_indices(x, options); } \
  std::string Name::extra_repr() const { return repr; }
EMBER_DEFINE_INDEXED_POOL(MaxPool3d, max_pool3d,
                          "kernel_size=" + repr_ints(options.kernel_size()) +
                              ", stride=" + repr_ints(options.stride()) + ", padding=" + repr_ints(options.padding()))
EMBER_DEFINE_INDEXED_POOL(AdaptiveMaxPool1d, adaptive_max_pool1d, "output_size=" + repr_ints(options.output_size()))
EMBER_DEFINE_INDEXED_POOL(AdaptiveMaxPool2d, adaptive_max_pool2d, "output_size=" + repr_ints(options.output_size()))
EMBER_DEFINE_INDEXED_POOL(AdaptiveMaxPool3d, adaptive_max_pool3d, "output_size=" + repr_ints(options.output_size()))
EMBER_DEFINE_INDEXED_POOL(FractionalMaxPool2d, fractional_max_pool2d, "kernel_size=" + repr_ints(options.kernel_size()))
EMBER_DEFINE_INDEXED_POOL(FractionalMaxPool3d, fractional_max_pool3d, "kernel_size=" + repr_ints(options.kernel_size()))
#undef EMBER_DEFINE_INDEXED_POOL

#define EMBER_DEFINE_UNPOOL(Name, fn, D)                                                                   \
  Tensor Name::forward(const Tensor& input, const Tensor& indices,                                         \
                       const std::optional<std::vector<int64_t>>& output_size) {                           \
    return F::fn(input, indices,                                                                           \
                 F::MaxUnpool##D##dFuncOptions(options.kernel_size())                                      \
                     .stride(options.stride())                                                             \
                     .padding(options.padding())                                                           \
                     .output_size(output_size));                                                           \
  }                                                                                                        \
  std::string Name::extra_repr() const {                                                                   \
    return "kernel_size=" + repr_ints(options.kernel_size()) + ", stride=" + repr_ints(options.stride()) + \
           ", padding=" + repr_ints(options.padding());                                                    \
  }
EMBER_DEFINE_UNPOOL(MaxUnpool1d, max_unpool1d, 1)
EMBER_DEFINE_UNPOOL(MaxUnpool2d, max_unpool2d, 2)
EMBER_DEFINE_UNPOOL(MaxUnpool3d, max_unpool3d, 3)
#undef EMBER_DEFINE_UNPOOL

}  // namespace nn
}  // namespace ember
