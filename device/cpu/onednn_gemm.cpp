// GEMM through oneDNN (when the build found it): ember's ISA cap handed to oneDNN, primitives
// cached per thread, and the bf16 probe. Without oneDNN the same functions say it is absent.
#include "ember/device/cpu/internal/onednn_gemm.h"

#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "ember/device/cpu/internal/onednn_engine.h"
#include "ember/device/cpu/isa.h"

namespace ember {
namespace cpu {

#ifdef EMBER_HAVE_ONEDNN
namespace {

// Hands ember's cap to oneDNN when oneDNN has none of its own; must run before oneDNN's first
// primitive (after that oneDNN refuses, and keeps what it chose).
void cap_onednn_isa() {
  const CpuInfo& ci = cpu_info();
  auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v && *v;
  };
  if (!ci.capped || set("ONEDNN_MAX_CPU_ISA") || set("DNNL_MAX_CPU_ISA")) return;
  dnnl::cpu_isa isa = dnnl::cpu_isa::all;
  switch (ci.cap) {
    case Isa::Baseline: isa = dnnl::cpu_isa::sse41; break;
    case Isa::Avx2: isa = dnnl::cpu_isa::avx2; break;
    case Isa::Avx512: isa = dnnl::cpu_isa::avx512_core; break;
    case Isa::Avx512Bf16: isa = dnnl::cpu_isa::avx512_core_bf16; break;
    case Isa::Amx: isa = dnnl::cpu_isa::all; break;
  }
  try {
    dnnl::set_max_cpu_isa(isa);
  } catch (const dnnl::error&) {
  }
}


dnnl::engine& dnnl_engine() { return onednn_engine(); }

using DnnlKey = Int64Key<14>;
struct DnnlEntry {
  bool ok = false;  // false: oneDNN refused this problem (remembered, not asked again)
  dnnl::matmul prim;
  dnnl::memory a, b, c;
};

dnnl::memory::data_type dnnl_type(DType t) {
  return t == DType::BFloat16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

dnnl::memory::desc desc_of(int64_t batch, const Matrix& x) {
  bool bcast = x.batch_stride == 0 && batch > 1;
  dnnl::memory::dims dims{bcast ? 1 : batch, x.rows, x.cols};
  dnnl::memory::dims strides{bcast ? x.rows * x.cols : (x.batch_stride ? x.batch_stride : x.rows * x.cols),
                             x.row_stride, x.col_stride};
  return dnnl::memory::desc(dims, dnnl_type(x.dtype), strides);
}

// Primitives and memory objects are cached per thread (memory objects carry the data handle).
DnnlEntry& dnnl_entry(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c) {
  thread_local std::unordered_map<DnnlKey, DnnlEntry, Int64KeyHash> cache;
  DnnlKey key{{static_cast<int64_t>(a.dtype), batch, a.rows, a.cols, b.cols, a.row_stride, a.col_stride,
               a.batch_stride, b.row_stride, b.col_stride, b.batch_stride, c.row_stride, c.col_stride,
               c.batch_stride}};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() > 512) cache.clear();
  dnnl::engine& eng = dnnl_engine();
  DnnlEntry e;
  try {
    auto ad = desc_of(batch, a), bd = desc_of(batch, b), cd = desc_of(batch, c);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(ad, bd, cd), eng);
    e.prim = dnnl::matmul(pd);
    e.a = dnnl::memory(ad, eng, DNNL_MEMORY_NONE);
    e.b = dnnl::memory(bd, eng, DNNL_MEMORY_NONE);
    e.c = dnnl::memory(cd, eng, DNNL_MEMORY_NONE);
    e.ok = true;
  } catch (const dnnl::error&) {
    e.ok = false;  // the caller takes the staged fp32 path
  }
  return cache.emplace(key, std::move(e)).first->second;
}

}  // namespace

dnnl::engine& onednn_engine() {
  static dnnl::engine eng = [] {
    cap_onednn_isa();
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return eng;
}
dnnl::stream& onednn_stream() {
  thread_local dnnl::stream stream(onednn_engine());
  return stream;
}

bool onednn_available() { return true; }

// Whether this oneDNN builds a bf16 matmul on this CPU: asked once, by building a small one.
bool onednn_bf16_probe() {
  static const bool ok = [] {
    try {
      dnnl::memory::desc d({1, 32, 32}, dnnl::memory::data_type::bf16, {32 * 32, 32, 1});
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(d, d, d), dnnl_engine());
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return ok;
}

// False when oneDNN has no primitive for this problem (nothing was computed).
bool onednn_gemm(int64_t batch, const Matrix& a, const Matrix& b, const Matrix& c) {
  DnnlEntry& e = dnnl_entry(batch, a, b, c);
  if (!e.ok) return false;
  e.a.set_data_handle(a.data);
  e.b.set_data_handle(b.data);
  e.c.set_data_handle(c.data);
  dnnl::stream& stream = onednn_stream();
  e.prim.execute(stream, {{DNNL_ARG_SRC, e.a}, {DNNL_ARG_WEIGHTS, e.b}, {DNNL_ARG_DST, e.c}});
  stream.wait();
  return true;
}
std::string onednn_isa() {
  dnnl_engine();  // applies ember's cap first
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

#else  // no oneDNN

bool onednn_available() { return false; }
bool onednn_bf16_probe() { return false; }
bool onednn_gemm(int64_t, const Matrix&, const Matrix&, const Matrix&) { return false; }
std::string onednn_isa() { return "none"; }

#endif

}  // namespace cpu
}  // namespace ember
