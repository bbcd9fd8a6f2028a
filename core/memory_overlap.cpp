#include "ember/core/memory_overlap.h"

#include <algorithm>
#include <vector>

namespace ember {
namespace {

using i128 = __int128;  // spans and addresses: strides * sizes of any int64 layout fit

// Above this many elements, the exact search by enumeration is not attempted.
constexpr int64_t kMaxEnumerated = int64_t{1} << 24;
// Nodes of the exact search over stride combinations before falling back to enumeration.
constexpr int kMaxSearchNodes = 1 << 14;

struct Dim {
  int64_t stride;  // > 0
  int64_t size;    // > 1
};

// A layout as its set of addresses: dims of size > 1, strides made positive (the lowest address
// becomes the base), broadcast dims (stride 0) dropped and flagged, sorted by stride.
struct Normal {
  i128 lo = 0;  // lowest address, in bytes
  int64_t numel = 1;
  bool broadcast = false;  // a stride 0 over a size > 1
  std::vector<Dim> dims;   // ascending stride
};

Normal normalize(const MemLayout& t) {
  Normal n;
  n.lo = static_cast<i128>(t.addr);
  for (size_t d = 0; d < t.sizes.size(); ++d) {
    const int64_t size = t.sizes[d];
    if (size == 0) {
      n.numel = 0;
      return n;
    }
    if (size == 1) continue;
    n.numel = n.numel > (int64_t{1} << 62) / size ? (int64_t{1} << 62) : n.numel * size;
    int64_t stride = t.strides[d];
    if (stride == 0) {
      n.broadcast = true;
      continue;
    }
    if (stride < 0) {
      n.lo += static_cast<i128>(stride) * (size - 1) * static_cast<i128>(t.itemsize);
      stride = -stride;
    }
    n.dims.push_back({stride, size});
  }
  std::sort(n.dims.begin(), n.dims.end(), [](const Dim& a, const Dim& b) { return a.stride < b.stride; });
  return n;
}

// Each stride is beyond every offset the smaller dims reach: no two indices meet.
bool nested(const Normal& n) {
  i128 reach = 0;
  for (const Dim& d : n.dims) {
    if (d.stride <= reach) return false;
    reach += static_cast<i128>(d.stride) * (d.size - 1);
  }
  return true;
}

bool dense(const Normal& n) {
  if (n.numel == 0 || n.broadcast) return false;
  int64_t expect = 1;
  for (const Dim& d : n.dims) {
    if (d.stride != expect) return false;
    expect *= d.size;
  }
  return true;
}

// Every element offset of n (from its lo), in ascending order.
std::vector<int64_t> offsets(const Normal& n) {
  std::vector<int64_t> out{0};
  for (const Dim& d : n.dims) {
    const size_t base = out.size();
    out.reserve(base * static_cast<size_t>(d.size));
    for (int64_t k = 1; k < d.size; ++k)
      for (size_t i = 0; i < base; ++i) out.push_back(out[i] + k * d.stride);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Is there x in A and y in B with x - y = diff (offsets from each lo)? A search over the strides
// both use, largest first, with the reach of the rest bounding each coefficient. Returns -1 when
// the search grew past its budget.
struct Term {
  int64_t stride;
  int64_t a_size = 1, b_size = 1;
};
int search(const std::vector<Term>& terms, size_t level, i128 diff, const std::vector<i128>& up,
           const std::vector<i128>& down, int* budget) {
  if (--*budget < 0) return -1;
  if (level == terms.size()) return diff == 0 ? 1 : 0;
  const Term& t = terms[level];
  // x - y = diff with this level's part k * stride, k in [-(b_size - 1), a_size - 1], and the
  // rest in [-down, up].
  const i128 s = t.stride;
  i128 k_lo = -(t.b_size - 1), k_hi = t.a_size - 1;
  const i128 need_lo = diff - up[level + 1], need_hi = diff + down[level + 1];
  auto floor_div = [](i128 a, i128 b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  k_lo = std::max(k_lo, -floor_div(-need_lo, s));  // ceil(need_lo / s)
  k_hi = std::min(k_hi, floor_div(need_hi, s));
  for (i128 k = k_lo; k <= k_hi; ++k) {
    int r = search(terms, level + 1, diff - k * s, up, down, budget);
    if (r != 0) return r;
  }
  return 0;
}

// Exact: does any element of a share an address with an element of b? Both have numel > 0, the
// same itemsize, and element-aligned bases.
bool shares_element(const Normal& a, const Normal& b, size_t itemsize) {
  const i128 diff = (b.lo - a.lo) / static_cast<i128>(itemsize);  // x - y = diff, x in A, y in B
  {
    // Broadcast dims add no address, so they are left out (normalize dropped them). The union of both stride sets, largest first; a stride used twice within one view makes the
    // search ambiguous, so it goes to enumeration.
    std::vector<Term> terms;
    bool ok = true;
    auto add = [&](const Normal& n, bool is_a) {
      for (const Dim& d : n.dims) {
        auto it = std::find_if(terms.begin(), terms.end(), [&](const Term& t) { return t.stride == d.stride; });
        if (it == terms.end()) it = terms.insert(terms.end(), Term{d.stride});
        int64_t& size = is_a ? it->a_size : it->b_size;
        if (size != 1) ok = false;
        size = d.size;
      }
    };
    add(a, true);
    add(b, false);
    if (ok) {
      std::sort(terms.begin(), terms.end(), [](const Term& x, const Term& y) { return x.stride > y.stride; });
      std::vector<i128> up(terms.size() + 1, 0), down(terms.size() + 1, 0);
      for (size_t i = terms.size(); i-- > 0;) {
        up[i] = up[i + 1] + static_cast<i128>(terms[i].stride) * (terms[i].a_size - 1);
        down[i] = down[i + 1] + static_cast<i128>(terms[i].stride) * (terms[i].b_size - 1);
      }
      int budget = kMaxSearchNodes;
      const int r = search(terms, 0, diff, up, down, &budget);
      if (r >= 0) return r == 1;
    }
  }
  const Normal& small = a.numel <= b.numel ? a : b;
  const Normal& big = a.numel <= b.numel ? b : a;
  if (small.numel > kMaxEnumerated) return true;  // too large to tell: taken as shared
  const std::vector<int64_t> in_small = offsets(small);
  // An element at offset t of big sits at small.lo + t + (big.lo - small.lo), in elements.
  const i128 big_from_small = &big == &b ? diff : -diff;
  if (big.numel <= kMaxEnumerated) {
    for (int64_t t : offsets(big)) {
      const i128 s = t + big_from_small;
      if (s < 0 || s > in_small.back()) continue;
      if (std::binary_search(in_small.begin(), in_small.end(), static_cast<int64_t>(s))) return true;
    }
    return false;
  }
  return true;
}

}  // namespace

const char* to_string(MemOverlap o) {
  switch (o) {
    case MemOverlap::No: return "no overlap";
    case MemOverlap::Full: return "full overlap";
    case MemOverlap::Partial: return "partial overlap";
    case MemOverlap::Shared: return "shared elements";
  }
  return "?";
}

bool has_internal_overlap(const MemLayout& t) {
  const Normal n = normalize(t);
  if (n.numel == 0) return false;
  if (n.broadcast) return true;
  if (nested(n)) return false;
  if (n.numel > kMaxEnumerated) return true;
  const std::vector<int64_t> o = offsets(n);
  return std::adjacent_find(o.begin(), o.end()) != o.end();
}

// The bytes [lo, hi) a layout reaches; false when it has no element. No allocation: the launch
// path calls this for every written tensor.
static bool byte_range(const MemLayout& t, i128* lo, i128* hi) {
  i128 l = static_cast<i128>(t.addr), h = l;
  for (size_t d = 0; d < t.sizes.size(); ++d) {
    if (t.sizes[d] == 0) return false;
    const i128 span = static_cast<i128>(t.strides[d]) * (t.sizes[d] - 1) * static_cast<i128>(t.itemsize);
    (span < 0 ? l : h) += span;
  }
  *lo = l;
  *hi = h + static_cast<i128>(t.itemsize);
  return true;
}

MemOverlap get_overlap(const MemLayout& a, const MemLayout& b) {
  i128 a_lo, a_hi, b_lo, b_hi;
  if (!byte_range(a, &a_lo, &a_hi) || !byte_range(b, &b_lo, &b_hi)) return MemOverlap::No;
  if (a_hi <= b_lo || b_hi <= a_lo) return MemOverlap::No;
  if (a.addr == b.addr && a.itemsize == b.itemsize && a.sizes == b.sizes && a.strides == b.strides)
    return MemOverlap::Full;  // (the in-place case, without normalizing)
  const Normal na = normalize(a), nb = normalize(b);
  // The same element at every index: the same base and the same (size, stride) over the dims of
  // size > 1, in order.
  if (a.addr == b.addr && a.itemsize == b.itemsize) {
    bool same = true;
    size_t i = 0, j = 0;
    for (;; ++i, ++j) {
      while (i < a.sizes.size() && a.sizes[i] == 1) ++i;
      while (j < b.sizes.size() && b.sizes[j] == 1) ++j;
      if (i == a.sizes.size() || j == b.sizes.size()) {
        same = i == a.sizes.size() && j == b.sizes.size();
        break;
      }
      if (a.sizes[i] != b.sizes[j] || a.strides[i] != b.strides[j]) {
        same = false;
        break;
      }
    }
    if (same) return MemOverlap::Full;
  }
  if (dense(na) && dense(nb)) return MemOverlap::Partial;
  if (a.itemsize != b.itemsize || (nb.lo - na.lo) % static_cast<i128>(a.itemsize) != 0) return MemOverlap::Shared;
  return shares_element(na, nb, a.itemsize) ? MemOverlap::Shared : MemOverlap::No;
}

}  // namespace ember
