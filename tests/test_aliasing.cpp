// Memory overlap between what an op writes and what it reads (Note [Write checks]): PyTorch's
// rules, on the CPU and the NPU, and a property test over every op that writes a tensor.
#include <random>

#include "ember/core/memory_overlap.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/library.h"
#include "ember/testing/op_info.h"
#include "npu_test_util.h"
#include "test_util.h"

using namespace ember;
using ember_test::expect_error;

namespace {

const char* const kDevices[] = {"cpu", "npu:0"};

Tensor range_on(int64_t n, const char* dev) { return arange(n).to(kFloat32).to(Device(dev)); }
std::vector<float> values(const Tensor& t) { return t.cpu().contiguous().to_vector<float>(); }

// ---------------------------------------------------------------- the geometry
MemLayout layout(uintptr_t addr, const Shape& sizes, const Shape& strides) {
  static std::vector<Shape> keep;  // the layouts view these
  keep.push_back(sizes);
  keep.push_back(strides);
  return {addr, 4, keep[keep.size() - 2], keep.back()};
}

TEST(MemoryOverlapGeometry, InternalOverlap) {
  EXPECT_FALSE(has_internal_overlap(layout(0, {3, 4}, {4, 1})));
  EXPECT_FALSE(has_internal_overlap(layout(0, {3, 4}, {1, 3})));       // transposed
  EXPECT_TRUE(has_internal_overlap(layout(0, {4}, {0})));              // expanded
  EXPECT_FALSE(has_internal_overlap(layout(0, {1, 4}, {0, 1})));       // stride 0 over size 1
  EXPECT_TRUE(has_internal_overlap(layout(0, {3, 3}, {1, 1})));        // as_strided folding
  EXPECT_FALSE(has_internal_overlap(layout(0, {3, 2}, {2, 3})));       // not nested, yet disjoint
  EXPECT_FALSE(has_internal_overlap(layout(0, {0, 4}, {0, 0})));       // empty
  EXPECT_FALSE(has_internal_overlap(layout(400, {4, 2}, {-2, 1})));    // negative stride
}

TEST(MemoryOverlapGeometry, BetweenLayouts) {
  // a[1:] vs a[:-1]: dense, shifted by one element
  EXPECT_EQ(get_overlap(layout(4, {9}, {1}), layout(0, {9}, {1})), MemOverlap::Partial);
  EXPECT_EQ(get_overlap(layout(0, {3, 3}, {3, 1}), layout(0, {3, 3}, {1, 3})), MemOverlap::Partial);
  EXPECT_EQ(get_overlap(layout(0, {3, 3}, {3, 1}), layout(0, {3, 3}, {3, 1})), MemOverlap::Full);
  EXPECT_EQ(get_overlap(layout(0, {1, 4}, {7, 1}), layout(0, {4}, {1})), MemOverlap::Full);
  EXPECT_EQ(get_overlap(layout(0, {4}, {1}), layout(16, {4}, {1})), MemOverlap::No);
  // columns 0 and 1 of a [1000, 1000] matrix: interleaved, disjoint
  EXPECT_EQ(get_overlap(layout(0, {1000}, {1000}), layout(4, {1000}, {1000})), MemOverlap::No);
  // a[:, 1:] vs a[:, :-1] of [3, 4]: not dense, shared elements
  EXPECT_EQ(get_overlap(layout(4, {3, 3}, {4, 1}), layout(0, {3, 3}, {4, 1})), MemOverlap::Shared);
  // a[:, :2] vs a[:, 2:] of [3, 4]: not dense, disjoint
  EXPECT_EQ(get_overlap(layout(0, {3, 2}, {4, 1}), layout(8, {3, 2}, {4, 1})), MemOverlap::No);
  // even vs odd elements; even vs even shifted by two
  EXPECT_EQ(get_overlap(layout(0, {8}, {2}), layout(4, {8}, {2})), MemOverlap::No);
  EXPECT_EQ(get_overlap(layout(0, {8}, {2}), layout(8, {8}, {2})), MemOverlap::Shared);
  // an input broadcast from the written-to tensor's first element
  EXPECT_EQ(get_overlap(layout(0, {4}, {1}), layout(0, {4}, {0})), MemOverlap::Shared);
  // strides the search cannot use (two dims of one stride): enumeration decides
  EXPECT_EQ(get_overlap(layout(0, {2, 2}, {3, 3}), layout(4, {3}, {2})), MemOverlap::Shared);
  EXPECT_EQ(get_overlap(layout(0, {2, 2}, {4, 4}), layout(4, {2}, {2})), MemOverlap::No);
}

// Brute force over small random layouts: the exact answer from the address sets.
TEST(MemoryOverlapGeometry, MatchesBruteForce) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 3000; ++iter) {
    auto make = [&](Shape& sizes, Shape& strides, int64_t& off) {
      const int nd = pick(1, 3);
      sizes.assign(nd, 1);
      strides.assign(nd, 0);
      for (int d = 0; d < nd; ++d) {
        sizes[d] = pick(1, 4);
        strides[d] = pick(-1, 6);
      }
      off = pick(0, 12);
    };
    Shape sa, ta, sb, tb;
    int64_t oa, ob;
    make(sa, ta, oa);
    make(sb, tb, ob);
    auto addresses = [](const Shape& s, const Shape& t, int64_t off, std::vector<int64_t>* out) {
      std::vector<int64_t> idx(s.size(), 0);
      for (;;) {
        int64_t a = off;
        for (size_t d = 0; d < s.size(); ++d) a += idx[d] * t[d];
        out->push_back(a);
        size_t d = s.size();
        while (d-- > 0) {
          if (++idx[d] < s[d]) break;
          idx[d] = 0;
        }
        if (d == static_cast<size_t>(-1)) return;
      }
    };
    std::vector<int64_t> A, B;
    addresses(sa, ta, oa, &A);
    addresses(sb, tb, ob, &B);
    const uintptr_t base = 1 << 20;
    MemLayout la = layout(base + 4 * oa, sa, ta), lb = layout(base + 4 * ob, sb, tb);
    std::vector<int64_t> sorted_a = A;
    std::sort(sorted_a.begin(), sorted_a.end());
    EXPECT_EQ(has_internal_overlap(la), std::adjacent_find(sorted_a.begin(), sorted_a.end()) != sorted_a.end())
        << to_string(sa) << " " << to_string(ta);
    bool shared = false;
    for (int64_t b : B) shared |= std::binary_search(sorted_a.begin(), sorted_a.end(), b);
    const MemOverlap o = get_overlap(la, lb);
    if (!shared) {
      EXPECT_EQ(o, MemOverlap::No) << to_string(sa) << to_string(ta) << oa << " vs " << to_string(sb) << to_string(tb) << ob;
    } else {
      EXPECT_NE(o, MemOverlap::No) << to_string(sa) << to_string(ta) << oa << " vs " << to_string(sb) << to_string(tb) << ob;
      if (o == MemOverlap::Full) {
        EXPECT_EQ(A, B) << to_string(sa) << to_string(ta) << oa << " vs " << to_string(sb) << to_string(tb) << ob;
      }
    }
  }
}

// ---------------------------------------------------------------- the cases, on both devices
TEST(Aliasing, ShiftedInPlaceAddIsRefused) {
  for (const char* dev : kDevices) {
    Tensor a = range_on(10, dev);
    Tensor head = a.slice(0, 1, 10);
    expect_error<MemoryOverlapError>([&] { head.add_(a.slice(0, 0, 9)); },
                                     {"add_", "'other'", "'self'", "refer to a single memory location"});
    EXPECT_EQ(values(a), values(range_on(10, dev))) << dev << ": nothing was written";
  }
}

TEST(Aliasing, CopyFromOwnTransposeIsRefused) {
  for (const char* dev : kDevices) {
    Tensor b = range_on(9, dev).reshape({3, 3});
    expect_error<MemoryOverlapError>([&] { b.copy_(b.t()); }, {"copy_", "'src'", "strides [1, 3]"});
  }
}

TEST(Aliasing, InPlaceIntoExpandedViewIsRefusedButFillIsNot) {
  for (const char* dev : kDevices) {
    Tensor z = zeros({1}).to(Device(dev));
    Tensor e = z.expand({4});
    expect_error<MemoryOverlapError>([&] { e.add_(1); }, {"add_", "more than one element", "'self'"});
    expect_error<MemoryOverlapError>([&] { e.mul_(e); }, {"mul_"});
    expect_error<MemoryOverlapError>([&] { e.uniform_(); }, {"uniform_"});
    expect_error<MemoryOverlapError>([&] { e.copy_(range_on(4, dev)); }, {"copy_"});
    e.fill_(3);  // one value for every element: allowed, as in PyTorch
    EXPECT_EQ(values(z), std::vector<float>{3});
    e.zero_();
    EXPECT_EQ(values(z), std::vector<float>{0});
  }
}

TEST(Aliasing, IdenticalLayoutIsTheElementwiseInPlaceCase) {
  for (const char* dev : kDevices) {
    Tensor a = range_on(6, dev).reshape({2, 3});
    a.add_(a);
    EXPECT_EQ(values(a), (std::vector<float>{0, 2, 4, 6, 8, 10}));
    a.t().mul_(a.t());
    EXPECT_EQ(values(a), (std::vector<float>{0, 4, 16, 36, 64, 100}));
    a.copy_(a);
    EXPECT_EQ(values(a), (std::vector<float>{0, 4, 16, 36, 64, 100}));
  }
}

TEST(Aliasing, SharedElementsOfStridedViewsGiveTheUnaliasedResult) {
  for (const char* dev : kDevices) {
    // a[:, 1:] += a[:, :-1]: PyTorch computes what its loop order gives; here, the clone's answer
    Tensor a = range_on(12, dev).reshape({3, 4});
    a.slice(1, 1, 4).add_(a.slice(1, 0, 3));
    EXPECT_EQ(values(a), (std::vector<float>{0, 1, 3, 5, 4, 9, 11, 13, 8, 17, 19, 21})) << dev;
    // every row from row 0, broadcast: row 0 is read before any write
    Tensor b = range_on(12, dev).reshape({3, 4});
    b.copy_(b.select(0, 0).expand({3, 4}));
    EXPECT_EQ(values(b), (std::vector<float>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3})) << dev;
    // disjoint columns: no copy needed, and none made
    Tensor c = range_on(12, dev).reshape({3, 4});
    c.select(1, 0).copy_(c.select(1, 1));
    EXPECT_EQ(values(c), (std::vector<float>{1, 1, 2, 3, 5, 5, 6, 7, 9, 9, 10, 11})) << dev;
  }
}

TEST(Aliasing, AsStridedOutputThatFoldsOntoItselfIsRefused) {
  for (const char* dev : kDevices) {
    Tensor a = range_on(8, dev);
    Tensor folded = a.as_strided({3, 3}, {1, 1}, 0);
    expect_error<MemoryOverlapError>([&] { folded.add_(1); }, {"more than one element"});
    Tensor disjoint = a.as_strided({3, 2}, {2, 3}, 0);  // offsets 0 3 2 5 4 7: no element twice
    disjoint.add_(100);
    EXPECT_EQ(values(a), (std::vector<float>{100, 1, 102, 103, 104, 105, 6, 107})) << dev;
  }
}

TEST(Aliasing, OptimizerStepRefusesAParameterAliasingItsState) {
  Tensor p = ones({4});
  Tensor step = zeros({});
  auto op = Dispatcher::singleton().find_schema("ember::_adamw_step_");
  Stack s{IValue(p), IValue(p), IValue(zeros({4})), IValue(ones({4})), IValue(step), 0.1, 0.9, 0.999, 0.0, 1e-8};
  expect_error<MemoryOverlapError>([&] { op.call_boxed(&s); }, {"written-to tensors 'param'", "'exp_avg'"});
}

// A user's op is checked like a built-in one: the check is the dispatcher's, from the schema.
Tensor user_scale_into(const Tensor& out, const Tensor& x) {
  NoGradGuard ng;
  Tensor o = out;
  o.copy_(x.mul(2));
  return out;
}
TEST(Aliasing, UserOpsWithAnOutArgumentAreChecked) {
  Library lib(Library::Kind::Def, "alias_test");
  lib.def("scale_into(Tensor(a!) out, Tensor x) -> Tensor(a!)");
  Library cpu(Library::Kind::Impl, "alias_test", DispatchKey::CPU);
  cpu.impl("scale_into", &user_scale_into);
  auto op = Dispatcher::singleton().find_schema("alias_test::scale_into").typed<Tensor(const Tensor&, const Tensor&)>();
  Tensor a = range_on(5, "cpu");
  expect_error<MemoryOverlapError>([&] { op.call(a.slice(0, 1, 5), a.slice(0, 0, 4)); },
                                   {"alias_test::scale_into", "'x'", "'out'"});
  Stack boxed{IValue(a.slice(0, 1, 5)), IValue(a.slice(0, 0, 4))};
  expect_error<MemoryOverlapError>([&] { Dispatcher::singleton().call_boxed("alias_test::scale_into", boxed); },
                                   {"alias_test::scale_into"});
  Tensor m = range_on(8, "cpu");
  op.call(m.slice(0, 0, 8, 2), m.slice(0, 1, 8, 2));  // evens from odds: disjoint
  EXPECT_EQ(values(m), (std::vector<float>{2, 1, 6, 3, 10, 5, 14, 7}));
  Tensor r = range_on(8, "cpu");
  op.call(r.slice(0, 2, 8, 2), r.slice(0, 0, 6, 2));  // shared, strided: read from a snapshot
  EXPECT_EQ(values(r), (std::vector<float>{0, 1, 0, 3, 4, 5, 8, 7}));
}

TEST(Aliasing, AutogradThroughASnapshotReachesTheOriginal) {
  Tensor x = range_on(12, "cpu").reshape({3, 4}).requires_grad_();
  Tensor y = x.mul(1);
  y.add_(y.slice(1, 0, 1).expand({3, 4}));  // y[i, j] = x[i, j] + x[i, 0], column 0 read first
  EXPECT_EQ(values(y), (std::vector<float>{0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19}));
  y.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{5, 1, 1, 1, 5, 1, 1, 1, 5, 1, 1, 1}));
}

// The aclnn layer on its own: CANN's rule (complete overlap or none), as CANN clients meet it.
TEST(Aliasing, AclnnRefusesPartialOverlapOfOutAndAnInput) {
  using namespace npu_test;
  DevTensor buf({8}, {0, 1, 2, 3, 4, 5, 6, 7});
  const int64_t seven = 7, one = 1, eight = 8, four = 4, zero_stride = 0;
  aclTensor* head = aclCreateTensor(&seven, 1, ACL_FLOAT, &one, 1, ACL_FORMAT_ND, &eight, 1, buf.dev);
  aclTensor* tail = aclCreateTensor(&seven, 1, ACL_FLOAT, &one, 0, ACL_FORMAT_ND, &eight, 1, buf.dev);
  aclTensor* expanded = aclCreateTensor(&four, 1, ACL_FLOAT, &zero_stride, 0, ACL_FORMAT_ND, &eight, 1, buf.dev);
  float one_f = 1.0f;
  aclScalar* alpha = aclCreateScalar(&one_f, ACL_FLOAT);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  EXPECT_EQ(aclnnAddGetWorkspaceSize(head, tail, alpha, tail, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("overlap in part"), std::string::npos) << recent_error();
  EXPECT_EQ(aclnnInplaceCopyGetWorkspaceSize(tail, head, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclnnInplaceAddsGetWorkspaceSize(expanded, alpha, alpha, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("share one address"), std::string::npos) << recent_error();
  // the in-place form: the input is exactly the output
  ASSERT_EQ(aclnnInplaceAddGetWorkspaceSize(tail, tail, alpha, &ws, &ex), ACLNN_SUCCESS) << recent_error();
  ASSERT_EQ(aclnnInplaceAdd(nullptr, 0, ex, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(buf.read(), (std::vector<float>{0, 2, 4, 6, 8, 10, 12, 7}));
  // a GEMM reads all of its inputs while it writes: even an input that is exactly out is refused
  DevTensor sq({2, 2}, {1, 2, 3, 4}), other({2, 2}, {1, 0, 0, 1});
  EXPECT_EQ(aclnnMmGetWorkspaceSize(sq.t, other.t, sq.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent_error().find("are the same memory"), std::string::npos) << recent_error();
  for (aclTensor* t : {head, tail, expanded}) aclDestroyTensor(t);
  aclDestroyScalar(alpha);
}

// ---------------------------------------------------------------- the property test
// For every op that writes a tensor and has samples: the written-to argument and one other tensor
// argument of the same dtype become views of one storage in several relations; the call must give
// what the same call on clones gives, or MemoryOverlapError where PyTorch's rules refuse it.
struct Variant {
  const char* name;
  bool refused;  // PyTorch's rules refuse it (for a written-to tensor with elements to alias)
};

Tensor random_base(int64_t n, DType dtype, Device dev, uint64_t seed) {
  manual_seed(seed);
  return (rand({n}) * 2 + 0.5).to(dtype).to(dev);
}

// Views (out, in) of one storage in relation `v`; false when the shapes do not allow it.
bool make_pair(const std::string& v, const Shape& so, const Shape& si, DType dt, Device dev, Tensor* out, Tensor* in,
               Tensor* storage, uint64_t seed) {
  const int64_t no = numel_of(so), ni = numel_of(si);
  if (no == 0 || ni == 0) return false;
  auto cstrides = [](const Shape& s) {
    DimVector d = contiguous_strides(s);
    return IntArrayRef(d).vec();
  };
  const Shape co = cstrides(so), ci = cstrides(si);
  auto scaled = [](Shape s, int64_t k) {
    for (auto& x : s) x *= k;
    return s;
  };
  const int64_t n = 2 * std::max(no, ni) + 4;
  Tensor base = random_base(n, dt, dev, seed);
  *storage = base;
  if (v == "identical") {
    if (so != si) return false;
    *out = *in = base.as_strided(so, co, 0);
  } else if (v == "shifted") {  // dense, one element apart
    *out = base.as_strided(so, co, 0);
    *in = base.as_strided(si, ci, 1);
  } else if (v == "transposed") {
    if (so.size() != 2 || si != Shape{so[1], so[0]} || so[0] < 2 || so[1] < 2) return false;
    *out = base.as_strided(so, co, 0);
    *in = out->t();
  } else if (v == "expanded_out") {
    if (no < 2) return false;
    *out = base.as_strided(so, Shape(so.size(), 0), 0);
    *in = base.as_strided(si, ci, 1);
  } else if (v == "expanded_in") {  // the input broadcast from the output's first element
    if (ni < 2) return false;
    *out = base.as_strided(so, co, 0);
    *in = base.as_strided(si, Shape(si.size(), 0), 0);
  } else if (v == "interleaved") {  // evens and odds: no element shared
    *out = base.as_strided(so, scaled(co, 2), 0);
    *in = base.as_strided(si, scaled(ci, 2), 1);
  } else if (v == "interleaved_shifted") {  // evens and evens two further on
    *out = base.as_strided(so, scaled(co, 2), 0);
    *in = base.as_strided(si, scaled(ci, 2), 2);
  } else {
    return false;
  }
  return true;
}

bool close(const Tensor& a, const Tensor& b) {
  Tensor x = a.cpu().to(kFloat64).contiguous(), y = b.cpu().to(kFloat64).contiguous();
  if (x.sizes() != y.sizes()) return false;
  const auto u = x.to_vector<double>(), w = y.to_vector<double>();
  for (size_t i = 0; i < u.size(); ++i)
    if (!(std::abs(u[i] - w[i]) <= 1e-5 * (1 + std::abs(w[i]))) && !(std::isnan(u[i]) && std::isnan(w[i]))) return false;
  return true;
}

TEST(AliasingProperty, EveryWritingOpGivesTheUnaliasedResultOrRefuses) {
  const Variant variants[] = {{"identical", false},   {"shifted", true},     {"transposed", true},
                              {"expanded_out", true}, {"expanded_in", false}, {"interleaved", false},
                              {"interleaved_shifted", false}};
  int ops = 0, checked = 0, refused = 0;
  for (const std::string& name : Dispatcher::singleton().list_ops()) {
    OperatorHandle h = Dispatcher::singleton().find_schema(name);
    const auto& args = h.schema().arguments;
    std::vector<size_t> written;
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].is_mutable && args[i].type == ArgType::Tensor) written.push_back(i);
    const ember::testing::OpInfo* info = ember::testing::find_op_info(name);
    if (written.empty() || !info || !info->samples) continue;
    ++ops;
    const DType dt = info->dtypes.front();
    uint64_t seed = 1;
    for (const ember::testing::Sample& sample : info->samples(dt)) {
      for (size_t w : written) {
        for (size_t i = 0; i < sample.args.size(); ++i) {
          if (i == w || !sample.args[i].is_tensor() || !sample.args[w].is_tensor()) continue;
          const Tensor& sw = sample.args[w].to_tensor();
          const Tensor& si = sample.args[i].to_tensor();
          if (!sw.defined() || !si.defined() || sw.dtype() != si.dtype()) continue;
          for (const Variant& v : variants) {
            for (const char* devname : kDevices) {
              const Device dev(devname);
              Tensor out, in, base;
              ++seed;
              if (!make_pair(v.name, sw.sizes(), si.sizes(), sw.dtype(), dev, &out, &in, &base, seed)) continue;
              // The unaliased call: each argument in a storage of its own, in the same layout.
              Stack clean, aliased;
              for (size_t k = 0; k < sample.args.size(); ++k) {
                IValue a = sample.args[k];
                if (a.is_tensor() && a.to_tensor().defined()) a = IValue(a.to_tensor().to(dev));
                if (k == w) a = IValue(out);
                if (k == i) a = IValue(in);
                aliased.push_back(a);
                if (k == w || k == i) {
                  const Tensor& t = a.to_tensor();
                  clean.push_back(IValue(base.clone().as_strided(t.sizes(), t.strides(), t.storage_offset())));
                } else {
                  clean.push_back(a.is_tensor() && a.to_tensor().defined() ? IValue(a.to_tensor().clone()) : a);
                }
              }
              const Tensor clean_out = clean[w].to_tensor();
              bool clean_refused = false;
              try {
                h.call_boxed(&clean);
              } catch (const MemoryOverlapError&) {
                clean_refused = true;  // the written-to tensor alone (expanded) is refused
              } catch (const Error&) {
                continue;  // the shapes or layouts do not suit the op (a broadcast the other way, ...)
              }
              const bool idempotent_expand = std::string(v.name) == "expanded_out" && h.schema().writes_idempotent;
              const bool must_refuse = clean_refused || (v.refused && !idempotent_expand) ||
                                       (args[i].is_mutable && std::string(v.name) != "interleaved");
              try {
                h.call_boxed(&aliased);
              } catch (const MemoryOverlapError& e) {
                EXPECT_TRUE(must_refuse) << name << " " << v.name << " on " << devname << ": refused: " << e.what();
                ++refused;
                continue;
              }
              EXPECT_FALSE(must_refuse) << name << " (" << sample.desc << ") args " << w << "/" << i << " "
                                        << v.name << " on " << devname << ": PyTorch's rules refuse it";
              EXPECT_TRUE(close(out, clean_out))
                  << name << " (" << sample.desc << ") args " << w << "/" << i << " " << v.name << " on " << devname
                  << ":\n aliased  " << out.cpu() << "\n unaliased " << clean_out.cpu();
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GE(ops, 15) << "ops that write a tensor and have samples";
  EXPECT_GT(checked, 100);
  EXPECT_GT(refused, 100);
  std::printf("aliasing property: %d ops, %d aliased calls compared, %d refused\n", ops, checked, refused);
}

}  // namespace
