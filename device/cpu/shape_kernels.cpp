// ember: CPU kernels that move elements without arithmetic: tril/triu, roll, repeat and constant
// padding. Each is a few strided copies and fills (copy/fill of strided.h), so every dtype and
// every layout works, in parallel where copy is. The NPU emulator's aclnnTril/Triu, Roll, Repeat
// and ConstantPadNd run the same kernels.
#include <algorithm>
#include <vector>

#include "ember/gen/cpu_kernels.h"

namespace ember {
namespace cpu {
namespace {

// v narrowed to [start, start + len) along dim (a view).
Strided narrowed(const Strided& v, size_t dim, int64_t start, int64_t len) {
  Strided r = v;
  if (len > 0) r.data = r.bytes() + start * r.strides[dim] * static_cast<int64_t>(element_size(r.dtype));
  r.sizes[dim] = len;
  return r;
}

}  // namespace

// CPU kernel: out = in with the elements of each matrix (the last two dims) above the diagonal-th
// diagonal set to zero (tril), or below it (triu, upper): tril keeps j - i <= diagonal, triu keeps
// j - i >= diagonal. in and out have the same sizes (at least 2 dims), any strides and dtype; out
// may be in itself.
void triangle(const Strided& out, const Strided& in, int64_t diagonal, bool upper) {
  EMBER_ASSERT(IntArrayRef(out.sizes) == IntArrayRef(in.sizes) && in.dim() >= 2 && out.dtype == in.dtype, __func__,
               ": bad views");
  if (in.numel() == 0) return;
  if (out.data != in.data || IntArrayRef(out.strides) != IntArrayRef(in.strides)) copy(out, in);
  const size_t rd = static_cast<size_t>(in.dim() - 2), cd = rd + 1;
  const int64_t rows = in.sizes[rd], cols = in.sizes[cd];
  // Row i's zeros are one run of columns, the same in every matrix: a view over the batch.
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t edge = i + diagonal;  // tril keeps j <= edge, triu keeps j >= edge
    int64_t lo, hi;
    if (upper) {
      lo = 0;
      hi = std::min(cols, std::max<int64_t>(edge, 0));
    } else {
      lo = std::min(cols, std::max<int64_t>(edge + 1, 0));
      hi = cols;
    }
    if (lo >= hi) continue;
    fill_int(narrowed(narrowed(out, rd, i, 1), cd, lo, hi - lo), 0);
  }
}

// CPU kernel: out = in rolled by shifts[k] along dims[k] (out[.., (i + s) mod n, ..] = in[.., i, ..]),
// as torch.roll with dims given. in and out have the same sizes and dtype, any strides, and must
// not overlap. Each dim splits into the run that wraps and the one that does not: 2^k block copies.
void roll(const Strided& out, const Strided& in, IntArrayRef shifts, IntArrayRef dims) {
  EMBER_ASSERT(IntArrayRef(out.sizes) == IntArrayRef(in.sizes) && shifts.size() == dims.size() && out.dtype == in.dtype,
               __func__, ": bad views");
  if (in.numel() == 0) return;
  std::vector<Strided> src{in}, dst{out};
  for (size_t k = 0; k < dims.size(); ++k) {
    const size_t d = static_cast<size_t>(dims[k]);
    const int64_t n = in.sizes[d], s = ((shifts[k] % n) + n) % n;
    std::vector<Strided> s2, d2;
    for (size_t b = 0; b < src.size(); ++b) {
      if (s == 0) {
        s2.push_back(src[b]);
        d2.push_back(dst[b]);
        continue;
      }
      s2.push_back(narrowed(src[b], d, 0, n - s));  // in[0, n - s) -> out[s, n)
      d2.push_back(narrowed(dst[b], d, s, n - s));
      s2.push_back(narrowed(src[b], d, n - s, s));  // in[n - s, n) -> out[0, s)
      d2.push_back(narrowed(dst[b], d, 0, s));
    }
    src.swap(s2);
    dst.swap(d2);
  }
  for (size_t b = 0; b < src.size(); ++b) copy(dst[b], src[b]);
}

// CPU kernel: out = in tiled repeats[k] times along each dim, as torch's Tensor.repeat: repeats
// has at least in's rank; in takes leading dims of size 1 for the extra ones; out's sizes are
// repeats[k] * in's. One copy: out seen as [r0, s0, r1, s1, ...], in broadcast over the r's.
void repeat(const Strided& out, const Strided& in, IntArrayRef repeats) {
  const size_t n = repeats.size(), lead = n - static_cast<size_t>(in.dim());
  EMBER_ASSERT(n >= static_cast<size_t>(in.dim()) && out.dim() == static_cast<int64_t>(n) && out.dtype == in.dtype,
               __func__, ": bad views");
  if (out.numel() == 0) return;
  DimVector sizes, ostr, istr;
  for (size_t k = 0; k < n; ++k) {
    const int64_t s = k < lead ? 1 : in.sizes[k - lead], is = k < lead ? 0 : in.strides[k - lead];
    sizes.push_back(repeats[k]);
    sizes.push_back(s);
    ostr.push_back(out.strides[k] * s);
    ostr.push_back(out.strides[k]);
    istr.push_back(0);
    istr.push_back(is);
  }
  copy(Strided(out.data, out.dtype, sizes, ostr), Strided(in.data, in.dtype, sizes, istr));
}

// CPU kernel: out = in padded with value: pad holds (before, after) pairs from the last dim
// backwards, as torch's constant_pad_nd; a negative amount crops. out's sizes are in's plus the
// pads; in and out have the same dtype and must not overlap.
void constant_pad(const Strided& out, const Strided& in, IntArrayRef pad, double value) {
  EMBER_ASSERT(pad.size() % 2 == 0 && pad.size() / 2 <= static_cast<size_t>(in.dim()) && out.dim() == in.dim() &&
                   out.dtype == in.dtype,
               __func__, ": bad views");
  if (out.numel() == 0) return;
  fill(out, value);
  Strided src = in, dst = out;
  for (size_t p = 0; p < pad.size() / 2; ++p) {
    const size_t d = static_cast<size_t>(in.dim()) - 1 - p;
    const int64_t before = pad[2 * p], after = pad[2 * p + 1];
    // The part of in that survives the crops, and where it lands in out.
    const int64_t from = std::max<int64_t>(-before, 0), to = in.sizes[d] - std::max<int64_t>(-after, 0);
    const int64_t len = std::max<int64_t>(to - from, 0);
    src = narrowed(src, d, from, len);
    dst = narrowed(dst, d, std::max<int64_t>(before, 0), len);
  }
  if (src.numel() > 0) copy(dst, src);
}

}  // namespace cpu
}  // namespace ember
