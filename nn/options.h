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
