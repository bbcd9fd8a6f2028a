// A libtorch-style custom dataset on ember (<ember/torch.h>): a Dataset subclass that reads
// image files listed in an info file ("path label train|test" per line), a network written as a
// SequentialImpl subclass with Functional layers, Adam, nll_loss. The same task as
// pytorch/examples' cpp/custom-dataset (which reads JPEGs with OpenCV); this code is ember's own.
//
// The images are binary PPM files (P6, 8-bit RGB) that the program writes first: 3 classes of
// 32x32 patterns (horizontal stripes, vertical stripes, a checkerboard) in random colours with
// noise. Point --info at your own list of PPM files to train on those.
//
//   libtorch_custom_dataset [--epochs 15] [--min-accuracy 0.9] [--info FILE] [--workers 2]
//   libtorch_custom_dataset --write-images DIR   (DIR/dataset/*.ppm and DIR/info.txt listing them
//                                                 by name, the layout pytorch/examples' reads)
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <ember/torch.h>
#include "cli.h"

namespace {

const int64_t kSize = 32, kClasses = 3;
using Data = std::vector<std::pair<std::string, int64_t>>;

// ---------------------------------------------------------------- the image files
void write_ppm(const std::string& path, const std::vector<unsigned char>& rgb) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << "P6\n" << kSize << " " << kSize << "\n255\n";
  f.write(reinterpret_cast<const char*>(rgb.data()), static_cast<std::streamsize>(rgb.size()));
}

// n images per class into dir/dataset, listed in dir/info.txt (every fifth one for testing) by
// their path, or by their name alone when `names_only` (pytorch/examples' custom-dataset
// prepends ./dataset/ itself). The last line has no newline: that reader counts one more entry
// after a final newline.
std::string write_images(const std::string& dir, int per_class, bool names_only) {
  std::mt19937 gen(7);
  std::uniform_int_distribution<int> colour(40, 255), noise(-30, 30), phase(0, 7);
  const std::string images = dir + "/dataset";
  if (mkdir(images.c_str(), 0755) != 0 && errno != EEXIST) throw std::runtime_error("cannot make " + images);
  std::ofstream info(dir + "/info.txt");
  const char* sep = "";
  for (int cls = 0; cls < kClasses; ++cls) {
    for (int n = 0; n < per_class; ++n) {
      int c[3] = {colour(gen), colour(gen), colour(gen)}, p = phase(gen);
      std::vector<unsigned char> rgb(static_cast<size_t>(kSize * kSize * 3));
      for (int y = 0; y < kSize; ++y)
        for (int x = 0; x < kSize; ++x) {
          bool on = cls == 0 ? ((y + p) / 4) % 2 : cls == 1 ? ((x + p) / 4) % 2 : ((x + p) / 4 + (y + p) / 4) % 2;
          for (int k = 0; k < 3; ++k) {
            int v = (on ? c[k] : 255 - c[k]) + noise(gen);
            rgb[static_cast<size_t>((y * kSize + x) * 3 + k)] = static_cast<unsigned char>(std::min(255, std::max(0, v)));
          }
        }
      std::string name = "img_" + std::to_string(cls) + "_" + std::to_string(n) + ".ppm";
      write_ppm(images + "/" + name, rgb);
      info << sep << (names_only ? name : images + "/" + name) << " " << cls << " " << (n % 5 == 0 ? "test" : "train");
      sep = "\n";
    }
  }
  if (!info) throw std::runtime_error("cannot write " + dir + "/info.txt");
  return dir + "/info.txt";
}

std::pair<Data, Data> read_info(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  Data train, test;
  std::string file, kind;
  int64_t label = 0;
  while (in >> file >> label >> kind) {
    if (kind == "train") train.emplace_back(file, label);
    else if (kind == "test") test.emplace_back(file, label);
    else throw std::runtime_error(path + ": '" + kind + "' is neither train nor test");
  }
  std::mt19937 gen(11);
  std::shuffle(train.begin(), train.end(), gen);
  return {train, test};
}

// ---------------------------------------------------------------- the dataset
class ImageFolder : public torch::data::datasets::Dataset<ImageFolder> {
 public:
  explicit ImageFolder(Data data) : data_(std::move(data)) {}

  // Reads one PPM: [3, H, W] float in [0, 1], and its label.
  torch::data::Example<> get(size_t index) override {
    const auto& [path, label] = data_.at(index);
    std::ifstream f(path, std::ios::binary);
    std::string magic;
    int64_t w = 0, h = 0, maxval = 0;
    f >> magic >> w >> h >> maxval;
    f.get();
    if (!f || magic != "P6" || w != kSize || h != kSize || maxval != 255)
      throw std::runtime_error(path + ": not a " + std::to_string(kSize) + "x" + std::to_string(kSize) + " 8-bit PPM");
    std::vector<unsigned char> rgb(static_cast<size_t>(w * h * 3));
    f.read(reinterpret_cast<char*>(rgb.data()), static_cast<std::streamsize>(rgb.size()));
    if (f.gcount() != static_cast<std::streamsize>(rgb.size())) throw std::runtime_error(path + ": truncated");
    // HWC bytes to CHW floats, as an image decoder's buffer is handed over in libtorch.
    torch::Tensor image = torch::from_blob(rgb.data(), {h, w, 3}, torch::kUInt8).permute({2, 0, 1}).to(torch::kFloat) / 255.0;
    return {image, torch::tensor(label, torch::kLong)};
  }
  torch::optional<size_t> size() const override { return data_.size(); }

 private:
  Data data_;
};

// ---------------------------------------------------------------- the network
struct NetworkImpl : torch::nn::SequentialImpl {
  NetworkImpl() {
    using namespace torch::nn;
    auto stride = torch::ExpandingArray<2>({2, 2});
    torch::ExpandingArray<2> shape({-1, 32 * 8 * 8});
    push_back(Conv2d(Conv2dOptions(3, 16, 3).padding(1)));
    push_back(Functional(torch::relu));
    push_back(Functional(torch::max_pool2d, 2, stride, 0, 1, false));  // 32 -> 16
    push_back(Conv2d(Conv2dOptions(16, 32, 3).padding(1)));
    push_back(Functional(torch::relu));
    push_back(Functional(torch::max_pool2d, 2, stride, 0, 1, false));  // 16 -> 8
    push_back(Functional(torch::reshape, shape));
    push_back(Dropout());
    push_back(Linear(32 * 8 * 8, 64));
    push_back(Functional(torch::relu));
    push_back(Linear(64, kClasses));
    push_back(Functional([](torch::Tensor x) { return torch::log_softmax(x, 1); }));
  }
};
TORCH_MODULE(Network);

}  // namespace

int main(int argc, char** argv) {
  int64_t epochs = 15, workers = 2;
  double min_accuracy = 0;
  std::string info, write_only;
  const char* usage =
      "usage: libtorch_custom_dataset [--epochs N] [--workers N] [--min-accuracy A] [--info FILE]\n"
      "       libtorch_custom_dataset --write-images DIR\n"
      "  A custom torch::data::Dataset of image files listed in an info file, trained as a CNN classifier.\n\n"
      "options:\n"
      "  --epochs N          passes over the training images (default 15)\n"
      "  --workers N         data loader worker threads (default 2)\n"
      "  --min-accuracy A    exit with status 1 below this test accuracy (for CI) (default 0)\n"
      "  --info FILE         the info file listing the images and labels (default: written from the digits)\n"
      "  --write-images DIR  only write the digits as image files and an info file into DIR\n";
  const int rc = cli::parse(argc, argv, usage, [&](const std::string& k, const std::string& v) {
    if (k == "--epochs") epochs = std::atoll(v.c_str());
    else if (k == "--workers") workers = std::atoll(v.c_str());
    else if (k == "--min-accuracy") min_accuracy = std::atof(v.c_str());
    else if (k == "--info") info = v;
    else if (k == "--write-images") write_only = v;
    else return false;
    return true;
  });
  if (rc >= 0) return rc;
  try {
    if (!write_only.empty()) {
      std::printf("wrote %s\n", write_images(write_only, 40, /*names_only=*/true).c_str());
      return 0;
    }
    torch::manual_seed(1);
    std::string dir;
    if (info.empty()) {
      char tmpl[] = "/tmp/ember_images_XXXXXX";
      if (!mkdtemp(tmpl)) throw std::runtime_error("cannot make a temporary directory");
      dir = tmpl;
      info = write_images(dir, 40, /*names_only=*/false);
    }
    auto [train, test] = read_info(info);
    const size_t train_size = train.size(), test_size = test.size();
    auto train_loader = torch::data::make_data_loader<torch::data::samplers::RandomSampler>(
        ImageFolder(train).map(torch::data::transforms::Stack<>()),
        torch::data::DataLoaderOptions().batch_size(8).workers(static_cast<size_t>(workers)));
    auto test_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
        ImageFolder(test).map(torch::data::transforms::Stack<>()), 50);

    Network network;
    torch::optim::Adam optimizer(network->parameters(), torch::optim::AdamOptions(1e-3));
    double accuracy = 0;
    for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
      network->train();
      double loss_sum = 0;
      int64_t batches = 0;
      for (auto& batch : *train_loader) {
        auto output = network->forward(batch.data);
        auto loss = torch::nll_loss(output, batch.target.view({-1}));
        optimizer.zero_grad();
        loss.backward();
        optimizer.step();
        loss_sum += loss.item<double>();
        ++batches;
      }
      torch::NoGradGuard no_grad;
      network->eval();
      int64_t correct = 0;
      for (auto& batch : *test_loader)
        correct += network->forward(batch.data).argmax(1).eq(batch.target.view({-1})).sum().item<int64_t>();
      accuracy = static_cast<double>(correct) / static_cast<double>(test_size);
      std::printf("epoch %lld: %zu training images, mean loss %.4f | %zu test images, accuracy %.3f\n",
                  static_cast<long long>(epoch), train_size, loss_sum / static_cast<double>(batches), test_size,
                  accuracy);
    }
    if (!dir.empty()) std::system(("rm -rf " + dir).c_str());
    if (accuracy < min_accuracy) {
      std::fprintf(stderr, "libtorch_custom_dataset: accuracy %.3f is below %.3f\n", accuracy, min_accuracy);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libtorch_custom_dataset: %s\n", e.what());
    return 1;
  }
  return 0;
}
