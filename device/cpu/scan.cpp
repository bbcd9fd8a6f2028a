// ember: CPU scans along a dim (cumsum). The NPU emulator's aclnnCumsum / aclnnCumsumV2 run the
// same kernel.
#include "ember/device/cpu/reduce.h"
#include "ember/gen/cpu_kernels.h"
#include "ember/device/parallel.h"

namespace ember {
namespace cpu {
namespace {

// x with dim moved last (a view: same data, permuted sizes and strides).
Strided dim_last(const Strided& x, int64_t dim) {
  Strided v = x;
  v.sizes.erase(static_cast<size_t>(dim));
  v.strides.erase(static_cast<size_t>(dim));
  v.sizes.push_back(x.sizes[static_cast<size_t>(dim)]);
  v.strides.push_back(x.strides[static_cast<size_t>(dim)]);
  return v;
}

// a + b; integers wrap around on overflow, as PyTorch's do in practice (no undefined behaviour).
inline double add(double a, double b) { return a + b; }
inline int64_t add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// Scans the rows of a contiguous [rows, len] buffer in place.
template <class A>
void scan_rows(A* x, int64_t rows, int64_t len, bool exclusive, bool reverse) {
  parallel_for(rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(len, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      A* row = x + r * len;
      A acc = 0;
      for (int64_t j = 0; j < len; ++j) {
        A& v = row[reverse ? len - 1 - j : j];
        A next = add(acc, v);
        v = exclusive ? acc : next;
        acc = next;
      }
    }
  });
}

template <class A>
void cumsum_as(const Strided& out, const Strided& in, int64_t dim, bool exclusive, bool reverse, const char* op) {
  Strided src = dim_last(in, dim), dst = dim_last(out, dim);
  int64_t len = src.sizes.back(), n = src.numel();
  std::vector<A> tmp = scratch_vector<A>(n, op);
  copy(src.contiguous_at(tmp.data(), dtype_of<A>), src);
  scan_rows(tmp.data(), n / len, len, exclusive, reverse);
  copy(dst, dst.contiguous_at(tmp.data(), dtype_of<A>));
}

}  // namespace

// CPU kernel: out[..., i, ...] = the sum of in[..., j, ...] over j <= i along dim (j < i when
// exclusive; j >= i, j > i when reverse). in and out have the same sizes, any strides and dtypes.
// Accumulated in double for floating dtypes (CPU PyTorch's accumulation type for float) and int64
// otherwise, then converted to out's dtype; rows along dim run in parallel.
void cumsum(const Strided& out, const Strided& in, int64_t dim, bool exclusive /*= false*/, bool reverse /*= false*/) {
  EMBER_ASSERT(IntArrayRef(out.sizes) == IntArrayRef(in.sizes) && dim >= 0 && dim < std::max<int64_t>(in.dim(), 1), __func__, ": bad views");
  if (in.numel() == 0) return;
  if (in.dim() == 0) {  // one element: itself, or 0 when exclusive
    if (exclusive) fill(out, 0.0);
    else copy(out, in);
    return;
  }
  if (is_floating_point(in.dtype) || is_floating_point(out.dtype)) {
    cumsum_as<double>(out, in, dim, exclusive, reverse, __func__);
  } else {
    cumsum_as<int64_t>(out, in, dim, exclusive, reverse, __func__);
  }
}

}  // namespace cpu
}  // namespace ember
