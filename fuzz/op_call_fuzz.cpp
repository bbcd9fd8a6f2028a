// Fuzzes op calls through the dispatcher. Each input picks an op from the registry's samples
// (ops/testing: every op has some), a dtype, a sample and a device, then mutates the arguments:
// shapes and strides of tensor views (negative, zero, huge, overlapping), dtypes, devices (a mix
// of cpu and npu), integer arguments and lists (negative, huge, INT64_MIN/MAX), floating
// arguments (NaN, infinities, denormals), empty and 0-d tensors, requires_grad. The op runs,
// its outputs are read back to the host, and a small floating output is differentiated.
//
// Every call either works or throws an ember::Error; anything else (a crash, another exception,
// undefined behaviour, a leak, a hang) is a finding. So is an NPU kernel fault: what phase 1 or
// the tensor layer lets through must run.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <ember/ember.h>
#include <ember/dispatch/dispatcher.h>
#include <ember/testing/op_info.h>

using namespace ember;

namespace {

// The input, read as a stream of choices (0 once it runs out).
class Bytes {
 public:
  Bytes(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  uint8_t next() { return i_ < n_ ? d_[i_++] : 0; }
  size_t pick(size_t n) { return n == 0 ? 0 : next() % n; }
  bool done() const { return i_ >= n_; }

 private:
  const uint8_t* d_;
  size_t n_, i_ = 0;
};

constexpr int64_t kBig = int64_t(1) << 62;
const int64_t kInts[] = {0, 1, 2, 3, 5, 8, -1, -2, -7, 64, int64_t(1) << 31, int64_t(1) << 32, kBig,
                         std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
const double kDoubles[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-310, 1e308, -1e308,
                           std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(), 3.0, 1e6};
const DType kDTypes[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int64,
                         DType::Int32,   DType::Bool,    DType::UInt8,   DType::Int8};

int64_t small_or_edge(Bytes& in) {
  uint8_t b = in.next();
  if (b < 192) return b % 6;  // mostly small sizes
  return kInts[b % (sizeof(kInts) / sizeof(kInts[0]))];
}

// A view of t's storage with fuzzed sizes, strides and offset (as_strided checks them).
Tensor restride(const Tensor& t, Bytes& in) {
  size_t rank = in.pick(5);
  std::vector<int64_t> sizes(rank), strides(rank);
  for (size_t i = 0; i < rank; ++i) {
    sizes[i] = small_or_edge(in);
    strides[i] = small_or_edge(in);
    if (in.next() & 1 && strides[i] > -64 && strides[i] < 64) strides[i] -= 2;  // negative and zero strides too
  }
  return t.as_strided(sizes, strides, small_or_edge(in));
}

void mutate(IValue& v, Bytes& in, const Device& other) {
  uint8_t kind = in.next() % 8;
  if (v.is_tensor()) {
    Tensor t = v.to_tensor();
    switch (kind) {
      case 0: t = restride(t, in); break;
      case 1: t = t.to(kDTypes[in.pick(sizeof(kDTypes) / sizeof(kDTypes[0]))]); break;
      case 2: t = t.to(other); break;
      case 3: t = empty({small_or_edge(in) % 3, 0}, TensorOptions().dtype(t.dtype()).device(t.device())); break;
      case 4: t = t.numel() > 0 ? t.reshape({-1})[0] : t; break;  // a 0-d tensor
      case 5: t = t.transpose(0, -1); break;
      case 6:
        if (is_floating_point(t.dtype())) t = t.detach().requires_grad_();
        break;
      default: t = t.unsqueeze(static_cast<int64_t>(in.pick(3))); break;
    }
    v = IValue(t);
  } else if (v.is_int()) {
    v = IValue(kInts[in.pick(sizeof(kInts) / sizeof(kInts[0]))]);
  } else if (v.is_double()) {
    v = IValue(kDoubles[in.pick(sizeof(kDoubles) / sizeof(kDoubles[0]))]);
  } else if (v.is_bool()) {
    v = IValue(!v.to_bool());
  } else if (v.is_int_list()) {
    std::vector<int64_t> l = v.to_int_list();
    if (kind < 3 && !l.empty()) {
      l[in.pick(l.size())] = kInts[in.pick(sizeof(kInts) / sizeof(kInts[0]))];
    } else if (kind < 5) {
      l.push_back(small_or_edge(in));
    } else if (!l.empty()) {
      l.pop_back();
    }
    v = IValue(l);
  } else if (v.is_tensor_list()) {
    std::vector<Tensor> l = v.to_tensor_list();
    if (!l.empty()) {
      IValue item(l[in.pick(l.size())]);
      mutate(item, in, other);
      l[in.pick(l.size())] = item.to_tensor();
    }
    v = IValue(l);
  }
}

// Reads every tensor output back to the host (NPU work runs and reports here).
void consume(const IValue& v) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    if (t.defined() && t.numel() <= (int64_t(1) << 22)) (void)t.cpu();
  } else if (v.is_tensor_list()) {
    for (const Tensor& t : v.to_tensor_list()) consume(IValue(t));
  }
}

// Saturates at INT64_MAX (one view may already hold that many elements).
int64_t total_input_elements(const Stack& args) {
  int64_t n = 0;
  auto add = [&n](const Tensor& t) {
    if (t.defined() && __builtin_add_overflow(n, t.numel(), &n)) n = INT64_MAX;
  };
  for (const IValue& v : args) {
    if (v.is_tensor()) add(v.to_tensor());
    if (v.is_tensor_list())
      for (const Tensor& t : v.to_tensor_list()) add(t);
  }
  return n;
}

// OP_CALL_FUZZ_TRACE=1 prints each call before it runs (to triage a finding: replay its input).
void describe(const IValue& v) {
  auto tensor = [](const Tensor& t) {
    if (!t.defined()) return std::string("undefined");
    std::ostringstream os;
    os << t.dtype() << t.sizes_ref() << " strides " << t.strides_ref() << " offset " << t.storage_offset() << " on "
       << t.device().str() << (t.requires_grad() ? " requires_grad" : "");
    return os.str();
  };
  std::ostringstream os;
  if (v.is_tensor()) os << tensor(v.to_tensor());
  else if (v.is_tensor_list())
    for (const Tensor& t : v.to_tensor_list()) os << "[" << tensor(t) << "]";
  else if (v.is_int_list()) os << IntArrayRef(v.to_int_list());
  else if (v.is_int()) os << v.to_int();
  else if (v.is_double()) os << v.to_double();
  else if (v.is_bool()) os << (v.to_bool() ? "true" : "false");
  else if (v.is_string()) os << '"' << v.to_string() << '"';
  else os << "(other)";
  std::fprintf(stderr, "  %s\n", os.str().c_str());
}

// The elements of the broadcast of all tensor arguments' shapes (dims aligned from the right,
// the largest size of each), saturating: what an elementwise op computes over.
int64_t broadcast_elements(const Stack& args) {
  std::vector<int64_t> dims;
  auto add = [&dims](const Tensor& t) {
    if (!t.defined()) return;
    IntArrayRef s = t.sizes_ref();
    if (s.size() > dims.size()) dims.insert(dims.begin(), s.size() - dims.size(), 1);
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& d = dims[dims.size() - s.size() + i];
      d = std::max(d, s[i]);
    }
  };
  for (const IValue& v : args) {
    if (v.is_tensor()) add(v.to_tensor());
    if (v.is_tensor_list())
      for (const Tensor& t : v.to_tensor_list()) add(t);
  }
  int64_t n = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;
  return n;
}

void run(const uint8_t* data, size_t size) {
  static const std::vector<const testing::OpInfo*> infos = testing::all_op_infos();
  Bytes in(data, size);
  const testing::OpInfo* info = infos[in.pick(infos.size())];
  DType dt = info->dtypes[in.pick(info->dtypes.size())];
  std::vector<testing::Sample> samples = info->samples(dt);
  if (samples.empty()) return;
  Stack args = samples[in.pick(samples.size())].args;
  const bool on_npu = in.next() & 1;
  const Device npu0("npu:0"), cpu;
  if (on_npu)
    for (IValue& v : args)
      if (v.is_tensor() && v.to_tensor().defined()) v = IValue(v.to_tensor().to(npu0));
  size_t mutations = in.pick(4);
  for (size_t m = 0; m < mutations && !args.empty(); ++m) mutate(args[in.pick(args.size())], in, on_npu ? cpu : npu0);
  // Views with huge sizes are legal when they alias little memory; computing over them would be
  // slow, not wrong: such calls are left out. 2^18 elements keeps the slowest op (an integer
  // matmul of two 256K-element operands, naive, under ASan) well inside the 10 s timeout.
  if (total_input_elements(args) > (int64_t(1) << 18)) return;
  // Broadcasting small inputs may still make a big output (gelu_backward of [130, 257, 1] and
  // [257, 130]: 4.3M float64 elements, differentiated, took 5 s under ASan).
  if (broadcast_elements(args) > (int64_t(1) << 20)) return;
  static const bool trace = std::getenv("OP_CALL_FUZZ_TRACE") != nullptr;
  if (trace) {
    std::fprintf(stderr, "op_call_fuzz: %s\n", info->name.c_str());
    for (const IValue& v : args) describe(v);
  }
  Stack out = args;
  Dispatcher::singleton().find_schema(info->name).call_boxed(&out);
  for (const IValue& v : out) consume(v);
  if (!out.empty() && out[0].is_tensor()) {
    const Tensor& r = out[0].to_tensor();
    if (r.defined() && r.requires_grad() && r.numel() <= 4096 && is_floating_point(r.dtype())) {
      r.sum().backward();
      for (const IValue& v : args)
        if (v.is_tensor() && v.to_tensor().defined() && v.to_tensor().grad().defined()) consume(IValue(v.to_tensor().grad()));
    }
  }
}

}  // namespace

// A host allocation above 2 GiB fails (ember then throws OutOfMemoryError, as on a machine without
// the memory) instead of being a libFuzzer out-of-memory finding: ops may legitimately be asked for
// gigabytes (embedding_backward with num_weights = 2^32). ASAN_OPTIONS still overrides each flag.
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:max_allocation_size_mb=2048";
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("EMBER_NPU_MEMORY", "1G", 0);  // a small device: huge requests fail fast
  setenv("EMBER_NPU_DEVICES", "1", 0);
  return 0;
}

// Runs f: an ember::Error is a fine outcome, except a kernel fault other than an index out of range.
template <class F>
void expect_error_or_success(F&& f) {
  try {
    f();
  } catch (const IndexError&) {
    // Indices are device data: like a CUDA device-side assert, an index out of range can only be
    // seen by the kernel, which reports it as an IndexError at the next synchronize.
  } catch (const Error& e) {
    // Any other kernel fault means phase 1 let through something the kernel could not run.
    if (std::string(e.what()).find("kernel fault") != std::string::npos) {
      std::fprintf(stderr, "op_call_fuzz: %s\n", e.what());
      std::abort();
    }
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  expect_error_or_success([&] { run(data, size); });
  // What the call left queued (outputs too big to read back, work before a throw) finishes here,
  // so its time and its faults are charged to this input, not to the next one.
  expect_error_or_success([] { npu::synchronize(); });
  return 0;
}
