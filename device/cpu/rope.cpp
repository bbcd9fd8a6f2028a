// ember: rotary position embedding, CANN's aclnnRotaryPositionEmbedding (the NPU emulator runs
// this kernel): y = x cos + rotate(x) sin along the last dim.
#include <vector>

#include "ember/gen/cpu_kernels.h"

namespace ember {
namespace cpu {

// CPU kernel: out = in * cos + rotate(in) * sin, cos and sin broadcast to in's sizes (expanded
// views), over rows of the last dim D (even). rotate, mode 0 (half): the row's halves (a, b)
// become (-b, a); mode 1 (interleave): each pair (a, b) becomes (-b, a). Computed in double and
// rounded once to out's dtype; out may not overlap the inputs.
void rotary_embedding(const Strided& out, const Strided& in, const Strided& cos, const Strided& sin, int64_t mode) {
  const int64_t n = in.numel();
  if (n == 0) return;
  const int64_t D = in.sizes.back(), rows = n / D, h = D / 2;
  std::vector<double> x = scratch_vector<double>(n, "rotary_embedding"), c = scratch_vector<double>(n, "rotary_embedding"),
                      s = scratch_vector<double>(n, "rotary_embedding");
  copy(in.contiguous_at(x.data(), DType::Float64), in);
  copy(in.contiguous_at(c.data(), DType::Float64), cos);
  copy(in.contiguous_at(s.data(), DType::Float64), sin);
  std::vector<double> y = scratch_vector<double>(n, "rotary_embedding");
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x.data() + r * D;
    for (int64_t j = 0; j < D; ++j) {
      double rot;
      if (mode == 0) {
        rot = j < h ? -xr[j + h] : xr[j - h];
      } else {
        rot = j % 2 == 0 ? -xr[j + 1] : xr[j - 1];
      }
      const int64_t i = r * D + j;
      y[static_cast<size_t>(i)] = xr[j] * c[static_cast<size_t>(i)] + rot * s[static_cast<size_t>(i)];
    }
  }
  copy(out, out.contiguous_at(y.data(), DType::Float64));
}

}  // namespace cpu
}  // namespace ember
