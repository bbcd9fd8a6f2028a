// tril, triu, roll, repeat and constant_pad_nd: ops that move elements, as PyTorch defines them
// (cpu::triangle/roll/repeat/constant_pad on the CPU, aclnnTril/Triu/Roll/Repeat/ConstantPadNd on
// the NPU). Their gradients move the gradient back: tril/triu of it, the opposite roll, the sum
// over the tiles, the crop of the padding.
#include "ember/gen/cpu_kernels.h"
#include "ember/autograd/op_spec.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"
#include "ember/dispatch/library.h"

namespace ember::op {
EMBER_DECLARE_OP(tril, Keep, "ember::tril(Tensor self, int diagonal=0) -> Tensor", Tensor(const Tensor&, int64_t));
EMBER_DECLARE_OP(triu, Keep, "ember::triu(Tensor self, int diagonal=0) -> Tensor", Tensor(const Tensor&, int64_t));
EMBER_DECLARE_OP(roll, Keep, "ember::roll(Tensor self, int[] shifts, int[] dims=[]) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, IntArrayRef));
EMBER_DECLARE_OP(repeat, Keep, "ember::repeat(Tensor self, int[] repeats) -> Tensor", Tensor(const Tensor&, IntArrayRef));
EMBER_DECLARE_OP(constant_pad_nd, Keep, "ember::constant_pad_nd(Tensor self, int[] pad, Scalar value=0) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, const Scalar&));
// The lower triangle of each matrix (the last two dims): elements above the diagonal-th diagonal
// are zero (diagonal > 0 keeps more, < 0 fewer), as torch.tril.
EMBER_EXPORT_OP(tril, function, method);
// The upper triangle of each matrix: elements below the diagonal-th diagonal are zero, as torch.triu.
EMBER_EXPORT_OP(triu, function, method);
// The elements shifted by shifts[k] along dims[k], wrapping around; without dims, over the
// flattened tensor (one shift), as torch.roll.
EMBER_EXPORT_OP(roll, function, method);
// The tensor tiled repeats[k] times along each dim (more repeats than dims add leading dims), as
// torch's Tensor.repeat.
EMBER_EXPORT_OP(repeat, method);
// The tensor padded with value: pad holds (before, after) pairs from the last dim backwards; a
// negative amount crops, as torch.constant_pad_nd (F::pad's constant mode).
EMBER_EXPORT_OP(constant_pad_nd, function);
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

// ---- tril / triu
template <bool upper>
Tensor triangle_meta(const char* op, const Tensor& x) {
  EMBER_CHECK_SHAPE(x.dim() >= 2, op, ": expects a tensor of at least 2 dims, got shape ", x.sizes());
  return empty_on(x.sizes_ref(), x.dtype(), x.device());
}
template <bool upper>
Tensor triangle_cpu(const Tensor& x, int64_t diagonal) {
  Tensor out = triangle_meta<upper>(upper ? op::triu::op_name() : op::tril::op_name(), x);
  cpu::triangle(strided(out), strided(x), diagonal, upper);
  return out;
}
template <bool upper>
Tensor triangle_npu(const Tensor& x, int64_t diagonal) {
  Tensor out = triangle_meta<upper>(upper ? op::triu::op_name() : op::tril::op_name(), x);
  if (upper) {
    EXEC_NPU_CMD(npu::aclnnTriu, x, diagonal, out);
  } else {
    EXEC_NPU_CMD(npu::aclnnTril, x, diagonal, out);
  }
  return out;
}

// ---- roll: dims wrapped and checked; without dims, the flattened tensor rolled by one shift
struct RollPlan {
  Tensor in;  // x, or x flattened
  std::vector<int64_t> shifts, dims;
};
RollPlan roll_plan(const Tensor& x, IntArrayRef shifts, IntArrayRef dims) {
  const char* op = op::roll::op_name();
  RollPlan p;
  if (dims.empty()) {
    EMBER_CHECK_VALUE(shifts.size() == 1, op, ": without dims, one shift is expected, got ", shifts.size());
    p.in = x.reshape({x.numel()});
    p.shifts = {shifts[0]};
    p.dims = {0};
    return p;
  }
  EMBER_CHECK_VALUE(shifts.size() == dims.size(), op, ": shifts (", shifts.size(), " values) and dims (", dims.size(),
                    ") must have one length");
  p.in = x.dim() ? x : x.reshape({1});  // a 0-d tensor rolls as one element (dims 0 / -1)
  p.shifts.assign(shifts.begin(), shifts.end());
  for (int64_t d : dims) p.dims.push_back(wrap_dim(d, x.dim(), op));
  return p;
}
Tensor roll_cpu(const Tensor& x, IntArrayRef shifts, IntArrayRef dims) {
  RollPlan p = roll_plan(x, shifts, dims);
  Tensor out = empty_on(p.in.sizes_ref(), x.dtype(), x.device());
  cpu::roll(strided(out), strided(p.in), p.shifts, p.dims);
  return out.reshape(x.sizes_ref());
}
Tensor roll_npu(const Tensor& x, IntArrayRef shifts, IntArrayRef dims) {
  RollPlan p = roll_plan(x, shifts, dims);
  Tensor out = empty_on(p.in.sizes_ref(), x.dtype(), x.device());
  if (x.numel() > 0) EXEC_NPU_CMD(npu::aclnnRoll, p.in, IntArrayRef(p.shifts), IntArrayRef(p.dims), out);
  return out.reshape(x.sizes_ref());
}

// ---- repeat
Tensor repeat_meta(const Tensor& x, IntArrayRef repeats) {
  const char* op = op::repeat::op_name();
  EMBER_CHECK_SHAPE(repeats.size() >= static_cast<size_t>(x.dim()), op, ": repeats (", repeats,
                    ") must have at least as many values as the tensor has dims (", x.dim(), ")");
  const size_t lead = repeats.size() - static_cast<size_t>(x.dim());
  DimVector shape;
  for (size_t k = 0; k < repeats.size(); ++k) {
    EMBER_CHECK_VALUE(repeats[k] >= 0, op, ": repeats must be non-negative, got ", repeats);
    const int64_t s = k < lead ? 1 : x.size(static_cast<int64_t>(k - lead));
    int64_t n;
    EMBER_CHECK_SHAPE(!__builtin_mul_overflow(repeats[k], s, &n), op, ": the size of dim ", k, " overflows");
    shape.push_back(n);
  }
  return empty_on(shape, x.dtype(), x.device());
}
Tensor repeat_cpu(const Tensor& x, IntArrayRef repeats) {
  Tensor out = repeat_meta(x, repeats);
  cpu::repeat(strided(out), strided(x), repeats);
  return out;
}
Tensor repeat_npu(const Tensor& x, IntArrayRef repeats) {
  Tensor out = repeat_meta(x, repeats);
  if (out.numel() > 0) EXEC_NPU_CMD(npu::aclnnRepeat, x, repeats, out);
  return out;
}

// ---- constant_pad_nd
Tensor pad_meta(const Tensor& x, IntArrayRef pad) {
  const char* op = op::constant_pad_nd::op_name();
  EMBER_CHECK_VALUE(pad.size() % 2 == 0 && pad.size() / 2 <= static_cast<size_t>(x.dim()), op, ": pad (", pad,
                    ") must hold (before, after) pairs for at most the tensor's ", x.dim(), " dims");
  DimVector shape(x.sizes_ref());
  for (size_t q = 0; q < pad.size() / 2; ++q) {
    const size_t d = static_cast<size_t>(x.dim()) - 1 - q;
    int64_t n;
    EMBER_CHECK_SHAPE(!__builtin_add_overflow(shape[d], pad[2 * q], &n) && !__builtin_add_overflow(n, pad[2 * q + 1], &n),
                      op, ": the padded size of dim ", d, " overflows");
    EMBER_CHECK_SHAPE(n >= 0, op, ": pad (", pad[2 * q], ", ", pad[2 * q + 1], ") leaves dim ", d, " of size ",
                      shape[d], " with a negative size");
    shape[d] = n;
  }
  return empty_on(shape, x.dtype(), x.device());
}
Tensor pad_cpu(const Tensor& x, IntArrayRef pad, const Scalar& value) {
  Tensor out = pad_meta(x, pad);
  cpu::constant_pad(strided(out), strided(x), pad, value.to_double());
  return out;
}
Tensor pad_npu(const Tensor& x, IntArrayRef pad, const Scalar& value) {
  Tensor out = pad_meta(x, pad);
  if (out.numel() > 0) EXEC_NPU_CMD(npu::aclnnConstantPadNd, x, pad, value, out);
  return out;
}

// ---- gradients
using namespace autograd;
std::vector<Tensor> tril_bw(const BackwardCtx<Tensor(const Tensor&, int64_t)>& c) {
  return {op::tril::call(c.grad(), c.arg<1>())};
}
std::vector<Tensor> triu_bw(const BackwardCtx<Tensor(const Tensor&, int64_t)>& c) {
  return {op::triu::call(c.grad(), c.arg<1>())};
}
std::vector<Tensor> roll_bw(const BackwardCtx<Tensor(const Tensor&, IntArrayRef, IntArrayRef)>& c) {
  std::vector<int64_t> back;
  for (int64_t s : c.arg<1>()) back.push_back(-s);
  return {op::roll::call(c.grad(), back, c.arg<2>())};
}
// The sum over the tiles: the gradient seen as [r0, s0, r1, s1, ...] summed over the r's.
std::vector<Tensor> repeat_bw(const BackwardCtx<Tensor(const Tensor&, IntArrayRef)>& c) {
  IntArrayRef r = c.arg<1>(), in = c.meta<0>().sizes;
  const size_t lead = r.size() - in.size();
  DimVector split, tiles;
  for (size_t k = 0; k < r.size(); ++k) {
    split.push_back(r[k]);
    split.push_back(k < lead ? 1 : in[k - lead]);
    tiles.push_back(static_cast<int64_t>(2 * k));
  }
  return {c.grad().reshape(split).sum(tiles).reshape(in)};
}
// The crop of the padding (and zeros where the forward cropped): padding by the opposite amounts.
std::vector<Tensor> pad_bw(const BackwardCtx<Tensor(const Tensor&, IntArrayRef, const Scalar&)>& c) {
  std::vector<int64_t> back;
  for (int64_t v : c.arg<1>()) back.push_back(-v);
  return {op::constant_pad_nd::call(c.grad(), back, Scalar(0))};
}
const auto kTril = spec_of<op::tril>("TrilBackward", &tril_bw);
const auto kTriu = spec_of<op::triu>("TriuBackward", &triu_bw);
const auto kRoll = spec_of<op::roll>("RollBackward", &roll_bw);
const auto kRepeat = spec_of<op::repeat>("RepeatBackward", &repeat_bw);
const auto kPad = spec_of<op::constant_pad_nd>("ConstantPadNdBackward", &pad_bw);
}  // namespace

EMBER_LIBRARY(ember, m) {
  m.def(op::tril());
  m.def(op::triu());
  m.def(op::roll());
  m.def(op::repeat());
  m.def(op::constant_pad_nd());
}
EMBER_LIBRARY_IMPL(ember, CPU, m) {
  m.impl(op::tril(), &triangle_cpu<false>);
  m.impl(op::triu(), &triangle_cpu<true>);
  m.impl(op::roll(), &roll_cpu);
  m.impl(op::repeat(), &repeat_cpu);
  m.impl(op::constant_pad_nd(), &pad_cpu);
}
EMBER_LIBRARY_IMPL(ember, NPU, m) {
  m.impl(op::tril(), &triangle_npu<false>);
  m.impl(op::triu(), &triangle_npu<true>);
  m.impl(op::roll(), &roll_npu);
  m.impl(op::repeat(), &repeat_npu);
  m.impl(op::constant_pad_nd(), &pad_npu);
}
EMBER_LIBRARY_IMPL(ember, Autograd, m) {
  m.impl(op::tril(), autograd_kernel<&kTril>());
  m.impl(op::triu(), autograd_kernel<&kTriu>());
  m.impl(op::roll(), autograd_kernel<&kRoll>());
  m.impl(op::repeat(), autograd_kernel<&kRepeat>());
  m.impl(op::constant_pad_nd(), autograd_kernel<&kPad>());
}

}  // namespace ember
