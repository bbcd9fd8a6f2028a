// Must compile without a warning under -Wall -Wextra -Woverloaded-virtual -Werror (ctest
// compile_clean_libtorch_style_modules): modules written the libtorch way, forward(Tensor) by
// value, nested by std::make_shared and by holder, in a program that includes <ember/torch.h>.
// Their forwards hide ember's virtual forward(const Tensor&); torch.h turns that warning off, as
// libtorch (whose Module has no virtual forward) never raises it.
#include <ember/torch.h>

struct BlockImpl : torch::nn::Module {
  BlockImpl() : fc(register_module("fc", torch::nn::Linear(4, 4))) {}
  torch::Tensor forward(torch::Tensor x) { return fc(x).relu(); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Block);

struct Net : torch::nn::Module {
  Net() {
    inner = register_module("inner", std::make_shared<BlockImpl>());
    seq = register_module("seq", torch::nn::Sequential(Block(), std::make_shared<BlockImpl>()));
  }
  torch::Tensor forward(torch::Tensor x) { return seq->forward(inner->forward(x)); }
  std::shared_ptr<BlockImpl> inner;
  torch::nn::Sequential seq{nullptr};
};

int main() {
  Net net;
  return net.forward(torch::randn({2, 4})).size(1) == 4 ? 0 : 1;
}
