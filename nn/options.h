// EMBER_ARG: a chainable option of a module's options class, as libtorch's TORCH_ARG:
//   struct ELUOptions { EMBER_ARG(double, alpha) = 1.0; };
//   ELUOptions().alpha(0.5).alpha()  // 0.5
// (<ember/torch.h> defines TORCH_ARG as EMBER_ARG for options classes written for libtorch.)
#pragma once

#define EMBER_ARG(T, name)                        \
 public:                                          \
  auto name(const T& new_##name)->decltype(*this) { \
    this->name##_ = new_##name;                   \
    return *this;                                 \
  }                                               \
  const T& name() const noexcept { return this->name##_; } \
  T& name() noexcept { return this->name##_; }    \
                                                  \
 private:                                         \
  T name##_

// A module of one options class (libtorch's XImpl(XOptions)): its constructor, its forward (a
// functional of the options) and extra_repr are defined in its .cpp. The variadic tail is the
// options' default, `= {}`, or nothing.
#define EMBER_OPTIONS_MODULE(Name, Options, ...)       \
  class Name : public Module {                        \
   public:                                            \
    explicit Name(const Options& options_ __VA_ARGS__); \
    Tensor forward(const Tensor& x) override;         \
    std::string extra_repr() const override;          \
    Options options;                                  \
  };

namespace ember {
namespace nn {
// libtorch's enum-like option values (torch::kReflect, torch::kBilinear, torch::kGELU, ...): which
// ones an option takes is checked when it is used, with an error naming the option's choices.
enum class Mode {
  kConstant, kReflect, kReplicate, kCircular,                              // F::pad
  kNearest, kNearestExact, kLinear, kBilinear, kBicubic, kTrilinear, kArea,  // F::interpolate
  kZeros, kBorder, kReflection,                                            // F::grid_sample's padding
  kMax,                                                                    // EmbeddingBag
  kGELU,                                                                   // Transformer's activation
};
const char* mode_name(Mode m);
}  // namespace nn
}  // namespace ember
