// ember: the address space descriptors are carved from (Note [Descriptor handles] in
// descriptors.h). Internal to device/npu; not thread-safe by itself (descriptors.cpp holds its lock).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember {
namespace npu {
namespace detail {

// Note [Descriptor handles]: the never-reused address space descriptors live in (the caller's lock held).
class HandleArena {
 public:
  void* allocate(size_t bytes) {
    bytes = (bytes + 15) / 16 * 16;
    if (bytes > kChunk) return nullptr;
    if (regions_.empty() || used_ + bytes > kRegion) {
      // (kChunk extra, to align the region to a chunk: a huge page must start on one)
      void* r = ::mmap(nullptr, kRegion + kChunk, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (r == MAP_FAILED) return nullptr;
      leave_chunk();
      char* base = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(r) + kChunk - 1) / kChunk * kChunk);
      regions_.push_back(Region{base, std::vector<uint32_t>(kRegion / kChunk, 0)});
      used_ = 0;
    }
    if (used_ % kChunk != 0 && used_ % kChunk + bytes > kChunk) {  // no descriptor straddles two chunks
      leave_chunk();
      used_ = (used_ / kChunk + 1) * kChunk;
    }
    Region& r = regions_.back();
    char* p = r.base + used_;
    if (used_ % kChunk == 0) {
      if (used_ + kChunk > kRegion) return nullptr;
      if (!commit(p)) return nullptr;
    }
    ++r.live[used_ / kChunk];
    used_ += bytes;
    return p;
  }
  // Whether p is 16-byte aligned in a chunk that holds live descriptors (so the bytes before it
  // can be read).
  bool holds_live(const void* p) const {
    const char* c = static_cast<const char*>(p);
    for (size_t i = regions_.size(); i-- > 0;) {
      const Region& r = regions_[i];
      if (c < r.base || c >= r.base + kRegion) continue;
      const size_t off = static_cast<size_t>(c - r.base);
      return off % 16 == 0 && off % kChunk >= 16 && r.live[off / kChunk] > 0;
    }
    return false;
  }
  void release(void* p) {
    const char* c = static_cast<const char*>(p);
    for (size_t i = regions_.size(); i-- > 0;) {  // the newest region, almost always
      Region& r = regions_[i];
      if (c < r.base || c >= r.base + kRegion) continue;
      const size_t chunk = static_cast<size_t>(c - r.base) / kChunk;
      if (--r.live[chunk] > 0) return;
      const bool current = i + 1 == regions_.size() && used_ > 0 && (used_ - 1) / kChunk == chunk;
      if (!current) give_back(r.base + chunk * kChunk);  // (else when the bump pointer leaves it)
      return;
    }
  }

 private:
  static constexpr size_t kRegion = size_t(1) << 36;  // 64 GiB of address space a region
  // Chunks of one huge page: committed, faulted in and given back 2 MiB at a time (a launch makes
  // a few descriptors, so smaller chunks cost it page faults and TLB shootdowns).
  static constexpr size_t kChunk = size_t(2) << 20;
  struct Region {
    char* base;
    std::vector<uint32_t> live;  // descriptors alive, per chunk
  };
  // A fresh chunk at p: the pages of an emptied chunk moved there (mremap: no zeroing, no copy),
  // else new ones (one page fault, with a huge page where the kernel allows it).
  bool commit(char* p) {
    if (!spare_.empty()) {
      char* from = spare_.back();
      spare_.pop_back();
      if (::mremap(from, kChunk, kChunk, MREMAP_MAYMOVE | MREMAP_FIXED, p) == p) {
        reserve(from);
        return true;
      }
      give_back_now(from);
    }
    if (::mprotect(p, kChunk, PROT_READ | PROT_WRITE) != 0) return false;
    ::madvise(p, kChunk, MADV_HUGEPAGE);
    return true;
  }
  // An emptied chunk: its address is never used again; its pages wait for the next fresh chunk.
  void give_back(char* c) {
    if (spare_.size() < kSpare) {
      spare_.push_back(c);
    } else {
      give_back_now(c);
    }
  }
  static void give_back_now(char* c) {
    ::madvise(c, kChunk, MADV_DONTNEED);
    ::mprotect(c, kChunk, PROT_NONE);
  }
  // The hole mremap left stays reserved, so no other mapping lands where a stale handle points.
  static void reserve(char* c) {
    ::mmap(c, kChunk, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  }
  static constexpr size_t kSpare = 4;
  std::vector<char*> spare_;  // emptied chunks whose pages are kept for reuse at a new address
  // The bump pointer leaves its chunk: give it back if nothing in it lives any more.
  void leave_chunk() {
    if (regions_.empty() || used_ == 0) return;
    Region& r = regions_.back();
    const size_t chunk = (used_ - 1) / kChunk;
    if (r.live[chunk] == 0) give_back(r.base + chunk * kChunk);
  }
  std::vector<Region> regions_;
  size_t used_ = 0;  // bump offset into the newest region
};

}  // namespace detail
}  // namespace npu
}  // namespace ember
