// The elementwise engine: flat fast path for contiguous (or scalar) operands, blocked
// gather/compute/scatter for strided and broadcast ones.
#include "ember/device/cpu/elementwise.h"

#include <algorithm>
#include <cstring>

#include "ember/device/parallel.h"
#include "ember/core/error.h"

namespace ember {
namespace cpu {
namespace {

constexpr int64_t kBlock = 1024;     // elements per compute block (fits L1 with 4 operands)
constexpr int64_t kGrain = 16384;    // minimum elements per thread
constexpr int kMaxOperands = 4;

bool all_zero(IntArrayRef strides) {
  for (int64_t s : strides)
    if (s != 0) return false;
  return true;
}

// Flat path: the output is contiguous and every input is contiguous in the same shape or a
// single broadcast value (scalar_in[k]).
struct Extent {
  int64_t n, nblocks;  // elements, blocks of kBlock
  int64_t csz, osz;    // element sizes of the compute and output dtypes
};

void elementwise_flat(const Strided& out, const Strided* const* ins, int nin, DType C, ComputeFn fn, const void* ctx,
                      const Extent& e, const bool* scalar_in) {
  const int64_t n = e.n, nblocks = e.nblocks, csz = e.csz, osz = e.osz;
  parallel_for(nblocks, kGrain / kBlock, [&](int64_t b0, int64_t b1) {
    int64_t begin = b0 * kBlock, end = std::min(n, b1 * kBlock);
    alignas(64) char bufs[kMaxOperands][kBlock * 8];
    const void* in_ptr[kMaxOperands];
    for (int k = 0; k < nin; ++k) {
      if (scalar_in[k]) convert(ins[k]->data, ins[k]->dtype, 0, bufs[k], C, 1, kBlock);
    }
    for (int64_t s = begin; s < end; s += kBlock) {
      int64_t len = end - s < kBlock ? end - s : kBlock;
      for (int k = 0; k < nin; ++k) {
        const Strided& in = *ins[k];
        if (scalar_in[k]) {
          in_ptr[k] = bufs[k];
        } else if (in.dtype == C) {
          in_ptr[k] = in.bytes() + s * csz;
        } else {
          convert(in.bytes() + s * static_cast<int64_t>(element_size(in.dtype)), in.dtype, 1, bufs[k], C, 1, len);
          in_ptr[k] = bufs[k];
        }
      }
      if (out.dtype == C) {
        fn(out.bytes() + s * csz, in_ptr, len, ctx);
      } else {
        fn(bufs[kMaxOperands - 1], in_ptr, len, ctx);
        convert(bufs[kMaxOperands - 1], C, 1, out.bytes() + s * osz, out.dtype, 1, len);
      }
    }
  });
}

// General path: coalesce, then gather runs of each operand into blocks, compute, scatter.
void elementwise_strided(const Strided& out, const Strided* const* ins, int nin, DType C, ComputeFn fn,
                         const void* ctx, const Extent& e) {
  const int64_t n = e.n, nblocks = e.nblocks, csz = e.csz, osz = e.osz;
  DimVector sizes = out.sizes;
  DimVector strides[kMaxOperands];
  DimVector* sp[kMaxOperands];
  strides[0] = out.strides;
  for (int k = 0; k < nin; ++k) strides[k + 1] = ins[k]->strides;
  for (int k = 0; k <= nin; ++k) sp[k] = &strides[k];
  coalesce(sizes, sp, nin + 1);
  const int nops = nin + 1;

  parallel_for(nblocks, kGrain / kBlock, [&](int64_t b0, int64_t b1) {
    int64_t begin = b0 * kBlock, end = std::min(n, b1 * kBlock);
    alignas(64) char bufs[kMaxOperands][kBlock * 8];
    const void* in_ptr[kMaxOperands];
    int64_t run_off[kBlock];
    int64_t run_len[kBlock];
    int64_t offs[kMaxOperands];
    NdCursor cur(sizes, sp, nops, begin);
    int64_t left = end - begin;
    while (left > 0) {
      int64_t filled = 0;
      int runs = 0;
      while (filled < kBlock && left > 0) {
        int64_t want = kBlock - filled < left ? kBlock - filled : left;
        int64_t len = cur.next(want, offs);
        for (int k = 0; k < nin; ++k) {
          const Strided& in = *ins[k];
          int64_t st = sizes.empty() ? 0 : strides[k + 1].back();
          convert(in.bytes() + offs[k + 1] * static_cast<int64_t>(element_size(in.dtype)), in.dtype, st,
                  bufs[k] + filled * csz, C, 1, len);
        }
        run_off[runs] = offs[0];
        run_len[runs] = len;
        ++runs;
        filled += len;
        left -= len;
      }
      for (int k = 0; k < nin; ++k) in_ptr[k] = bufs[k];
      char* obuf = bufs[kMaxOperands - 1];
      fn(obuf, in_ptr, filled, ctx);
      int64_t ost = sizes.empty() ? 0 : strides[0].back();
      int64_t pos = 0;
      for (int r = 0; r < runs; ++r) {
        convert(obuf + pos * csz, C, 1, out.bytes() + run_off[r] * osz, out.dtype, ost, run_len[r]);
        pos += run_len[r];
      }
    }
  });
}

}  // namespace

// Work is split on block boundaries, so every element lands at the same position of the same block
// whatever the thread count: Eigen computes block heads/tails with scalar code and the middle with
// packet code, and the two may differ in the last bit.
void elementwise(const Strided& out, const Strided* const* ins, int nin, DType C, ComputeFn fn,
                 const void* ctx) {
  EMBER_ASSERT(nin + 1 <= kMaxOperands, "too many operands");
  const int64_t n = out.numel();
  if (n == 0) return;
  for (int k = 0; k < nin; ++k) EMBER_ASSERT(ins[k]->sizes.size() == out.sizes.size(), "operand rank");
  bool flat = out.contiguous();
  bool scalar_in[kMaxOperands] = {false, false, false, false};
  for (int k = 0; k < nin && flat; ++k) {
    scalar_in[k] = all_zero(ins[k]->strides);
    flat = scalar_in[k] || ins[k]->contiguous();
  }
  const Extent e{n, (n + kBlock - 1) / kBlock, static_cast<int64_t>(element_size(C)),
                 static_cast<int64_t>(element_size(out.dtype))};
  if (flat) {
    elementwise_flat(out, ins, nin, C, fn, ctx, e, scalar_in);
  } else {
    elementwise_strided(out, ins, nin, C, fn, ctx, e);
  }
}

}  // namespace cpu
}  // namespace ember
