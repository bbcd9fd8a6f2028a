// digits_mlp: an MLP classifier for the 8x8 handwritten digits (examples/data/digits.csv, UCI,
// CC BY 4.0), trained with AdamW on the CPU or the emulated NPU, in fp32 or with bf16 autocast.
//
// Run: build/examples/digits_mlp [--device npu:0] [--dtype bf16]
#include <ember/ember.h>

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>

#include "common.h"

using namespace ember;
namespace F = ember::nn::functional;

namespace {

struct Digits {
  std::vector<float> x;  // [n, 64], scaled to [0, 1]
  std::vector<int64_t> y;
  int64_t n() const { return static_cast<int64_t>(y.size()); }
};

Digits read_digits(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read " + path + " (run from the repository root or pass --data)");
  Digits d;
  std::string line;
  while (std::getline(f, line)) {
    std::stringstream ss(line);
    std::string v;
    std::vector<double> row;
    while (std::getline(ss, v, ',')) row.push_back(std::stod(v));
    if (row.size() != 65) throw std::runtime_error(path + ": expected 65 values per line, got " + std::to_string(row.size()));
    for (int i = 0; i < 64; ++i) d.x.push_back(static_cast<float>(row[static_cast<size_t>(i)] / 16.0));
    d.y.push_back(static_cast<int64_t>(row[64]));
  }
  return d;
}

std::pair<Tensor, Tensor> rows_of(const Digits& d, const std::vector<int64_t>& idx, Device dev) {
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int64_t i : idx) {
    x.insert(x.end(), d.x.begin() + i * 64, d.x.begin() + (i + 1) * 64);
    y.push_back(d.y[static_cast<size_t>(i)]);
  }
  return {tensor(x, {static_cast<int64_t>(idx.size()), 64}).to(dev), tensor(y).to(dev)};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    demo::Args args(argc, argv,
                    "usage: digits_mlp [options]\n"
                    "  Trains a 64-128-128-10 MLP on the 1797 UCI handwritten digits (80/20 split, fixed seed) and\n"
                    "  prints the test accuracy.");
    std::string data = args.get("data", std::string("examples/data/digits.csv"), "the digits CSV");
    std::string device = args.get("device", std::string("cpu"), "cpu or npu:N");
    std::string dtype = args.get("dtype", std::string("fp32"), "fp32, or bf16 (autocast)");
    int64_t epochs = args.get("epochs", int64_t(40), "passes over the training set");
    int64_t hidden = args.get("hidden", int64_t(128), "hidden layer width");
    int64_t batch = args.get("batch", int64_t(64), "samples per step");
    double lr = args.get("lr", 2e-3, "peak learning rate (AdamW, cosine schedule)");
    uint64_t seed = static_cast<uint64_t>(args.get("seed", int64_t(7), "seed for the split, init and batches"));
    double min_accuracy = args.get("min-accuracy", 0.0, "exit with status 2 below this test accuracy (for CI)");
    if (!args.finish()) return 0;
    if (dtype != "fp32" && dtype != "bf16") throw std::invalid_argument("--dtype: fp32 or bf16");
    Device dev(device);
    bool autocast = dtype == "bf16";

    Digits d = read_digits(data);
    std::vector<int64_t> order(static_cast<size_t>(d.n()));
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(seed);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<int64_t> train(order.begin(), order.begin() + d.n() * 8 / 10), test(order.begin() + d.n() * 8 / 10, order.end());
    std::cout << "digits: " << d.n() << " images, " << train.size() << " for training, " << test.size() << " for testing\n";

    manual_seed(seed);
    auto model = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
        std::make_shared<nn::Linear>(64, hidden), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(hidden, hidden),
        std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(hidden, 10)});
    model->to(dev);
    std::cout << "model on " << dev << " (" << dtype << "):\n" << *model << "\n";
    int64_t steps_per_epoch = (static_cast<int64_t>(train.size()) + batch - 1) / batch, total = epochs * steps_per_epoch;
    optim::AdamW opt(model->parameters(), {lr, {0.9, 0.999}, 1e-8, 1e-4});
    optim::CosineSchedule sched(opt, steps_per_epoch, total, lr * 0.02);

    demo::ProgressBar bar(total, "samples");
    int64_t step = 0;
    double shown = NAN;
    for (int64_t e = 0; e < epochs; ++e) {
      std::shuffle(train.begin(), train.end(), rng);
      Tensor acc;
      for (int64_t s = 0; s < steps_per_epoch; ++s) {
        std::vector<int64_t> idx(train.begin() + s * batch,
                                 train.begin() + std::min<int64_t>((s + 1) * batch, static_cast<int64_t>(train.size())));
        auto [x, y] = rows_of(d, idx, dev);
        Tensor loss;
        {
          amp::AutocastGuard g(dev.type(), kBFloat16, autocast);
          loss = F::cross_entropy((*model)(x), y);
        }
        opt.zero_grad();
        loss.backward();
        opt.step();
        sched.step();
        acc = acc.defined() ? acc + loss.detach() : loss.detach();
        bar.update(++step, shown, static_cast<int64_t>(idx.size()));
      }
      shown = acc.item<double>() / static_cast<double>(steps_per_epoch);  // epoch mean, one sync per epoch
    }
    bar.update(step, shown, 0);
    bar.finish();

    NoGradGuard ng;
    model->eval();
    auto [x, y] = rows_of(d, test, dev);
    Tensor logits;
    {
      amp::AutocastGuard g(dev.type(), kBFloat16, autocast);
      logits = (*model)(x);
    }
    double correct = logits.argmax(1).eq(y).to(kFloat64).sum().item<double>();
    double accuracy = correct / static_cast<double>(test.size());
    std::cout << "\n== summary ==\ntest accuracy: " << std::fixed << std::setprecision(2) << 100 * accuracy << "% ("
              << static_cast<int64_t>(correct) << "/" << test.size() << ") on " << dev << " (" << dtype << ")\n"
              << "trained " << epochs << " epochs (" << step << " steps) in " << std::setprecision(1) << bar.elapsed()
              << " s, final training loss " << std::setprecision(4) << shown << "\n";
    return accuracy >= min_accuracy ? 0 : 2;
  } catch (const std::exception& e) {
    std::cerr << "\ndigits_mlp: " << e.what() << "\n";
    return 1;
  }
}
