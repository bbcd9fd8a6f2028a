// Hooks the tensor and ops layers call into the autograd layer.
#include "ember/tensor/tensor.h"

namespace ember {

std::string autograd_print_suffix(const Tensor&) { return ""; }

void set_requires_grad_for_factory(Tensor&, bool requires_grad) {
  EMBER_CHECK_T(NotImplementedError, !requires_grad,
                "requires_grad: autograd is not part of this build yet (see the autograd issue)");
}

}  // namespace ember
