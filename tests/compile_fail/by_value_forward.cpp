// Must not compile: a module whose forward takes its Tensor by value (libtorch's style) hides
// ember's virtual forward(const Tensor&) instead of overriding it; registering it fails with a
// static_assert that says what to write instead (ctest compile_fail_by_value_forward).
#include <ember/ember.h>

struct ByValue : ember::nn::Module {
  ember::Tensor forward(ember::Tensor x) { return x * 2; }
};

struct Net : ember::nn::Module {
  std::shared_ptr<ByValue> inner = register_module("inner", std::make_shared<ByValue>());
};

int main() { return Net().num_parameters() == 0 ? 0 : 1; }
