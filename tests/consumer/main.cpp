// A user program: includes the umbrella header, registers its own op through the public
// Library API and runs it next to built-in ops. Exits non-zero on any mismatch.
#include <ember/ember.h>

#include <cstdio>

using namespace ember;

static Tensor scale_shift_cpu(const Tensor& x, double a, double b) { return x * a + b; }

EMBER_LIBRARY(consumer, m) { m.def("scale_shift(Tensor x, float a, float b) -> Tensor"); }
EMBER_LIBRARY_IMPL(consumer, CPU, m) { m.impl("scale_shift", &scale_shift_cpu); }

int main() {
  auto op = Dispatcher::singleton().find_schema("consumer::scale_shift").typed<Tensor(const Tensor&, double, double)>();
  Tensor y = op.call(arange(4).to(kFloat32), 2.0, 1.0);  // [1, 3, 5, 7]
  Tensor z = y.reshape({2, 2}).matmul(ones({2, 1})).sum();
  double got = z.item<double>();
  std::printf("consumer: %s -> %g (%zu ops registered)\n", y.str().c_str(), got, Dispatcher::singleton().list_ops().size());
  return got == 16.0 ? 0 : 1;
}
