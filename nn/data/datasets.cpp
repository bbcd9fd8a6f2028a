// MNIST (IDX files) and CSV readers.
#include "ember/nn/data/datasets.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "ember/core/error.h"
#include "ember/ops/ops.h"

namespace ember {
namespace data {
namespace datasets {
namespace {

std::vector<unsigned char> read_file(const std::string& path, const char* what) {
  std::ifstream f(path, std::ios::binary);
  EMBER_CHECK_VALUE(f.good(), what, ": cannot open '", path, "'");
  f.seekg(0, std::ios::end);
  std::streamoff n = f.tellg();
  EMBER_CHECK_VALUE(n >= 0, what, ": cannot read the size of '", path, "'");
  f.seekg(0);
  std::vector<unsigned char> bytes(static_cast<size_t>(n));
  if (n > 0) f.read(reinterpret_cast<char*>(bytes.data()), n);
  EMBER_CHECK_VALUE(f.good() || n == 0, what, ": reading '", path, "' failed");
  return bytes;
}

uint32_t be32(const std::vector<unsigned char>& b, size_t at) {
  return (uint32_t(b[at]) << 24) | (uint32_t(b[at + 1]) << 16) | (uint32_t(b[at + 2]) << 8) | uint32_t(b[at + 3]);
}

}  // namespace

MNIST::MNIST(const std::string& root, Mode mode) : train_(mode == Mode::kTrain) {
  std::string dir = root.empty() || root.back() == '/' ? root : root + "/";
  std::string prefix = train_ ? "train" : "t10k";
  std::string ipath = dir + prefix + "-images-idx3-ubyte", lpath = dir + prefix + "-labels-idx1-ubyte";
  std::vector<unsigned char> img = read_file(ipath, "MNIST"), lab = read_file(lpath, "MNIST");
  EMBER_CHECK_VALUE(img.size() >= 16 && be32(img, 0) == 2051, "MNIST: '", ipath,
                    "' is not an IDX image file (expected magic number 2051 and a 16-byte header)");
  EMBER_CHECK_VALUE(lab.size() >= 8 && be32(lab, 0) == 2049, "MNIST: '", lpath,
                    "' is not an IDX label file (expected magic number 2049 and an 8-byte header)");
  uint64_t n = be32(img, 4), rows = be32(img, 8), cols = be32(img, 12), nl = be32(lab, 4);
  EMBER_CHECK_VALUE(n == nl, "MNIST: '", ipath, "' holds ", n, " images but '", lpath, "' ", nl, " labels");
  EMBER_CHECK_VALUE(rows > 0 && cols > 0, "MNIST: '", ipath, "' has images of ", rows, "x", cols, " pixels");
  // Each factor is below 2^32, so n * rows fits; the product with cols is checked.
  uint64_t per = rows * cols, pixels = 0;
  EMBER_CHECK_VALUE(!__builtin_mul_overflow(n, per, &pixels) && pixels <= uint64_t(INT64_MAX), "MNIST: '", ipath,
                    "' declares ", n, " images of ", rows, "x", cols, ": too many pixels");
  EMBER_CHECK_VALUE(img.size() - 16 == pixels, "MNIST: '", ipath, "' should hold ", pixels, " pixel bytes after its "
                    "header, has ", img.size() - 16);
  EMBER_CHECK_VALUE(lab.size() - 8 == n, "MNIST: '", lpath, "' should hold ", n, " label bytes after its header, has ",
                    lab.size() - 8);
  int64_t N = static_cast<int64_t>(n), H = static_cast<int64_t>(rows), W = static_cast<int64_t>(cols);
  images_ = empty({N, 1, H, W}, kFloat32);
  float* p = images_.data_ptr<float>();
  for (uint64_t i = 0; i < pixels; ++i) p[i] = static_cast<float>(img[16 + i]) / 255.0f;
  targets_ = empty({N}, kInt64);
  int64_t* t = targets_.data_ptr<int64_t>();
  for (uint64_t i = 0; i < n; ++i) t[i] = lab[8 + i];
}

Example<> MNIST::get(size_t index) { return detail::row_example("MNIST", images_, targets_, index); }
std::optional<size_t> MNIST::size() const { return static_cast<size_t>(images_.size(0)); }

namespace {
// Splits a line on the delimiter (no quoting: a quote is an error).
std::vector<std::string> fields_of(const std::string& line, char delim, const std::string& path, size_t lineno) {
  EMBER_CHECK_VALUE(line.find('"') == std::string::npos, "CSVDataset: '", path, "' line ", lineno,
                    ": quoted fields are not supported");
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == delim) {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}
bool parse_number(const std::string& s, double* v) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  if (b == std::string::npos) return false;
  std::string t = s.substr(b, e - b + 1);
  errno = 0;
  char* end = nullptr;
  *v = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && errno != ERANGE;
}
}  // namespace

CSVDataset::CSVDataset(const std::string& path, Options o) {
  EMBER_CHECK_DTYPE(o.target_dtype == kInt64 || o.target_dtype == kFloat32, "CSVDataset: target_dtype must be int64 "
                    "(class labels) or float32, got ", o.target_dtype);
  std::ifstream f(path);
  EMBER_CHECK_VALUE(f.good(), "CSVDataset: cannot open '", path, "'");
  std::string line;
  std::vector<double> values;
  size_t columns = 0, rows = 0, lineno = 0;
  bool first = true;
  while (std::getline(f, line)) {
    ++lineno;
    if (line.empty() || line == "\r") continue;
    std::vector<std::string> fs = fields_of(line, o.delimiter, path, lineno);
    std::vector<double> row(fs.size());
    size_t bad = fs.size();
    for (size_t c = 0; c < fs.size() && bad == fs.size(); ++c)
      if (!parse_number(fs[c], &row[c])) bad = c;
    if (first) {
      first = false;
      columns = fs.size();
      EMBER_CHECK_VALUE(columns >= 2, "CSVDataset: '", path, "' line ", lineno, " has ", columns,
                        " column(s); a target and at least one data column are needed");
      bool header = o.header ? *o.header : bad != fs.size();
      if (header) continue;
    }
    EMBER_CHECK_VALUE(fs.size() == columns, "CSVDataset: '", path, "' line ", lineno, " has ", fs.size(),
                      " columns, the first row ", columns);
    EMBER_CHECK_VALUE(bad == fs.size(), "CSVDataset: '", path, "' line ", lineno, " column ", bad + 1, ": '", fs[bad],
                      "' is not a number");
    values.insert(values.end(), row.begin(), row.end());
    ++rows;
  }
  EMBER_CHECK_VALUE(rows > 0, "CSVDataset: '", path, "' has no data rows");
  int64_t C = static_cast<int64_t>(columns);
  int64_t tc = o.target_column < 0 ? C + o.target_column : o.target_column;
  EMBER_CHECK_INDEX(tc >= 0 && tc < C, "CSVDataset: target_column ", o.target_column, " is outside the ", C, " columns");
  int64_t R = static_cast<int64_t>(rows);
  data_ = empty({R, C - 1}, kFloat32);
  targets_ = empty({R}, o.target_dtype);
  float* d = data_.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t c = 0; c < C; ++c) {
      double v = values[static_cast<size_t>(r * C + c)];
      if (c == tc) {
        if (o.target_dtype == kInt64) {
          EMBER_CHECK_VALUE(std::floor(v) == v && std::fabs(v) < 9.0e15, "CSVDataset: '", path, "' row ", r + 1,
                            ": the target ", v, " is not a whole number (class labels are int64; set target_dtype to "
                            "float32 for values)");
          targets_.data_ptr<int64_t>()[r] = static_cast<int64_t>(v);
        } else {
          targets_.data_ptr<float>()[r] = static_cast<float>(v);
        }
      } else {
        *d++ = static_cast<float>(v);
      }
    }
  }
}

Example<> CSVDataset::get(size_t index) { return detail::row_example("CSVDataset", data_, targets_, index); }
std::optional<size_t> CSVDataset::size() const { return static_cast<size_t>(data_.size(0)); }

}  // namespace datasets
}  // namespace data
}  // namespace ember
