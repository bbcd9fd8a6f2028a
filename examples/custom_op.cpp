// custom_op: how to add your own op, walked through on DispersionCorrection.
//
// DispersionCorrection (per row x of the last dim: c = x - alpha mean(x); mode 0: y = w c;
// mode 1: y = w c / sqrt(mean(c^2) + eps)) ships with ember but is built only with the public
// extension API, exactly as your own op would be. Its whole source is
// nn/dispersion_correction.cpp; this program shows each piece working:
//
//   1. the schema, registered with EMBER_LIBRARY, found by name through the dispatcher
//   2. the CPU kernel (EMBER_LIBRARY_IMPL(nn, CPU, m)), checked against a direct computation
//   3. the NPU kernel: aclnnDispersionCorrectionGetWorkspaceSize + aclnnDispersionCorrection,
//      called here the CANN way on a stream, with the per-row statistics in the workspace
//   4. the backward (a one-line autograd::OpSpec plus a fused gradient op), gradchecked on the
//      CPU and through the NPU kernels
//   5. argument errors, and the op inside a model (a LlamaMLPBlock with it as its norm)
//
// Run: build/examples/custom_op
#include <ember/ember.h>

#include <cmath>
#include <iomanip>
#include <iostream>

#include "common.h"

using namespace ember;
namespace F = ember::nn::functional;

namespace {
void check(bool ok, const std::string& what) {
  std::cout << (ok ? "  ok    " : "  FAIL  ") << what << "\n";
  if (!ok) throw std::runtime_error("check failed: " + what);
}
}  // namespace

int main(int argc, char** argv) {
  try {
    demo::Args args(argc, argv,
                    "usage: custom_op\n"
                    "  Walks through DispersionCorrection, a custom op built with ember's public extension API:\n"
                    "  schema, CPU kernel, two-phase NPU kernel, backward, errors, use in a model.");
    double alpha = args.get("alpha", 0.8, "alpha in [0, 1]");
    int64_t mode = args.get("mode", int64_t(1), "0 (center) or 1 (normalize)");
    if (!args.finish()) return 0;
    manual_seed(0);
    demo::ProgressBar bar(5, "parts");
    std::cout << std::setprecision(3);

    std::cout << "\n1. The schema (EMBER_LIBRARY(nn, m) { m.def(...) })\n";
    OperatorHandle op = Dispatcher::singleton().find_schema("nn::dispersion_correction");
    std::cout << "  " << op.schema().str() << "\n";
    std::cout << "  kernels: CPU, NPU, Autograd, Autocast (fp32 policy)\n";
    bar.update(1, NAN, 1);
    std::cout << "\n";

    std::cout << "\n2. The CPU kernel\n";
    Tensor x = randn({6, 16}) + 1.5, w = rand({16}) + 0.5;
    Tensor y = F::dispersion_correction(x, w, alpha, mode);
    Tensor c = x - x.mean({1}, true) * alpha;
    Tensor expect = mode == 1 ? c / (c.square().mean({1}, true) + 1e-6).sqrt() * w : c * w;
    check(allclose(y, expect, 1e-5, 1e-5), "matches c = x - alpha mean(x), y = w c / sqrt(mean(c^2) + eps)");
    check(allclose(F::dispersion_correction(x, w, 0.0, 1), F::rms_norm(x, w), 1e-5, 1e-5), "alpha 0, mode 1 is RMSNorm");
    bar.update(2, NAN, 1);
    std::cout << "\n";

    std::cout << "\n3. The NPU kernel, called in two phases the CANN way\n";
    Tensor xn = x.npu(), wn = w.npu(), yn = empty_like(xn);
    npu::aclTensor *ax = npu::to_acl_tensor(xn), *aw = npu::to_acl_tensor(wn), *ay = npu::to_acl_tensor(yn);
    uint64_t ws = 0;
    npu::aclOpExecutor* ex = nullptr;
    npu::check_acl(nn::aclnnDispersionCorrectionGetWorkspaceSize(ax, aw, alpha, mode, 1e-6, ay, &ws, &ex),
                   "aclnnDispersionCorrectionGetWorkspaceSize");
    std::cout << "  phase 1: workspace " << ws << " bytes = 6 rows x (mean, 1/std) x 4 bytes\n";
    void* workspace = nullptr;
    npu::check_acl(npu::aclrtMalloc(&workspace, ws, npu::ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
    npu::Stream stream = npu::Stream::create(0);
    stream.wait_stream(npu::default_stream(0));  // x and w were uploaded on the default stream
    npu::check_acl(nn::aclnnDispersionCorrection(workspace, ws, ex, npu::raw_stream(stream)), "aclnnDispersionCorrection");
    stream.synchronize();
    check(allclose(yn.cpu(), y, 1e-5, 1e-5), "phase 2 on a stream gives the CPU kernel's values");
    npu::aclnnStatus again = nn::aclnnDispersionCorrection(workspace, ws, ex, npu::raw_stream(stream));
    const char* msg = npu::aclGetRecentErrMsg();
    check(again == npu::ACLNN_ERR_PARAM_INVALID, std::string("reusing the executor is refused: ") + (msg ? msg : ""));
    npu::aclrtFree(workspace);
    for (npu::aclTensor* t : {ax, aw, ay}) npu::aclDestroyTensor(t);
    stream.destroy();
    check(allclose(F::dispersion_correction(xn, wn, alpha, mode).cpu(), y, 1e-5, 1e-5),
          "through the dispatcher (EXEC_NPU_CMD) on npu:0");
    bar.update(3, NAN, 1);
    std::cout << "\n";

    std::cout << "\n4. The backward: autograd::OpSpec + a fused gradient op, gradchecked in float64\n";
    Tensor xg = (randn({4, 8}, kFloat64) + 1).requires_grad_(), wg = (rand({8}, kFloat64) + 0.5).requires_grad_();
    auto on_cpu = [&](const std::vector<Tensor>& in) { return F::dispersion_correction(in[0], in[1], alpha, mode); };
    auto via_npu = [&](const std::vector<Tensor>& in) {
      return F::dispersion_correction(in[0].npu(), in[1].npu(), alpha, mode).cpu();
    };
    check(autograd::gradcheck(on_cpu, {xg, wg}), "gradcheck of d/dx and d/dweight on the CPU");
    check(autograd::gradcheck(via_npu, {xg, wg}), "gradcheck through the NPU kernels");
    bar.update(4, NAN, 1);
    std::cout << "\n";

    std::cout << "\n5. Errors and use in a model\n";
    try {
      F::dispersion_correction(x, w, 1.5, 1);
      check(false, "alpha 1.5 must throw");
    } catch (const ValueError& e) {
      check(true, std::string("alpha 1.5: ") + e.what());
    }
    try {
      nn::DispersionCorrection bad(16, 0.5, 2);
      check(false, "mode 2 must throw");
    } catch (const ValueError& e) {
      check(true, std::string("mode 2: ") + e.what());
    }
    auto block = std::make_shared<nn::LlamaMLPBlock>(16, 32, std::make_shared<nn::DispersionCorrection>(16, alpha, mode));
    block->to(Device("npu:0"));
    Tensor out = (*block)(x.npu());
    out.square().mean().backward();
    check(block->norm->parameters()[0].grad().defined(), "a LlamaMLPBlock with it as its norm trains on npu:0");
    std::cout << *block << "\n";
    bar.update(5, NAN, 1);
    bar.finish();
    std::cout << "\n== summary ==\nDispersionCorrection: schema, CPU kernel, two-phase NPU kernel, backward and errors all "
                 "checked. Source: nn/dispersion_correction.cpp\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "\ncustom_op: " << e.what() << "\n";
    return 1;
  }
}
