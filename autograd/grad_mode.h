// ember: grad mode (thread-local) and NoGradGuard.
#pragma once

#include "ember/tensor/dispatch_key.h"

namespace ember {
namespace autograd {

bool is_grad_enabled();
void set_grad_enabled(bool enabled);

}  // namespace autograd

// Disables gradient recording on this thread for its scope: grad mode off, and the Autograd
// dispatch key excluded so ops go straight to their backend kernels (no recording cost).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_mode_;
  DispatchKeySet prev_excluded_;
};

// Sets grad mode to `enabled` for its scope (re-enables recording inside a NoGradGuard).
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled);
  ~AutoGradMode();
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_mode_;
  DispatchKeySet prev_excluded_;
};

}  // namespace ember
