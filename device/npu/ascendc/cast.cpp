// Cast of kernel_operator.h: dst = (D) src with AscendC::RoundMode. Floats narrowing to half or
// bfloat16_t round by the mode (CAST_NONE and CAST_RINT: to nearest even); floats to integers round
// by the mode and saturate; every other pair converts exactly or as C++ does.
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "ember/core/half.h"
#include "ember/device/cpu/strided.h"
#include "ember/device/npu/ascendc/include/ember_ascendc/abi.h"

namespace ember {
namespace npu {
namespace ascendc {
namespace {

enum Round { kNone = 0, kRint, kFloor, kCeil, kRound, kTrunc, kOdd };

double load(int code, const void* p, uint64_t i) {
  switch (code) {
    case EMBER_ASC_F32: return static_cast<const float*>(p)[i];
    case EMBER_ASC_F16: return static_cast<float>(static_cast<const Half*>(p)[i]);
    case EMBER_ASC_BF16: return static_cast<float>(static_cast<const BFloat16*>(p)[i]);
    case EMBER_ASC_I32: return static_cast<const int32_t*>(p)[i];
    case EMBER_ASC_I16: return static_cast<const int16_t*>(p)[i];
    case EMBER_ASC_U16: return static_cast<const uint16_t*>(p)[i];
    case EMBER_ASC_U32: return static_cast<const uint32_t*>(p)[i];
    case EMBER_ASC_I8: return static_cast<const int8_t*>(p)[i];
    case EMBER_ASC_U8: return static_cast<const uint8_t*>(p)[i];
    case EMBER_ASC_I64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    default: throw std::invalid_argument("Cast: dtype code " + std::to_string(code));
  }
}

double round_by(int mode, double v) {
  switch (mode) {
    case kFloor: return std::floor(v);
    case kCeil: return std::ceil(v);
    case kRound: return std::round(v);  // half away from zero
    case kTrunc: return std::trunc(v);
    default: return std::nearbyint(v);  // to nearest even
  }
}

template <class I>
I saturate(double v) {
  if (v != v) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// A float narrowed to a 16-bit float type S (Half, BFloat16) by mode.
template <class S>
S narrow(float x, int mode) {
  S r(x);  // nearest even
  const float back = static_cast<float>(r);
  if (mode == kNone || mode == kRint || back == x || x != x || std::isinf(back)) return r;
  // The neighbours of x among S's values: lo < x < hi.
  auto step = [](S s, bool up) {  // the next representable value towards +inf (up) or -inf
    const bool neg = (s.x & 0x8000u) != 0;
    S t = s;
    if ((s.x & 0x7FFFu) == 0) t.x = up ? 0x0001u : 0x8001u;
    else t.x = static_cast<uint16_t>((up != neg) ? s.x + 1 : s.x - 1);
    return t;
  };
  const S lo = back < x ? r : step(r, false), hi = back > x ? r : step(r, true);
  switch (mode) {
    case kFloor: return lo;
    case kCeil: return hi;
    case kTrunc: return x > 0 ? lo : hi;
    case kOdd: return (lo.x & 1u) ? lo : hi;
    default: {  // kRound: nearest, ties away from zero
      const double dl = x - static_cast<double>(static_cast<float>(lo)), dh = static_cast<double>(static_cast<float>(hi)) - x;
      if (dl < dh) return lo;
      if (dh < dl) return hi;
      return x > 0 ? hi : lo;
    }
  }
}

void store(int code, void* p, uint64_t i, double v, int mode, bool from_float) {
  switch (code) {
    case EMBER_ASC_F32: static_cast<float*>(p)[i] = static_cast<float>(v); return;
    case EMBER_ASC_F16: static_cast<Half*>(p)[i] = narrow<Half>(static_cast<float>(v), mode); return;
    case EMBER_ASC_BF16: static_cast<BFloat16*>(p)[i] = narrow<BFloat16>(static_cast<float>(v), mode); return;
    default: break;
  }
  if (from_float) v = round_by(mode, v);
  switch (code) {
    case EMBER_ASC_I32: static_cast<int32_t*>(p)[i] = saturate<int32_t>(v); return;
    case EMBER_ASC_I16: static_cast<int16_t*>(p)[i] = saturate<int16_t>(v); return;
    case EMBER_ASC_U16: static_cast<uint16_t*>(p)[i] = saturate<uint16_t>(v); return;
    case EMBER_ASC_U32: static_cast<uint32_t*>(p)[i] = saturate<uint32_t>(v); return;
    case EMBER_ASC_I8: static_cast<int8_t*>(p)[i] = saturate<int8_t>(v); return;
    case EMBER_ASC_U8: static_cast<uint8_t*>(p)[i] = saturate<uint8_t>(v); return;
    case EMBER_ASC_I64: static_cast<int64_t*>(p)[i] = saturate<int64_t>(v); return;
    default: throw std::invalid_argument("Cast: dtype code " + std::to_string(code));
  }
}

}  // namespace
}  // namespace ascendc
}  // namespace npu
}  // namespace ember

extern "C" void ember_ascendc_cast(int dst_dtype, void* dst, int src_dtype, const void* src, int round, uint64_t n) {
  using namespace ember::npu::ascendc;
  auto float_dtype = [](int code, ember::DType* t) {
    *t = code == EMBER_ASC_F32 ? ember::DType::Float32 : code == EMBER_ASC_F16 ? ember::DType::Float16 : ember::DType::BFloat16;
    return code == EMBER_ASC_F32 || code == EMBER_ASC_F16 || code == EMBER_ASC_BF16;
  };
  ember::DType st, dt;
  const bool from_float = float_dtype(src_dtype, &st);
  if (from_float && float_dtype(dst_dtype, &dt) && (round == kNone || round == kRint)) {  // vectorised
    ember::cpu::convert(src, st, 1, dst, dt, 1, static_cast<int64_t>(n));
    return;
  }
  for (uint64_t i = 0; i < n; ++i) store(dst_dtype, dst, i, load(src_dtype, src, i), round, from_float);
}
