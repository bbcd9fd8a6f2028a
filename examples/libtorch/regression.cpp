// A libtorch-style program on ember: fits y = w . [x, x^2, x^3, x^4] + b with one Linear layer,
// SGD and the smooth L1 loss, written against libtorch's names (<ember/torch.h>). The same task
// as pytorch/examples' cpp/regression; this code is ember's own.
//
//   regression [--max-batches N]   exits 1 unless the loss falls below 1e-3 within N batches
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <ember/torch.h>
#include "cli.h"

namespace {

constexpr int64_t kDegree = 4;

// Columns x, x^2, ..., x^kDegree of the points x.
torch::Tensor powers_of(const torch::Tensor& x) {
  std::vector<torch::Tensor> columns;
  torch::Tensor col = x.unsqueeze(1);
  for (int64_t k = 1; k <= kDegree; ++k) columns.push_back(col.pow(k));
  return torch::cat(columns, 1);
}

std::string describe(const torch::Tensor& w, const torch::Tensor& b) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(3) << "y =";
  for (int64_t k = w.size(0) - 1; k >= 0; --k) os << " " << w[k].item<float>() << " x^" << k + 1 << " +";
  os << " " << b[0].item<float>();
  return os.str();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t max_batches = 100000;
  const char* usage =
      "usage: libtorch_regression [--max-batches N]\n"
      "  pytorch/examples' cpp/regression: fits a degree-4 polynomial with torch::nn::Linear and SGD.\n\n"
      "options:\n"
      "  --max-batches N  stop after N batches if the loss is not below 1e-3 by then (default 100000)\n";
  const int rc = cli::parse(argc, argv, usage, [&](const std::string& k, const std::string& v) {
    if (k != "--max-batches") return false;
    max_batches = std::atoll(v.c_str());
    return true;
  });
  if (rc >= 0) return rc;
  torch::manual_seed(7);
  torch::Tensor true_w = torch::randn({kDegree, 1}) * 5;
  torch::Tensor true_b = torch::randn({1}) * 5;

  auto model = torch::nn::Linear(kDegree, 1);
  torch::optim::SGD sgd(model->parameters(), 0.1);  // a double converts to SGDOptions, as in libtorch

  float last = 0;
  int64_t batch = 0;
  while (batch < max_batches) {
    ++batch;
    torch::Tensor features = powers_of(torch::randn({32}));
    torch::Tensor targets = features.mm(true_w) + true_b.item();
    sgd.zero_grad();
    torch::Tensor loss = torch::smooth_l1_loss(model(features), targets);
    last = loss.item<float>();
    loss.backward();
    sgd.step();
    if (last < 1e-3f) break;
  }
  std::cout << "loss " << last << " after " << batch << " batches\n";
  std::cout << "learned: " << describe(model->weight.view({-1}), model->bias) << "\n";
  std::cout << "actual:  " << describe(true_w.view({-1}), true_b) << "\n";
  if (last >= 1e-3f) {
    std::cerr << "regression: the loss did not fall below 1e-3 within " << max_batches << " batches\n";
    return 1;
  }
  // Converged means the learned polynomial is the true one.
  if (!torch::allclose(model->weight.view({-1}), true_w.view({-1}), 0, 0.25) ||
      !torch::allclose(model->bias, true_b, 0, 0.25)) {
    std::cerr << "regression: the loss is small but the coefficients differ from the true ones\n";
    return 1;
  }
  return 0;
}
