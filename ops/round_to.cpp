// _round_to(x, dtype): x.to(dtype).to(x.dtype()) in one pass, for floating x and a 16-bit float
// dtype (other floating dtypes go through the two casts). Autocast rounds each fp32 weight of a
// rounded linear once with it (nn/amp/autocast.cpp), and the result's storage is marked rounded
// (Note [Rounded storage]), so the forward and backward GEMMs read it in place instead of each
// rounding a staged copy. Its gradient is the incoming one rounded the same way (the gradient of
// the two casts), which is the incoming one itself when that is already rounded.
#include "ember/autograd/op_spec.h"
#include "ember/device/cpu/strided.h"
#include "ember/dispatch/library.h"
#include "ember/ops/npu_exec.h"
#include "ember/ops/op_util.h"

namespace ember::op {
EMBER_DECLARE_OP(_round_to, Keep, "ember::_round_to(Tensor self, ScalarType dtype) -> Tensor",
                 Tensor(const Tensor&, DType));
}  // namespace ember::op

namespace ember {
namespace {
using namespace ops;

void check_round_to(const Tensor& x, DType dt) {
  EMBER_CHECK_DTYPE(x.is_floating_point() && is_floating_point(dt), op::_round_to::op_name(),
                    ": expected a floating tensor and dtype, got ", x.dtype(), " and ", dt);
}

// The kernel's result, marked rounded; or the two casts where dt is not a 16-bit float.
template <class Run>
Tensor round_to_on(const Tensor& x, DType dt, Run&& run) {
  check_round_to(x, dt);
  if (x.dtype() == dt) return x.clone();  // a new tensor, as every op's result (never x itself)
  if (!is_reduced_float(dt)) return x.to(dt).to(x.dtype());
  Tensor out = empty_on(x.sizes_ref(), x.dtype(), x.device());
  run(out);
  out.impl()->storage()->mark_rounded(dt);
  return out;
}

Tensor round_to_cpu(const Tensor& x, DType dt) {
  return round_to_on(x, dt, [&](const Tensor& out) { cpu::copy_rounded(strided(out), strided(x), dt); });
}

Tensor round_to_npu(const Tensor& x, DType dt) {
  return round_to_on(x, dt, [&](const Tensor& out) { EXEC_NPU_CMD(npu::aclnnEmberRoundTo, x, dt, out); });
}

}  // namespace

EMBER_LIBRARY(ember, m) { m.def(op::_round_to()); }
EMBER_LIBRARY_IMPL(ember, CPU, m) { m.impl(op::_round_to(), &round_to_cpu); }
EMBER_LIBRARY_IMPL(ember, NPU, m) { m.impl(op::_round_to(), &round_to_npu); }

Tensor _round_to(const Tensor& x, DType dtype) { return op::_round_to::call(x, dtype); }

bool is_rounded_to(const Tensor& t, DType dtype) {
  return t.defined() && (t.dtype() == dtype || t.impl()->storage()->is_rounded_to(dtype));
}

// ---------------------------------------------------------------- backward
namespace {
using namespace autograd;
using Sig = Tensor(const Tensor&, DType);
std::vector<Tensor> round_to_bw(const BackwardCtx<Sig>& c) {
  Tensor g = c.grad();
  const DType dt = c.arg<1>();
  return {is_rounded_to(g, dt) ? g : _round_to(g, dt)};
}
const auto kRoundTo = spec_of<op::_round_to>("RoundToBackward", &round_to_bw);
}  // namespace

EMBER_LIBRARY_IMPL(ember, Autograd, m) { m.impl(op::_round_to(), autograd_kernel<&kRoundTo>()); }

}  // namespace ember
