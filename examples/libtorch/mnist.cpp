// A libtorch-style CNN classifier on ember (<ember/torch.h>): two convolutions with max pooling,
// channel dropout, two linear layers and log_softmax, trained with SGD + momentum on MNIST files
// through torch::data (MNIST reader, Normalize, Stack, a DataLoader with worker threads). The
// same task as pytorch/examples' cpp/mnist; this code is ember's own.
//
// MNIST itself needs a download, so the program writes MNIST-format files (IDX) from the UCI
// digits that ship with ember (examples/data/digits.csv: 1797 8x8 digits, 0..16), each scaled
// up to 28x28 as MNIST's: the first 1500 as the training set, the other 297 as the test set.
// Point --data at a directory holding the real MNIST files to train on those instead.
//
//   libtorch_mnist [--epochs 3] [--workers 2] [--device npu:0] [--min-accuracy 0.9]
//                  [--data DIR] [--digits examples/data/digits.csv] [--augment 1]
//   libtorch_mnist --write-data DIR      (writes the MNIST files into DIR and stops)
//
// Each epoch prints the training step's time and the time the loop waited for its next batch
// (what the DataLoader's workers take off the training thread).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <ember/torch.h>

#include "digits_mnist.h"
#include "cli.h"

namespace {

struct Options {
  int64_t epochs = 3, batch_size = 64, test_batch_size = 500, workers = 2;
  std::string device = "cpu", data, digits = "examples/data/digits.csv";
  double min_accuracy = 0;
  bool augment = false;
  std::string write_data;  // write the digits as MNIST files into this directory, and stop
};

// Random translation by up to 2 pixels each way (zero fill): a per-example cost in the data
// pipeline, as decoding and augmenting real images have. Draws from ember's generator, so with
// workers the order of the draws (not their distribution) depends on thread timing.
torch::Tensor shift(torch::Tensor image) {
  torch::Tensor canvas = torch::zeros({image.size(0), 32, 32});
  canvas.narrow(1, 2, 28).narrow(2, 2, 28).copy_(image);
  torch::Tensor d = torch::randint(0, 5, {2});
  return canvas.narrow(1, d[0].item<int64_t>(), 28).narrow(2, d[1].item<int64_t>(), 28).contiguous();
}

// ---------------------------------------------------------------- the model
struct NetImpl : torch::nn::Module {
  NetImpl()
      : conv1(torch::nn::Conv2dOptions(1, 10, /*kernel_size=*/5)),
        conv2(torch::nn::Conv2dOptions(10, 20, /*kernel_size=*/5)),
        fc1(320, 50),
        fc2(50, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("drop", drop);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));            // [N, 10, 12, 12]
    x = torch::relu(torch::max_pool2d(drop->forward(conv2->forward(x)), 2));  // [N, 20, 4, 4]
    x = x.view({-1, 320});
    x = torch::dropout(torch::relu(fc1->forward(x)), /*p=*/0.5, /*training=*/is_training());
    return torch::log_softmax(fc2->forward(x), /*dim=*/1);
  }
  torch::nn::Conv2d conv1, conv2;
  torch::nn::Dropout2d drop;
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Net);

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const char* usage =
      "usage: libtorch_mnist [--epochs N] [--workers N] [--batch-size N] [--device cpu|npu:0] [--data DIR]\n"
      "                      [--digits CSV] [--min-accuracy A] [--augment 0|1] [--write-data DIR]\n"
      "  pytorch/examples' cpp/mnist: a CNN on MNIST files (by default the UCI digits written as MNIST).\n\n"
      "options:\n"
      "  --epochs N          passes over the training set (default 3)\n"
      "  --workers N         data loader worker threads (default 2)\n"
      "  --batch-size N      training batch size (default 64)\n"
      "  --device D          cpu or npu:N (default cpu)\n"
      "  --data DIR          a directory of MNIST files (train-images-idx3-ubyte, ...)\n"
      "  --digits CSV        the UCI digits CSV written as MNIST files when --data is not given\n"
      "                      (default examples/data/digits.csv)\n"
      "  --min-accuracy A    exit with status 1 below this test accuracy (for CI) (default 0)\n"
      "  --augment 0|1       random shifts of the training images (default 0)\n"
      "  --write-data DIR    only write the digits as MNIST files into DIR\n";
  const int rc = cli::parse(argc, argv, usage, [&](const std::string& k, const std::string& v) {
    if (k == "--epochs") o.epochs = std::atoll(v.c_str());
    else if (k == "--workers") o.workers = std::atoll(v.c_str());
    else if (k == "--batch-size") o.batch_size = std::atoll(v.c_str());
    else if (k == "--device") o.device = v;
    else if (k == "--data") o.data = v;
    else if (k == "--digits") o.digits = v;
    else if (k == "--min-accuracy") o.min_accuracy = std::atof(v.c_str());
    else if (k == "--augment") o.augment = v == "1" || v == "true";
    else if (k == "--write-data") o.write_data = v;
    else return false;
    return true;
  });
  if (rc >= 0) return rc;
  try {
    if (!o.write_data.empty()) {
      std::system(("mkdir -p '" + o.write_data + "'").c_str());
      digits_mnist::digits_to_mnist(o.digits, o.write_data);
      return 0;
    }
    torch::manual_seed(1);
    torch::Device device(o.device);
    if (device.is_npu() && !torch::npu::is_available()) throw std::runtime_error("no NPU is available");
    std::string dir = o.data;
    if (dir.empty()) {
      dir = digits_mnist::write_temp(o.digits);
    }

    Net model;
    model->to(device);
    auto train_set = torch::data::datasets::MNIST(dir)
                         .map(torch::data::transforms::TensorLambda<>(
                             [aug = o.augment](torch::Tensor x) { return aug ? shift(x) : x; }))
                         .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
                         .map(torch::data::transforms::Stack<>());
    const size_t train_size = train_set.size().value();
    auto train_loader = torch::data::make_data_loader(
        std::move(train_set), torch::data::DataLoaderOptions().batch_size(static_cast<size_t>(o.batch_size))
                                  .workers(static_cast<size_t>(o.workers)));
    auto test_set = torch::data::datasets::MNIST(dir, torch::data::datasets::MNIST::Mode::kTest)
                        .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
                        .map(torch::data::transforms::Stack<>());
    const size_t test_size = test_set.size().value();
    auto test_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
        std::move(test_set), static_cast<size_t>(o.test_batch_size));
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));

    std::printf("%zu training and %zu test images on %s, %lld data workers\n", train_size, test_size,
                o.device.c_str(), static_cast<long long>(o.workers));
    double accuracy = 0;
    for (int64_t epoch = 1; epoch <= o.epochs; ++epoch) {
      model->train();
      double wait_ms = 0, step_ms = 0, last_loss = 0;
      int64_t steps = 0;
      auto t = std::chrono::steady_clock::now();
      auto it = train_loader->begin();
      wait_ms += ms_since(t);
      for (; it != train_loader->end();) {
        auto s = std::chrono::steady_clock::now();
        auto& batch = *it;
        auto data = batch.data.to(device), targets = batch.target.to(device);
        optimizer.zero_grad();
        auto loss = torch::nll_loss(model->forward(data), targets);
        loss.backward();
        optimizer.step();
        last_loss = loss.item<double>();
        step_ms += ms_since(s);
        ++steps;
        auto w = std::chrono::steady_clock::now();
        ++it;  // the next batch: made ahead by the workers, or here without them
        wait_ms += ms_since(w);
      }

      torch::NoGradGuard no_grad;
      model->eval();
      double test_loss = 0;
      int64_t correct = 0;
      for (const auto& batch : *test_loader) {
        auto data = batch.data.to(device), targets = batch.target.to(device);
        auto output = model->forward(data);
        test_loss += torch::nll_loss(output, targets, /*weight=*/{}, torch::Reduction::Sum).item<double>();
        correct += output.argmax(1).eq(targets).sum().item<int64_t>();
      }
      accuracy = static_cast<double>(correct) / static_cast<double>(test_size);
      std::printf("epoch %lld: train loss %.4f | test loss %.4f, accuracy %.3f | step %.2f ms, waiting for data "
                  "%.3f ms per step\n",
                  static_cast<long long>(epoch), last_loss, test_loss / static_cast<double>(test_size), accuracy,
                  step_ms / static_cast<double>(steps), wait_ms / static_cast<double>(steps));
    }
    if (accuracy < o.min_accuracy) {
      std::fprintf(stderr, "libtorch_mnist: accuracy %.3f is below --min-accuracy %.3f\n", accuracy, o.min_accuracy);
      return 1;
    }
    if (o.data.empty()) std::system(("rm -rf " + dir).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libtorch_mnist: %s\n", e.what());
    return 1;
  }
  return 0;
}
