// A libtorch-style tour of autograd on ember, written against libtorch's names
// (<ember/torch.h>): tensors that require grad, grad_fn, backward with and without a gradient
// argument, NoGradGuard and detach, torch::autograd::grad, and custom autograd Functions. The
// same topics as pytorch/examples' cpp/autograd, plus a gradient penalty differentiated through
// its gradient (create_graph); this code is ember's own. Every printed value
// is also checked (worked by hand or against a second computation): exit 1 on a mismatch.
#include <cmath>
#include <iostream>
#include <string>

#include <ember/torch.h>
#include "cli.h"

using namespace torch::autograd;

namespace {

int failures = 0;
void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "autograd: MISMATCH: " << what << "\n";
    ++failures;
  }
}
bool close(const torch::Tensor& a, const torch::Tensor& b, double tol = 1e-6) {
  return a.sizes() == b.sizes() && torch::allclose(a, b, tol, tol);
}

void basics() {
  std::cout << "== tensors that require grad\n";
  auto a = torch::full({2, 3}, 2.0, torch::requires_grad());
  auto b = a * a + 1;                     // 5 everywhere
  auto c = (b * 2).mean();                // 10
  std::cout << b << "\n" << b.grad_fn()->name() << "\n" << c << "\n" << c.grad_fn()->name() << "\n";
  c.backward();
  std::cout << a.grad() << "\n";          // d c / d a = 2 * 2a / 6 = 4/3
  expect(close(a.grad(), torch::full({2, 3}, 4.0 / 3)), "d mean(2(a^2+1)) / da = 4a/6");
  expect(b.grad_fn() != nullptr && a.grad_fn() == nullptr, "grad_fn of a result and of a leaf");

  auto d = torch::randn({2, 2});
  d = d * 4 - 1;
  std::cout << std::boolalpha << d.requires_grad() << " ";
  d.requires_grad_(true);
  std::cout << d.requires_grad() << "\n";
  expect(d.requires_grad() && d.is_leaf(), "requires_grad_ on a computed tensor without history");

  std::cout << "== a vector-Jacobian product\n";
  auto x = torch::randn({3}, torch::requires_grad());
  auto y = x * 3;
  int doublings = 0;
  while (y.norm().item<double>() < 500) {
    y = y * 2;
    ++doublings;
  }
  auto v = torch::tensor({1.0, 0.5, 0.001}, torch::kFloat);
  y.backward(v);
  std::cout << x.grad() << "\n";
  expect(close(x.grad(), v * (3.0 * std::pow(2.0, doublings))), "vJp of y = 3 * 2^k x");

  std::cout << "== no grad\n";
  std::cout << x.pow(2).requires_grad() << " ";
  {
    torch::NoGradGuard no_grad;
    std::cout << x.pow(2).requires_grad() << " ";
    expect(!x.pow(2).requires_grad(), "NoGradGuard stops recording");
  }
  auto z = x.detach();
  std::cout << z.requires_grad() << " " << x.eq(z).all().item<bool>() << "\n";
  expect(!z.requires_grad() && x.eq(z).all().item<bool>(), "detach keeps the values");
}

void gradient_of_inputs() {
  std::cout << "== torch::autograd::grad\n";
  auto model = torch::nn::Linear(4, 3);
  auto input = torch::randn({5, 4}).requires_grad_(true);
  auto output = model(input);
  auto target = torch::randn({5, 3});
  auto loss = torch::nn::MSELoss()(output, target);

  // d(sum of outputs)/d input: every row is the column sums of the weight.
  auto ones = torch::ones_like(output);
  auto g = torch::autograd::grad({output}, {input}, {ones}, /*retain_graph=*/true)[0];
  expect(close(g, model->weight.sum({0}).unsqueeze(0).expand({5, 4})), "grad of sum(W x + b) is W's column sums");
  // The penalty as libtorch's example writes it: its retain_graph=true leaves g without history,
  // so only the loss reaches input.grad.
  auto penalty = torch::pow(g.norm(2, 1) - 1, 2).mean();
  (loss + penalty).backward();
  std::cout << input.grad() << "\n";
  // d loss / d input = 2 (output - target) W / numel
  auto expected = ((output - target) * (2.0 / output.numel())).mm(model->weight);
  expect(close(input.grad(), expected.detach()), "input.grad of the MSE loss");

  std::cout << "== a gradient penalty with create_graph\n";
  // With create_graph=true the gradient keeps a graph, and the penalty reaches the weights:
  // d sum(W x + b)/dx = the column sums c of W for each of the 5 rows, so
  // penalty = mean over rows of (|c| - 1)^2 = (|c| - 1)^2 and d penalty / dW_ij = 2 (|c| - 1) c_j / |c|.
  model->zero_grad();
  auto out2 = model(input);
  auto g2 = torch::autograd::grad({out2}, {input}, {torch::ones_like(out2)}, /*retain_graph=*/true,
                                  /*create_graph=*/true)[0];
  auto penalty2 = torch::pow(g2.norm(2, 1) - 1, 2).mean();
  penalty2.backward();
  auto c = model->weight.sum({0}).detach();
  double cn = c.norm().item<double>();
  auto expected_w = (c * (2 * (cn - 1) / cn)).unsqueeze(0).expand({3, 4});
  std::cout << model->weight.grad() << "\n";
  expect(close(model->weight.grad(), expected_w), "the penalty's gradient in the weights");
}

// y = x w^T (+ b): the bias is optional, and backward names a gradient for it either way.
struct LinearFn : public Function<LinearFn> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, torch::Tensor w, torch::Tensor b = {}) {
    ctx->save_for_backward({x, w, b});
    auto y = x.mm(w.t());
    return b.defined() ? y + b.unsqueeze(0).expand_as(y) : y;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    auto gy = grads[0];
    torch::Tensor gb;
    if (saved[2].defined()) gb = gy.sum({0});
    return {gy.mm(saved[1]), gy.t().mm(saved[0]), gb};
  }
};

struct Scale : public Function<Scale> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, double k) {
    ctx->saved_data["k"] = k;
    return x * k;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    return {grads[0] * ctx->saved_data["k"].toDouble(), torch::Tensor()};
  }
};

void custom_functions() {
  std::cout << "== custom autograd functions\n";
  auto x = torch::randn({2, 3}).requires_grad_();
  auto w = torch::randn({4, 3}).requires_grad_();
  LinearFn::apply(x, w).sum().backward();
  std::cout << x.grad() << "\n" << w.grad() << "\n";
  expect(close(x.grad(), w.sum({0}).unsqueeze(0).expand({2, 3}).detach()), "LinearFn: d sum / dx");
  expect(close(w.grad(), x.sum({0}).unsqueeze(0).expand({4, 3}).detach()), "LinearFn: d sum / dw");

  auto s = torch::randn({2}).requires_grad_();
  Scale::apply(s, 5.5).sum().backward();
  std::cout << s.grad() << "\n";
  expect(close(s.grad(), torch::full({2}, 5.5)), "Scale: the constant's gradient");
}

}  // namespace

int main(int argc, char** argv) {
  const int rc = cli::parse(argc, argv,
                            "usage: libtorch_autograd\n"
                            "  pytorch/examples' cpp/autograd: tensors that require grad, gradients of inputs, custom\n"
                            "  autograd functions. No options.\n",
                            [](const std::string&, const std::string&) { return false; });
  if (rc >= 0) return rc;
  torch::manual_seed(3);
  basics();
  gradient_of_inputs();
  custom_functions();
  if (failures) {
    std::cerr << "autograd: " << failures << " mismatches\n";
    return 1;
  }
  std::cout << "autograd: every value as expected\n";
  return 0;
}
