#include "ember/core/shape.h"

#include <cstdint>
#include <sstream>

#include "ember/core/error.h"

namespace ember {

std::ostream& operator<<(std::ostream& os, IntArrayRef a) {
  os << '[';
  for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
  return os << ']';
}

std::string to_string(IntArrayRef a) {
  std::ostringstream os;
  os << a;
  return os.str();
}

int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  EMBER_CHECK_SHAPE(!__builtin_mul_overflow(a, b, &r), what, ": ", a, " * ", b, " does not fit in 64 bits");
  return r;
}

int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r;
  EMBER_CHECK_SHAPE(!__builtin_add_overflow(a, b, &r), what, ": ", a, " + ", b, " does not fit in 64 bits");
  return r;
}

void throw_bad_bytes(int64_t n, size_t element, const char* what) {
  EMBER_CHECK_SHAPE(n >= 0, what, ": negative element count ", n);
  EMBER_THROW(ShapeError, what, ": ", n, " elements of ", element, " bytes do not fit in 64 bits");
}

int64_t numel_of(IntArrayRef sizes) {
  int64_t n = 1;
  bool wrapped = false;
  for (int64_t s : sizes) wrapped |= __builtin_mul_overflow(n, s, &n);
  if (wrapped) {  // rare: a zero anywhere still makes the shape empty
    for (int64_t s : sizes)
      if (s == 0) return 0;
    EMBER_THROW(ShapeError, "shape ", sizes, " has more elements than fit in 64 bits");
  }
  return n;
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector st(sizes.size());
  int64_t acc = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    st[i] = acc;
    if (__builtin_mul_overflow(acc, sizes[i] > 0 ? sizes[i] : 1, &acc)) {
      // An empty tensor's strides are never used to reach an element: saturate them.
      bool empty = false;
      for (int64_t s : sizes) empty |= s == 0;
      EMBER_CHECK_SHAPE(empty, "shape ", sizes, ": its strides do not fit in 64 bits");
      acc = INT64_MAX;
    }
  }
  return st;
}

bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides) {
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return true;
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    if (__builtin_mul_overflow(expected, sizes[i], &expected)) {
      // Only an empty tensor has dims whose product leaves int64: contiguous if a 0 comes later.
      for (size_t j = 0; j < i; ++j)
        if (sizes[j] == 0) return true;
      return false;
    }
  }
  return true;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = ndim > 0 ? ndim : 1;  // a 0-d tensor accepts dim 0 and -1, like PyTorch
  EMBER_CHECK_INDEX(dim >= -n && dim < n, op, ": dimension out of range (expected to be in range of [",
                    -n, ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

namespace {
// Broadcasts a and b into *out; the first dimension that does not broadcast, or -1.
int64_t broadcast_into(IntArrayRef a, IntArrayRef b, DimVector* out) {
  size_t n = a.size() > b.size() ? a.size() : b.size();
  out->assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) return static_cast<int64_t>(i);
    (*out)[i] = da == 1 ? db : da;
  }
  return -1;
}
}  // namespace

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op) {
  DimVector out;
  const int64_t bad = broadcast_into(a, b, &out);
  if (EMBER_UNLIKELY(bad >= 0)) {
    const size_t i = static_cast<size_t>(bad), n = out.size();
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    EMBER_THROW(ShapeError, op, ": shapes ", a, " and ", b, " cannot be broadcast together (dimension ", i, ": ", da,
                " vs ", db, ")");
  }
  return out;
}

bool try_broadcast_shapes(IntArrayRef a, IntArrayRef b, DimVector* out) { return broadcast_into(a, b, out) < 0; }

}  // namespace ember
