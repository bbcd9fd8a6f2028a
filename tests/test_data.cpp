// ember::data: datasets, transforms, samplers, the DataLoader (with and without workers) and
// the MNIST and CSV readers, on files the tests write.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <set>
#include <thread>

#include "ember/nn/data.h"
#include "test_util.h"

using namespace ember;
namespace ds = ember::data::datasets;
namespace tf = ember::data::transforms;
namespace sp = ember::data::samplers;

namespace {

// Example i: data [2] = {i, -i}, target i.
struct Counting : ds::Dataset<Counting> {
  explicit Counting(size_t n) : n(n) {}
  data::Example<> get(size_t i) override {
    double v = static_cast<double>(i);
    return {tensor({v, -v}, {}, kFloat32), tensor({static_cast<int64_t>(i)})[0]};
  }
  std::optional<size_t> size() const override { return n; }
  size_t n;
};

std::vector<int64_t> targets_of(const data::Example<>& batch) { return batch.target.to_vector<int64_t>(); }

TEST(DataLoader, SequentialBatchesStackedInOrderWithAndWithoutWorkers) {
  for (size_t workers : {0, 1, 2, 3}) {
    auto loader = data::make_data_loader<sp::SequentialSampler>(
        Counting(10).map(tf::Stack<>()), data::DataLoaderOptions().batch_size(4).workers(workers));
    for (int epoch = 0; epoch < 2; ++epoch) {
      std::vector<std::vector<int64_t>> got;
      for (auto& batch : *loader) {
        EXPECT_EQ(batch.data.sizes()[1], 2);
        EXPECT_EQ(batch.data.size(0), batch.target.size(0));
        got.push_back(targets_of(batch));
      }
      std::vector<std::vector<int64_t>> want = {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}};
      EXPECT_EQ(got, want) << workers << " workers, epoch " << epoch;
    }
  }
  auto dropping = data::make_data_loader<sp::SequentialSampler>(
      Counting(10).map(tf::Stack<>()), data::DataLoaderOptions(4).drop_last(true).workers(2));
  size_t batches = 0;
  for (auto& b : *dropping) {
    EXPECT_EQ(b.data.size(0), 4);
    ++batches;
  }
  EXPECT_EQ(batches, 2u);
}

TEST(DataLoader, RandomSamplerIsAPermutationFromTheGlobalSeed) {
  auto epoch_order = [](size_t workers) {
    manual_seed(11);
    auto loader = data::make_data_loader(Counting(25).map(tf::Stack<>()), data::DataLoaderOptions(7).workers(workers));
    std::vector<std::vector<int64_t>> epochs;
    for (int e = 0; e < 2; ++e) {
      std::vector<int64_t> order;
      for (auto& batch : *loader)
        for (int64_t t : targets_of(batch)) order.push_back(t);
      epochs.push_back(order);
    }
    return epochs;
  };
  auto a = epoch_order(0), b = epoch_order(2);
  EXPECT_EQ(a, b);  // the same seed, the same order, whatever the workers
  for (auto& order : a) {
    std::vector<int64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> all(25);
    for (int64_t i = 0; i < 25; ++i) all[static_cast<size_t>(i)] = i;
    EXPECT_EQ(sorted, all);  // every example once
  }
  EXPECT_NE(a[0], a[1]);  // a new shuffle each epoch
}

TEST(DataLoader, UnorderedWorkersStillDeliverEveryBatch) {
  auto loader = data::make_data_loader<sp::SequentialSampler>(
      Counting(30).map(tf::Stack<>()), data::DataLoaderOptions(3).workers(3).enforce_ordering(false).max_jobs(5));
  std::multiset<int64_t> seen;
  for (auto& batch : *loader)
    for (int64_t t : targets_of(batch)) seen.insert(t);
  EXPECT_EQ(seen.size(), 30u);
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 30u);
}

struct Failing : ds::Dataset<Failing> {
  data::Example<> get(size_t i) override {
    EMBER_CHECK_VALUE(i != 5, "Failing: example ", i, " is unreadable");
    return {full({1}, static_cast<double>(i)), Tensor()};
  }
  std::optional<size_t> size() const override { return 8; }
};

TEST(DataLoader, AnErrorInAWorkerIsRethrownAtItsBatchAndTheNextEpochWorks) {
  for (size_t workers : {0, 2}) {
    auto loader = data::make_data_loader<sp::SequentialSampler>(Failing().map(tf::Stack<>()),
                                                                data::DataLoaderOptions(2).workers(workers));
    size_t before = 0;
    ember_test::expect_error<ValueError>(
        [&] {
          for (auto& batch : *loader) {
            (void)batch;
            ++before;
          }
        },
        {"example 5 is unreadable"});
    EXPECT_EQ(before, 2u) << workers;  // batches {0,1} and {2,3}; {4,5} fails
    // Leaving an epoch early (break) and starting another is fine too.
    for (auto& batch : *loader) {
      EXPECT_EQ(batch.data.to_vector<float>()[0], 0.0f);
      break;
    }
  }
  ember_test::expect_error<ValueError>([] { data::DataLoaderOptions o(0); data::make_data_loader(Counting(3), o); },
                                       {"batch_size must be positive"});
}

// Workers never take the intra-op pool: the training step keeps it.
struct PoolProbe : ds::Dataset<PoolProbe> {
  data::Example<> get(size_t) override {
    PoolReservation r;
    threads_seen->store(std::max(threads_seen->load(), r.threads()));
    return {ones({1}), Tensor()};
  }
  std::optional<size_t> size() const override { return 6; }
  std::shared_ptr<std::atomic<int>> threads_seen = std::make_shared<std::atomic<int>>(0);
};

TEST(DataLoader, WorkersRunInlineWithoutTheIntraOpPool) {
  PoolProbe probe;
  auto seen = probe.threads_seen;
  auto loader = data::make_data_loader<sp::SequentialSampler>(probe.map(tf::Stack<>()), data::DataLoaderOptions(2).workers(2));
  for (auto& batch : *loader) (void)batch;
  EXPECT_EQ(seen->load(), 1);
  {
    SerialGuard serial;
    std::atomic<int> other_threads{0};
    std::thread::id me = std::this_thread::get_id();
    parallel_for(1000, 1, [&](int64_t, int64_t) {
      if (std::this_thread::get_id() != me) ++other_threads;
    });
    EXPECT_EQ(other_threads.load(), 0);
    EXPECT_EQ(PoolReservation().threads(), 1);
  }
}

TEST(DataLoader, DistributedSamplersSplitTheEpochAmongRanks) {
  for (bool dup : {true, false}) {
    std::vector<size_t> all;
    std::vector<std::vector<size_t>> per_rank;
    for (size_t rank = 0; rank < 3; ++rank) {
      sp::DistributedRandomSampler s(10, 3, rank, dup);
      s.set_epoch(4);
      s.reset();
      std::vector<size_t> mine;
      while (auto b = s.next(3)) mine.insert(mine.end(), b->begin(), b->end());
      EXPECT_EQ(mine.size(), dup ? 4u : 3u);
      EXPECT_EQ(mine.size(), s.local_sample_count());
      all.insert(all.end(), mine.begin(), mine.end());
      per_rank.push_back(mine);
    }
    std::set<size_t> distinct(all.begin(), all.end());
    EXPECT_EQ(distinct.size(), dup ? 10u : 9u);  // padding repeats 2 indices; dropping loses one
    // Another epoch shuffles differently, the same epoch the same way.
    sp::DistributedRandomSampler again(10, 3, 0, dup), other(10, 3, 0, dup);
    again.set_epoch(4);
    other.set_epoch(5);
    again.reset();
    other.reset();
    EXPECT_EQ(*again.next(10), per_rank[0]);
    EXPECT_NE(*other.next(10), per_rank[0]);
  }
  sp::DistributedSequentialSampler seq(7, 2, 1);
  EXPECT_EQ(*seq.next(10), (std::vector<size_t>{4, 5, 6, 0}));
  ember_test::expect_error<ValueError>([] { sp::DistributedRandomSampler bad(4, 2, 2); }, {"rank 2"});
}

TEST(DataTransforms, NormalizeAndLambdas) {
  tf::Normalize<> scalar(0.5, 0.25);
  EXPECT_EQ(scalar(tensor({0.5, 1.0})).to_vector<float>(), (std::vector<float>{0.0f, 2.0f}));
  tf::Normalize<> channels({1.0, 2.0}, {0.5, 2.0});
  Tensor img = ones({2, 1, 2});
  EXPECT_EQ(channels(img).to_vector<float>(), (std::vector<float>{0, 0, -0.5, -0.5}));
  ember_test::expect_error<ShapeError>([&] { channels(ones({3, 2, 2})); }, {"Normalize", "[2, H, W]"});
  ember_test::expect_error<ValueError>([] { tf::Normalize<>(0.0, 0.0); }, {"stddev of 0"});
  auto doubled = Counting(3).map(tf::TensorLambda<>([](Tensor x) { return x * 2; })).map(tf::Stack<>());
  EXPECT_EQ(doubled.get_batch({2}).data.to_vector<float>(), (std::vector<float>{4, -4}));
  ds::TensorDataset td(arange(6, kFloat32).view({3, 2}), tensor({int64_t(7), int64_t(8), int64_t(9)}));
  EXPECT_EQ(td.get(1).target.item<int64_t>(), 8);
  EXPECT_EQ(td.size().value(), 3u);
}

// IDX files as MNIST's: magic, counts and sizes big-endian, then bytes.
void write_idx(const std::string& path, uint32_t magic, std::vector<uint32_t> dims, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  auto be = [&](uint32_t v) {
    unsigned char b[4] = {static_cast<unsigned char>(v >> 24), static_cast<unsigned char>(v >> 16),
                          static_cast<unsigned char>(v >> 8), static_cast<unsigned char>(v)};
    f.write(reinterpret_cast<char*>(b), 4);
  };
  be(magic);
  for (uint32_t d : dims) be(d);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

TEST(DataReaders, MnistFilesAreReadAndCheckedWhole) {
  std::string root = ::testing::TempDir() + "ember_mnist_test/";
  std::system(("mkdir -p " + root).c_str());
  std::vector<uint8_t> pixels(3 * 4 * 2);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 10);
  write_idx(root + "t10k-images-idx3-ubyte", 2051, {3, 4, 2}, pixels);
  write_idx(root + "t10k-labels-idx1-ubyte", 2049, {3}, {7, 0, 9});
  ds::MNIST test(root, ds::MNIST::Mode::kTest);
  EXPECT_FALSE(test.is_train());
  EXPECT_EQ(test.size().value(), 3u);
  EXPECT_EQ(test.images().sizes(), IntArrayRef({3, 1, 4, 2}));
  data::Example<> e = test.get(1);
  EXPECT_EQ(e.target.item<int64_t>(), 0);
  EXPECT_FLOAT_EQ(e.data.to_vector<float>()[0], 80.0f / 255.0f);  // pixel 8 of the file
  auto loader = data::make_data_loader<sp::SequentialSampler>(
      ds::MNIST(root, ds::MNIST::Mode::kTest).map(tf::Normalize<>(0.5, 0.5)).map(tf::Stack<>()), 2);
  std::vector<int64_t> labels;
  for (auto& b : *loader) {
    EXPECT_EQ(b.data.dim(), 4);
    for (int64_t t : targets_of(b)) labels.push_back(t);
  }
  EXPECT_EQ(labels, (std::vector<int64_t>{7, 0, 9}));

  ember_test::expect_error<ValueError>([&] { ds::MNIST m(root); }, {"cannot open", "train-images-idx3-ubyte"});
  write_idx(root + "train-images-idx3-ubyte", 2051, {3, 4, 2}, std::vector<uint8_t>(23));  // one byte short
  write_idx(root + "train-labels-idx1-ubyte", 2049, {3}, {1, 2, 3});
  ember_test::expect_error<ValueError>([&] { ds::MNIST m(root); }, {"should hold 24 pixel bytes", "has 23"});
  write_idx(root + "train-images-idx3-ubyte", 2049, {3, 4, 2}, pixels);
  ember_test::expect_error<ValueError>([&] { ds::MNIST m(root); }, {"not an IDX image file"});
  write_idx(root + "train-images-idx3-ubyte", 2051, {3, 4, 2}, pixels);
  write_idx(root + "train-labels-idx1-ubyte", 2049, {2}, {1, 2});
  ember_test::expect_error<ValueError>([&] { ds::MNIST m(root); }, {"3 images", "2 labels"});
  write_idx(root + "train-images-idx3-ubyte", 2051, {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}, {});
  write_idx(root + "train-labels-idx1-ubyte", 2049, {0xFFFFFFFFu}, {});
  ember_test::expect_error<ValueError>([&] { ds::MNIST m(root); }, {"too many pixels"});
  std::system(("rm -rf " + root).c_str());
}

TEST(DataReaders, CsvRowsWithHeaderTargetsAndErrors) {
  std::string path = ::testing::TempDir() + "ember_data_test.csv";
  auto write = [&](const std::string& text) { std::ofstream(path) << text; };
  write("a,b,label\n1.5,2,0\n-3,4e1,2\n\n0,0,1\n");
  ds::CSVDataset csv(path);
  EXPECT_EQ(csv.size().value(), 3u);
  EXPECT_EQ(csv.data().to_vector<float>(), (std::vector<float>{1.5f, 2, -3, 40, 0, 0}));
  EXPECT_EQ(csv.targets().to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 1}));
  ds::CSVDataset::Options first;
  first.target_column = 0;
  first.target_dtype = kFloat32;
  ds::CSVDataset values(path, first);
  EXPECT_EQ(values.get(1).target.item<float>(), -3.0f);
  EXPECT_EQ(values.get(1).data.to_vector<float>(), (std::vector<float>{40, 2}));

  write("1,2,3\n4,5\n");
  ember_test::expect_error<ValueError>([&] { ds::CSVDataset c(path); }, {"line 2 has 2 columns"});
  write("1,2,3\n4,x,6\n");
  ember_test::expect_error<ValueError>([&] { ds::CSVDataset c(path); }, {"line 2 column 2", "'x' is not a number"});
  write("1,2,0.5\n");
  ember_test::expect_error<ValueError>([&] { ds::CSVDataset c(path); }, {"not a whole number"});
  write("\"a\",1\n");
  ember_test::expect_error<ValueError>([&] { ds::CSVDataset c(path); }, {"quoted fields"});
  write("x,y\n");
  ember_test::expect_error<ValueError>([&] { ds::CSVDataset c(path); }, {"no data rows"});
  std::remove(path.c_str());
}

}  // namespace

namespace {
TEST(Randperm, APermutationFromTheGlobalSeedOnEveryDevice) {
  for (const char* dev : {"cpu", "npu:0"}) {
    manual_seed(3);
    Tensor p = randperm(50, TensorOptions(kInt64).device(Device(dev)));
    EXPECT_EQ(p.device(), Device(dev));
    std::vector<int64_t> v = p.to_vector<int64_t>(), sorted = v;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(sorted[static_cast<size_t>(i)], i);
    manual_seed(3);
    EXPECT_EQ(randperm(50).to_vector<int64_t>(), v) << dev;  // the seed decides, not the device
    EXPECT_NE(randperm(50).to_vector<int64_t>(), v) << dev;  // the stream moves on
  }
  EXPECT_EQ(randperm(0).numel(), 0);
  EXPECT_EQ(randperm(4, kFloat32).dtype(), kFloat32);
  ember_test::expect_error<ValueError>([] { randperm(-1); }, {"randperm", "non-negative"});
  ember_test::expect_error<DTypeError>([] { randperm(3, kBool); }, {"randperm"});
  // Every value must be exact in the dtype (uint8: 0 .. 255).
  EXPECT_EQ(randperm(256, kUInt8).to(kInt64).sum().item<int64_t>(), 255 * 256 / 2);
  ember_test::expect_error<ValueError>([] { randperm(257, kUInt8); }, {"randperm", "does not fit", "at most 256"});
  // On the NPU, CANN's aclnnRandperm draws it.
  profiler::Profile prof;
  randperm(10, TensorOptions(kInt32).device(Device("npu:0")));
  prof.stop();
  bool ran = false;
  for (const auto& r : prof.key_averages().rows) ran = ran || r.name == "aclnnRandpermGetWorkspaceSize";
  EXPECT_TRUE(ran) << prof.key_averages().table();
}
}  // namespace
