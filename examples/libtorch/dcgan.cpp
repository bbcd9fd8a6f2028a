// A libtorch-style DCGAN on ember (<ember/torch.h>): a generator of transposed convolutions with
// batch norm, a discriminator of strided convolutions with LeakyReLU, binary cross entropy with
// smoothed real labels, two Adam optimizers with betas (0.5, 0.5), checkpoints with
// torch::save / torch::load. The same task as pytorch/examples' cpp/dcgan; this code is ember's
// own. It trains on the UCI digits written as MNIST files (digits_mnist.h), or on --data DIR.
//
//   libtorch_dcgan [--iterations 40] [--device npu:0] [--data DIR] [--check]
//
// --check: exit 1 unless the discriminator learns (its loss falls from its start, about
// 2 ln 2 = 1.39, while the generator's rises) and a checkpoint reloads to the same generator.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <ember/torch.h>

#include "digits_mnist.h"
#include "cli.h"

using namespace torch;

namespace {

const int64_t kNoise = 100;

struct GeneratorImpl : nn::Module {
  explicit GeneratorImpl(int64_t noise)
      : up1(nn::ConvTranspose2dOptions(noise, 256, 4).bias(false)),                       // 1 -> 4
        up2(nn::ConvTranspose2dOptions(256, 128, 3).stride(2).padding(1).bias(false)),    // 4 -> 7
        up3(nn::ConvTranspose2dOptions(128, 64, 4).stride(2).padding(1).bias(false)),     // 7 -> 14
        up4(nn::ConvTranspose2dOptions(64, 1, 4).stride(2).padding(1).bias(false)),       // 14 -> 28
        bn1(256),
        bn2(128),
        bn3(64) {
    register_module("up1", up1);
    register_module("up2", up2);
    register_module("up3", up3);
    register_module("up4", up4);
    register_module("bn1", bn1);
    register_module("bn2", bn2);
    register_module("bn3", bn3);
  }
  Tensor forward(Tensor z) {
    z = torch::relu(bn1(up1(z)));
    z = torch::relu(bn2(up2(z)));
    z = torch::relu(bn3(up3(z)));
    return torch::tanh(up4(z));
  }
  nn::ConvTranspose2d up1, up2, up3, up4;
  nn::BatchNorm2d bn1, bn2, bn3;
};
TORCH_MODULE(Generator);

nn::Sequential make_discriminator() {
  auto leaky = [] { return nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)); };
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 64, 4).stride(2).padding(1).bias(false)),     // 28 -> 14
                        leaky(),
                        nn::Conv2d(nn::Conv2dOptions(64, 128, 4).stride(2).padding(1).bias(false)),   // 14 -> 7
                        nn::BatchNorm2d(128), leaky(),
                        nn::Conv2d(nn::Conv2dOptions(128, 256, 4).stride(2).padding(1).bias(false)),  // 7 -> 3
                        nn::BatchNorm2d(256), leaky(),
                        nn::Conv2d(nn::Conv2dOptions(256, 1, 3).stride(1).padding(0).bias(false)),    // 3 -> 1
                        nn::Sigmoid());
}

}  // namespace

int main(int argc, char** argv) {
  int64_t iterations = 40, batch_size = 64;
  std::string device_name = "cpu", data, digits = "examples/data/digits.csv";
  bool check = false;
  if (cli::help_asked(argc, argv)) {
    std::cout << "usage: libtorch_dcgan [--iterations N] [--device cpu|npu:0] [--data DIR] [--digits CSV] [--check]\n"
                 "  pytorch/examples' cpp/dcgan: a DCGAN generator and discriminator trained on MNIST digits.\n\n"
                 "options:\n"
                 "  --iterations N  training batches (default 40)\n"
                 "  --device D      cpu or npu:N (default cpu)\n"
                 "  --data DIR      a directory of MNIST files (default: the UCI digits written as MNIST)\n"
                 "  --digits CSV    the UCI digits CSV (default examples/data/digits.csv)\n"
                 "  --check         exit with status 1 unless the discriminator learns and a checkpoint reloads to the same generator\n";
    return 0;
  }
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--check") {
      check = true;
    } else if (i + 1 < argc && k == "--iterations") {
      iterations = std::atoll(argv[++i]);
    } else if (i + 1 < argc && k == "--device") {
      device_name = argv[++i];
    } else if (i + 1 < argc && k == "--data") {
      data = argv[++i];
    } else if (i + 1 < argc && k == "--digits") {
      digits = argv[++i];
    } else {
      std::fprintf(stderr, "usage: libtorch_dcgan [--iterations N] [--device cpu|npu:0] [--data DIR] [--digits CSV] [--check] (--help: what they do)\n");
      return 2;
    }
  }
  try {
    torch::manual_seed(1);
    torch::Device device(device_name);
    std::string dir = data.empty() ? digits_mnist::write_temp(digits) : data;

    Generator generator(kNoise);
    generator->to(device);
    nn::Sequential discriminator = make_discriminator();
    discriminator->to(device);

    auto dataset = torch::data::datasets::MNIST(dir)
                       .map(torch::data::transforms::Normalize<>(0.5, 0.5))
                       .map(torch::data::transforms::Stack<>());
    auto loader = torch::data::make_data_loader(
        std::move(dataset),
        torch::data::DataLoaderOptions().batch_size(static_cast<size_t>(batch_size)).workers(2).drop_last(true));
    torch::optim::Adam g_opt(generator->parameters(), torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.5)));
    torch::optim::Adam d_opt(discriminator->parameters(),
                             torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.5)));

    double first_d = 0, first_g = 0, sum_d = 0, sum_g = 0;
    int64_t it = 0, window = std::max<int64_t>(1, iterations / 4);
    while (it < iterations) {
      for (const torch::data::Example<>& batch : *loader) {
        if (it >= iterations) break;
        // The discriminator on real images (labels smoothed into [0.8, 1]) and on fakes.
        discriminator->zero_grad();
        Tensor real = batch.data.to(device);
        Tensor real_labels = torch::empty(batch.data.size(0), device).uniform_(0.8, 1.0);
        Tensor d_real = torch::binary_cross_entropy(discriminator->forward(real).reshape(real_labels.sizes()),
                                                    real_labels);
        d_real.backward();
        Tensor noise = torch::randn({batch.data.size(0), kNoise, 1, 1}, device);
        Tensor fake = generator->forward(noise);
        Tensor fake_labels = torch::zeros(batch.data.size(0), device);
        Tensor d_fake = torch::binary_cross_entropy(
            discriminator->forward(fake.detach()).reshape(fake_labels.sizes()), fake_labels);
        d_fake.backward();
        Tensor d_loss = d_real + d_fake;
        d_opt.step();

        // The generator: fakes the discriminator should call real.
        generator->zero_grad();
        fake_labels.fill_(1);
        Tensor g_loss = torch::binary_cross_entropy(discriminator->forward(fake).reshape(fake_labels.sizes()),
                                                    fake_labels);
        g_loss.backward();
        g_opt.step();

        double d = d_loss.item<double>(), g = g_loss.item<double>();
        if (it < window) {
          first_d += d / static_cast<double>(window);
          first_g += g / static_cast<double>(window);
        }
        if (it >= iterations - window) {
          sum_d += d / static_cast<double>(window);
          sum_g += g / static_cast<double>(window);
        }
        ++it;
        if (it % 10 == 0 || it == iterations)
          std::printf("[%3lld/%3lld] D_loss: %.4f | G_loss: %.4f\n", static_cast<long long>(it),
                      static_cast<long long>(iterations), d, g);
      }
    }
    std::printf("mean of the first %lld iterations: D %.3f, G %.3f; of the last %lld: D %.3f, G %.3f\n",
                static_cast<long long>(window), first_d, first_g, static_cast<long long>(window), sum_d, sum_g);

    // Checkpoints under libtorch's names: a fresh generator loaded from the file samples the same.
    std::string ckpt = dir + "/generator-checkpoint.pt", opt_ckpt = dir + "/generator-optimizer-checkpoint.pt";
    torch::save(generator, ckpt);
    torch::save(g_opt, opt_ckpt);
    Generator restored(kNoise);
    restored->to(device);
    torch::load(restored, ckpt);
    torch::optim::Adam restored_opt(restored->parameters(), torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.5)));
    torch::load(restored_opt, opt_ckpt);
    generator->eval();
    restored->eval();
    Tensor z = torch::randn({4, kNoise, 1, 1}, device);
    Tensor samples = (generator->forward(z) + 1.0) / 2.0;
    bool same = torch::equal(samples, (restored->forward(z) + 1.0) / 2.0);
    torch::save(samples, torch::str(dir, "/dcgan-sample-", 1, ".pt"));
    std::printf("checkpoint reloaded: %s; samples in [%.3f, %.3f]\n", same ? "same generator" : "DIFFERENT",
                samples.min().item<double>(), samples.max().item<double>());
    if (data.empty()) std::system(("rm -rf " + dir).c_str());
    if (check) {
      bool ok = same && sum_d < first_d && sum_g > first_g && std::isfinite(sum_d) && std::isfinite(sum_g);
      if (!ok) {
        std::fprintf(stderr, "libtorch_dcgan: expected the discriminator's loss to fall and the generator's to rise "
                             "over training, and the checkpoint to reload the same generator\n");
        return 1;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libtorch_dcgan: %s\n", e.what());
    return 1;
  }
  return 0;
}
