// The UCI digits that ship with ember (examples/data/digits.csv: 1797 8x8 images, 0..16) as
// MNIST-format files (IDX), each scaled up to 28x28 as MNIST's: the first 1500 as the training
// set, the other 297 as the test set. For the libtorch-style examples that read MNIST, whose
// own files need a download.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace digits_mnist {

inline void put_be32(std::ofstream& f, uint32_t v) {
  const unsigned char b[4] = {static_cast<unsigned char>(v >> 24), static_cast<unsigned char>(v >> 16),
                              static_cast<unsigned char>(v >> 8), static_cast<unsigned char>(v)};
  f.write(reinterpret_cast<const char*>(b), 4);
}

// images (8x8, 0..16) to 28x28 bytes: each pixel a 3x3 block, a 2-pixel border, as MNIST's.
inline void write_set(const std::string& dir, const std::string& prefix, const std::vector<std::vector<int>>& images,
               const std::vector<int>& labels) {
  std::ofstream img(dir + "/" + prefix + "-images-idx3-ubyte", std::ios::binary);
  std::ofstream lab(dir + "/" + prefix + "-labels-idx1-ubyte", std::ios::binary);
  if (!img || !lab) throw std::runtime_error("cannot write MNIST files into " + dir);
  put_be32(img, 2051);
  put_be32(img, static_cast<uint32_t>(images.size()));
  put_be32(img, 28);
  put_be32(img, 28);
  put_be32(lab, 2049);
  put_be32(lab, static_cast<uint32_t>(labels.size()));
  for (size_t n = 0; n < images.size(); ++n) {
    std::vector<unsigned char> px(28 * 28, 0);
    for (int y = 0; y < 24; ++y)
      for (int x = 0; x < 24; ++x)
        px[static_cast<size_t>((y + 2) * 28 + x + 2)] =
            static_cast<unsigned char>(images[n][static_cast<size_t>((y / 3) * 8 + x / 3)] * 255 / 16);
    img.write(reinterpret_cast<const char*>(px.data()), static_cast<std::streamsize>(px.size()));
    const char l = static_cast<char>(labels[n]);
    lab.write(&l, 1);
  }
}

inline void digits_to_mnist(const std::string& csv, const std::string& dir) {
  std::ifstream in(csv);
  if (!in) throw std::runtime_error("cannot open " + csv + " (run from the repository root, or pass --digits)");
  std::vector<std::vector<int>> images;
  std::vector<int> labels;
  std::string line;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::vector<int> v;
    for (std::string cell; std::getline(ss, cell, ',');) v.push_back(std::atoi(cell.c_str()));
    if (v.size() != 65) continue;
    labels.push_back(v.back());
    v.pop_back();
    images.push_back(v);
  }
  const size_t train = 1500;
  if (images.size() <= train) throw std::runtime_error(csv + " holds too few digits");
  write_set(dir, "train", {images.begin(), images.begin() + train}, {labels.begin(), labels.begin() + train});
  write_set(dir, "t10k", {images.begin() + train, images.end()}, {labels.begin() + train, labels.end()});
}

// A new directory under /tmp holding the files.
inline std::string write_temp(const std::string& csv) {
  char tmpl[] = "/tmp/ember_mnist_XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("cannot make a temporary directory");
  digits_to_mnist(csv, tmpl);
  return tmpl;
}

}  // namespace digits_mnist
