#include "ember/nn/amp/autocast.h"

#include <unordered_map>

#include "ember/autograd/grad_mode.h"
#include "ember/device/cpu/packed_gemm.h"
#include "ember/dispatch/library.h"
#include "ember/ops/internal/gemm_decls.h"
#include "ember/ops/ops.h"

namespace ember {
namespace amp {
namespace {

struct CacheEntry {
  Tensor source;  // held, so its address cannot be reused by another tensor while cached
  Tensor cast;
  DType to;
  uint32_t version;
  bool grad_mode;  // a cast made under NoGradGuard has no history: not reused with grad on
};

struct State {
  bool enabled[2] = {false, false};
  DType dtype[2] = {DType::BFloat16, DType::BFloat16};
  int depth = 0;
  std::unordered_map<const TensorImpl*, CacheEntry> cache;    // weights cast to the lower dtype
  std::unordered_map<const TensorImpl*, CacheEntry> rounded;  // f32 weights rounded to it (_round_to)
};
State& state() {
  static thread_local State s;
  return s;
}
int slot(DeviceType t) { return t == DeviceType::CPU ? 0 : 1; }


// The device type a call runs on: that of its first tensor argument.
bool call_device(const Stack& s, DeviceType* out) {
  for (const IValue& v : s) {
    if (v.is_tensor() && v.to_tensor().defined()) {
      *out = v.to_tensor().device().type();
      return true;
    }
    if (v.is_tensor_list() && !v.to_tensor_list().empty()) {
      *out = v.to_tensor_list().front().device().type();
      return true;
    }
  }
  return false;
}

// make(t), for a leaf that requires grad (a weight) made once per version, grad mode and dtype
// until the outermost guard exits.
template <class Make>
Tensor cached(std::unordered_map<const TensorImpl*, CacheEntry>& cache, const Tensor& t, DType to, Make&& make) {
  const bool cacheable = t.requires_grad() && t.is_leaf();
  if (cacheable) {
    auto it = cache.find(t.impl());
    if (it != cache.end() && it->second.version == t.version() && it->second.to == to &&
        it->second.grad_mode == autograd::is_grad_enabled())
      return it->second.cast;
  }
  Tensor c = make();
  if (cacheable) cache[t.impl()] = {t, c, to, t.version(), autograd::is_grad_enabled()};
  return c;
}

Tensor cast(const Tensor& t, DType to) {
  if (!t.defined() || !t.is_floating_point() || t.dtype() == to) return t;
  if (!is_reduced_float(to)) return t.to(to);
  return cached(state().cache, t, to, [&] { return t.to(to); });
}

template <class Fn>
void for_each_tensor(Stack* s, Fn&& fn) {
  for (IValue& v : *s) {
    if (v.is_tensor()) {
      v = IValue(fn(v.to_tensor()));
    } else if (v.is_tensor_list()) {
      std::vector<Tensor> l = v.to_tensor_list();
      for (Tensor& t : l) t = fn(t);
      v = IValue(l);
    }
  }
}

// Where the CPU's 16-bit GEMM computes in fp32 anyway (no bf16 units, or units that do not pay:
// ember's packed kernel on AVX2, oneDNN's fp32 GEMM on staged copies with AVX-512), linear and
// 2-D products run as _linear_rounded / _mm_rounded: the numbers of casting f32 operands to the
// lower dtype, with the casts folded into the GEMM's packing or staging, so no 16-bit copy of a
// weight is made each step (and none is kept for backward: the f32 weight is, and its gradient
// comes out in f32). Elsewhere, and for operands other than f32 or the lower dtype, the casts of
// AmpPolicy::Lower.
bool rounded_gemm(const std::string& op, const Stack& s, DType low) {
  if (!cpu::gemm_rounded_available() || (low == DType::BFloat16 && cpu::gemm_native_bf16())) return false;
  const bool linear = op == op::linear::name() || op == op::linear_bias::name();
  if (!linear && op != op::mm::name() && op != op::matmul::name()) return false;
  for (size_t i = 0; i < 2; ++i) {
    if (!s[i].is_tensor()) return false;
    const Tensor& t = s[i].to_tensor();
    if (!t.defined() || (t.dtype() != DType::Float32 && t.dtype() != low)) return false;
    if (!linear && t.dim() != 2) return false;
  }
  return true;
}

// Where the rounded GEMM stages its operands (AVX-512), an f32 weight is rounded once
// (_round_to, cached as casts are): the forward GEMM and the input gradient's read that copy in
// place, where each would round a staged copy of its own; the weight's gradient passes through
// it unchanged (it comes out of the GEMM rounded already). Where the GEMM rounds while packing
// (AVX2) this would only add a pass.
Tensor weight_operand(const Tensor& w, DType low) {
  if (w.dtype() != DType::Float32 || !cpu::gemm_rounded_stages()) return w;
  return cached(state().rounded, w, low, [&] { return _round_to(w, low); });
}

Tensor run_rounded(const std::string& op, const Stack& s, DType low) {
  const Tensor &a = s[0].to_tensor(), &b = s[1].to_tensor();
  if (op == op::mm::name() || op == op::matmul::name()) return _mm_rounded(a, b, low, low);
  Tensor y = _linear_rounded(a, weight_operand(b, low), low);
  if (op == op::linear_bias::name() && s[2].to_tensor().defined()) y = y + cast(s[2].to_tensor(), low);
  return y;
}

BoxedKernel kernel(AmpPolicy policy) {
  return [policy](const OperatorHandle& op, Stack* stack) {
    DeviceType dev;
    ExcludeDispatchKeyGuard below(DispatchKey::Autocast);
    if (call_device(*stack, &dev) && state().enabled[slot(dev)]) {
      DType low = state().dtype[slot(dev)];
      switch (policy) {
        case AmpPolicy::Lower:
          if (rounded_gemm(op.name(), *stack, low)) {
            (*stack)[0] = IValue(run_rounded(op.name(), *stack, low));
            stack->resize(1);
            return;
          }
          for_each_tensor(stack, [&](const Tensor& t) { return t.defined() && t.dtype() == DType::Float32 ? cast(t, low) : t; });
          break;
        case AmpPolicy::Float32:
          for_each_tensor(stack, [&](const Tensor& t) {
            return t.defined() && is_reduced_float(t.dtype()) ? cast(t, DType::Float32) : t;
          });
          break;
        case AmpPolicy::Keep:
          break;
        case AmpPolicy::Promote: {
          DType widest = DType::Float16;
          bool any = false;
          for_each_tensor(stack, [&](const Tensor& t) {
            if (t.defined() && t.is_floating_point()) {
              widest = any ? promote_types(widest, t.dtype()) : t.dtype();
              any = true;
            }
            return t;
          });
          if (any) for_each_tensor(stack, [&](const Tensor& t) { return cast(t, widest); });
          break;
        }
      }
    }
    op.call_boxed(stack);
  };
}

}  // namespace

AutocastGuard::AutocastGuard(DeviceType device, DType dtype, bool enabled) : device_(device) {
  EMBER_CHECK_DTYPE(!enabled || is_reduced_float(dtype), "AutocastGuard: the autocast dtype must be float16 or bfloat16, got ",
                    dtype);
  State& st = state();
  prev_enabled_ = st.enabled[slot(device)];
  prev_dtype_ = st.dtype[slot(device)];
  st.enabled[slot(device)] = enabled;
  if (enabled) st.dtype[slot(device)] = dtype;
  auto& tls = tls_dispatch_keys();
  prev_key_ = tls.included.has(DispatchKey::Autocast);
  if (st.enabled[0] || st.enabled[1]) tls.included = tls.included.add(DispatchKey::Autocast);
  ++st.depth;
}

AutocastGuard::~AutocastGuard() {
  State& st = state();
  st.enabled[slot(device_)] = prev_enabled_;
  st.dtype[slot(device_)] = prev_dtype_;
  auto& tls = tls_dispatch_keys();
  tls.included = prev_key_ ? tls.included.add(DispatchKey::Autocast) : tls.included.remove(DispatchKey::Autocast);
  if (--st.depth == 0) {  // the outermost guard drops the weight casts
    st.cache.clear();
    st.rounded.clear();
  }
}

bool is_autocast_enabled(DeviceType device) { return state().enabled[slot(device)]; }
DType autocast_dtype(DeviceType device) { return state().dtype[slot(device)]; }
size_t autocast_cache_size() { return state().cache.size() + state().rounded.size(); }

}  // namespace amp

// Every op declaring a policy (AmpPolicy, in its declaration: dispatch/op_decl.h) runs its
// policy's kernel under autocast; Note [Autocast policies] in autocast.h.
EMBER_LIBRARY_IMPL(_, Autocast, m) {
  m.fallback(KernelFunction::from_boxed(amp::kernel(AmpPolicy::Lower)), AmpPolicy::Lower);
  m.fallback(KernelFunction::from_boxed(amp::kernel(AmpPolicy::Float32)), AmpPolicy::Float32);
  m.fallback(KernelFunction::from_boxed(amp::kernel(AmpPolicy::Promote)), AmpPolicy::Promote);
}

}  // namespace ember
