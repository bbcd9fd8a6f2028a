// DistributedDataParallel under mpirun -np 2, on cpu ("mpi" backend) and on npu ("hccl"): each rank
// trains on its half of a fixed batch; every rank also trains an undistributed copy on the whole
// batch. After 20 AdamW steps the parameters agree within 1e-5 relative (fp32). The same with
// no_sync() over two micro-batches per step, with small buckets (several all-reduces per
// backward, launched in order), and the unused-parameter error. Prints "ok" on every rank.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <ember/ember.h>

#include "mpi/mpi_check.h"

using namespace ember;
namespace dist = ember::distributed;
using nn::parallel::DistributedDataParallel;
using nn::parallel::DistributedDataParallelOptions;

namespace {

int& g_rank = mpi_check::rank;

// A LLaMA MLP block and a linear head.
struct Net : nn::Module {
  std::shared_ptr<nn::LlamaMLPBlock> block;
  std::shared_ptr<nn::Linear> head, spare;
  explicit Net(bool with_spare = false)
      : block(register_module("block", std::make_shared<nn::LlamaMLPBlock>(16, 32))),
        head(register_module("head", std::make_shared<nn::Linear>(16, 4))) {
    if (with_spare) spare = register_module("spare", std::make_shared<nn::Linear>(16, 4));  // never used
  }
  Tensor forward(const Tensor& x) override { return (*head)((*block)(x)); }
};

Tensor batch(int64_t rows, int64_t cols, double a, double b, Device dev) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) v[static_cast<size_t>(i * cols + j)] = static_cast<float>(std::sin(a * i + b * j));
  return tensor(v, {rows, cols}).to(dev);
}

// max |a - b| over max |b|, over every parameter.
double rel_diff(nn::Module& a, nn::Module& b) {
  auto pa = a.named_parameters(), pb = b.named_parameters();
  double worst = 0;
  for (size_t k = 0; k < pa.size(); ++k) {
    const double diff = (pa[k].second.cpu() - pb[k].second.cpu()).abs().max().item<double>();
    const double scale = pb[k].second.cpu().abs().max().item<double>();
    worst = std::max(worst, diff / std::max(scale, 1e-12));
  }
  return worst;
}

void equivalence(Device dev, bool accumulate, double bucket_mb) {
  const int64_t n = 8;
  Tensor x = batch(n, 16, 0.3, 0.7, dev), y = batch(n, 4, 0.5, -0.2, dev);
  auto net = std::make_shared<Net>();
  net->to(dev);
  DistributedDataParallelOptions o;
  o.bucket_cap_mb = bucket_mb;
  auto ddp = std::make_shared<DistributedDataParallel>(net, o);  // rank 0's weights everywhere
  auto ref = std::make_shared<Net>();
  ref->to(dev);
  ref->load_state_dict(net->state_dict());
  optim::AdamW opt(ddp->parameters(), optim::AdamWOptions{1e-2}), opt_ref(ref->parameters(), optim::AdamWOptions{1e-2});
  const int64_t half = n / 2, lo = g_rank * half;
  for (int step = 0; step < 20; ++step) {
    opt_ref.zero_grad();
    nn::functional::mse_loss((*ref)(x), y).backward();
    opt_ref.step();
    opt.zero_grad();
    if (!accumulate) {
      nn::functional::mse_loss((*ddp)(x.narrow(0, lo, half)), y.narrow(0, lo, half)).backward();
    } else {
      const int64_t q = half / 2;
      {
        auto guard = ddp->no_sync();
        (nn::functional::mse_loss((*ddp)(x.narrow(0, lo, q)), y.narrow(0, lo, q)) * 0.5).backward();
      }
      (nn::functional::mse_loss((*ddp)(x.narrow(0, lo + q, q)), y.narrow(0, lo + q, q)) * 0.5).backward();
    }
    opt.step();
  }
  const double d = rel_diff(*net, *ref);
  std::printf("rank %d %s%s, %zu bucket(s): parameters after 20 AdamW steps differ by %.2e relative\n", g_rank,
              dev.str().c_str(), accumulate ? " no_sync x2" : "", ddp->bucket_names().size(), d);
  EXPECT(d <= 1e-5, "%s accumulate %d: relative difference %g", dev.str().c_str(), accumulate, d);
}

void buckets_and_unused(Device dev) {
  auto net = std::make_shared<Net>(/*with_spare=*/true);
  net->to(dev);
  DistributedDataParallelOptions o;
  o.bucket_cap_mb = 0.002;  // about 2 KB: a few parameters each
  auto ddp = std::make_shared<DistributedDataParallel>(net, o);
  auto names = ddp->bucket_names();
  EXPECT(names.size() > 2, "%zu buckets", names.size());
  EXPECT(names.front().front() == "spare.bias", "first bucket starts with %s", names.front().front().c_str());
  EXPECT(names.back().back() == "block.norm.weight" || names.back().back().rfind("block.", 0) == 0,
         "last bucket ends with %s", names.back().back().c_str());
  Tensor x = batch(4, 16, 0.1, 0.2, dev);
  std::string msg;
  try {
    (*ddp)(x).sum().backward();
  } catch (const Error& e) {
    msg = e.what();
  }
  EXPECT(msg.find("received no gradient") != std::string::npos && msg.find("spare.weight") != std::string::npos,
         "message: '%s'", msg.c_str());
  // With find_unused_parameters the spare layer counts as zero gradient.
  auto net2 = std::make_shared<Net>(true);
  net2->to(dev);
  o.find_unused_parameters = true;
  auto ddp2 = std::make_shared<DistributedDataParallel>(net2, o);
  (*ddp2)(x).sum().backward();
  EXPECT(net2->spare->parameters()[0].grad().abs().sum().item<double>() == 0, "spare grad not zero");
  EXPECT(net2->head->parameters()[0].grad().abs().sum().item<double>() > 0, "head grad zero");
}

// fp16 autocast, GradScaler (unscale_, then clip_grad_norm_ on the averaged true gradients),
// AdamW: 2 ranks on halves against one process on the whole batch, 10 steps. With an overflowing
// scale, every rank skips the step and backs off alike (the all-reduced gradients are inf on all).
void mixed_precision(Device dev) {
  const int64_t n = 8, half = n / 2, lo = g_rank * half;
  Tensor x = batch(n, 16, 0.3, 0.7, dev), y = batch(n, 4, 0.5, -0.2, dev);
  auto net = std::make_shared<Net>();
  net->to(dev);
  auto ddp = std::make_shared<DistributedDataParallel>(net);
  auto ref = std::make_shared<Net>();
  ref->to(dev);
  ref->load_state_dict(net->state_dict());
  {  // an overflowing scale: the step is skipped on every rank, the scale halves on every rank
    amp::GradScaler scaler(amp::GradScalerOptions{std::ldexp(1.0, 40)});
    optim::AdamW opt(ddp->parameters(), optim::AdamWOptions{1e-2});
    Tensor loss;
    {
      amp::AutocastGuard g(dev.type(), kFloat16);
      loss = nn::functional::mse_loss((*ddp)(x.narrow(0, lo, half)), y.narrow(0, lo, half));
    }
    scaler.scale(loss).backward();
    Tensor stepped = tensor(std::vector<int64_t>{scaler.step(opt) ? 1 : 0}).to(dev);
    scaler.update();
    dist::all_reduce(stepped, dist::ReduceOp::SUM);
    EXPECT(stepped.item<int64_t>() == 0, "%s: %lld ranks stepped with an overflowing scale", dev.str().c_str(),
           static_cast<long long>(stepped.item<int64_t>()));
    EXPECT(scaler.get_scale() == std::ldexp(1.0, 39), "%s: scale after the overflow %g", dev.str().c_str(),
           scaler.get_scale());
    EXPECT(rel_diff(*net, *ref) == 0, "%s: a skipped step changed the parameters", dev.str().c_str());
  }
  amp::GradScaler scaler(amp::GradScalerOptions{1024}), scaler_ref(amp::GradScalerOptions{1024});
  optim::AdamW opt(ddp->parameters(), optim::AdamWOptions{1e-2}), opt_ref(ref->parameters(), optim::AdamWOptions{1e-2});
  double first_norm = 0;
  for (int step = 0; step < 10; ++step) {
    auto train = [&](nn::Module& m, optim::AdamW& o, amp::GradScaler& sc, const Tensor& xs, const Tensor& ys) {
      o.zero_grad();
      Tensor loss;
      {
        amp::AutocastGuard g(dev.type(), kFloat16);
        loss = nn::functional::mse_loss(m(xs), ys);
      }
      sc.scale(loss).backward();
      sc.unscale_(o);
      const double norm = nn::clip_grad_norm_(m.parameters(), 0.5);
      EXPECT(sc.step(o), "%s step %d: skipped", dev.str().c_str(), step);
      sc.update();
      return norm;
    };
    const double norm_ref = train(*ref, opt_ref, scaler_ref, x, y);
    const double norm = train(*ddp, opt, scaler, x.narrow(0, lo, half), y.narrow(0, lo, half));
    if (step == 0) first_norm = norm_ref;
    // The norm is of the averaged gradients: the whole batch's (fp16 products: ~1e-3 relative).
    EXPECT(std::fabs(norm - norm_ref) <= 2e-3 * norm_ref, "%s step %d: gradient norm %g, whole batch %g",
           dev.str().c_str(), step, norm, norm_ref);
  }
  EXPECT(first_norm > 0.5, "%s: the clipping never engaged (first norm %g)", dev.str().c_str(), first_norm);
  const double d = rel_diff(*net, *ref);
  std::printf("rank %d %s fp16 autocast + GradScaler + clip_grad_norm_: parameters after 10 steps differ by %.2e\n",
              g_rank, dev.str().c_str(), d);
  // fp16 rounds each rank's partial weight-gradient products (eps 9.8e-4) where the whole batch
  // rounds one; AdamW's normalised updates (lr 1e-2) carry that into the parameters.
  EXPECT(d <= 1e-3, "%s: relative difference %g", dev.str().c_str(), d);
}

}  // namespace

int main() {
  return mpi_check::on_both_backends([](const std::string&, Device dev) {
    equivalence(dev, false, 25);
    equivalence(dev, true, 25);
    equivalence(dev, false, 0.002);
    buckets_and_unused(dev);
    mixed_precision(dev);
  });
}
