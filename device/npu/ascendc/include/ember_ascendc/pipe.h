// ember's Ascend C: the Unified Buffer's allocators. TPipe::InitBuffer carves queues (TQue) and
// plain buffers (TBuf) out of this core's 192 KiB; LocalMemAllocator hands out the same space
// without queues. Queue misuse that hangs or corrupts on hardware is a named error here.
#pragma once

#include "ember_ascendc/tensor.h"

namespace AscendC {
namespace detail {

// Reserves bytes (rounded up to 32) of this core's UB; names the caller when it does not fit.
inline char* ub_reserve(const char* call, const char* what, uint64_t bytes) {
  ember_ascendc_core& c = core(call);
  const uint64_t rounded = (bytes + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
  if (rounded > c.ub_size - c.ub_used)
    fail(call, what, " needs ", rounded, " bytes of the Unified Buffer, but ", c.ub_used, " of its ", c.ub_size,
         " bytes are in use already (", c.ub_size - c.ub_used, " free)");
  char* p = c.ub + c.ub_used;
  c.ub_used += rounded;
  return p;
}

// A queue's buffers and the FIFO of the enqueued ones.
template <TPosition kPos, int32_t kDepth>
class QueueBase {
 public:
  static constexpr uint32_t kMaxBuffers = 16;
  void init(const char* call, uint8_t num, uint32_t len) {
    if (kPos != TPosition::VECIN && kPos != TPosition::VECOUT && kPos != TPosition::VECCALC)
      fail(call, "a queue at ", position_name(kPos), ": ember emulates the vector core only (VECIN, VECOUT, VECCALC "
                 "in the Unified Buffer); the cube path (L1, L0A/L0B/L0C, Mmad) is not emulated");
    if (num_ != 0) fail(call, "the queue has its buffers already (InitBuffer was called on it before)");
    if (num == 0 || num > kMaxBuffers) fail(call, "num = ", unsigned(num), ": a queue has 1 to ", kMaxBuffers, " buffers");
    if (len == 0) fail(call, "len = 0: a buffer needs at least one byte");
    char* p = ub_reserve(call, "the queue's buffers", static_cast<uint64_t>(num) * ((len + kBlockBytes - 1) / kBlockBytes * kBlockBytes));
    const uint32_t stride = (len + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
    for (uint32_t i = 0; i < num; ++i) {
      slots_[i].addr = p + static_cast<uint64_t>(i) * stride;
      slots_[i].bytes = len;
    }
    num_ = num;
  }
  template <class T>
  LocalTensor<T> AllocTensor() {
    const char* call = "TQue::AllocTensor";
    need_init(call);
    for (uint32_t i = 0; i < num_; ++i) {
      BufSlot& s = slots_[i];
      if (s.state != BufSlot::Free) continue;
      s.state = BufSlot::Allocated;
      return LocalTensor<T>(reinterpret_cast<T*>(s.addr), static_cast<uint32_t>(s.bytes / sizeof(T)), &s, kPos);
    }
    fail(call, "all ", num_, " buffers of this ", position_name(kPos), " queue are allocated or queued (InitBuffer gave it ",
         num_, "); FreeTensor one first: on hardware this AllocTensor waits forever");
  }
  template <class T>
  bool EnQue(const LocalTensor<T>& t) {
    const char* call = "TQue::EnQue";
    need_init(call);
    BufSlot* s = own(call, t);
    t.checked(call, "the tensor", 0);
    if (s->state != BufSlot::Allocated) fail(call, "the tensor is queued already");
    if (count_ >= static_cast<uint32_t>(kDepth < 1 ? 1 : kDepth) && count_ >= num_)
      fail(call, "the queue holds ", count_, " tensors, its depth");
    s->state = BufSlot::Queued;
    s->gen++;
    s->retired_by = "EnQue (the queue owns it until DeQue)";
    fifo_[(head_ + count_) % kMaxBuffers] = static_cast<uint8_t>(s - slots_);
    ++count_;
    return true;
  }
  template <class T>
  LocalTensor<T> DeQue() {
    const char* call = "TQue::DeQue";
    need_init(call);
    if (count_ == 0)
      fail(call, "the ", position_name(kPos), " queue is empty (nothing was EnQue'd since the last DeQue): on hardware "
                 "this DeQue waits forever");
    BufSlot& s = slots_[fifo_[head_]];
    head_ = (head_ + 1) % kMaxBuffers;
    --count_;
    s.state = BufSlot::Allocated;
    return LocalTensor<T>(reinterpret_cast<T*>(s.addr), static_cast<uint32_t>(s.bytes / sizeof(T)), &s, kPos);
  }
  template <class T>
  void FreeTensor(LocalTensor<T>& t) {
    const char* call = "TQue::FreeTensor";
    need_init(call);
    BufSlot* s = own(call, t);
    t.checked(call, "the tensor", 0);
    if (s->state == BufSlot::Queued) fail(call, "the tensor is in the queue (EnQue'd, not DeQue'd)");
    s->state = BufSlot::Free;
    s->gen++;
    s->retired_by = "FreeTensor";
  }
  bool VacantInQue() const { return count_ < num_; }
  bool HasTensorInQue() const { return count_ > 0; }
  int32_t GetTensorCountInQue() const { return static_cast<int32_t>(count_); }
  bool HasIdleBuffer() const {
    for (uint32_t i = 0; i < num_; ++i)
      if (slots_[i].state == BufSlot::Free) return true;
    return false;
  }

 private:
  void need_init(const char* call) const {
    if (num_ == 0) fail(call, "the queue has no buffers: call TPipe::InitBuffer on it first");
  }
  template <class T>
  BufSlot* own(const char* call, const LocalTensor<T>& t) {
    BufSlot* s = t.slot();
    if (!s || s < slots_ || s >= slots_ + num_)
      fail(call, "the tensor is not one of this queue's buffers (AllocTensor or DeQue it from this queue)");
    return s;
  }
  BufSlot slots_[kMaxBuffers];
  uint8_t fifo_[kMaxBuffers] = {};
  uint32_t num_ = 0, head_ = 0, count_ = 0;
};

}  // namespace detail

template <TPosition pos, int32_t depth = 1, auto mask = 0>
class TQue : public detail::QueueBase<pos, depth> {};
template <TPosition src, TPosition dst, int32_t depth = 1, auto mask = 0>
class TQueBind : public detail::QueueBase<dst, depth> {};

template <TPosition pos = TPosition::VECCALC>
class TBuf {
 public:
  void init(const char* call, uint32_t len) {
    if (slot_.bytes != 0) fail_twice(call);
    slot_.addr = detail::ub_reserve(call, "the buffer", len);
    slot_.bytes = len;
  }
  template <class T>
  LocalTensor<T> Get() {
    return Get<T>(static_cast<uint32_t>(slot_.bytes / sizeof(T)));
  }
  template <class T>
  LocalTensor<T> Get(uint32_t len) {
    need("TBuf::Get");
    if (static_cast<uint64_t>(len) * sizeof(T) > slot_.bytes)
      detail::fail("TBuf::Get", len, " elements of ", detail::TypeOf<T>::kName, " exceed the buffer's ", slot_.bytes,
                   " bytes");
    return LocalTensor<T>(reinterpret_cast<T*>(slot_.addr), len, &slot_, pos);
  }
  template <class T>
  LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset) {
    need("TBuf::GetWithOffset");
    if (bufOffset % detail::kBlockBytes != 0)
      detail::fail("TBuf::GetWithOffset", "bufOffset ", bufOffset, " is not a multiple of 32 bytes");
    if (bufOffset + static_cast<uint64_t>(size) * sizeof(T) > slot_.bytes)
      detail::fail("TBuf::GetWithOffset", size, " elements of ", detail::TypeOf<T>::kName, " at byte ", bufOffset,
                   " exceed the buffer's ", slot_.bytes, " bytes");
    return LocalTensor<T>(reinterpret_cast<T*>(slot_.addr + bufOffset), size, &slot_, pos);
  }

 private:
  void need(const char* call) const {
    if (slot_.bytes == 0) detail::fail(call, "the buffer is empty: call TPipe::InitBuffer on it first");
  }
  [[noreturn]] static void fail_twice(const char* call) {
    detail::fail(call, "the buffer has its memory already (InitBuffer was called on it before)");
  }
  detail::BufSlot slot_;
};

class TPipe {
 public:
  TPipe() : start_(detail::core("TPipe").ub_used) {}
  ~TPipe() { Destroy(); }
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;

  template <class Q>
  bool InitBuffer(Q& que, uint8_t num, uint32_t len) {
    que.init("TPipe::InitBuffer", num, len);
    return true;
  }
  template <TPosition pos>
  bool InitBuffer(TBuf<pos>& buf, uint32_t len) {
    buf.init("TPipe::InitBuffer", len);
    return true;
  }
  // Gives back the UB this pipe handed out (its queues and buffers must not be used after).
  void Destroy() {
    ember_ascendc_core* c = ember_ascendc_current_core();
    if (c && !destroyed_ && c->ub_used >= start_) c->ub_used = start_;
    destroyed_ = true;
  }
  void Reset() { Destroy(); destroyed_ = false; }
  template <HardEvent evt>
  int32_t FetchEventID() { return 0; }
  int32_t FetchEventID(HardEvent) { return 0; }

 private:
  uint64_t start_;
  bool destroyed_ = false;
};

// Buffers of the UB without queues (basic_api_memory_allocator style).
template <Hardware hw = Hardware::UB>
class LocalMemAllocator {
 public:
  static_assert(hw == Hardware::UB, "ember emulates the vector core: only the Unified Buffer can be allocated");
  template <class T, uint32_t n>
  LocalTensor<T> Alloc() {
    return Alloc<T>(n);
  }
  template <class T>
  LocalTensor<T> Alloc(uint32_t n) {
    char* p = detail::ub_reserve("LocalMemAllocator::Alloc", "the tensor", static_cast<uint64_t>(n) * sizeof(T));
    return LocalTensor<T>(reinterpret_cast<T*>(p), n, nullptr, TPosition::VECCALC);
  }
  uint64_t GetCurAddr() const { return detail::core("LocalMemAllocator::GetCurAddr").ub_used; }
};

}  // namespace AscendC
