// Max pooling through oneDNN (when the build found it): forward training (values and oneDNN's
// argmax workspace) and backward from that workspace, on ember's contiguous NCHW tensors (plain
// layouts: oneDNN's jitted NCHW kernels need no reorders). Primitives are cached per thread and
// problem. Without oneDNN, or for a dtype / problem oneDNN only has reference loops for, the
// workspace size is -1 and the caller keeps ember's own loops (device/cpu/pool.cpp).
//
// On the pooling step of bench/onednn_pool.cpp (3x3 / stride 2 / padding 1 over
// [32, 64, 112, 112] fp32) oneDNN's NCHW kernels measured 5x faster than ember's loops with
// libtorch's int64 indices.
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>

#include "ember/core/error.h"
#include "ember/device/cpu/internal/onednn_engine.h"
#include "ember/device/cpu/isa.h"
#include "ember/device/cpu/pool.h"
#include "ember/device/parallel.h"

namespace ember {
namespace cpu {

// A NaN is a float whose exponent bits are all ones and whose mantissa is not zero: in float32
// bits (u & 0x7fffffff) > 0x7f800000, in bfloat16 bits (u & 0x7fff) > 0x7f80.
bool has_nan(const void* data, int64_t n, DType dtype) {
  EMBER_ASSERT(dtype == DType::Float32 || dtype == DType::BFloat16, "has_nan: float32 or bfloat16, got ", dtype);
  std::atomic<bool> found{false};
  parallel_for(n, 65536, [&](int64_t b, int64_t e) {
    int any = 0;
    if (dtype == DType::Float32) {
      const uint32_t* p = static_cast<const uint32_t*>(data);
      for (int64_t i = b; i < e; ++i) any |= (p[i] & 0x7fffffffu) > 0x7f800000u;
    } else {
      const uint16_t* p = static_cast<const uint16_t*>(data);
      for (int64_t i = b; i < e; ++i) any |= (p[i] & 0x7fffu) > 0x7f80u;
    }
    if (any) found.store(true, std::memory_order_relaxed);
  });
  return found.load();
}

#ifdef EMBER_HAVE_ONEDNN
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

using Key = Int64Key<16>;
Key key_of(const MaxPool2dProblem& p) {
  const Pool2d& g = p.g;
  return Key{{p.N, p.C, g.h, g.w, g.oh, g.ow, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw,
              static_cast<int64_t>(p.dtype), 0}};
}

struct Entry {
  bool ok = false;
  memory::desc x, y;
  dnnl::pooling_v2_forward::primitive_desc fwd_pd;
  dnnl::pooling_v2_forward fwd, infer;  // training (with the workspace) and inference
  dnnl::pooling_v2_backward bwd;
};

// The right padding that makes oneDNN's output size PyTorch's (ceil_mode's last window may reach
// past the left-padded input; taps outside the input never win a max).
memory::dims pad_right(const Pool2d& g) {
  return {(g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.h - g.ph,
          (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.w - g.pw};
}

Entry& entry_of(const MaxPool2dProblem& p) {
  thread_local std::unordered_map<Key, Entry, Int64KeyHash> cache;
  const Key k = key_of(p);
  auto it = cache.find(k);
  if (it != cache.end()) return it->second;
  if (cache.size() > 256) cache.clear();
  Entry e;
  const Pool2d& g = p.g;
  const memory::data_type dt = p.dtype == DType::BFloat16 ? memory::data_type::bf16 : memory::data_type::f32;
  e.x = memory::desc({p.N, p.C, g.h, g.w}, dt, Tag::nchw);
  e.y = memory::desc({p.N, p.C, g.oh, g.ow}, dt, Tag::nchw);
  const memory::dims strides{g.sh, g.sw}, kernel{g.kh, g.kw}, dilation{g.dh - 1, g.dw - 1}, pad_l{g.ph, g.pw},
      pad_r = pad_right(g);
  try {
    dnnl::engine& eng = onednn_engine();
    auto forward = [&](dnnl::prop_kind kind) {
      return dnnl::pooling_v2_forward::primitive_desc(
          dnnl::pooling_v2_forward::desc(kind, dnnl::algorithm::pooling_max, e.x, e.y, strides, kernel, dilation, pad_l,
                                         pad_r),
          eng);
    };
    e.fwd_pd = forward(dnnl::prop_kind::forward_training);
    auto infer_pd = forward(dnnl::prop_kind::forward_inference);
    auto bwd_pd = dnnl::pooling_v2_backward::primitive_desc(
        dnnl::pooling_v2_backward::desc(dnnl::algorithm::pooling_max, e.x, e.y, strides, kernel, dilation, pad_l,
                                        pad_r),
        eng, e.fwd_pd);
    // Reference loops would be slower than ember's own.
    bool jitted = true;
    for (const char* impl : {e.fwd_pd.impl_info_str(), infer_pd.impl_info_str(), bwd_pd.impl_info_str()})
      jitted = jitted && std::string(impl).find("ref") == std::string::npos;
    if (jitted) {
      e.fwd = dnnl::pooling_v2_forward(e.fwd_pd);
      e.infer = dnnl::pooling_v2_forward(infer_pd);
      e.bwd = dnnl::pooling_v2_backward(bwd_pd);
      e.ok = true;
    }
  } catch (const dnnl::error&) {
    e.ok = false;
  }
  return cache.emplace(k, std::move(e)).first->second;
}

Entry& checked_entry(const MaxPool2dProblem& p) {
  Entry& e = entry_of(p);
  EMBER_ASSERT(e.ok, "onednn_max_pool2d: oneDNN has no kernel for this problem (ask onednn_max_pool2d_workspace)");
  return e;
}
memory wrap(const memory::desc& d, const void* data) { return memory(d, onednn_engine(), const_cast<void*>(data)); }

}  // namespace

int64_t onednn_max_pool2d_workspace(const MaxPool2dProblem& p) {
  if (p.dtype != DType::Float32 && p.dtype != DType::BFloat16) return -1;
  // bf16 pooling needs avx512_core under ember's cap (oneDNN's AVX2 kernels are fp32 only).
  if (p.dtype == DType::BFloat16 && !cpu_has(Isa::Avx512)) return -1;
  if (p.N <= 0 || p.C <= 0 || p.g.oh <= 0 || p.g.ow <= 0) return -1;
  Entry& e = entry_of(p);
  if (!e.ok) return -1;
  return static_cast<int64_t>(e.fwd_pd.workspace_desc().get_size());
}

void onednn_max_pool2d(const MaxPool2dProblem& p, void* y, void* ws, const void* x) {
  Entry& e = checked_entry(p);
  PoolReservation pool;
  dnnl::stream& s = onednn_stream();
  if (ws)
    e.fwd.execute(s, {{DNNL_ARG_SRC, wrap(e.x, x)}, {DNNL_ARG_DST, wrap(e.y, y)},
                      {DNNL_ARG_WORKSPACE, wrap(e.fwd_pd.workspace_desc(), ws)}});
  else
    e.infer.execute(s, {{DNNL_ARG_SRC, wrap(e.x, x)}, {DNNL_ARG_DST, wrap(e.y, y)}});
  s.wait();
}

void onednn_max_pool2d_backward(const MaxPool2dProblem& p, void* gx, const void* gy, const void* ws) {
  Entry& e = checked_entry(p);
  PoolReservation pool;
  dnnl::stream& s = onednn_stream();
  e.bwd.execute(s, {{DNNL_ARG_DIFF_DST, wrap(e.y, gy)}, {DNNL_ARG_DIFF_SRC, wrap(e.x, gx)},
                    {DNNL_ARG_WORKSPACE, wrap(e.fwd_pd.workspace_desc(), ws)}});
  s.wait();
}

#else  // no oneDNN

int64_t onednn_max_pool2d_workspace(const MaxPool2dProblem&) { return -1; }
void onednn_max_pool2d(const MaxPool2dProblem&, void*, void*, const void*) {
  EMBER_ASSERT(false, "onednn_max_pool2d: this build has no oneDNN");
}
void onednn_max_pool2d_backward(const MaxPool2dProblem&, void*, const void*, const void*) {
  EMBER_ASSERT(false, "onednn_max_pool2d_backward: this build has no oneDNN");
}

#endif

}  // namespace cpu
}  // namespace ember
