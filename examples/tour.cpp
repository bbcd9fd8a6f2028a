// A tour of ember's tensors and ops (the main demo is llama_mlp_lm; this one is the quick look).
// Run: build/examples/tour
#include <ember/ember.h>

#include <cstring>
#include <iostream>

using namespace ember;

// A user op, declared and registered exactly as the built-in ops are: the declaration holds its
// name, schema, C++ signature and autocast policy; the compiler checks the kernel against it.
namespace op {
EMBER_DECLARE_OP(scale_shift, Keep, "tour::scale_shift(Tensor x, float a, float b=0) -> Tensor",
                 Tensor(const Tensor&, double, double));
}
static Tensor scale_shift_cpu(const Tensor& x, double a, double b) { return x * a + b; }
EMBER_LIBRARY(tour, m) { m.def(op::scale_shift()); }
EMBER_LIBRARY_IMPL(tour, CPU, m) { m.impl(op::scale_shift(), &scale_shift_cpu); }

int main(int argc, char** argv) {
  if (argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::cout << "usage: tour\n  Prints a short walk through ember's tensors, views, ops and dispatcher. No options.\n";
    return 0;
  }
  manual_seed(0);
  std::cout << "== tensors and views ==\n";
  Tensor a = arange(12).reshape({3, 4}).to(kFloat32);
  std::cout << "a = " << a << "\n";
  std::cout << "a.t()[1] (a view, no copy) = " << a.t()[1] << "\n";
  std::cout << "a.slice(1, 0, 4, 2) = " << a.slice(1, 0, 4, 2) << "\n";

  std::cout << "\n== broadcasting, promotion, reductions ==\n";
  Tensor row = tensor({1.0, 10.0, 100.0, 1000.0});
  std::cout << "a * row = " << a * row << "\n";
  std::cout << "int64 + 0.5 -> " << (arange(3) + 0.5).dtype() << ", f16 + bf16 -> "
            << (ones({1}, kFloat16) + ones({1}, kBFloat16)).dtype() << "\n";
  std::cout << "a.sum({1}) = " << a.sum({1}) << ", a.mean() = " << a.mean().item<double>()
            << ", a.argmax(1) = " << a.argmax(1) << "\n";
  std::cout << "softmax(a, 1)[0] = " << a.softmax(1)[0] << "\n";

  std::cout << "\n== matmul in fp32, bf16 and fp16 (fp32 accumulation) ==\n";
  Tensor x = randn({256, 512}), w = randn({512, 128});
  Tensor ref = x.to(kFloat64).matmul(w.to(kFloat64));
  for (DType dt : {kFloat32, kBFloat16, kFloat16}) {
    Tensor y = x.to(dt).matmul(w.to(dt)).to(kFloat64);
    double err = ((y - ref).abs().max() / ref.abs().max()).item<double>();
    std::cout << "  " << dt << ": max relative error vs float64 = " << err << "\n";
  }

  std::cout << "\n== the dispatcher ==\n";
  std::cout << "tour::scale_shift(row, 2, 1) = " << op::scale_shift::call(row, 2.0, 1.0) << "\n";
  std::cout << Dispatcher::singleton().list_ops().size() << " ops registered; ember::add:\n"
            << Dispatcher::singleton().dump("ember::add");
  return 0;
}
