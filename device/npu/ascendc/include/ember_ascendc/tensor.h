// ember's Ascend C: GlobalTensor (global memory, bounded by its allocation and SetGlobalBuffer's
// length) and LocalTensor (a piece of this core's Unified Buffer, invalidated by FreeTensor/EnQue).
#pragma once

#include "ember_ascendc/base.h"

namespace AscendC {
namespace detail {

// One buffer of a TQue/TBuf. A LocalTensor holds (slot, gen); FreeTensor and EnQue bump gen, so a
// tensor kept past them is recognised on its next use.
struct BufSlot {
  enum State : uint8_t { Free, Allocated, Queued };
  char* addr = nullptr;
  uint32_t bytes = 0;
  uint32_t gen = 0;
  State state = Free;
  const char* retired_by = "";  // what invalidated the previous generation
};

inline uint64_t ub_offset(const void* p) {
  ember_ascendc_core* c = ember_ascendc_current_core();
  return c ? static_cast<uint64_t>(static_cast<const char*>(p) - c->ub) : 0;
}

}  // namespace detail

template <class T>
class LocalTensor {
 public:
  using PrimType = T;
  LocalTensor() = default;
  LocalTensor(T* p, uint32_t size, detail::BufSlot* slot, TPosition pos)
      : ptr_(p), size_(size), slot_(slot), gen_(slot ? slot->gen : 0), pos_(pos) {}

  uint32_t GetSize() const { return size_; }
  uint32_t GetLength() const { return size_ * static_cast<uint32_t>(sizeof(T)); }
  void SetSize(uint32_t size) {
    if (slot_ && static_cast<uint64_t>(size) * sizeof(T) > slot_->bytes)
      detail::fail("LocalTensor::SetSize", size, " elements of ", detail::TypeOf<T>::kName, " exceed the ",
                   slot_->bytes, "-byte buffer");
    size_ = size;
  }
  TPosition GetPosition() const { return pos_; }
  // The tensor's address in the Unified Buffer (a byte offset from its start).
  uint64_t GetPhyAddr() const { return detail::ub_offset(ptr_); }
  uint64_t GetPhyAddr(uint32_t offset) const { return detail::ub_offset(ptr_ + offset); }

  T GetValue(uint32_t i) const { return *at("LocalTensor::GetValue", i); }
  void SetValue(uint32_t i, T v) const { *at("LocalTensor::SetValue", i) = v; }
  T& operator()(uint32_t i) const { return *at("LocalTensor::operator()", i); }
  LocalTensor operator[](uint32_t offset) const {
    if (offset > size_)
      detail::fail("LocalTensor::operator[]", "offset ", offset, " is past the tensor's ", size_, " elements");
    LocalTensor t = *this;
    t.ptr_ += offset;
    t.size_ -= offset;
    return t;
  }
  template <class U>
  LocalTensor<U> ReinterpretCast() const {
    LocalTensor<U> t(reinterpret_cast<U*>(ptr_), static_cast<uint32_t>(size_ * sizeof(T) / sizeof(U)), nullptr, pos_);
    t.adopt(slot_, gen_);
    return t;
  }

  // For the library: the first n elements, checked to be alive and inside the tensor.
  T* checked(const char* call, const char* role, uint64_t n) const {
    if (!ptr_) detail::fail(call, role, " is an empty LocalTensor (not from AllocTensor, DeQue, Get or Alloc)");
    if (slot_ && slot_->gen != gen_)
      detail::fail(call, role, " is a LocalTensor used after ", slot_->retired_by,
                   ": its buffer is no longer this tensor's (on hardware it holds another tile by now)");
    if (n > size_)
      detail::fail(call, role, " (LocalTensor<", detail::TypeOf<T>::kName, "> of ", size_, " elements at UB offset ",
                   GetPhyAddr(), ") is used for ", n, " elements: past its buffer in the Unified Buffer");
    return ptr_;
  }
  T* raw() const { return ptr_; }
  detail::BufSlot* slot() const { return slot_; }
  void adopt(detail::BufSlot* s, uint32_t g) {
    slot_ = s;
    gen_ = g;
  }

 private:
  T* at(const char* call, uint32_t i) const {
    T* p = checked(call, "the tensor", 0);
    if (i >= size_) detail::fail(call, "index ", i, " is out of the tensor's ", size_, " elements");
    return p + i;
  }
  T* ptr_ = nullptr;
  uint32_t size_ = 0;
  detail::BufSlot* slot_ = nullptr;
  uint32_t gen_ = 0;
  TPosition pos_ = TPosition::VECCALC;
};

template <class T>
class GlobalTensor {
 public:
  using PrimType = T;
  GlobalTensor() = default;

  void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
    map(buffer);
    len_ = static_cast<int64_t>(bufferSize);
  }
  void SetGlobalBuffer(__gm__ T* buffer) {
    map(buffer);
    len_ = -1;
  }
  const __gm__ T* GetPhyAddr() const { return dev_; }
  const __gm__ T* GetPhyAddr(uint64_t offset) const { return at(dev_, offset); }
  uint64_t GetSize() const { return len_ < 0 ? 0 : static_cast<uint64_t>(len_); }

  GlobalTensor operator[](uint64_t offset) const {
    GlobalTensor t = *this;
    t.dev_ = at(dev_, offset);
    if (host_) t.host_ += offset * sizeof(T);
    t.off_ += static_cast<int64_t>(offset);
    return t;
  }
  T GetValue(uint64_t i) const {
    T v;
    std::memcpy(&v, checked("GlobalTensor::GetValue", "the tensor", i, 1, 0), sizeof(T));
    return v;
  }
  void SetValue(uint64_t i, T v) const {
    std::memcpy(checked("GlobalTensor::SetValue", "the tensor", i, 1, 1), &v, sizeof(T));
  }
  T& operator()(uint64_t i) const { return *checked("GlobalTensor::operator()", "the tensor", i, 1, 1); }

  // For the library: the host view of elements [first, first + n) of this tensor, checked against
  // SetGlobalBuffer's length and the allocation, and noted in race mode (write: 1, atomic: 2).
  T* checked(const char* call, const char* role, uint64_t first, uint64_t n, int write) const {
    if (!mapped_) {
      if (!set_) detail::fail(call, role, " is a GlobalTensor without SetGlobalBuffer");
      detail::fail(call, role, " is global memory at ", static_cast<const void*>(dev_),
                   ", which is in no live aclrtMalloc allocation (freed, host memory, or never allocated)");
    }
    // Elements are counted from the SetGlobalBuffer start: [off_ + first, off_ + first + n).
    constexpr uint64_t kMax = uint64_t(1) << 40;  // beyond any device's memory: no overflow below
    if (first > kMax || n > kMax || off_ > static_cast<int64_t>(kMax) || off_ < -static_cast<int64_t>(kMax))
      detail::fail(call, role, " is used at element ", off_, " + ", first, " for ", n,
                   " elements: beyond any global memory");
    const int64_t lo = off_ + static_cast<int64_t>(first), hi = lo + static_cast<int64_t>(n);
    if (len_ >= 0 && (lo < 0 || hi > len_))
      detail::fail(call, role, " reaches elements [", lo, ", ", hi, ") of a GlobalTensor<", detail::TypeOf<T>::kName,
                   "> of ", len_, " elements (its SetGlobalBuffer length)");
    const int64_t blo = lo * static_cast<int64_t>(sizeof(T)), bhi = hi * static_cast<int64_t>(sizeof(T));
    if (blo < -before_ || bhi > avail_)
      detail::fail(call, role, " reaches bytes [", blo, ", ", bhi, ") from global address ",
                   static_cast<const void*>(start_), ", outside its ", what_, " of ", before_ + avail_,
                   " bytes at ", reinterpret_cast<const void*>(base_), " (bytes [", -before_, ", ", avail_,
                   ") from that address)");
    T* p = reinterpret_cast<T*>(host_) + first;
    if (n > 0 && race_) ember_ascendc_gm_note(at(dev_, first), n * sizeof(T), write, call);
    return p;
  }

 private:
  // A device address `offset` elements on, in integer arithmetic: device addresses are numbers
  // here (a null or foreign one is reported at its first use, not made undefined by arithmetic).
  static T* at(T* p, uint64_t offset) {
    return reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(p) + offset * sizeof(T));
  }
  void map(__gm__ T* buffer) {
    set_ = true;
    dev_ = start_ = buffer;
    off_ = 0;
    char* host = nullptr;
    uint64_t avail = 0;
    uintptr_t base = 0;
    mapped_ = ember_ascendc_gm_map(buffer, &host, &avail, &base, &what_) != 0;
    host_ = host;
    avail_ = static_cast<int64_t>(avail);
    base_ = base;
    before_ = static_cast<int64_t>(reinterpret_cast<uintptr_t>(buffer) - base);
    ember_ascendc_core* c = ember_ascendc_current_core();
    race_ = c && c->race;
  }
  T* dev_ = nullptr;    // this view's device address
  T* start_ = nullptr;  // SetGlobalBuffer's address
  char* host_ = nullptr;
  int64_t off_ = 0;      // elements from start_
  int64_t len_ = -1;     // SetGlobalBuffer's length, or -1 (none given)
  int64_t avail_ = 0;    // bytes from start_ to the end of the allocation
  int64_t before_ = 0;   // bytes from the allocation's start to start_
  uintptr_t base_ = 0;
  const char* what_ = "";  // the region: an aclrtMalloc allocation, a tensor's block, a GmAlloc block
  bool set_ = false, mapped_ = false, race_ = false;
};

}  // namespace AscendC
