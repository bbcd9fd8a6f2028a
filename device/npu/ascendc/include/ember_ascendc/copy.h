// ember's Ascend C: DataCopy and DataCopyPad between global memory and the Unified Buffer (and
// within the UB), with the hardware's rules: DataCopy moves whole 32-byte blocks and needs
// 32-byte aligned UB addresses; DataCopyPad moves any byte count, padding each UB row to 32 bytes.
#pragma once

#include "ember_ascendc/tensor.h"

namespace AscendC {

// DataCopy's strided form: blockCount rows of blockLen 32-byte blocks, gaps in 32-byte blocks.
struct DataCopyParams {
  DataCopyParams() = default;
  DataCopyParams(uint16_t count, uint16_t len, uint16_t srcGap, uint16_t dstGap)
      : blockCount(count), blockLen(len), srcStride(srcGap), dstStride(dstGap) {}
  uint16_t blockCount = 1;
  uint16_t blockLen = 0;
  uint16_t srcStride = 0;
  uint16_t dstStride = 0;
};
// DataCopyPad's: blockLen in bytes; the GM side's gaps in bytes, the UB side's in 32-byte blocks.
struct DataCopyExtParams {
  DataCopyExtParams() = default;
  DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcGap, uint32_t dstGap, uint32_t rsv = 0)
      : blockCount(count), blockLen(len), srcStride(srcGap), dstStride(dstGap), rsv(rsv) {}
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;
  uint32_t srcStride = 0;
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
};
template <class T>
struct DataCopyPadExtParams {
  DataCopyPadExtParams() = default;
  DataCopyPadExtParams(bool pad, uint8_t left, uint8_t right, T value)
      : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  T paddingValue = T();
};
struct DataCopyPadParams {
  DataCopyPadParams() = default;
  DataCopyPadParams(bool pad, uint8_t left, uint8_t right, uint64_t value)
      : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  uint64_t paddingValue = 0;
};

namespace detail {

inline void need_ub_aligned(const char* call, const char* role, const void* p) {
  const uint64_t off = ub_offset(p);
  if (off % kBlockBytes != 0)
    fail(call, role, " starts at UB offset ", off, ", not 32-byte aligned: the hardware moves 32-byte blocks");
}
template <class T>
void need_blocks(const char* call, uint64_t count) {
  if (count * sizeof(T) % kBlockBytes != 0)
    fail(call, count, " elements of ", TypeOf<T>::kName, " are ", count * sizeof(T),
         " bytes, not a multiple of 32: DataCopy moves whole 32-byte blocks (DataCopyPad copies any length)");
}
// Atomic accumulation into GM (SetAtomicAdd): the core's mode, applied by UB -> GM copies.
inline int& atomic_mode() { return core("SetAtomicAdd").atomic; }  // a dtype code, or -1: plain stores
// One row of a UB -> GM copy: stores, or adds under SetAtomicAdd.
template <class T>
void store_row(T* gm, const T* ub, uint64_t n) {
  if (atomic_mode() < 0) {
    std::memcpy(gm, ub, n * sizeof(T));
  } else {
    if (atomic_mode() != TypeOf<T>::kCode)
      fail("DataCopy", "SetAtomicAdd's dtype differs from the copied tensor's ", TypeOf<T>::kName);
    ember_ascendc_atomic_add(TypeOf<T>::kCode, gm, ub, n);
  }
}

}  // namespace detail

// GM -> UB, count elements (count * sizeof(T) a multiple of 32)
template <class T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
  const char* call = "DataCopy(GM -> UB)";
  detail::need_blocks<T>(call, count);
  T* d = dst.checked(call, "dst", count);
  detail::need_ub_aligned(call, "dst", d);
  std::memcpy(d, src.checked(call, "src", 0, count, 0), count * sizeof(T));
}
// UB -> GM
template <class T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  const char* call = "DataCopy(UB -> GM)";
  detail::need_blocks<T>(call, count);
  const T* s = src.checked(call, "src", count);
  detail::need_ub_aligned(call, "src", s);
  detail::store_row(dst.checked(call, "dst", 0, count, detail::atomic_mode() < 0 ? 1 : 2), s, count);
}
// UB -> UB
template <class T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  const char* call = "DataCopy(UB -> UB)";
  detail::need_blocks<T>(call, count);
  T* d = dst.checked(call, "dst", count);
  const T* s = src.checked(call, "src", count);
  detail::need_ub_aligned(call, "dst", d);
  detail::need_ub_aligned(call, "src", s);
  std::memmove(d, s, count * sizeof(T));
}

// The strided forms: row r of blockLen blocks starts at r * (blockLen + gap) blocks on each side.
template <class T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
  const char* call = "DataCopy(GM -> UB, DataCopyParams)";
  constexpr uint64_t e = detail::kBlockBytes / sizeof(T);
  const uint64_t row = p.blockLen * e, dst_pitch = (p.blockLen + p.dstStride) * e, src_pitch = (p.blockLen + p.srcStride) * e;
  if (p.blockCount == 0) return;
  T* d = dst.checked(call, "dst", (p.blockCount - 1) * dst_pitch + row);
  detail::need_ub_aligned(call, "dst", d);
  for (uint64_t r = 0; r < p.blockCount; ++r)
    std::memcpy(d + r * dst_pitch, src.checked(call, "src", r * src_pitch, row, 0), row * sizeof(T));
}
template <class T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
  const char* call = "DataCopy(UB -> GM, DataCopyParams)";
  constexpr uint64_t e = detail::kBlockBytes / sizeof(T);
  const uint64_t row = p.blockLen * e, dst_pitch = (p.blockLen + p.dstStride) * e, src_pitch = (p.blockLen + p.srcStride) * e;
  if (p.blockCount == 0) return;
  const T* s = src.checked(call, "src", (p.blockCount - 1) * src_pitch + row);
  detail::need_ub_aligned(call, "src", s);
  for (uint64_t r = 0; r < p.blockCount; ++r)
    detail::store_row(dst.checked(call, "dst", r * dst_pitch, row, detail::atomic_mode() < 0 ? 1 : 2), s + r * src_pitch, row);
}
template <class T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
  const char* call = "DataCopy(UB -> UB, DataCopyParams)";
  constexpr uint64_t e = detail::kBlockBytes / sizeof(T);
  const uint64_t row = p.blockLen * e, dst_pitch = (p.blockLen + p.dstStride) * e, src_pitch = (p.blockLen + p.srcStride) * e;
  if (p.blockCount == 0) return;
  T* d = dst.checked(call, "dst", (p.blockCount - 1) * dst_pitch + row);
  const T* s = src.checked(call, "src", (p.blockCount - 1) * src_pitch + row);
  detail::need_ub_aligned(call, "dst", d);
  detail::need_ub_aligned(call, "src", s);
  for (uint64_t r = 0; r < p.blockCount; ++r) std::memmove(d + r * dst_pitch, s + r * src_pitch, row * sizeof(T));
}

// GM -> UB, any length: blockCount rows of blockLen bytes, GM rows srcStride bytes apart (gap),
// each UB row padded to 32 bytes (with paddingValue when isPad) and dstStride blocks apart (gap).
template <class T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                                   const DataCopyPadExtParams<T>& pad) {
  const char* call = "DataCopyPad(GM -> UB)";
  if (p.blockLen % sizeof(T) != 0)
    detail::fail(call, "blockLen ", p.blockLen, " bytes is not a whole number of ", detail::TypeOf<T>::kName, " elements");
  if (p.srcStride % sizeof(T) != 0)
    detail::fail(call, "srcStride ", p.srcStride, " bytes is not a whole number of ", detail::TypeOf<T>::kName, " elements");
  if (p.blockCount == 0) return;
  const uint64_t n = p.blockLen / sizeof(T), src_pitch = n + p.srcStride / sizeof(T);
  const uint64_t row_bytes = (uint64_t(pad.leftPadding) * sizeof(T) + p.blockLen + detail::kBlockBytes - 1) / detail::kBlockBytes * detail::kBlockBytes;
  const uint64_t dst_pitch = (row_bytes + uint64_t(p.dstStride) * detail::kBlockBytes) / sizeof(T);
  T* d = dst.checked(call, "dst", (p.blockCount - 1) * dst_pitch + row_bytes / sizeof(T));
  detail::need_ub_aligned(call, "dst", d);
  for (uint64_t r = 0; r < p.blockCount; ++r) {
    T* row = d + r * dst_pitch;
    if (pad.isPad)
      for (uint64_t i = 0; i < row_bytes / sizeof(T); ++i) row[i] = pad.paddingValue;
    std::memcpy(row + pad.leftPadding, src.checked(call, "src", r * src_pitch, n, 0), p.blockLen);
  }
}
template <class T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                                   const DataCopyPadParams& pad) {
  T value;
  std::memcpy(&value, &pad.paddingValue, sizeof(T));
  DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride),
              DataCopyPadExtParams<T>(pad.isPad, pad.leftPadding, pad.rightPadding, value));
}
// UB -> GM, any length: UB rows padded to 32 bytes and srcStride blocks apart (gap), GM rows
// dstStride bytes apart (gap).
template <class T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
  const char* call = "DataCopyPad(UB -> GM)";
  if (p.blockLen % sizeof(T) != 0 || p.dstStride % sizeof(T) != 0)
    detail::fail(call, "blockLen ", p.blockLen, " and dstStride ", p.dstStride, " bytes must be whole ",
                 detail::TypeOf<T>::kName, " elements");
  if (p.blockCount == 0) return;
  const uint64_t n = p.blockLen / sizeof(T), dst_pitch = n + p.dstStride / sizeof(T);
  const uint64_t row_bytes = (uint64_t(p.blockLen) + detail::kBlockBytes - 1) / detail::kBlockBytes * detail::kBlockBytes;
  const uint64_t src_pitch = (row_bytes + uint64_t(p.srcStride) * detail::kBlockBytes) / sizeof(T);
  const T* s = src.checked(call, "src", (p.blockCount - 1) * src_pitch + n);
  detail::need_ub_aligned(call, "src", s);
  for (uint64_t r = 0; r < p.blockCount; ++r)
    detail::store_row(dst.checked(call, "dst", r * dst_pitch, n, detail::atomic_mode() < 0 ? 1 : 2), s + r * src_pitch, n);
}
template <class T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
  DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride));
}

// Atomic accumulation of later UB -> GM copies into GM.
template <class T>
__aicore__ inline void SetAtomicAdd() {
  detail::atomic_mode() = detail::TypeOf<T>::kCode;
}
__aicore__ inline void SetAtomicNone() { detail::atomic_mode() = -1; }

}  // namespace AscendC
