// ember's Ascend C: Cast, Compare/Select, the reductions, and the synchronisation and debug calls
// (which the emulator runs in program order, checking that every WaitFlag has its SetFlag).
#pragma once

#include <mutex>

#include "ember_ascendc/tensor.h"

namespace AscendC {

// ---- Cast: dst = (D) src, rounded by round ----
template <class D, class S>
__aicore__ inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& round,
                            const uint32_t count) {
  const char* call = "Cast";
  D* d = dst.checked(call, "dst", count);
  const S* s = src.checked(call, "src", count);
  if (static_cast<const void*>(d) != static_cast<const void*>(s))
    detail::need_apart(call, "src", d, count * sizeof(D), s, count * sizeof(S));
  if (sizeof(D) != sizeof(S) && static_cast<const void*>(d) == static_cast<const void*>(s))
    detail::fail(call, "dst and src share their start but not their element size (", detail::TypeOf<D>::kName, " from ",
                 detail::TypeOf<S>::kName, "): they overlap in part");
  ember_ascendc_cast(detail::TypeOf<D>::kCode, d, detail::TypeOf<S>::kCode, s, static_cast<int>(round), count);
}

// ---- Compare: a bit per element into dst (uint8_t), Select: dst = bit ? src0 : src1 ----
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

namespace detail {
inline bool compare(CMPMODE m, double a, double b) {
  switch (m) {
    case CMPMODE::LT: return a < b;
    case CMPMODE::GT: return a > b;
    case CMPMODE::EQ: return a == b;
    case CMPMODE::LE: return a <= b;
    case CMPMODE::GE: return a >= b;
    default: return a != b;
  }
}
template <class T>
double value(T v) {
  return static_cast<double>(static_cast<float>(v));
}
inline double value(int32_t v) { return v; }
template <class T, class U, class Get>
void compare_into(const char* call, const LocalTensor<U>& dst, const LocalTensor<T>& src0, CMPMODE m, uint32_t count,
                  Get&& rhs) {
  need_type<T>(call, kFloat | bit(EMBER_ASC_I32), "half, float, int32_t");
  if (count * sizeof(T) % kRepeatBytes != 0)
    fail(call, count, " elements of ", TypeOf<T>::kName, " are ", count * sizeof(T),
         " bytes: Compare works on whole 256-byte repeats");
  uint8_t* d = reinterpret_cast<uint8_t*>(dst.checked(call, "dst", (count / 8 + sizeof(U) - 1) / sizeof(U)));
  const T* a = src0.checked(call, "src0", count);
  for (uint32_t i = 0; i < count; i += 8) {
    uint8_t byte = 0;
    for (uint32_t k = 0; k < 8; ++k) byte |= static_cast<uint8_t>(compare(m, value(a[i + k]), rhs(i + k)) << k);
    d[i / 8] = byte;
  }
}
}  // namespace detail

template <class T, class U>
__aicore__ inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                               CMPMODE cmpMode, uint32_t count) {
  const T* b = src1.checked("Compare", "src1", count);
  detail::compare_into("Compare", dst, src0, cmpMode, count, [&](uint32_t i) { return detail::value(b[i]); });
}
template <class T, class U>
__aicore__ inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                                     CMPMODE cmpMode, uint32_t count) {
  const double s = detail::value(src1Scalar);
  detail::compare_into("CompareScalar", dst, src0, cmpMode, count, [&](uint32_t) { return s; });
}

template <class T, class U>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              const LocalTensor<T>& src1, SELMODE selMode, uint32_t count) {
  const char* call = "Select";
  if (selMode != SELMODE::VSEL_TENSOR_TENSOR_MODE)
    detail::fail(call, "two tensors are selected with SELMODE::VSEL_TENSOR_TENSOR_MODE");
  T* d = dst.checked(call, "dst", count);
  const uint8_t* m = reinterpret_cast<const uint8_t*>(selMask.checked(call, "selMask", (count / 8 + sizeof(U) - 1) / sizeof(U)));
  const T* a = src0.checked(call, "src0", count);
  const T* b = src1.checked(call, "src1", count);
  for (uint32_t i = 0; i < count; ++i) d[i] = ((m[i / 8] >> (i % 8)) & 1) ? a[i] : b[i];
}
template <class T, class U>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              T src1, SELMODE selMode, uint32_t count) {
  const char* call = "Select";
  if (selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE)
    detail::fail(call, "a tensor and a scalar are selected with SELMODE::VSEL_TENSOR_SCALAR_MODE");
  T* d = dst.checked(call, "dst", count);
  const uint8_t* m = reinterpret_cast<const uint8_t*>(selMask.checked(call, "selMask", (count / 8 + sizeof(U) - 1) / sizeof(U)));
  const T* a = src0.checked(call, "src0", count);
  for (uint32_t i = 0; i < count; ++i) d[i] = ((m[i / 8] >> (i % 8)) & 1) ? a[i] : src1;
}

// ---- reductions of the first count elements into dst[0] (ReduceMax/Min: the index in dst[1]) ----
namespace detail {
template <class T>
void reduce(const char* call, int kind, const LocalTensor<T>& dst, const LocalTensor<T>& src,
            const LocalTensor<T>& work, int32_t count, bool index) {
  need_type<T>(call, kFloat, "half, float");
  need_count(call, count);
  if (count == 0) fail(call, "count is 0: there is nothing to reduce");
  T* d = dst.checked(call, "dst", index ? 2 : 1);
  const T* s = src.checked(call, "src", count);
  // The work buffer holds the per-repeat partial results on hardware: one element per repeat.
  const uint32_t repeats = (count * sizeof(T) + kRepeatBytes - 1) / kRepeatBytes;
  work.checked(call, "workLocal", std::min<uint32_t>(repeats, work.GetSize() ? work.GetSize() : 1));
  double acc = value(s[0]);
  uint32_t at = 0;
  for (int32_t i = 1; i < count; ++i) {
    const double v = value(s[i]);
    if (kind == 0) acc += v;
    else if ((kind == 1 && (v > acc || v != v)) || (kind == 2 && (v < acc || v != v))) {
      if (acc != acc) continue;
      acc = v;
      at = static_cast<uint32_t>(i);
    }
  }
  d[0] = static_cast<T>(static_cast<float>(acc));
  if (index) {
    T bits;
    static_assert(sizeof(T) <= sizeof(uint32_t), "index bits");
    uint32_t idx = at;
    std::memcpy(&bits, &idx, sizeof(T));
    d[1] = bits;
  }
}
}  // namespace detail
template <class T>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& workLocal,
                                 const int32_t count) {
  detail::reduce("ReduceSum", 0, dst, src, workLocal, count, false);
}
template <class T>
__aicore__ inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& workLocal,
                                 const int32_t count, bool calIndex = false) {
  detail::reduce("ReduceMax", 1, dst, src, workLocal, count, calIndex);
}
template <class T>
__aicore__ inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& workLocal,
                                 const int32_t count, bool calIndex = false) {
  detail::reduce("ReduceMin", 2, dst, src, workLocal, count, calIndex);
}

// ---- synchronisation: program order here; a WaitFlag without its SetFlag is a hang on hardware ----
template <pipe_t pipe = PIPE_ALL>
__aicore__ inline void PipeBarrier() {}
template <HardEvent event>
__aicore__ inline void SetFlag(int32_t eventID) {
  if (eventID < 0 || eventID > 7) detail::fail("SetFlag", "event id ", eventID, " is not 0 to 7");
  detail::core("SetFlag").events[static_cast<int>(event)][eventID]++;
}
template <HardEvent event>
__aicore__ inline void WaitFlag(int32_t eventID) {
  if (eventID < 0 || eventID > 7) detail::fail("WaitFlag", "event id ", eventID, " is not 0 to 7");
  int32_t& n = detail::core("WaitFlag").events[static_cast<int>(event)][eventID];
  if (n == 0)
    detail::fail("WaitFlag", "event ", static_cast<int>(event), " id ", eventID,
                 " was never set (no SetFlag of the same event and id before it): on hardware this waits forever");
  --n;
}
__aicore__ inline void SyncAll() {
  detail::fail("SyncAll", "cross-core barriers are not emulated: ember runs the cores of a launch independently");
}

// ---- debug output: a line per call, prefixed with the core ----
namespace detail {
inline std::mutex& print_mu() {
  static std::mutex mu;
  return mu;
}
}  // namespace detail
template <class... Args>
__aicore__ inline void printf(const char* fmt, Args... args) {
  ember_ascendc_core* c = ember_ascendc_current_core();
  std::lock_guard<std::mutex> g(detail::print_mu());
  std::printf("[core %u] ", c ? c->block_idx : 0u);
  std::printf(fmt, args...);
  std::fflush(stdout);
}
template <class... Args>
__aicore__ inline void PRINTF(const char* fmt, Args... args) {
  printf(fmt, args...);
}
template <class T>
__aicore__ inline void DumpTensor(const LocalTensor<T>& t, uint32_t desc, uint32_t dumpSize) {
  const T* p = t.checked("DumpTensor", "the tensor", dumpSize);
  ember_ascendc_core* c = ember_ascendc_current_core();
  std::lock_guard<std::mutex> g(detail::print_mu());
  std::printf("DumpTensor: core %u, desc=%u, addr=%llu, data_type=%s, position=%s\n", c ? c->block_idx : 0u, desc,
              static_cast<unsigned long long>(t.GetPhyAddr()), detail::TypeOf<T>::kName,
              detail::position_name(t.GetPosition()));
  for (uint32_t i = 0; i < dumpSize; ++i) std::printf(i + 1 < dumpSize ? "%g, " : "%g\n", detail::value(p[i]));
  std::fflush(stdout);
}
template <class T>
__aicore__ inline void DumpTensor(const GlobalTensor<T>& t, uint32_t desc, uint32_t dumpSize) {
  const T* p = t.checked("DumpTensor", "the tensor", 0, dumpSize, 0);
  std::lock_guard<std::mutex> g(detail::print_mu());
  std::printf("DumpTensor: desc=%u, addr=%p, data_type=%s, position=GM\n", desc, static_cast<const void*>(t.GetPhyAddr()),
              detail::TypeOf<T>::kName);
  for (uint32_t i = 0; i < dumpSize; ++i) std::printf(i + 1 < dumpSize ? "%g, " : "%g\n", detail::value(p[i]));
  std::fflush(stdout);
}

}  // namespace AscendC
