// ember: shapes, strides and small dimension arrays.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

namespace ember {

using Shape = std::vector<int64_t>;

// A non-owning view of int64 values (like c10::IntArrayRef). Accepts {1, 2, 3}, a Shape or a
// DimVector; the viewed storage must outlive it.
class IntArrayRef {
 public:
  IntArrayRef() = default;
  IntArrayRef(const int64_t* data, size_t size) : data_(data), size_(size) {}
  IntArrayRef(const std::vector<int64_t>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  IntArrayRef(const std::initializer_list<int64_t>& l)  // NOLINT: valid for the full expression
      : data_(std::begin(l) == std::end(l) ? nullptr : std::begin(l)), size_(l.size()) {}
  IntArrayRef(const int64_t& single) : data_(&single), size_(1) {}  // NOLINT

  const int64_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t operator[](size_t i) const { return data_[i]; }
  int64_t front() const { return data_[0]; }
  int64_t back() const { return data_[size_ - 1]; }
  IntArrayRef slice(size_t start, size_t n) const { return {data_ + start, n}; }
  Shape vec() const { return Shape(begin(), end()); }
  operator Shape() const { return vec(); }  // NOLINT

  friend bool operator==(IntArrayRef a, IntArrayRef b) {
    return a.size_ == b.size_ && (a.size_ == 0 || std::memcmp(a.data_, b.data_, a.size_ * 8) == 0);
  }
  friend bool operator!=(IntArrayRef a, IntArrayRef b) { return !(a == b); }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

std::ostream& operator<<(std::ostream& os, IntArrayRef a);
std::string to_string(IntArrayRef a);  // "[2, 3]"

// Sizes/strides storage with inline capacity, so a TensorImpl needs no heap allocation for them.
class DimVector {
 public:
  static constexpr uint32_t kInline = 6;
  DimVector() = default;
  explicit DimVector(size_t n, int64_t value = 0) { assign(n, value); }
  DimVector(IntArrayRef a) { assign(a); }  // NOLINT
  DimVector(std::initializer_list<int64_t> l) { assign(IntArrayRef(l)); }
  DimVector(const DimVector& o) { assign(IntArrayRef(o)); }
  DimVector(DimVector&& o) noexcept { steal(o); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign(IntArrayRef(o));
    return *this;
  }
  DimVector& operator=(DimVector&& o) noexcept {
    if (this != &o) {
      if (data_ != inline_) delete[] data_;
      data_ = inline_;
      cap_ = kInline;
      steal(o);
    }
    return *this;
  }
  DimVector& operator=(IntArrayRef a) {
    assign(a);
    return *this;
  }
  ~DimVector() {
    if (data_ != inline_) delete[] data_;
  }

  void assign(IntArrayRef a) {
    reserve(a.size());
    if (a.size()) std::memmove(data_, a.data(), a.size() * sizeof(int64_t));
    size_ = static_cast<uint32_t>(a.size());
  }
  void assign(size_t n, int64_t value) {
    reserve(n);
    for (size_t i = 0; i < n; ++i) data_[i] = value;
    size_ = static_cast<uint32_t>(n);
  }
  void reserve(size_t n) {
    if (n <= cap_) return;
    int64_t* p = new int64_t[n];
    if (size_) std::memcpy(p, data_, size_ * sizeof(int64_t));
    if (data_ != inline_) delete[] data_;
    data_ = p;
    cap_ = static_cast<uint32_t>(n);
  }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = value;
    size_ = static_cast<uint32_t>(n);
  }
  void push_back(int64_t v) {
    if (size_ == cap_) reserve(cap_ * 2);
    data_[size_++] = v;
  }
  void insert(size_t pos, int64_t v) {
    push_back(0);
    for (size_t i = size_ - 1; i > pos; --i) data_[i] = data_[i - 1];
    data_[pos] = v;
  }
  void erase(size_t pos) {
    for (size_t i = pos; i + 1 < size_; ++i) data_[i] = data_[i + 1];
    --size_;
  }
  void clear() { size_ = 0; }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return data_; }
  const int64_t* data() const { return data_; }
  int64_t& operator[](size_t i) { return data_[i]; }
  int64_t operator[](size_t i) const { return data_[i]; }
  int64_t* begin() { return data_; }
  int64_t* end() { return data_ + size_; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t back() const { return data_[size_ - 1]; }
  operator IntArrayRef() const { return {data_, size_}; }  // NOLINT
  Shape vec() const { return Shape(begin(), end()); }

 private:
  void steal(DimVector& o) {
    if (o.data_ == o.inline_) {
      std::memcpy(inline_, o.inline_, o.size_ * sizeof(int64_t));
    } else {
      data_ = o.data_;
      cap_ = o.cap_;
      o.data_ = o.inline_;
      o.cap_ = kInline;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  int64_t inline_[kInline];
  int64_t* data_ = inline_;
  uint32_t size_ = 0;
  uint32_t cap_ = kInline;
};

// The product of the sizes (1 for a 0-d shape, 0 if any size is 0); ShapeError when it does not
// fit in int64.
int64_t numel_of(IntArrayRef sizes);

// Checked size arithmetic, in one place: every size, stride, offset and byte count that comes
// from a user or a file goes through these, which throw ShapeError naming `what` instead of
// wrapping around.
int64_t checked_mul(int64_t a, int64_t b, const char* what);
int64_t checked_add(int64_t a, int64_t b, const char* what);
[[noreturn]] void throw_bad_bytes(int64_t n, size_t element, const char* what);
// Bytes of n >= 0 elements of `element` bytes each (inline: every tensor allocation asks).
inline size_t checked_bytes(int64_t n, size_t element, const char* what) {
  int64_t r;
  if (n < 0 || __builtin_mul_overflow(n, static_cast<int64_t>(element), &r)) throw_bad_bytes(n, element, what);
  return static_cast<size_t>(r);
}
// Row-major strides for sizes.
DimVector contiguous_strides(IntArrayRef sizes);
// True if (sizes, strides) describe a row-major dense layout (size-1 dims ignored).
bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides);
// Wraps a possibly negative dim into [0, ndim); throws IndexError naming op otherwise.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);
// Broadcast two shapes (numpy rules); throws ShapeError naming op on mismatch.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op);
// The same rule without throwing (the emulated NPU returns a status): false on a mismatch.
bool try_broadcast_shapes(IntArrayRef a, IntArrayRef b, DimVector* out);

}  // namespace ember
