// Max pooling, oneDNN's against ember's: forward (with the argmax) and backward of a 3x3 /
// stride 2 / padding 1 max pool over [32, 64, 112, 112] fp32 (a CNN stem's), on the CPU.
// oneDNN on plain NCHW and on its blocked layout (with the reorders a NCHW caller pays); ember's
// max_pool2d_with_indices and max_pool2d_with_indices_backward (its loops, with libtorch's int64
// indices), and ember's max_pool2d with autograd (oneDNN's kernels, plus the NaN scan of the
// input that decides whether they may run). Built when oneDNN is found:
//   build/bench/onednn_pool_bench
#include <benchmark/benchmark.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include "ember/ember.h"

namespace {
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;
const dnnl::memory::dims kSrc{32, 64, 112, 112}, kDst{32, 64, 56, 56};

void onednn_max_pool(benchmark::State& state, bool blocked) {
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  std::vector<float> x(32 * 64 * 112 * 112), gy(32 * 64 * 56 * 56, 1.f), gx(x.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000.f;
  dnnl::memory::dims k{3, 3}, st{2, 2}, pad{1, 1}, dil{0, 0};
  auto src_md = dnnl::memory::desc(kSrc, dt::f32, blocked ? tag::nChw16c : tag::nchw);
  auto dst_md = dnnl::memory::desc(kDst, dt::f32, blocked ? tag::any : tag::nchw);
  auto fpd = dnnl::pooling_v2_forward::primitive_desc(
      dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::pooling_max, src_md, dst_md,
                                     st, k, dil, pad, pad),
      eng);
  auto bpd = dnnl::pooling_v2_backward::primitive_desc(
      dnnl::pooling_v2_backward::desc(dnnl::algorithm::pooling_max, fpd.src_desc(), fpd.dst_desc(), st, k, dil, pad, pad),
      eng, fpd);
  dnnl::memory ux({kSrc, dt::f32, tag::nchw}, eng, x.data()), ugy({kDst, dt::f32, tag::nchw}, eng, gy.data()),
      ugx({kSrc, dt::f32, tag::nchw}, eng, gx.data());
  dnnl::memory xm(fpd.src_desc(), eng), ym(fpd.dst_desc(), eng), ws(fpd.workspace_desc(), eng),
      gym(bpd.diff_dst_desc(), eng), gxm(bpd.diff_src_desc(), eng);
  dnnl::pooling_v2_forward fwd(fpd);
  dnnl::pooling_v2_backward bwd(bpd);
  auto step = [&] {
    if (blocked) dnnl::reorder(ux, xm).execute(s, ux, xm);
    fwd.execute(s, {{DNNL_ARG_SRC, blocked ? xm : ux}, {DNNL_ARG_DST, ym}, {DNNL_ARG_WORKSPACE, ws}});
    if (blocked) dnnl::reorder(ugy, gym).execute(s, ugy, gym);
    bwd.execute(s, {{DNNL_ARG_DIFF_DST, blocked ? gym : ugy}, {DNNL_ARG_DIFF_SRC, blocked ? gxm : ugx},
                    {DNNL_ARG_WORKSPACE, ws}});
    if (blocked) dnnl::reorder(gxm, ugx).execute(s, gxm, ugx);
    s.wait();
  };
  step();
  for (auto _ : state) step();
  state.SetLabel(fpd.impl_info_str());
}

void ember_max_pool(benchmark::State& state) {
  ember::manual_seed(0);
  ember::Tensor x = ember::randn({32, 64, 112, 112});
  ember::Tensor g = ember::ones({32, 64, 56, 56});
  auto step = [&] {
    auto [y, idx] = ember::max_pool2d_with_indices(x, {3}, {2}, {1});
    benchmark::DoNotOptimize(ember::max_pool2d_with_indices_backward(g, x, {3}, {2}, {1}, {1}, false, idx));
  };
  step();
  for (auto _ : state) step();
}

void ember_max_pool2d_autograd(benchmark::State& state) {
  ember::manual_seed(0);
  ember::Tensor x = ember::randn({32, 64, 112, 112}).requires_grad_();
  ember::Tensor g = ember::ones({32, 64, 56, 56});
  auto step = [&] {
    x.set_grad(ember::Tensor());
    ember::max_pool2d(x, {3}, {2}, {1}).backward(g);
  };
  step();
  for (auto _ : state) step();
  state.SetLabel(ember::max_pool2d(x, {3}, {2}, {1}).grad_fn()->name());
}
}  // namespace

BENCHMARK_CAPTURE(onednn_max_pool, nchw, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(onednn_max_pool, blocked_with_reorders, true)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(ember_max_pool)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(ember_max_pool2d_autograd)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
