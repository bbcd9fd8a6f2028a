#include <ember/ember.h>
#include <iostream>
using namespace ember;
int main() {
  manual_seed(0);
  Tensor a = arange(6).reshape({2, 3}).to(kFloat32);
  Tensor b = ones({3});
  std::cout << a << "\n" << a + b << "\n" << (a * 2).sum() << "\n" << a.t().matmul(a) << "\n";
  std::cout << randn({2, 3}) << "\n" << a.softmax(1) << "\n" << a.to(kBFloat16) << "\n";
  std::cout << (a > 2) << "\n" << a.argmax(1) << "\n" << a.mean() << "\n";
  std::cout << Dispatcher::singleton().list_ops().size() << " ops\n";
  for (auto& e : Dispatcher::singleton().registration_errors()) std::cout << "ERR " << e << "\n";
}
