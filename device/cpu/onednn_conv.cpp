// 2-D convolution through oneDNN (when the build found it): forward, backward data and backward
// weights primitives on oneDNN's own blocked layouts, with reorders from and to ember's
// contiguous NCHW / OIHW tensors. Primitive descriptors are cached per thread and problem; the
// reorders come from oneDNN's primitive cache. Without oneDNN every function answers "no".
//
// Plain NCHW layouts would save the reorders, but oneDNN then takes its GEMM-based convolution,
// which measured slower than ember's own im2col + GEMM here; the blocked direct kernels with the
// reorders measured 1.6x (fp32) and 2.4x (bf16) faster than im2col + GEMM on the Conv2d step of
// bench/cases.cpp (README, "Coming from libtorch").
#include <string>
#include <unordered_map>

#include "ember/device/cpu/internal/onednn_engine.h"
#include "ember/device/cpu/isa.h"
#include "ember/device/cpu/nn.h"

namespace ember {
namespace cpu {

#ifdef EMBER_HAVE_ONEDNN
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

memory::data_type dt_of(DType t) {
  return t == DType::BFloat16 ? memory::data_type::bf16 : memory::data_type::f32;
}

using Key = Int64Key<20>;
Key key_of(const Conv2dProblem& p) {
  const Window2d& w = p.win;
  return Key{{p.N, p.C, p.O, p.groups, w.kh, w.kw, w.dh, w.dw, w.ph, w.pw, w.sh, w.sw, w.h, w.w, w.oh, w.ow,
              static_cast<int64_t>(p.dtype), static_cast<int64_t>(p.bias_dtype), p.bias ? 1 : 0, 0}};
}

// The problem's descriptors: plain (ember's tensors) and "any" (for oneDNN to choose).
struct Descs {
  memory::desc x, w, y, b;              // plain
  memory::desc x_any, w_any, y_any;     // any
  memory::dims strides, dilates, pad_l, pad_r;
};
Descs descs_of(const Conv2dProblem& p) {
  const Window2d& w = p.win;
  const memory::data_type dt = dt_of(p.dtype);
  Descs d;
  memory::dims xd{p.N, p.C, w.h, w.w}, yd{p.N, p.O, w.oh, w.ow};
  memory::dims wd = p.groups > 1 ? memory::dims{p.groups, p.O / p.groups, p.C / p.groups, w.kh, w.kw}
                                 : memory::dims{p.O, p.C, w.kh, w.kw};
  d.x = memory::desc(xd, dt, Tag::nchw);
  d.y = memory::desc(yd, dt, Tag::nchw);
  d.w = memory::desc(wd, dt, p.groups > 1 ? Tag::goihw : Tag::oihw);
  d.b = memory::desc({p.O}, dt_of(p.bias_dtype), Tag::a);
  d.x_any = memory::desc(xd, dt, Tag::any);
  d.y_any = memory::desc(yd, dt, Tag::any);
  d.w_any = memory::desc(wd, dt, Tag::any);
  d.strides = {w.sh, w.sw};
  d.dilates = {w.dh - 1, w.dw - 1};
  d.pad_l = {w.ph, w.pw};
  // The right padding that makes oneDNN's output size PyTorch's (rows the last window does not
  // reach are not padding).
  d.pad_r = {(w.oh - 1) * w.sh + (w.kh - 1) * w.dh + 1 - w.h - w.ph, (w.ow - 1) * w.sw + (w.kw - 1) * w.dw + 1 - w.w - w.pw};
  return d;
}

struct Entry {
  bool ok = false;
  Descs d;
  dnnl::convolution_forward::primitive_desc fwd_pd;
  dnnl::convolution_forward fwd;
  bool bwd_tried = false, bwd_ok = false;
  dnnl::convolution_backward_data::primitive_desc bd_pd;
  dnnl::convolution_backward_data bd;
  dnnl::convolution_backward_weights::primitive_desc bw_pd;
  dnnl::convolution_backward_weights bw;
};

dnnl::convolution_forward::desc fwd_desc(const Conv2dProblem& p, const Descs& d) {
  if (p.bias)
    return dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                           d.x_any, d.w_any, d.b, d.y_any, d.strides, d.dilates, d.pad_l, d.pad_r);
  return dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                         d.x_any, d.w_any, d.y_any, d.strides, d.dilates, d.pad_l, d.pad_r);
}

Entry& entry_of(const Conv2dProblem& p) {
  thread_local std::unordered_map<Key, Entry, Int64KeyHash> cache;
  Key k = key_of(p);
  auto it = cache.find(k);
  if (it != cache.end()) return it->second;
  if (cache.size() > 256) cache.clear();
  Entry e;
  e.d = descs_of(p);
  try {
    e.fwd_pd = dnnl::convolution_forward::primitive_desc(fwd_desc(p, e.d), onednn_engine());
    e.fwd = dnnl::convolution_forward(e.fwd_pd);
    e.ok = true;
  } catch (const dnnl::error&) {
    e.ok = false;  // the caller takes im2col + GEMM
  }
  return cache.emplace(k, std::move(e)).first->second;
}

bool build_backward(const Conv2dProblem& p, Entry& e) {
  if (e.bwd_tried) return e.bwd_ok;
  e.bwd_tried = true;
  const Descs& d = e.d;
  try {
    dnnl::engine& eng = onednn_engine();
    e.bd_pd = dnnl::convolution_backward_data::primitive_desc(
        dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, d.x_any, d.w_any, d.y_any,
                                              d.strides, d.dilates, d.pad_l, d.pad_r),
        eng, e.fwd_pd);
    e.bd = dnnl::convolution_backward_data(e.bd_pd);
    auto wdesc = p.bias ? dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, d.x_any,
                                                                  d.w_any, d.b, d.y_any, d.strides, d.dilates,
                                                                  d.pad_l, d.pad_r)
                        : dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, d.x_any,
                                                                  d.w_any, d.y_any, d.strides, d.dilates, d.pad_l,
                                                                  d.pad_r);
    e.bw_pd = dnnl::convolution_backward_weights::primitive_desc(wdesc, eng, e.fwd_pd);
    e.bw = dnnl::convolution_backward_weights(e.bw_pd);
    e.bwd_ok = true;
  } catch (const dnnl::error&) {
    e.bwd_ok = false;
  }
  return e.bwd_ok;
}

memory wrap(const memory::desc& d, const void* data) { return memory(d, onednn_engine(), const_cast<void*>(data)); }

// `user` in layout `want`: itself, or a reordered copy in scratch.
memory as_layout(memory user, const memory::desc& want, const ScratchAlloc& scratch) {
  if (user.get_desc() == want) return user;
  memory m(want, onednn_engine(), scratch(want.get_size()));
  dnnl::reorder(user, m).execute(onednn_stream(), user, m);
  return m;
}
// Where a primitive writes an output the user wants in `user`'s layout: `user` itself, or scratch
// to be reordered back with finish().
memory out_layout(const memory& user, const memory::desc& have, const ScratchAlloc& scratch) {
  if (user.get_desc() == have) return user;
  return memory(have, onednn_engine(), scratch(have.get_size()));
}
void finish(memory written, memory user) {
  if (written.get_data_handle() != user.get_data_handle())
    dnnl::reorder(written, user).execute(onednn_stream(), written, user);
}

}  // namespace

bool onednn_conv2d_supported(DType dtype) {
  if (dtype != DType::Float32 && dtype != DType::BFloat16) return false;
  // bf16 only where the CPU has bf16 dot products under ember's cap (elsewhere oneDNN would
  // emulate them, or refuse).
  if (dtype == DType::BFloat16 && !cpu_has(Isa::Avx512Bf16)) return false;
  // A probe: oneDNN must give a jitted direct kernel, not its reference loops (asked once per dtype).
  auto probe = [](DType t) {
    try {
      Conv2dProblem p{2, 16, 16, 1, Window2d{3, 3, 1, 1, 1, 1, 1, 1, 8, 8, 8, 8}, t, DType::Float32, true};
      Descs d = descs_of(p);
      dnnl::convolution_forward::primitive_desc pd(fwd_desc(p, d), onednn_engine());
      std::string impl = pd.impl_info_str();
      return impl.find("ref") == std::string::npos;
    } catch (const dnnl::error&) {
      return false;
    }
  };
  if (dtype == DType::Float32) {
    static const bool f32 = probe(DType::Float32);
    return f32;
  }
  static const bool bf16 = probe(DType::BFloat16);
  return bf16;
}

bool onednn_conv2d(const Conv2dProblem& p, void* y, const void* x, const void* weight, const void* bias,
                   const ScratchAlloc& scratch) {
  Entry& e = entry_of(p);
  if (!e.ok) return false;
  const Descs& d = e.d;
  memory xu = wrap(d.x, x), wu = wrap(d.w, weight), yu = wrap(d.y, y);
  memory xm = as_layout(xu, e.fwd_pd.src_desc(), scratch), wm = as_layout(wu, e.fwd_pd.weights_desc(), scratch);
  memory ym = out_layout(yu, e.fwd_pd.dst_desc(), scratch);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym}};
  if (p.bias) args.emplace(DNNL_ARG_BIAS, wrap(d.b, bias));
  dnnl::stream& s = onednn_stream();
  e.fwd.execute(s, args);
  finish(ym, yu);
  s.wait();
  return true;
}

bool onednn_conv2d_backward(const Conv2dProblem& p, void* dx, void* dweight, void* dbias, const void* dy,
                            const void* x, const void* weight, const ScratchAlloc& scratch) {
  Entry& e = entry_of(p);
  if (!e.ok || !build_backward(p, e)) return false;
  const Descs& d = e.d;
  dnnl::stream& s = onednn_stream();
  memory dyu = wrap(d.y, dy);
  memory dy_data;  // dy in the backward-data layout, reused by backward weights when they agree
  if (dx) {
    memory dxu = wrap(d.x, dx), wu = wrap(d.w, weight);
    dy_data = as_layout(dyu, e.bd_pd.diff_dst_desc(), scratch);
    memory wm = as_layout(wu, e.bd_pd.weights_desc(), scratch);
    memory dxm = out_layout(dxu, e.bd_pd.diff_src_desc(), scratch);
    e.bd.execute(s, {{DNNL_ARG_DIFF_DST, dy_data}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DIFF_SRC, dxm}});
    finish(dxm, dxu);
  }
  if (dweight || dbias) {
    memory xu = wrap(d.x, x);
    memory dym = dx && dy_data.get_desc() == e.bw_pd.diff_dst_desc() ? dy_data
                                                                      : as_layout(dyu, e.bw_pd.diff_dst_desc(), scratch);
    memory xm = as_layout(xu, e.bw_pd.src_desc(), scratch);
    // oneDNN computes both; a gradient nobody asked for goes to scratch.
    memory dwu = wrap(d.w, dweight ? dweight : scratch(d.w.get_size()));
    memory dwm = out_layout(dwu, e.bw_pd.diff_weights_desc(), scratch);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, xm}, {DNNL_ARG_DIFF_DST, dym}, {DNNL_ARG_DIFF_WEIGHTS, dwm}};
    if (p.bias) args.emplace(DNNL_ARG_DIFF_BIAS, wrap(d.b, dbias ? dbias : scratch(d.b.get_size())));
    e.bw.execute(s, args);
    if (dweight) finish(dwm, dwu);
  }
  s.wait();
  return true;
}

#else  // no oneDNN

bool onednn_conv2d_supported(DType) { return false; }
bool onednn_conv2d(const Conv2dProblem&, void*, const void*, const void*, const void*, const ScratchAlloc&) {
  return false;
}
bool onednn_conv2d_backward(const Conv2dProblem&, void*, void*, void*, const void*, const void*, const void*,
                            const ScratchAlloc&) {
  return false;
}

#endif

}  // namespace cpu
}  // namespace ember
