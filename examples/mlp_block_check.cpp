// mlp_block_check: one LlamaMLPBlock of LLaMA-7B's shape (d_model 4096, d_ff 11008) forward and
// backward on the CPU in fp32 (the reference) and on the emulated NPU with bf16 and fp16
// autocast: the error of the output and of every gradient against the reference, and TFLOP/s.
//
// Run: build/examples/mlp_block_check [--tokens 256]
#include <ember/ember.h>

#include <iomanip>
#include <iostream>

#include "common.h"

using namespace ember;

namespace {

struct Result {
  std::map<std::string, Tensor> values;  // "out", "grad x", "grad <param>"
  double seconds = 0;
};

Result run(nn::LlamaMLPBlock& block, const Tensor& x_cpu, const Tensor& g_cpu, Device dev, bool autocast, DType low,
           int reps, demo::ProgressBar& bar, int64_t* done) {
  block.to(dev);
  Result r;
  for (int rep = 0; rep <= reps; ++rep) {  // rep 0 warms up (oneDNN primitives, allocator)
    block.zero_grad();
    Tensor x = x_cpu.detach().to(dev).requires_grad_(), g = g_cpu.to(dev);  // a fresh leaf each time
    if (dev.is_npu()) npu::synchronize(dev.index());
    double t0 = demo::now_seconds();
    Tensor y;
    {
      amp::AutocastGuard guard(dev.type(), low, autocast);
      y = block(x);
    }
    y.backward(g.to(y.dtype()));
    if (dev.is_npu()) npu::synchronize(dev.index());
    double t = demo::now_seconds() - t0;
    if (rep > 0) r.seconds += t / reps;
    if (rep == reps) {
      r.values["out"] = y.detach().to(kFloat32).cpu();
      r.values["grad x"] = x.grad().to(kFloat32).cpu();
      for (auto& [name, p] : block.named_parameters()) r.values["grad " + name] = p.grad().to(kFloat32).cpu();
    }
    bar.update(++*done, NAN, x_cpu.size(0));
  }
  return r;
}

// max |a - ref| / max |ref|: the error relative to the tensor's scale.
double rel_error(const Tensor& a, const Tensor& ref) {
  return (a.to(kFloat64) - ref.to(kFloat64)).abs().max().item<double>() / ref.to(kFloat64).abs().max().item<double>();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    demo::Args args(argc, argv,
                    "usage: mlp_block_check [options]\n"
                    "  Runs one LLaMA-7B-shaped MLP block (x + SwiGLU(RMSNorm(x))) forward and backward on the CPU in\n"
                    "  fp32 and on the emulated NPU in bf16 and fp16, and compares outputs, gradients and speed.");
    int64_t tokens = args.get("tokens", int64_t(256), "tokens (rows of x)");
    int64_t d_model = args.get("d-model", int64_t(4096), "model width");
    int64_t d_ff = args.get("d-ff", int64_t(11008), "SwiGLU hidden width");
    int reps = static_cast<int>(args.get("reps", int64_t(2), "timed repetitions per configuration"));
    // bf16 keeps 8 significant bits (2^-8 = 3.9e-3 per rounding), fp16 11 (4.9e-4); a few
    // roundings accumulate along the block, so 10x that flags real errors, not rounding.
    double max_bf16 = args.get("max-bf16-error", 0.04, "exit with status 2 if a bf16 error exceeds this");
    double max_fp16 = args.get("max-fp16-error", 0.005, "exit with status 2 if an fp16 error exceeds this");
    if (!args.finish()) return 0;
    manual_seed(0);
    auto block = std::make_shared<nn::LlamaMLPBlock>(d_model, d_ff);
    Tensor x = randn({tokens, d_model}), g = randn({tokens, d_model});
    double flops = 18.0 * static_cast<double>(tokens) * static_cast<double>(d_model) * static_cast<double>(d_ff);
    std::cout << "LlamaMLPBlock(d_model=" << d_model << ", d_ff=" << d_ff << "), " << tokens << " tokens: "
              << block->num_parameters() / 1e6 << "M parameters, " << flops / 1e9 << " GFLOP per forward+backward\n";

    struct Config {
      std::string name;
      Device dev;
      bool autocast;
      DType low;
    };
    std::vector<Config> configs = {{"cpu fp32 (reference)", Device("cpu"), false, kFloat32},
                                   {"npu:0 bf16 autocast", Device("npu:0"), true, kBFloat16},
                                   {"npu:0 fp16 autocast", Device("npu:0"), true, kFloat16}};
    demo::ProgressBar bar(static_cast<int64_t>(configs.size()) * (reps + 1), "tok");
    int64_t done = 0;
    std::vector<Result> results;
    for (const Config& c : configs) results.push_back(run(*block, x, g, c.dev, c.autocast, c.low, reps, bar, &done));
    bar.finish();

    std::cout << "\n== summary ==\n" << std::left << std::setw(24) << "configuration" << std::right << std::setw(10)
              << "ms" << std::setw(10) << "TFLOP/s" << std::setw(12) << "out err" << std::setw(12) << "worst grad"
              << "  (errors: max|diff| / max|cpu fp32|)\n";
    for (size_t i = 0; i < configs.size(); ++i) {
      const Result& r = results[i];
      double out_err = i ? rel_error(r.values.at("out"), results[0].values.at("out")) : 0.0;
      double worst = 0;
      std::string worst_name = "-";
      for (const auto& [k, v] : r.values) {
        if (k == "out" || !i) continue;
        double e = rel_error(v, results[0].values.at(k));
        if (e > worst) worst = e, worst_name = k;
      }
      std::cout << std::left << std::setw(24) << configs[i].name << std::right << std::fixed << std::setprecision(1)
                << std::setw(10) << r.seconds * 1e3 << std::setprecision(3) << std::setw(10) << flops / r.seconds / 1e12
                << std::scientific << std::setprecision(2) << std::setw(12) << out_err << std::setw(12) << worst
                << std::defaultfloat << (i ? "  (" + worst_name + ")" : "") << "\n";
    }
    bool ok = true;
    std::cout << "per-tensor errors of npu bf16 / fp16:\n";
    for (const auto& [k, v] : results[1].values) {
      double eb = rel_error(v, results[0].values.at(k)), eh = rel_error(results[2].values.at(k), results[0].values.at(k));
      ok &= eb <= max_bf16 && eh <= max_fp16;
      std::cout << "  " << std::left << std::setw(30) << k << std::scientific << std::setprecision(2) << eb << " / " << eh
                << std::defaultfloat << "\n";
    }
    if (!ok) std::cout << "ERROR: an error is above --max-bf16-error " << max_bf16 << " / --max-fp16-error " << max_fp16 << "\n";
    return ok ? 0 : 2;
  } catch (const std::exception& e) {
    std::cerr << "\nmlp_block_check: " << e.what() << "\n";
    return 1;
  }
}
