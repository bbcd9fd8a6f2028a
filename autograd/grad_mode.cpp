#include "ember/autograd/grad_mode.h"

#include "ember/dispatch/dispatcher.h"

namespace ember {
namespace autograd {
namespace {
thread_local bool tls_grad_enabled = true;
}
bool is_grad_enabled() { return tls_grad_enabled; }
void set_grad_enabled(bool enabled) {
  tls_grad_enabled = enabled;
  auto& tls = tls_dispatch_keys();
  tls.excluded = enabled ? tls.excluded.remove(DispatchKey::Autograd) : tls.excluded.add(DispatchKey::Autograd);
}
}  // namespace autograd

NoGradGuard::NoGradGuard()
    : prev_mode_(autograd::is_grad_enabled()), prev_excluded_(tls_dispatch_keys().excluded) {
  autograd::set_grad_enabled(false);
}
NoGradGuard::~NoGradGuard() {
  autograd::set_grad_enabled(prev_mode_);
  tls_dispatch_keys().excluded = prev_excluded_;
}

AutoGradMode::AutoGradMode(bool enabled)
    : prev_mode_(autograd::is_grad_enabled()), prev_excluded_(tls_dispatch_keys().excluded) {
  autograd::set_grad_enabled(enabled);
}
AutoGradMode::~AutoGradMode() {
  autograd::set_grad_enabled(prev_mode_);
  tls_dispatch_keys().excluded = prev_excluded_;
}

}  // namespace ember
